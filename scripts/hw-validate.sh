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

# The packages this script itself needs (common/host/programs.cc: kScript);
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

# The discovery, each kind's plan and the table (hw-validate-plan.sh); one
# drill per present mechanism (hw-validate-drill.sh). Functions, and the
# state they share, sourced here.
# shellcheck source=scripts/hw-validate-plan.sh
. "$repo/scripts/hw-validate-plan.sh"
# shellcheck source=scripts/hw-validate-drill.sh
. "$repo/scripts/hw-validate-drill.sh"

# ---- Discovery: sysfs only (no agent yet).
discover
print_found

# ---- The rows: with --list, or with nothing present, the table is all.
failed=0
todo=()
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
