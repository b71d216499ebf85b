#!/usr/bin/env bash
# Simulator vs live: runs one configuration on both runtimes, with the
# simulator's hardware set to this machine's, and prints side by side, with
# the ratio live/sim: capacity (bench capacity), p50/p99 end-to-end latency at
# half of each runtime's own capacity, and recovery time from a crash at that
# rate.
#
#   scripts/simlive.sh [--work model|none] [ROW ...]
#   scripts/simlive.sh "none" "barrier --variant aligned"
#
# A ROW is a --system with its flags (default: none, barrier aligned and
# unaligned, stormack, lineage, snapshot cl). The live capacity search gets
# the simulator's capacity.json as --sim-capacity, so its row "cap/core" is
# capacity per core: the simulator's over every core it assumes, live over
# the CPU its probe at capacity received (what the machine's other load
# moves least). Hardware: one worker with
# --cores = the machine's cores (nproc) and parallelism = cores, so every
# system process shares those cores in both runtimes. What the live run also
# spends on those cores and the simulator does not model is named, not
# hidden: the harness's checking of every commit (under one lock, on the
# committing goroutine), the Go runtime (scheduler, GC, timers), and the
# processes the simulator places on the master node (coordinators, drivers),
# which it gives cores of their own. Latency and recovery rows are single
# runs; live figures vary from run to run (docs/live.md, "Simulator vs live").
set -euo pipefail
cd "$(dirname "$0")/.."
work=model
if [ "${1:-}" = "--work" ]; then work=$2; shift 2; fi
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=("none" "barrier --variant aligned" "barrier --variant unaligned"
  "stormack --ack-timeout 2s" "lineage" "snapshot --variant cl")
cores=$(nproc)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin="$out/bench"
go build -o "$bin" ./cmd/bench
hw=(--workload wordcount --workers 1 --cores "$cores" --parallelism "$cores")
live=(--runtime live --work "$work")
field() { # field FILE EXPR: a value from a JSON file (python expression on r)
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); v=$2; print('null' if v is None else v)" "$1"
}
ratio() { python3 -c "import sys; a,b=sys.argv[1:]; print('-' if 'null' in (a,b) or float(a)==0 else '%.2f'%(float(b)/float(a)))" "$1" "$2"; }
echo "simulator vs live on $cores cores (work $work): live/sim ratios; >25% apart needs a reason (docs/live.md, "Simulator vs live")"
printf '%-30s %-9s %12s %12s %7s\n' row metric sim live ratio
i=0
for row in "${rows[@]}"; do
  i=$((i + 1)) # each row writes to its own folders
  declare -A v=()
  for rt in sim live; do
    extra=()
    [ "$rt" = live ] && extra=("${live[@]}")
    # The live search is set beside the simulator's (live/sim per core-second
    # the probes received, docs/capacity.md, "Live searches"); it refuses a
    # simulator search that found no capacity, so only then.
    capx=()
    [ "$rt" = live ] && [ "${v[cap-sim]:-null}" != null ] && capx=(--sim-capacity "$out/$i-cap-sim/capacity.json")
    # shellcheck disable=SC2086 # $row holds several flags
    "$bin" capacity --system $row "${hw[@]}" "${extra[@]}" "${capx[@]}" --out "$out/$i-cap-$rt" >/dev/null 2>&1 || true
    cap=$(field "$out/$i-cap-$rt/capacity.json" "r['systems'][0]['capacity_rps'] if 'systems' in r else r['capacity_rps']")
    v[cap-$rt]=$cap
    if [ "$rt" = live ] && [ ${#capx[@]} -gt 0 ]; then
      v[core-sim]=$(field "$out/$i-cap-live/capacity.json" "round(r['sim']['capacity_per_core_s']) if r.get('sim') else None")
      v[core-live]=$(field "$out/$i-cap-live/capacity.json" "round(r['capacity_per_core_s']) if r.get('capacity_per_core_s') else None")
    fi
    if [ "$cap" = null ]; then continue; fi
    half=$(python3 -c "print(round($cap/2))")
    for fault in "" crash; do
      args=(run --system $row "${hw[@]}" "${extra[@]}" --rate "$half" --duration 10s --out "$out/$i-run-$rt$fault")
      [ -n "$fault" ] && args+=(--fault crash)
      "$bin" "${args[@]}" >/dev/null 2>&1 || true
      js=$(echo "$out/$i-run-$rt$fault"/2*/run.json)
      if [ -z "$fault" ]; then
        v[p50-$rt]=$(field "$js" "r['latency_ms']['p50']")
        v[p99-$rt]=$(field "$js" "r['latency_ms']['p99']")
      else
        v[rec-$rt]=$(field "$js" "r['recovery_time_s']")
      fi
    done
  done
  for m in cap core p50 p99 rec; do
    s=${v[$m-sim]:-null}; l=${v[$m-live]:-null}
    printf '%-30s %-9s %12s %12s %7s\n' "$row" "$(case $m in cap) echo 'cap r/s';; core) echo 'cap/core';; p50) echo 'p50 ms';; p99) echo 'p99 ms';; rec) echo 'recov s';; esac)" "$s" "$l" "$(ratio "$s" "$l")"
  done
  unset v
done
