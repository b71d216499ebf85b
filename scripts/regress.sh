#!/usr/bin/env bash
# The CI regression sweep: recovery time vs checkpoint interval for every
# system that checkpoints, and duplicates/losses per system under a crash,
# compared point by point with the committed baselines in results/baseline/.
#
#   scripts/regress.sh            compare (exit 3 if a point moved outside tolerance)
#   scripts/regress.sh --update   rewrite the baselines deliberately (commit them with
#                                 the change that moved them, e.g. a cost-model default)
#
# The simulator is deterministic, so the tolerances can be tight: verdicts and
# claim_held are compared exactly, and so are the duplicates and losses of
# systems that claim exactly-once. The script also fails (3, else 4) when a
# sweep had a run that broke a claim or stopped undrained, even if the
# baseline agrees; --update then writes no baseline for that sweep.
set -euo pipefail
cd "$(dirname "$0")/.."
update=${1:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin="$out/bench"
go build -o "$bin" ./cmd/bench

common=(--workload wordcount --fault crash --duration 10s --rate 20000 --seeds 1-2)
# Sweep into relative folders so the command recorded in a baseline does not
# name a temporary path.
# A sweep exits 3 if a run broke a claim and 4 if one stopped undrained,
# after finishing every run and writing its curve (its one-line reason goes
# to stderr); remember the code and carry on, so every curve is compared.
declare -A swept
sweep() {
  local name=$1
  shift
  local code=0
  (cd "$out" && "$bin" sweep "$@" "${common[@]}" --out "$name" >/dev/null) || code=$?
  swept[$name]=$code
}
sweep checkpoint-interval --system barrier/aligned,barrier/unaligned,snapshot/cl \
  --param checkpoint-interval=500ms,1s,2s,4s
sweep lineage-checkpoint-every --system lineage/parallel --param checkpoint-every=1,2,5,10
sweep crash-per-system --system none,stormack,lineage,barrier,snapshot,trident
sweep kstreams-commit-interval --system kstreams --param commit-interval=100ms,500ms,2s

# worst keeps the most severe code: 3 (a claim broke, or a regression) over
# 4 (undrained) over anything else non-zero.
status=0
worst() {
  case "$1/$status" in
    0/* | */3) ;;
    3/* | 4/*) status=$1 ;;
    */4) ;;
    *) status=$1 ;;
  esac
}
for name in checkpoint-interval lineage-checkpoint-every crash-per-system kstreams-commit-interval; do
  base="results/baseline/$name.json"
  code=${swept[$name]}
  case $code in
    0) ;;
    3) echo "== sweep $name: a run broke a claim (exit 3)" ;;
    4) echo "== sweep $name: a run stopped undrained (exit 4)" ;;
    *) echo "== sweep $name failed (exit $code)" ;;
  esac
  worst "$code"
  if [ "$update" = "--update" ]; then
    if [ "$code" != 0 ]; then
      echo "not updating $base: fix the sweep first"
      continue
    fi
    "$bin" regress --baseline "$base" --current "$out/$name" --update \
      --metrics verdict,claim_held,recovery_time_s,duplicates,lost || worst $?
  else
    echo "== regress $name"
    "$bin" regress --baseline "$base" --current "$out/$name" || worst $?
  fi
done
exit $status
