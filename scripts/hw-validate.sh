#!/usr/bin/env bash
# Every hardware mechanism fdrill has, once, on whatever this machine has
# (GPUs, InfiniBand ports, RoCE NICs): what an operator runs before the first
# drill on a new cluster node, and what runs whenever a GPU machine is lent.
#
#   scripts/hw-validate.sh [--build DIR] [--out DIR] [--only KIND,...] [--list]
#
# The mechanisms are the kinds `fdrill injectors` lists that act on hardware:
# scope ib_port or gpu, or an interface kind whose "reaches" names RoCE or
# InfiniBand RDMA (link_flap, link_down, roce_tc_rate, roce_pfc, link_speed).
# The tc and netfilter kinds reach kernel TCP/IP only; the e2e tests run them
# on this kernel. For each mechanism it finds a target here (sysfs:
# /sys/class/infiniband, /sys/class/net, NVIDIA PCI devices; NVML through the
# agent's inventory) or prints an "absent" row with the reason (the kind's
# probe in `fdrill injectors`, or what discovery did not find). For each one
# present it runs one drill through the real path:
#   - an fdrill-agent (--insecure, 127.0.0.1) started here, which applies,
#     verifies and reverts the fault on this machine's hardware; `fdrill run`
#     needs two hosts, so a second agent on 127.0.0.2 runs with --fake-host
#     (it holds a lease, nothing is applied there, no fault names it);
#   - a scenario: baseline 5 s, the one fault 5 s, recovery 5 s;
#   - a real transfer as the workload (launcher: none, started here): for IB
#     and RoCE kinds ib_write_bw (perftest) from the faulted port to another
#     active port of the same link layer, or to itself (HCA loopback) when
#     there is none; for GPU kinds an NCCL all-reduce of fdrill-collective
#     (mpirun, one rank per GPU). Each prints its results as nccl-tests rows
#     (ib_write_bw's per-second BW average; fdrill-collective's per-iteration
#     records), which is how the drill reads a command's iterations;
#   - then summary.json: the fault's slowdown, the agent's verified revert,
#     the residue; and, read here before and after, the port's sysfs state,
#     the netdev's speed, DCB maxrate and PFC and `ethtool` settings, which
#     the drill's snapshot does not cover.
# It prints one row per mechanism (present, effect measured, reverted) and
# where the run directories are. Exit 0 when every present mechanism was
# applied and reverted with no residue (absent rows do not fail), 1 when one
# was not applied, not reverted or left residue, 2 on a usage error or a
# missing build. --list discovers and prints the rows without running
# anything. It builds nothing (build/bin from ./demo.sh or ./test.sh) and
# needs root only when something is present. A netdev (or an IPoIB
# interface) carrying a default route is never faulted.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

# The packages this script itself needs (harness/host/programs.cc: kScript);
# installed only when an InfiniBand or RoCE mechanism is about to run.
CHECK_PACKAGES=(
  perftest
)

usage() {
  cat <<'EOF'
usage: scripts/hw-validate.sh [--build DIR] [--out DIR] [--only KIND,...] [--list]
  --build DIR       the build directory holding bin/fdrill (default build)
  --out DIR         where the run directories go (default runs/hw-validate-<UTC time>)
  --only KIND,...   only these fault kinds (hardware kinds of `fdrill injectors`)
  --list            discover and print the rows; run nothing
EOF
}
bad_usage() {
  echo "hw-validate: $*" >&2
  exit 2
}

build=build
out=""
only=""
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build | --out | --only)
      if [ $# -lt 2 ] || [ -z "$2" ]; then bad_usage "$1 needs a value (--help)"; fi
      case "$1" in
        --build) build=$2 ;;
        --out) out=$2 ;;
        --only) only=$2 ;;
      esac
      shift
      ;;
    --list) list=1 ;;
    -h | --help) usage; exit 0 ;;
    *) bad_usage "unknown argument '$1' (use --build DIR, --out DIR, --only KIND,..., --list)" ;;
  esac
  shift
done

