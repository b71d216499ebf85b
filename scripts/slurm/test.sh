#!/usr/bin/env bash
# A sharded sweep and a sharded torture campaign on a real single-node Slurm:
# installs slurm-wlm and munge from the distribution's packages (if missing),
# starts munged, slurmctld and slurmd on localhost with a minimal slurm.conf of
# its own (SLURM_CONF; /etc/slurm is left alone), submits each as a 4-task
# array with its merge job (scripts/slurm/submit.sh), runs the same sweep and
# campaign locally, and checks that the merged curve.json and curve.csv, and
# the campaign's summary.json, are byte-identical to the local ones. A third
# campaign runs the deliberately broken barrier sink (-tags
# ftbench_mutant_early_commit): a shard exits 3, and the merge job must still run
# (afterany), report the broken claim and exit 3 like the local campaign. It
# stops the daemons it started when it ends, whatever happens.
#
# Needs root and apt-get. Outside CI it skips with one line where it cannot
# have them; under CI (CI=true) that is a failure. KEEP=1 keeps the work folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS

skip() {
  if [ "${CI:-}" = true ]; then
    echo "slurm test: FAILED (CI=true, so no skipping): $*" >&2
    exit 1
  fi
  echo "slurm test: skipped: $*"
  exit 0
}
fail() { echo "slurm test: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || skip "needs root to install and start Slurm"
work=$(mktemp -d /tmp/ftbench-slurm.XXXXXX)
chmod 755 "$work"

# --- packages -----------------------------------------------------------------
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null ||
   ! command -v munged >/dev/null; then
  command -v apt-get >/dev/null || skip "slurm-wlm and munge are not installed and there is no apt-get"
  echo "slurm test: installing slurm-wlm and munge"
  # Keep the packages' init scripts from starting daemons during the
  # install: this script starts, and stops, its own.
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
  fi
  ok=true
  { DEBIAN_FRONTEND=noninteractive apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge; } \
    >"$work/apt.log" 2>&1 || ok=false
  [ -z "$policy" ] || rm -f "$policy"
  $ok || skip "could not install slurm-wlm and munge ($(tail -n 1 "$work/apt.log"); log: $work/apt.log)"
fi
echo "slurm test: packages ready after $((SECONDS - start))s"

# --- daemons ------------------------------------------------------------------
munged_pid="" array_jobs=()
cleanup() {
  status=$?
  set +e
  [ ${#array_jobs[@]} -eq 0 ] || scancel "${array_jobs[@]}" 2>/dev/null
  # Stop what this script started, by process id, and wait for it to go:
  # the daemons, then munged, which they use until they exit.
  for pid in $(cat "$work/slurmd.pid" "$work/slurmctld.pid" 2>/dev/null) $munged_pid; do
    kill "$pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  if [ "$status" -eq 0 ] && [ "${KEEP:-}" != 1 ]; then
    rm -rf "$work"
  else
    echo "slurm test: work folder kept: $work (logs in $work/log)" >&2
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p /etc/munge /var/log/munge /run/munge /var/lib/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
  fi
  chown -R munge:munge /etc/munge /var/log/munge /run/munge /var/lib/munge
  chmod 400 /etc/munge/munge.key
  chmod 700 /etc/munge
  runuser -u munge -- /usr/sbin/munged || fail "munged did not start (see /var/log/munge/munged.log)"
  munged_pid=$(cat /run/munge/munged.pid 2>/dev/null) || fail "munged wrote no /run/munge/munged.pid"
  munge -n | unmunge >/dev/null || fail "munge does not work"
fi

host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ { print int($2 / 1024 * 0.8) }' /proc/meminfo)
mkdir -p "$work/state" "$work/spool" "$work/log"
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=ftbench-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
/usr/sbin/slurmctld || fail "slurmctld did not start (see $work/log/slurmctld.log)"
/usr/sbin/slurmd || fail "slurmd did not start (see $work/log/slurmd.log)"
for i in $(seq 60); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1)
  case $state in idle*|mix*|alloc*) break ;; esac
  [ "$i" -lt 60 ] || fail "the node is not idle after 30s (state '$state'; see $work/log)"
  sleep 0.5
done
echo "slurm test: single-node Slurm up ($host, $cpus CPUs) after $((SECONDS - start))s"

# --- the jobs -------------------------------------------------------------------
bin=$work/bench broken_bin=$work/bench-broken
go build -o "$bin" ./cmd/bench
go build -tags ftbench_mutant_early_commit -o "$broken_bin" ./cmd/bench
# Small, so the test stays well under five minutes on two cores: 4 points
# (one per shard) x 2 seeds of 2 s, 8 torture runs of 2 s, and 8 runs of the
# broken build (2PC sink pinned: torture draws sinks, and only 2PC can commit
# early; drawn durations: its early commit needs a few seconds to
# show; run 0 catches it) with one short shrink.
sweep=(sweep --system barrier/aligned,barrier/unaligned --param checkpoint-interval=1s,2s --seeds 1-2
  --duration 2s --fault crash)
campaign=(torture --system barrier --runs 8 --seed 1 --duration 2s)
broken=(torture --system barrier --sink 2pc --runs 8 --seed 1 --shrink 1 --shrink-budget 10)
jobs=()
submit() {
  local what=$1 b=$2 ids a m
  shift 2
  ids=$(scripts/slurm/submit.sh --tasks 4 --bin "$b" "$work/$what" "$@") || fail "submitting the $what"
  read -r _ a _ m <<<"$ids"
  array_jobs+=("$a" "$m")
  jobs+=("$what:$a:$m")
  echo "slurm test: $what submitted: array $a, merge $m"
}
submit sweep "$bin" "${sweep[@]}"
submit campaign "$bin" "${campaign[@]}"
submit broken "$broken_bin" "${broken[@]}"

# The same sweep and campaign, unsharded, while Slurm runs them.
"$bin" "${sweep[@]}" --out "$work/local-sweep" >"$work/log/local-sweep.out" 2>&1 ||
  fail "the local sweep failed (see $work/log/local-sweep.out)"
declare -A want=([sweep]=0 [campaign]=0 [broken]=0)
"$bin" "${campaign[@]}" --out "$work/local-campaign" >"$work/log/local-campaign.out" 2>&1 || want[campaign]=$?
"$broken_bin" "${broken[@]}" --out "$work/local-broken" >"$work/log/local-broken.out" 2>&1 || want[broken]=$?
[ "${want[broken]}" -eq 3 ] ||
  fail "the broken build's local campaign exited ${want[broken]}, want 3 (see $work/log/local-broken.out)"

# A squeue that fails (slurmctld busy under load) says nothing about the
# jobs: ask again rather than take its silence for "all done".
for i in $(seq 480); do
  if queued=$(squeue -h -j "$(IFS=,; echo "${array_jobs[*]}")" 2>/dev/null) && [ -z "$queued" ]; then
    break
  fi
  [ "$i" -lt 480 ] || fail "the jobs did not finish within 4 minutes: $(squeue -h)"
  sleep 0.5
done

exit_code() { scontrol -o show job "$1" | grep -o ' ExitCode=[0-9]*' | cut -d= -f2; }
for j in "${jobs[@]}"; do
  IFS=: read -r what a m <<<"$j"
  n=$(find "$work/$what" -maxdepth 1 -name 'shard-*-of-4' | wc -l)
  [ "$n" -eq 4 ] || fail "$what: $n of 4 shard folders in $work/$what (logs: $work/$what/logs)"
  code=$(exit_code "$m")
  [ "$code" = "${want[$what]}" ] ||
    fail "$what: the merge job exited ${code:-?}, want ${want[$what]}: $(tail -n 3 "$work/$what"/logs/merge-*.out)"
done
# The broken campaign's merge ran although a shard task failed. slurmctld
# may record a finished task's exit code a moment after squeue stops
# listing it (a loaded machine once failed this check with every task's
# exit logged as 3), so ask for up to 30 s.
broken_array=$(cut -d: -f2 <<<"${jobs[2]}")
for i in $(seq 60); do
  scontrol -o show job "$broken_array" 2>/dev/null | grep -q ' ExitCode=3:' && break
  [ "$i" -lt 60 ] || fail "no task of the broken campaign's array exited 3: $(scontrol -o show job "$broken_array" 2>&1 | grep -o 'JobId=[^ ]* \| JobState=[^ ]* \| ExitCode=[^ ]*' | tr '\n' ' ')"
  sleep 0.5
done
grep -q 'CLAIM BROKEN' "$work/broken"/logs/merge-*.out || fail "the broken campaign's merge job did not report the broken claim"
cmp "$work/local-sweep/curve.json" "$work/sweep/merged/curve.json" || fail "merged curve.json differs from the local sweep's"
cmp "$work/local-sweep/curve.csv" "$work/sweep/merged/curve.csv" || fail "merged curve.csv differs from the local sweep's"
[ -s "$work/sweep/merged/report/summary.md" ] || fail "the merge job wrote no report"
for c in campaign broken; do
  cmp "$work/local-$c/summary.json" "$work/$c/merged/summary.json" ||
    fail "merged $c summary.json differs from the local campaign's"
done
echo "slurm test: ok in $((SECONDS - start))s: 4-shard sweep and torture campaigns merged on Slurm equal the local runs" \
  "(curve.json, curve.csv, summary.json byte-identical; the broken build's shard exited 3, its merge ran and exited 3)"
