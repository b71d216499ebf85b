#!/usr/bin/env bash
# Submits a sharded sweep or torture campaign to Slurm: an array of shard tasks
# (shard.sbatch) and, after all of them whatever their exit codes, the merge
# job (merge.sbatch). Prints "array JOBID merge JOBID".
#
#   scripts/slurm/submit.sh [--tasks N] [--bin BENCH] [--baseline FILE] RESULTS sweep|torture [bench flags...]
#
#   --tasks N        shards, one array task each (default 4)
#   --bin BENCH      the bench binary, on a file system every node sees
#                    (default: built from this checkout into RESULTS/bench)
#   --baseline FILE  the merge job regresses the merged curve against FILE
#
# RESULTS must be on a shared file system. Partition, account, time limit and
# the like go through sbatch's own environment variables (SBATCH_PARTITION,
# SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...). Logs: RESULTS/logs/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tasks=4 bin="" baseline=""
while [ $# -gt 0 ]; do
  case $1 in
    --tasks) tasks=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ] || ! [[ $tasks =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/slurm/submit.sh [--tasks N] [--bin BENCH] [--baseline FILE] RESULTS sweep|torture [bench flags...]" >&2
  exit 2
fi
results=$1
shift
mkdir -p "$results/logs"
results=$(cd "$results" && pwd)
[ -z "$baseline" ] || baseline=$(realpath "$baseline")
if [ -z "$bin" ]; then
  bin="$results/bench"
  (cd "$here/../.." && go build -o "$bin" ./cmd/bench)
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
export FTBENCH_BIN=$bin
array=$(sbatch --parsable --array="0-$((tasks - 1))" --output="$results/logs/shard-%A_%a.out" \
  --export=ALL "$here/shard.sbatch" "$results" "$@")
array=${array%%;*} # "jobid;cluster" on federated clusters
merge=$(sbatch --parsable --dependency="afterany:$array" --output="$results/logs/merge-%j.out" \
  --export=ALL "$here/merge.sbatch" "$results" ${baseline:+"$baseline"})
merge=${merge%%;*}
echo "array $array merge $merge"
