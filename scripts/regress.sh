#!/usr/bin/env bash
# The CI regression sweep: recovery time vs checkpoint interval for every
# system that checkpoints, and duplicates/losses per system under a crash,
# compared point by point with the committed baselines in results/baseline/.
#
#   scripts/regress.sh            compare (exit 3 if a point moved outside tolerance)
#   scripts/regress.sh --update   rewrite the baselines deliberately (commit them with
#                                 the change that moved them, e.g. a cost-model default)
#
# The simulator is deterministic, so the tolerances can be tight.
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
(
  cd "$out"
  "$bin" sweep --system barrier/aligned,barrier/unaligned,snapshot/cl "${common[@]}" \
    --param checkpoint-interval=500ms,1s,2s,4s --out checkpoint-interval >/dev/null
  "$bin" sweep --system lineage/parallel "${common[@]}" \
    --param checkpoint-every=1,2,5,10 --out lineage-checkpoint-every >/dev/null
  "$bin" sweep --system none,stormack,lineage,barrier,snapshot "${common[@]}" \
    --out crash-per-system >/dev/null
)

status=0
for name in checkpoint-interval lineage-checkpoint-every crash-per-system; do
  base="results/baseline/$name.json"
  if [ "$update" = "--update" ]; then
    "$bin" regress --baseline "$base" --current "$out/$name" --update --metrics recovery_time_s,duplicates,lost
  else
    echo "== regress $name"
    "$bin" regress --baseline "$base" --current "$out/$name" || status=$?
  fi
done
exit $status