case "$build" in /*) ;; *) build=$repo/$build ;; esac
FDRILL=$build/bin/fdrill
AGENT=$build/bin/fdrill-agent
COLLECTIVE=$build/bin/fdrill-collective
for b in "$FDRILL" "$AGENT"; do
  [ -x "$b" ] || bad_usage "no $b: build first with ./demo.sh (or ./test.sh), or pass --build DIR"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdrill-hwv.XXXXXX")
agent_pids=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  local rc=$?
  # Only the agents this script started, by pid: SIGTERM makes each revert
  # whatever it still holds.
  for pid in "${agent_pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${agent_pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- The kinds: `fdrill injectors`, one TSV line each (kind scope reaches probe).
"$FDRILL" injectors >"$tmp/injectors.txt"
awk '
  /^[a-z0-9_]+ / { if (kind != "") print kind "\t" scope "\t" reaches "\t" probe
                   kind = $1; scope = ""; reaches = ""; probe = ""; next }
  /^ +scope: / { scope = $2 }
  /^ +reaches: / { sub(/^ +reaches: /, ""); reaches = $0 }
  /^ +this node: / { sub(/^ +this node: /, ""); probe = $0 }
  END { if (kind != "") print kind "\t" scope "\t" reaches "\t" probe }
' "$tmp/injectors.txt" >"$tmp/kinds.tsv"

hw_kinds=()
declare -A probe_of=()
all_kinds=" "
while IFS=$'\t' read -r kind scope reaches probe; do
  all_kinds+="$kind "
  case "$scope" in
    ib_port | gpu) ;;
    interface) [[ "$reaches" == *"RoCE RDMA"* || "$reaches" == *"InfiniBand RDMA"* ]] || continue ;;
    *) continue ;;
  esac
  hw_kinds+=("$kind")
  probe_of[$kind]=$probe
done <"$tmp/kinds.tsv"
[ ${#hw_kinds[@]} -gt 0 ] || bad_usage "$FDRILL injectors lists no hardware kind (its output changed?)"

if [ -n "$only" ]; then
  wanted=()
  IFS=, read -r -a only_list <<<"$only"
  for k in "${only_list[@]}"; do
    if [[ " ${hw_kinds[*]} " == *" $k "* ]]; then
      wanted+=("$k")
    elif [[ "$all_kinds" == *" $k "* ]]; then
      bad_usage "--only: $k does not act on hardware (it reaches kernel TCP/IP or processes); hardware kinds: ${hw_kinds[*]}"
    else
      bad_usage "--only: no fault kind '$k'; hardware kinds: ${hw_kinds[*]}"
    fi
  done
  hw_kinds=("${wanted[@]}")
fi

# ---- Discovery: sysfs only (no agent yet).
read1() { cat "$1" 2>/dev/null || true; }
after_colon() { local v; v=$(read1 "$1"); echo "${v#*: }"; }

# Netdevs that carry a default route: never faulted.
default_route_devs=" "
if command -v ip >/dev/null; then
  default_route_devs+="$( { ip -o route show default; ip -o -6 route show default; } 2>/dev/null |
    awk '{for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1)}' | sort -u | tr '\n' ' ')"
fi

# InfiniBand / RoCE ports: parallel arrays.
p_dev=() p_port=() p_ll=() p_state=() p_rate=() p_netdev=()
ib_note=""
if [ -d /sys/class/infiniband ]; then
  for d in /sys/class/infiniband/*; do
    [ -d "$d/ports" ] || continue
    for pp in "$d"/ports/*; do
      [ -e "$pp/link_layer" ] || continue
      # RoCE: the GID table's netdev; InfiniBand: the IPoIB netdev of the
      # HCA's PCI function whose dev_port is this port's (ports count from 1).
      nd=$(read1 "$pp/gid_attrs/ndevs/0")
      if [ -z "$nd" ] && [ -d "$d/device/net" ]; then
        for n in "$d"/device/net/*; do
          [ -e "$n" ] || continue
          [ -n "$nd" ] || nd=$(basename "$n")
          if [ "$(read1 "$n/dev_port")" = "$(($(basename "$pp") - 1))" ]; then
            nd=$(basename "$n")
            break
          fi
        done
      fi
      p_dev+=("$(basename "$d")")
      p_port+=("$(basename "$pp")")
      p_ll+=("$(read1 "$pp/link_layer")")
      p_state+=("$(after_colon "$pp/state")")
      p_rate+=("$(read1 "$pp/rate")")
      p_netdev+=("$nd")
    done
  done
  [ ${#p_dev[@]} -gt 0 ] || ib_note="/sys/class/infiniband has no ports"
else
  ib_note="/sys/class/infiniband does not exist"
fi

# NVIDIA GPUs: PCI vendor 0x10de, class VGA or 3D controller.
gpu_pci=()
for dev in /sys/bus/pci/devices/*; do
  [ "$(read1 "$dev/vendor")" = 0x10de ] || continue
  case "$(read1 "$dev/class")" in 0x0300* | 0x0302*) gpu_pci+=("$(basename "$dev")") ;; esac
done

eth_devs=()
for n in /sys/class/net/*; do
  name=$(basename "$n")
  [ "$name" != lo ] && [ "$(read1 "$n/type")" = 1 ] && eth_devs+=("$name")
done

ports_text() {  # ports_text LINK_LAYER: "mlx5_0/1 ACTIVE (eth2), ..." or empty
  local i s=""
  for i in "${!p_dev[@]}"; do
    [ "${p_ll[i]}" = "$1" ] || continue
    s+="${s:+, }${p_dev[i]}/${p_port[i]} ${p_state[i]}${p_netdev[i]:+ (${p_netdev[i]})}"
  done
  echo "$s"
}
ib_text=$(ports_text InfiniBand)
roce_text=$(ports_text Ethernet)
echo "hw-validate: found:"
if [ ${#gpu_pci[@]} -gt 0 ]; then
  echo "  GPUs          ${#gpu_pci[@]} NVIDIA PCI device(s): ${gpu_pci[*]}"
else
  echo "  GPUs          none (no NVIDIA device in /sys/bus/pci/devices)"
fi
echo "  IB ports      ${ib_text:-none (${ib_note:-no port with link layer InfiniBand})}"
echo "  RoCE ports    ${roce_text:-none (${ib_note:-no port with link layer Ethernet})}"
echo "  Ethernet      ${eth_devs[*]:-none}"

# ---- What each kind would target here.
# Active ports of a link layer that do not carry a default route; sets
# cands (indices into p_*) and why_none.
cands=() why_none=""
pick_ports() {
  local ll=$1 i
  cands=()
  why_none=""
  for i in "${!p_dev[@]}"; do
    [ "${p_ll[i]}" = "$ll" ] || continue
    if [ "${p_state[i]}" != ACTIVE ]; then
      why_none+="${why_none:+; }${p_dev[i]}/${p_port[i]} is ${p_state[i]}"
    elif [ -n "${p_netdev[i]}" ] && [[ "$default_route_devs" == *" ${p_netdev[i]} "* ]]; then
      why_none+="${why_none:+; }${p_dev[i]}/${p_port[i]}'s ${p_netdev[i]} carries a default route (never faulted here)"
    else
      cands+=("$i")
    fi
  done
  if [ -z "$why_none" ] && [ ${#cands[@]} -eq 0 ]; then
    if [ -n "$ib_note" ]; then why_none=$ib_note; else why_none="no port with link layer $ll"; fi
  fi
}

# An InfiniBand port's GUID from its GID 0 (the subnet prefix, then the GUID).
port_guid() {
  local g
  g=$(read1 "/sys/class/infiniband/$1/ports/$2/gids/0")
  g=${g//:/}
  if [ ${#g} -eq 32 ]; then echo "0x${g:16:16}"; fi
}

# A RoCE v2 GID index of a port (an IPv4-mapped one first), or nothing.
roce_gid() {
  local base=/sys/class/infiniband/$1/ports/$2 t idx g first=""
  for t in "$base"/gid_attrs/types/*; do
    [ "$(read1 "$t")" = "RoCE v2" ] || continue
    idx=$(basename "$t")
    g=$(read1 "$base/gids/$idx")
    case "$g" in "" | 0000:0000:0000:0000:0000:0000:0000:0000) continue ;; esac
    case "$g" in 0000:0000:0000:0000:0000:ffff:*) echo "$idx"; return ;; esac
    [ -n "$first" ] || first=$idx
  done
  echo "$first"
}

# Per kind: present (yes|absent), detail (target or reason), params (YAML
# flow mapping), transfer (ib|gpu), the transfer's ports (client = the
# faulted one, server), state (what to compare before/after).
present="" detail="" params="" transfer="" client="" server="" state_of=""
gpu_inv=""
plan_kind() {
  local kind=$1 probe=${probe_of[$1]}
  present=absent detail="" params="" transfer="" client="" server="" state_of=""
  # The hardware first (what discovery did not find), then the kind's own
  # probe (a tool or library missing).
  local probe_no=""
  [[ "$probe" != cannot:* ]] || probe_no=${probe#cannot: }
  local scope
  scope=$(awk -F'\t' -v k="$kind" '$1 == k {print $2}' "$tmp/kinds.tsv")
  case "$kind" in
    ib_port_flap | ib_port_disable | ib_port_width | ib_port_speed | ib_switch_port)
      pick_ports InfiniBand
      [ ${#cands[@]} -gt 0 ] || { detail="no usable InfiniBand port: $why_none"; return; }
      local a=${cands[0]} b=${cands[0]}
      [ ${#cands[@]} -lt 2 ] || b=${cands[1]}
      [ -z "$probe_no" ] || { detail=$probe_no; return; }
      local dev=${p_dev[a]} port=${p_port[a]}
      client=$a server=$b transfer=ib state_of="ib:$a ib:$b"
      case "$kind" in
        ib_port_flap) params="{device: $dev, port: $port, down: 2s}" ;;
        ib_port_disable) params="{device: $dev, port: $port}" ;;
        ib_port_width)
          local width
          width=$(sed -n 's/.*(\([0-9]*\)X.*/\1/p' <<<"${p_rate[a]}")
          if [ -z "$width" ] || [ "$width" -le 1 ]; then
            detail="$dev/$port runs at ${p_rate[a]:-an unknown rate}: no narrower width to set"
            return
          fi
          params="{device: $dev, port: $port, width: 1x}"
          ;;
        ib_port_speed)
          # The next slower speed ibportstate can set (not FDR10, not XDR);
          # sysfs prints no name for SDR ("10 Gb/sec (4X)").
          local cur target="" s found=0
          cur=$(sed -n 's/.*([0-9]*X \([A-Z0-9]*\)).*/\1/p' <<<"${p_rate[a]}")
          local order=(SDR DDR QDR FDR10 FDR EDR HDR NDR XDR)
          for s in "${order[@]}"; do
            [ "$s" != "$cur" ] || { found=1; break; }
            case "$s" in FDR10 | XDR) ;; *) target=$s ;; esac
          done
          if [ "$found" = 0 ] || [ -z "$target" ]; then
            detail="$dev/$port runs at ${p_rate[a]:-an unknown rate}: no slower speed to set"
            return
          fi
          params="{device: $dev, port: $port, speed: ${target,,}}"
          ;;
        ib_switch_port)
          if [ ${#cands[@]} -lt 2 ]; then
            detail="needs a second active InfiniBand port: the SMPs leave by one port and disable the switch port facing another (the one this node hangs off cannot be re-enabled from it)"
            return
          fi
          local guid
          guid=$(port_guid "${p_dev[b]}" "${p_port[b]}")
          [ -n "$guid" ] || { detail="${p_dev[b]}/${p_port[b]}: no port GUID in gids/0"; return; }
          params="{device: $dev, local_port: $port, guid: \"$guid\"}"
          ;;
      esac
      detail="$dev/$port"
      ;;
    link_flap | link_down | roce_tc_rate | roce_pfc | link_speed)
      pick_ports Ethernet
      [ ${#cands[@]} -gt 0 ] || { detail="no usable RoCE port: $why_none"; return; }
      local a=${cands[0]} b=${cands[0]}
      [ ${#cands[@]} -lt 2 ] || b=${cands[1]}
      local ifc=${p_netdev[a]}
      [ -n "$ifc" ] || { detail="${p_dev[a]}/${p_port[a]}: no netdev found for this RoCE port"; return; }
      [ -z "$probe_no" ] || { detail=$probe_no; return; }
      client=$a server=$b transfer=ib state_of="roce:$a roce:$b"
      case "$kind" in
        link_flap) params="{interface: $ifc, down: 2s}" ;;
        link_down) params="{interface: $ifc}" ;;
        roce_tc_rate)
          # The TC that priority 0 (ib_write_bw's, untagged) maps to.
          local tc mbps
          tc=$(dcb ets show dev "$ifc" prio-tc 2>/dev/null | tr ' ' '\n' | sed -n 's/^0:\([0-7]\)$/\1/p' | head -1 || true)
          mbps=$(read1 "/sys/class/net/$ifc/speed")
          [[ "$mbps" =~ ^[0-9]+$ ]] && [ "$mbps" -ge 1000 ] || mbps=10000
          params="{interface: $ifc, tc: ${tc:-0}, rate: $((mbps / 10))mbit}"
          ;;
        roce_pfc)
          local on
          on=$(dcb -j pfc show dev "$ifc" 2>/dev/null |
            jq -r '[.prio_pfc | to_entries[] | select(.value) | .key] | join(", ")' 2>/dev/null || true)
          if [ -n "$on" ]; then
            params="{interface: $ifc, priorities: [$on], state: \"off\"}"
          else
            params="{interface: $ifc, priorities: 3, state: \"on\"}"
          fi
          ;;
        link_speed)
          local cur speed
          cur=$(ethtool "$ifc" 2>/dev/null | sed -n 's/^[[:space:]]*Speed: \([0-9]*\)Mb\/s.*/\1/p' || true)
          [ -n "$cur" ] || { detail="$ifc: ethtool reports no link speed"; return; }
          speed=$(ethtool "$ifc" 2>/dev/null | awk -v cur="$cur" '
            /Supported link modes:/ { on = 1 } /Supported pause|Supports auto/ { on = 0 }
            on { for (i = 1; i <= NF; i++) if (match($i, /^[0-9]+base/)) {
                   s = substr($i, 1, RLENGTH - 4) + 0; if (s < cur && s > best) best = s } }
            END { if (best) print best }' || true)
          [ -n "$speed" ] || { detail="$ifc at ${cur} Mb/s: no supported link mode below it"; return; }
          params="{interface: $ifc, speed: $speed}"
          ;;
      esac
      detail="$ifc (${p_dev[a]}/${p_port[a]})"
      ;;
    nvlink_bw_mode | gpu_clock_lock | gpu_power_cap)
      [ ${#gpu_pci[@]} -gt 0 ] || { detail="no NVIDIA GPU (no device in /sys/bus/pci/devices)"; return; }
      [ -z "$probe_no" ] || { detail=$probe_no; return; }
      transfer=gpu
      case "$kind" in
        nvlink_bw_mode)
          if [ -n "$gpu_inv" ]; then
            local links
            links=$(jq '[.nodes[0].gpus[].nvlinks[]?] | length' <<<"$gpu_inv")
            [ "$links" -gt 0 ] || { detail="the GPUs report no NVLink (NVML)"; return; }
          fi
          params="{mode: min}"
          detail="node-wide"
          ;;
        gpu_clock_lock) params="{gpu: 0, min_mhz: 600, max_mhz: 900}" detail="GPU 0" ;;
        gpu_power_cap) params="{gpu: 0, watts: 100000}" detail="GPU 0 (lowest allowed limit)" ;;
      esac
      ;;
    *)
      [ -z "$probe_no" ] || { detail=$probe_no; return; }
      present="?"
      detail="scope $scope: scripts/hw-validate.sh has no recipe for this kind yet"
      return
      ;;
  esac
  present=yes
}

