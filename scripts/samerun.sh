#!/usr/bin/env bash
# samerun.sh [BASE]: checks that the working tree's bench gives the same
# results as BASE's (default HEAD) on a fixed list of configurations: every
# run.json (less its host block, the only wall-clock part), timeseries.csv and
# events.jsonl must be byte-identical. Use it for changes that must not move
# any figure (refactors, speed work); a change that moves figures on purpose
# regenerates results/baseline/ instead (docs/contributing.md).
#
#   scripts/samerun.sh            # working tree against HEAD
#   scripts/samerun.sh a8bb839    # working tree against a commit
#   CONFIGS_FILE=my.txt scripts/samerun.sh   # one configuration a line
#   NEW_KEYS=1 scripts/samerun.sh 4aa2b81     # keys the base lacks are left out
#   NEW_KEYS=1 NEW_FLAGS=--chaining=false scripts/samerun.sh 04b8af9
#       # flags given to the working tree's bench only: a new option whose
#       # value keeps the old behaviour (barrier's unchained job graph);
#       # run.json is compared as with NEW_KEYS=1, less the replay line,
#       # which names the extra flags
#
# With NEW_KEYS=1 (needs jq), run.json is compared key by key: every key of
# the base's run.json must keep its value; keys only the working tree writes
# (a new metric, a new counter) are left out. For a change that adds a
# measurement and must move none of the old ones.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-HEAD}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git worktree add --detach "$work/base" "$base" >/dev/null 2>&1
(cd "$work/base" && go build -o "$work/bench-base" ./cmd/bench)
go build -o "$work/bench-new" ./cmd/bench

# Each line: flags for `bench run` (the default duration is cut to keep it quick).
default_configs=$(cat <<'CFG'
--system barrier --fault crash --duration 8s
--system barrier --variant unaligned --fault crash --duration 6s --fault throttle@2s-4s:edge=split->count,rate=500/s
--system barrier --variant aligned-timeout --fault reorder --duration 6s
--system barrier --variant sync --sink plain --fault crash --duration 6s
--system barrier --failover full --incremental=true --fault crash@3s:worker=1 --duration 6s
--system barrier --workload grep --fault partition@2s-4s:worker=1 --duration 6s
--system barrier --workload bank --fault pause@2s-3s:worker=2 --duration 6s
--system barrier --fault store-down@2s-3s --fault crash@4s:master --duration 6s
--system snapshot --variant cl --fault crash --duration 6s
--system snapshot --variant lai-yang --workload bank-p2p --fault reorder --duration 6s
--system snapshot --variant mattern --workload bank-p2p --fault reorder --duration 6s
--system lineage --fault crash --duration 6s
--system lineage --variant upstream --workload bank --fault crash --duration 6s
--system stormack --fault crash --fault reorder --duration 6s
--system stormack --ackers 0 --workload grep --fault crash --duration 6s
--system none --fault crash --duration 6s
--system kstreams --fault crash --duration 6s
--system trident --fault crash --duration 6s
--system trident --spout opaque --workload grep --fault crash@2.06s:worker=1 --fault reorder --duration 6s --ack-timeout 1s
--system trident --spout non-transactional --fault crash@3s:worker=0 --duration 6s --ack-timeout 1s
CFG
)
configs=${CONFIGS_FILE:+$(cat "$CONFIGS_FILE")}
configs=${configs:-$default_configs}

strip_host() { sed '/^  "host": {/,$d' "$1"; }

# base_keys_only NEW BASE: NEW's run.json less the keys (at any depth)
# that BASE's lacks, and less the host block, sorted.
base_keys_only() {
  jq -S --slurpfile base "$2" '
    def keep($b): if type == "object" and ($b|type) == "object"
      then with_entries(select(.key as $k | $b | has($k)) | .key as $k | .value |= keep($b[$k]))
      elif type == "array" and ($b|type) == "array" and length == ($b|length)
      then [range(0; length) as $i | .[$i] | keep($b[$i])]
      else . end;
    keep($base[0]) | del(.host)' "$1"
}
same_json() {
  if [ -n "${NEW_FLAGS:-}" ]; then
    # The replay line names the extra flags (it must, to reproduce the
    # run); every other key of the base keeps its value.
    diff <(jq -S 'del(.host, .replay)' "$1") <(base_keys_only "$2" "$1" | jq -S 'del(.replay)') >/dev/null
  elif [ "${NEW_KEYS:-}" = 1 ]; then
    diff <(jq -S 'del(.host)' "$1") <(base_keys_only "$2" "$1") >/dev/null
  else
    diff <(strip_host "$1") <(strip_host "$2") >/dev/null
  fi
}

fail=0 n=0
while IFS= read -r cfg; do
  [ -z "$cfg" ] && continue
  n=$((n+1))
  for side in base new; do
    rc=0 extra=""
    [ $side = new ] && extra=${NEW_FLAGS:-}
    # shellcheck disable=SC2086 # $cfg holds several flags
    "$work/bench-$side" run $cfg $extra --out "$work/out-$side-$n" >"$work/log-$side-$n" 2>&1 </dev/null || rc=$?
    echo "$rc" >"$work/rc-$side-$n"
  done
  if [ ! -e "$work/out-base-$n/latest" ]; then
    echo "NO RUN    $cfg (base exit $(cat "$work/rc-base-$n"): $(head -n 1 "$work/log-base-$n"))"; fail=1; continue
  fi
  if [ ! -e "$work/out-new-$n/latest" ]; then
    echo "DIFFERENT $cfg (no run: exit $(cat "$work/rc-new-$n"): $(head -n 1 "$work/log-new-$n"))"; fail=1; continue
  fi
  a=$(readlink -f "$work/out-base-$n/latest") b=$(readlink -f "$work/out-new-$n/latest")
  same=1
  cmp -s "$work/rc-base-$n" "$work/rc-new-$n" || same=0
  if ! same_json "$a/run.json" "$b/run.json"; then same=0; fi
  for f in timeseries.csv events.jsonl; do
    cmp -s "$a/$f" "$b/$f" || same=0
  done
  if [ $same = 1 ]; then echo "same      $cfg (exit $(cat "$work/rc-new-$n"))"; else echo "DIFFERENT $cfg"; fail=1; fi
done <<<"$configs"
if [ $fail = 0 ]; then echo "all $n configurations identical to $base"; else echo "some configurations differ from $base"; exit 1; fi
