#!/usr/bin/env bash
# The mutation score (docs/torture.md, "Mutants"): for every protocol mutant,
# build bench with its tag, run a torture campaign that stops at the first
# broken run and shrinks it, and report the runs until caught and the faults
# after shrinking. A mutant that no run of the campaign catches exits 3 here.
#
#   scripts/mutants.sh [SEED] [RUNS]     (defaults: seed 1, 200 runs)
#
# Runs are one at a time per mutant, --jobs 2. The pinned catching seeds CI
# replays are the pinned list below.
#   scripts/mutants.sh --pinned          replay each mutant's pinned catching run (CI)
#   scripts/mutants.sh --milestones [RUNS]
#                                        the milestone mutants against seeds 1-5: the
#                                        run that first caught each, with aiming and
#                                        with --aim=false (docs/torture.md)
set -euo pipefail
cd "$(dirname "$0")/.."

# The shrunk replays `scripts/mutants.sh 1 200` printed (docs/torture.md):
# each must exit 3 in its mutant's build, or the exit code after a last
# "|" (trident's commit_out_of_order holds back the batches after the one
# it committed early: the run cannot drain, exit 4, which torture reports
# as a liveness failure; docs/trident.md).
pinned=(
  "ftbench_mutant_early_commit|--system barrier --workload wordcount --seed 11260839177826854807 --duration 700ms --parallelism 2 --workers 3 --rate 2400 --fault crash@502ms:worker=1,restart=1s --checkpoint-interval 500ms --max-concurrent-checkpoints 2 --sink 2pc --observe"
  "ftbench_mutant_double_commit|--system barrier --workload wordcount --seed 11260839177826854807 --duration 1s --parallelism 2 --workers 3 --rate 2400 --fault crash@700ms:worker=1 --checkpoint-interval 500ms --max-concurrent-checkpoints 2 --sink 2pc --observe"
  "ftbench_mutant_unaligned_drop_channel_state|--system barrier --variant unaligned --workload wordcount --seed 11260839177826854807 --duration 500ms --parallelism 2 --workers 3 --rate 2400 --checkpoint-interval 500ms --sink 2pc --checkpoints-retained 64 --observe"
  "ftbench_mutant_early_ack|--system stormack --workload wordcount --seed 11260839177826854807 --duration 500ms --parallelism 2 --workers 3 --rate 2400 --fault crash@0s:worker=1,restart=1s --ack-timeout 1s --observe"
  "ftbench_mutant_no_replay|--system lineage --workload wordcount --seed 11260839177826854807 --duration 3.2s --parallelism 2 --workers 3 --rate 2400 --fault crash@3.018s:worker=1,restart=300ms --batch-interval 500ms --checkpoint-every 2 --speculation true --observe"
  "ftbench_mutant_cl_drop_channel_state|--system snapshot --variant cl --workload bank-p2p --seed 11260839177826854807 --duration 3s --parallelism 2 --workers 3 --rate 2400 --snapshot-interval 500ms --observe"
  "ftbench_mutant_unfenced_zombie|--system barrier --workload wordcount --seed 13346477929581671880 --duration 2.6s --parallelism 4 --workers 2 --slots 16 --rate 3900 --fault partition@509ms-2.6s:worker=0 --checkpoint-interval 500ms --checkpoints-retained 64 --failover full --max-concurrent-checkpoints 2 --sink 2pc --tolerable-failed-checkpoints 3 --observe"
  "ftbench_mutant_epoch_first|--system barrier --workload wordcount --seed 11260839177826854807 --duration 1s --parallelism 2 --workers 3 --rate 2400 --fault crash@506ms:worker=0 --checkpoint-interval 500ms --sink 2pc --observe"
  "ftbench_mutant_discard_before_durable|--system barrier --variant sync --workload wordcount --seed 8435646525660163353 --duration 1.7s --parallelism 2 --workers 4 --rate 3300 --fault crash@1.509s:master,restart=300ms --checkpoint-interval 500ms --checkpoint-timeout 200ms --checkpoints-retained 1 --failover region --full-checkpoint-every 2 --incremental true --sink 2pc --tolerable-failed-checkpoints 0 --observe"
  "ftbench_mutant_early_wal_clean|--system lineage --variant upstream --workload wordcount --seed 6691608647826748915 --duration 1.7s --parallelism 4 --workers 4 --rate 8100 --fault crash@1.525s:master,restart=300ms --batch-interval 250ms --checkpoint-every 2 --shuffle-partitions 0 --speculation false --observe"
  "ftbench_mutant_sink_delete_before_commit|--system snapshot --variant cl --workload wordcount --seed 6691608647826748915 --duration 800ms --parallelism 4 --workers 4 --rate 8100 --fault crash@612ms:worker=3,restart=300ms --checkpoint-interval 200ms --observe"
  "ftbench_mutant_timeout_commits|--system stormack --workload wordcount --seed 8435646525660163353 --duration 1.1s --parallelism 2 --workers 4 --rate 3300 --fault partition@0s-1.085s:worker=1 --ack-timeout 1s --ackers workers --max-spout-pending 5000 --offset-commit-interval 1s --observe"
  "ftbench_mutant_offsets_outside_txn|--system kstreams --workload wordcount --seed 11260839177826854807 --duration 4.4s --parallelism 2 --workers 3 --rate 2400 --fault crash@2.246s:master,restart=2s --fault crash@4.247s:worker=1,restart=100ms --cache-max-bytes 2048 --commit-interval 300ms --guarantee exactly-once-v2 --rebalance eager --session-timeout detect-delay --standby-replicas 0 --static-membership true --threads auto --transactional-stores false --observe"
  "ftbench_mutant_changelog_after_commit|--system kstreams --workload wordcount --seed 11260839177826854807 --duration 700ms --parallelism 2 --workers 3 --rate 2400 --fault crash@530ms:worker=1,restart=100ms --cache-max-bytes 2048 --commit-interval 300ms --guarantee exactly-once-v2 --rebalance eager --session-timeout detect-delay --standby-replicas 0 --static-membership true --threads auto --transactional-stores false --observe"
  "ftbench_mutant_no_fencing|--system kstreams --workload wordcount --seed 17021545621111797301 --duration 3.8s --parallelism 1 --workers 1 --rate 1600 --fault pause@2.849s-3.705s:worker=0 --cache-max-bytes 10485760 --commit-interval 50ms --guarantee exactly-once-v2 --rebalance cooperative --session-timeout detect-delay --standby-replicas 0 --static-membership false --threads auto --transactional-stores false --observe"
  "ftbench_mutant_no_require_stable|--system kstreams --workload wordcount --seed 3157840017346158763 --duration 1.5s --parallelism 4 --workers 3 --slots 6 --rate 4200 --fault partition@759ms-1.259s:worker=0 --cache-max-bytes 2048 --commit-interval 50ms --guarantee exactly-once-v2 --rebalance eager --session-timeout 500ms --standby-replicas 0 --static-membership false --threads auto --transactional-stores true --observe"
  "ftbench_mutant_no_txid_check|--system trident --workload wordcount --seed 17687891035833027399 --duration 1.4s --parallelism 1 --workers 1 --slots 10 --rate 4000 --fault crash@1.3s:worker=0,restart=300ms --ack-timeout 500ms --batch-emit-interval 200ms --max-batches-pending 1 --spout transactional --state spout --observe"
  "ftbench_mutant_opaque_no_prev|--system trident --workload wordcount --seed 11260839177826854807 --duration 2.2s --parallelism 2 --workers 3 --rate 2400 --fault crash@2.073s:worker=1 --ack-timeout 500ms --batch-emit-interval 500ms --max-batches-pending 3 --spout opaque --state spout --observe"
  "ftbench_mutant_no_emitter_meta|--system trident --workload wordcount --seed 13403040954739103871 --duration 4.6s --parallelism 3 --workers 2 --slots 16 --rate 2100 --fault crash@3.085s:worker=0,restart=300ms --fault pause@3.097s-4.6s:worker=1 --ack-timeout 500ms --batch-emit-interval 200ms --max-batches-pending 3 --spout transactional --state spout --observe"
  "ftbench_mutant_commit_out_of_order|--system trident --workload wordcount --seed 14510984340520425658 --duration 3.5s --parallelism 1 --workers 4 --rate 3600 --fault throttle@599ms-1.556s:edge=source->split,rate=2315/s --fault partition@647ms-2.147s:workers=1,3|0,2 --fault throttle@1.785s-1.977s:edge=split->count,rate=1063/s --fault throttle@2.374s-2.92s:edge=source->split,rate=3400/s --ack-timeout 2s --batch-emit-interval 500ms --max-batches-pending 3 --spout transactional --state spout --observe|4"
)
if [ "${1:-}" = "--pinned" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  status=0
  # The same runs pass in the normal build: the mutant is what breaks them.
  go build -o "$tmp/bench" ./cmd/bench
  # want M: the exit code M's run must give in its mutant's build (3
  # unless M ends with "|CODE"); args M: its flags.
  want() { if [[ $1 =~ \|([0-9])$ ]]; then echo "${BASH_REMATCH[1]}"; else echo 3; fi; }
  args() { local a=${1#*|}; [[ $a =~ \|[0-9]$ ]] && a=${a%|*}; echo "$a"; }
  for m in "${pinned[@]}"; do
    args=$(args "$m")
    # shellcheck disable=SC2086 # $args holds several flags
    if ! "$tmp/bench" run $args --out "$tmp/runs" >"$tmp/out" 2>&1; then
      echo "FAILS IN THE NORMAL BUILD: ${m%%|*}'s run"; cat "$tmp/out"; status=1
    fi
  done
  for m in "${pinned[@]}"; do
    tag=${m%%|*}
    args=$(args "$m")
    go build -tags "$tag" -o "$tmp/bench" ./cmd/bench
    code=0
    # shellcheck disable=SC2086 # $args holds several flags
    "$tmp/bench" run $args --out "$tmp/runs" >"$tmp/out" 2>&1 || code=$?
    if [ "$code" -eq "$(want "$m")" ]; then
      echo "caught   $tag (exit $code)"
    else
      echo "MISSED   $tag: exit $code, want $(want "$m")"; cat "$tmp/out"; status=1
    fi
  done
  exit $status
fi

# The milestone mutants: tag | torture arguments (docs/torture.md, "Aiming
# at milestones"). Each must be caught within 200 runs by each of seeds 1-5.
milestone_mutants=(
  "ftbench_mutant_discard_before_durable|--system barrier"
  "ftbench_mutant_early_wal_clean|--system lineage"
  "ftbench_mutant_sink_delete_before_commit|--system snapshot --workload wordcount"
  "ftbench_mutant_timeout_commits|--system stormack"
)
if [ "${1:-}" = "--milestones" ]; then
  runs=${2:-200}
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  status=0
  printf '%-42s %-12s %-7s %-7s %-7s %-7s %-7s\n' mutant torture seed1 seed2 seed3 seed4 seed5
  for m in "${milestone_mutants[@]}"; do
    tag=${m%%|*}
    args=${m#*|}
    go build -tags "$tag" -o "$tmp/bench" ./cmd/bench
    # Only the aimed row must catch on every seed; --aim=false shows
    # what aiming adds.
    for aim in true false; do
      row=$(printf '%-42s %-12s' "$tag" "--aim=$aim")
      for seed in 1 2 3 4 5; do
        # shellcheck disable=SC2086 # $args holds several flags
        out=$("$tmp/bench" torture $args --aim="$aim" --runs "$runs" --seed "$seed" --jobs 2 --stop \
              --out "$tmp/$tag-$aim-$seed" 2>/dev/null || true)
        first=$(grep -m1 -oE '^run [0-9]+ CLAIM BROKEN' <<<"$out" | grep -oE '[0-9]+' || true)
        if [ -z "$first" ]; then
          row+=$(printf ' %-7s' missed)
          [ "$aim" = true ] && status=3
        else
          row+=$(printf ' %-7s' "$((first + 1))")
        fi
      done
      echo "$row"
    done
  done
  exit $status
fi

seed=${1:-1}
runs=${2:-200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# tag | torture arguments
mutants=(
  "ftbench_mutant_early_commit|--system barrier --sink 2pc"
  "ftbench_mutant_double_commit|--system barrier --sink 2pc"
  "ftbench_mutant_unaligned_drop_channel_state|--system barrier --variant unaligned --sink 2pc"
  "ftbench_mutant_early_ack|--system stormack"
  "ftbench_mutant_no_replay|--system lineage"
  "ftbench_mutant_cl_drop_channel_state|--system snapshot --variant cl --workload bank-p2p"
  "ftbench_mutant_unfenced_zombie|--system barrier --sink 2pc"
  "ftbench_mutant_epoch_first|--system barrier --sink 2pc"
  "ftbench_mutant_offsets_outside_txn|--system kstreams"
  "ftbench_mutant_changelog_after_commit|--system kstreams"
  "ftbench_mutant_no_fencing|--system kstreams"
  "ftbench_mutant_no_require_stable|--system kstreams"
  "ftbench_mutant_no_txid_check|--system trident"
  "ftbench_mutant_opaque_no_prev|--system trident"
  "ftbench_mutant_no_emitter_meta|--system trident --spout transactional"
  "${milestone_mutants[@]}"
)
status=0
printf '%-46s %-8s %-8s %s\n' mutant caught-by faults shrunk-replay
for m in "${mutants[@]}"; do
  tag=${m%%|*}
  args=${m#*|}
  go build -tags "$tag" -o "$tmp/bench-$tag" ./cmd/bench
  # shellcheck disable=SC2086 # $args holds several flags
  out=$("$tmp/bench-$tag" torture $args --runs "$runs" --seed "$seed" --jobs 2 --stop --shrink 1 \
        --out "$tmp/$tag" 2>/dev/null || true)
  first=$(grep -m1 -oE '^run [0-9]+ CLAIM BROKEN' <<<"$out" | grep -oE '[0-9]+' || true)
  shrunk=$(grep -m1 -E '^shrunk run' <<<"$out" || true)
  if [ -z "$first" ]; then
    printf '%-46s %-8s %-8s %s\n' "$tag" "not caught" "-" "-"
    status=3
    continue
  fi
  faults=$(sed -E 's/^shrunk run [0-9]+: [0-9]+ faults -> ([0-9]+),.*/\1/' <<<"$shrunk")
  replay=$(sed -E 's/.*  replay: //' <<<"$shrunk")
  printf '%-46s %-8s %-8s %s\n' "$tag" "$((first + 1))" "$faults" "$replay"
done
exit $status
