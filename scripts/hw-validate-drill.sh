# Sourced by scripts/hw-validate.sh: one drill per present mechanism.
# run_kind KIND writes the transfer it is measured under (write_ib_transfer:
# ib_write_bw between two ports, or one port's loopback; write_gpu_transfer:
# fdrill-collective's NCCL all-reduce) and a 15 s scenario, runs it with
# `fdrill run` against the agents the script started, and adds its row: the
# effect measured and whether it was reverted (the agent's verified revert,
# the drill's residue, and the hardware state hw_state reads before and
# after). Reads the script's out, port, bw_port, ngpus, gpu_inv, FDRILL and
# COLLECTIVE; sets failed.
# Checked through it (shellcheck -x scripts/hw-validate.sh); alone, the
# state it shares with the script reads as unassigned or unused.
# shellcheck shell=bash disable=SC2034,SC2154

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