# ---- The rows.
r_kind=() r_present=() r_effect=() r_reverted=() r_detail=()
add_row() { r_kind+=("$1"); r_present+=("$2"); r_effect+=("$3"); r_reverted+=("$4"); r_detail+=("$5"); }
print_table() {
  local w1=9 w2=7 w3=15 w4=8 i
  for i in "${!r_kind[@]}"; do
    [ "${#r_kind[i]}" -le "$w1" ] || w1=${#r_kind[i]}
    [ "${#r_present[i]}" -le "$w2" ] || w2=${#r_present[i]}
    [ "${#r_effect[i]}" -le "$w3" ] || w3=${#r_effect[i]}
    [ "${#r_reverted[i]}" -le "$w4" ] || w4=${#r_reverted[i]}
  done
  printf "%-${w1}s  %-${w2}s  %-${w3}s  %-${w4}s  %s\n" MECHANISM PRESENT "EFFECT MEASURED" REVERTED DETAIL
  for i in "${!r_kind[@]}"; do
    printf "%-${w1}s  %-${w2}s  %-${w3}s  %-${w4}s  %s\n" \
      "${r_kind[i]}" "${r_present[i]}" "${r_effect[i]}" "${r_reverted[i]}" "${r_detail[i]}"
  done
}

# A row for each kind, in `fdrill injectors`' order: absent with the
# reason, or (with --list) what would run.
failed=0
todo=()
plan_rows() {
  local kind
  for kind in "${hw_kinds[@]}"; do
    plan_kind "$kind"
    if [ "$present" = yes ]; then
      todo+=("$kind")
      add_row "$kind" yes "not run (--list)" - "$detail: $params"
    else
      add_row "$kind" "$present" - - "$detail"
      [ "$present" = absent ] || failed=1
    fi
  done
}
plan_rows
if [ ${#todo[@]} -eq 0 ] || [ "$list" = 1 ]; then
  echo
  print_table
  [ ${#todo[@]} -gt 0 ] || echo "hw-validate: nothing present to validate here; no drill was run"
  exit "$failed"
fi
r_kind=() r_present=() r_effect=() r_reverted=() r_detail=()

# ---- Something is present: run it.
[ "$(id -u)" -eq 0 ] || bad_usage "needs root to apply faults (present: ${todo[*]}); --list shows what would run"
command -v jq >/dev/null || bad_usage "jq is not installed (Debian package jq; ./test.sh's set-up installs it)"
needs_perftest=0
for kind in "${todo[@]}"; do
  plan_kind "$kind"
  [ "$transfer" != ib ] || needs_perftest=1
done
if [ "$needs_perftest" = 1 ]; then
  missing=()
  for p in "${CHECK_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "hw-validate: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

out=${out:-runs/hw-validate-$(date -u +%Y%m%dT%H%M%SZ)}
case "$out" in /*) ;; *) out=$repo/$out ;; esac
mkdir -p "$out"
port=$((20000 + $$ % 20000))
bw_port=$((40000 + $$ % 10000))
printf '127.0.0.1\n127.0.0.2\n' >"$out/hosts"

"$AGENT" --insecure --node 127.0.0.1 --listen "127.0.0.1:$port" --state-dir "$out/agent" \
  --log-level warn >"$out/agent.log" 2>&1 &
agent_pids+=($!)
"$AGENT" --fake-host --insecure --node 127.0.0.2 --listen "127.0.0.2:$port" \
  --state-dir "$out/agent-bystander" --log-level warn >"$out/agent-bystander.log" 2>&1 &
agent_pids+=($!)
for _ in $(seq 50); do
  "$FDRILL" inventory --hosts "$out/hosts" --insecure --port "$port" --json >"$out/inventory.json" 2>/dev/null && break
  sleep 0.1
done
[ -s "$out/inventory.json" ] || bad_usage "the agents did not answer on 127.0.0.1:$port and 127.0.0.2:$port (see $out/agent.log)"
gpu_inv=$(jq '{nodes: [.nodes[] | select(.node == "127.0.0.1")]}' "$out/inventory.json")
ngpus=$(jq '.nodes[0].gpus | length' <<<"$gpu_inv")

hw_state() {  # the hardware state a revert must restore, one fact a line
  local what i ifc base
  for what in $state_of; do
    i=${what#*:}
    base=/sys/class/infiniband/${p_dev[i]}/ports/${p_port[i]}
    echo "${p_dev[i]}/${p_port[i]} state $(after_colon "$base/state") phys $(after_colon "$base/phys_state") rate $(read1 "$base/rate")"
    [ "${what%%:*}" = roce ] || continue
    ifc=${p_netdev[i]}
    echo "$ifc operstate $(read1 "/sys/class/net/$ifc/operstate") speed $(read1 "/sys/class/net/$ifc/speed")"
    echo "$ifc maxrate $(dcb -j maxrate show dev "$ifc" 2>&1 || true)"
    echo "$ifc pfc $(dcb -j pfc show dev "$ifc" 2>&1 || true)"
    ethtool "$ifc" 2>&1 | sed "s/^/$ifc ethtool /" || true
  done | sort -u
}

write_ib_transfer() {  # write_ib_transfer FILE: ib_write_bw client -> server, as nccl-tests rows
  local c=$client s=$server cx="" sx="" g awk_line=awk
  # mawk (Debian's awk) reads a pipe in blocks unless told otherwise.
  case "$(awk -W version 2>&1 || true)" in *mawk*) awk_line="awk -W interactive" ;; esac
  if [ "${p_ll[c]}" = Ethernet ]; then
    g=$(roce_gid "${p_dev[c]}" "${p_port[c]}") && [ -n "$g" ] && cx="-x $g"
    g=$(roce_gid "${p_dev[s]}" "${p_port[s]}") && [ -n "$g" ] && sx="-x $g"
  fi
  cat >"$1" <<EOF
#!/usr/bin/env bash
# Written by scripts/hw-validate.sh: ib_write_bw from ${p_dev[c]}/${p_port[c]} to
# ${p_dev[s]}/${p_port[s]}, one result row a second (-D 1 --run_infinitely), printed
# as nccl-tests rows (busbw = ib_write_bw's BW average, Gb/s / 8). When the
# pair fails (a port down), both are started again. The drill ends it with
# SIGTERM to its process group: that is its normal end (exit 0).
set -u
trap 'exit 0' TERM
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "
n=0
while :; do
  p=\$(( $bw_port + n % 100 ))
  ib_write_bw -d ${p_dev[s]} -i ${p_port[s]} $sx -p \$p -s 65536 -D 1 --run_infinitely --report_gbits >/dev/null 2>&1 &
  srv=\$!
  sleep 0.5
  ib_write_bw -d ${p_dev[c]} -i ${p_port[c]} $cx -p \$p -s 65536 -D 1 --run_infinitely --report_gbits 127.0.0.1 2>&1 |
    $awk_line '\$1 ~ /^[0-9]+\$/ && NF >= 4 && \$4 ~ /^[0-9.]+\$/ && \$4 + 0 > 0 {
      gbs = \$4 / 8; us = \$1 / (gbs * 1000)
      printf "%12d  %12d     uint8    none      -1  %7.2f  %6.2f  %6.2f    N/A  %7.2f  %6.2f  %6.2f    N/A\n", \$1, \$1, us, gbs, gbs, us, gbs, gbs
      fflush() }
      !(\$1 ~ /^[0-9]+\$/) { print "# ib_write_bw: " \$0; fflush() }'
  kill \$srv 2>/dev/null
  wait \$srv 2>/dev/null
  n=\$((n + 1))
  sleep 0.5
done
EOF
}

write_gpu_transfer() {  # write_gpu_transfer FILE DIR: NCCL all-reduce, rank 0's records as nccl-tests rows
  cat >"$1" <<EOF
#!/usr/bin/env bash
# Written by scripts/hw-validate.sh: fdrill-collective's NCCL all-reduce on
# this machine's $ngpus GPU(s) (mpirun, one rank per GPU); rank 0's
# per-iteration records printed as nccl-tests rows (its own time, algbw,
# busbw and data check). The drill ends it with SIGTERM to its process
# group (mpirun ends the ranks): that is its normal end (exit 0).
set -u
trap 'exit 0' TERM
rm -f "$2"/rank-*.jsonl
mpirun --allow-run-as-root -np $ngpus --bind-to none "$COLLECTIVE" --backend nccl \\
  --op all_reduce -b 64M --duration 600s -w 5 --jsonl "$2/rank-{rank}.jsonl" >"$2/mpirun.log" 2>&1 &
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong"
echo "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)       "
tail -n +1 -F "$2/rank-0.jsonl" 2>/dev/null |
  jq --unbuffered -r 'select(.iter != null) |
    "\(.bytes) \(.count) \(.dtype) \(.redop) -1 \(.time_ms * 1000) \(.algbw_gbps) \(.busbw_gbps) \(.wrong)"'
EOF
}

run_kind() {  # run_kind KIND: one drill, one row
  local kind=$1 yaml=$out/$1.yaml run=$out/$1 log=$out/$1.log workload analysis="" rc=0
  plan_kind "$kind"
  local target=$detail
  if [ "$transfer" = ib ]; then
    write_ib_transfer "$out/$kind.transfer.sh"
    local via="ib_write_bw ${p_dev[client]}/${p_port[client]} -> ${p_dev[server]}/${p_port[server]}"
    [ "$client" != "$server" ] || via="ib_write_bw ${p_dev[client]}/${p_port[client]} loopback"
    workload="{command: [bash, $out/$kind.transfer.sh], output: nccl-tests, launcher: none, transport: rdma}"
    # One row a second: back in the band for 2 rows counts as recovered.
    analysis="analysis: {recovery_window: 2}"
  else
    if [ "$ngpus" -lt 1 ]; then
      add_row "$kind" yes "not run" - "$target: NVML lists no GPU: $(jq -r '.nodes[0].nvml // "?"' <<<"$gpu_inv")"
      failed=1
      return
    fi
    if ! "$COLLECTIVE" --version 2>/dev/null | grep -qw nccl; then
      add_row "$kind" yes "not run" - "$target: $COLLECTIVE has no nccl backend (build with CUDA and NCCL)"
      failed=1
      return
    fi
    mkdir -p "$out/$kind.ranks"
    write_gpu_transfer "$out/$kind.transfer.sh" "$out/$kind.ranks"
    local via="NCCL all-reduce on $ngpus GPU(s)"
    workload="{command: [bash, $out/$kind.transfer.sh], output: nccl-tests, launcher: none}"
  fi
  cat >"$yaml" <<EOF
# Written by scripts/hw-validate.sh: $kind on $target, once, under $via.
name: hwv-$kind
fabric: {hosts: hosts, agent_port: $port}
workload: $workload
phases:
  - {name: baseline, duration: 5s}
  - name: fault
    duration: 5s
    faults:
      - {id: $kind, kind: $kind, node: 127.0.0.1, params: $params}
  - {name: recovery, duration: 5s}
$analysis
EOF
  local before
  before=$(hw_state)
  echo "hw-validate: $kind on $target ($via) -> $run" >&2
  "$FDRILL" run "$yaml" --insecure --quiet --out "$run" >/dev/null 2>"$log" || rc=$?
  # gpu_power_cap: the allowed range is NVML's; the first try names it.
  if [ "$kind" = gpu_power_cap ] && grep -qs "allowed range" "$log" "$run/events.jsonl"; then
    local min
    min=$(grep -hos "allowed range [0-9.]* W" "$log" "$run/events.jsonl" | head -1 |
      awk '{w = int($3); if ($3 > w) w++; print w}')
    if [ -n "$min" ] && [ "$min" -gt 0 ]; then
      mv "$run" "$run.range-probe" 2>/dev/null || true
      mv "$log" "$log.range-probe"
      sed -i "s/watts: 100000/watts: $min/" "$yaml"
      target="GPU 0 at $min W"
      rc=0
      "$FDRILL" run "$yaml" --insecure --quiet --out "$run" >/dev/null 2>"$log" || rc=$?
    fi
  fi
  local s=$run/summary.json effect reverted why
  if [ ! -s "$s" ]; then
    why=$(grep -v '^$' "$log" | tail -1 || true)
    add_row "$kind" yes "not run" - "$target: fdrill run exit $rc: ${why:-no output} ($log)"
    failed=1
    return
  fi
  if [ "$(jq -s 'any(.[]; .type == "fault_applied")' "$run/events.jsonl")" != true ]; then
    why=$(jq -r '[.errors[]? | if type == "object" then (.message // .error // tostring) else tostring end] | last // empty' "$s")
    [ -n "$why" ] || why=$(grep -v '^$' "$log" | tail -1 || true)
    add_row "$kind" yes "not applied" - "$target: ${why:-see $log} ($run)"
    failed=1
    return
  fi
  effect=$(jq -r '.faults[0] as $f | ($f.slowdown // null) as $x | (($f.stall_ms // 0) / 1000) as $st |
    def r2: . * 100 | round / 100;
    (if $st >= 0.5 then ", stall \($st * 10 | round / 10) s" else "" end) as $stall |
    if $x == null then (if $st >= 0.5 then "stalled \($st * 10 | round / 10) s" else "none measured" end)
    elif $x >= 1.1 then "slowdown \($x | r2)x\($stall)"
    else "none measured (\($x | r2)x)" end' "$s")
  if [ "$(jq '.baseline.iterations // 0' "$s")" = 0 ]; then
    effect="no transfer (see $run/workload.log)"
  fi
  # Back as found: the agent's verified revert, the drill's residue, and the
  # hardware state read here (the port may take a while to retrain).
  local after=""
  for _ in $(seq 30); do
    after=$(hw_state)
    [ "$after" != "$before" ] || break
    sleep 1
  done
  reverted="yes (residue empty)"
  if [ "$(jq -s 'any(.[]; .type == "fault_reverted" and .verified == true)' "$run/events.jsonl")" != true ]; then
    reverted="NO: the agent did not verify the revert"
  elif [ "$(jq '.residue_checked' "$s")" != true ]; then
    reverted="NO: the drill's residue check did not run"
  elif [ "$(jq '.residue | length' "$s")" != 0 ]; then
    reverted="NO: residue $(jq -c '.residue' "$s")"
  elif [ "$after" != "$before" ]; then
    reverted="NO: 30 s after the drill $( { diff <(echo "$before") <(echo "$after") || true; } |
      sed -n 's/^< /was: /p; s/^> /now: /p' | head -4 | awk '{printf "%s%s", (NR > 1 ? "; " : ""), $0}')"
  fi
  [ "$reverted" = "yes (residue empty)" ] || failed=1
  [[ "$effect" != "no transfer"* ]] || failed=1
  add_row "$kind" yes "$effect" "$reverted" "$target, $via"
}

for kind in "${hw_kinds[@]}"; do
  plan_kind "$kind"
  case "$present" in
    yes) run_kind "$kind" ;;
    absent) add_row "$kind" "$present" - - "$detail" ;;
    *) add_row "$kind" "$present" - - "$detail"; failed=1 ;;
  esac
done

echo
print_table
echo "hw-validate: run directories under $out (one per present mechanism: <kind>/, its scenario <kind>.yaml, fdrill run's stderr <kind>.log)"
exit "$failed"
