# Sourced by scripts/hw-validate.sh: what this machine has and what each
# hardware kind would do on it. discover reads sysfs (InfiniBand and RoCE
# ports into the parallel arrays p_*, NVIDIA GPUs, Ethernet netdevs, the
# netdevs that carry a default route) and print_found says what it found;
# plan_kind KIND sets present, detail, params, transfer, client, server and
# state_of for one kind; plan_rows adds a row per kind (add_row) to the
# table print_table prints. Reads the script's tmp, probe_of and hw_kinds;
# sets failed and todo.
# Checked through it (shellcheck -x scripts/hw-validate.sh); alone, the
# state it shares with the script reads as unassigned or unused.
# shellcheck shell=bash disable=SC2034,SC2154

read1() { cat "$1" 2>/dev/null || true; }
after_colon() { local v; v=$(read1 "$1"); echo "${v#*: }"; }

discover() {
  local d pp nd n dev name
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
    # An if, not a list: a list that ends false would be discover's status.
    if [ "$name" != lo ] && [ "$(read1 "$n/type")" = 1 ]; then eth_devs+=("$name"); fi
  done
}

ports_text() {  # ports_text LINK_LAYER: "mlx5_0/1 ACTIVE (eth2), ..." or empty
  local i s=""
  for i in "${!p_dev[@]}"; do
    [ "${p_ll[i]}" = "$1" ] || continue
    s+="${s:+, }${p_dev[i]}/${p_port[i]} ${p_state[i]}${p_netdev[i]:+ (${p_netdev[i]})}"
  done
  echo "$s"
}
print_found() {
  local ib_text roce_text
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
}

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
