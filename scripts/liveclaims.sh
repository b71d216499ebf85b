#!/usr/bin/env bash
# Every system x {no fault, crash} on the live runtime (engine/live), N runs
# each (default 10, seeds 1..N): prints one line per run and a summary, and
# exits 3 if any run broke its claim (or an exactly-once system showed a
# duplicate or a loss). Live runs take wall-clock time: about 6 s each here.
#
#   scripts/liveclaims.sh [N] [extra bench run flags...]
#   scripts/liveclaims.sh 10 --work none
#   ROWS="snapshot --variant cl" scripts/liveclaims.sh 5    # some systems only (rows separated by ';')
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
shift || true
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin="$out/bench"
go build -o "$bin" ./cmd/bench
bad=0
total=0
rows=("none" "barrier --variant aligned" "barrier --variant unaligned" "stormack --ack-timeout 2s" "lineage" "snapshot --variant cl")
[ -n "${ROWS:-}" ] && IFS=';' read -r -a rows <<<"$ROWS"
for sys in "${rows[@]}"; do
  for fault in "" "crash"; do
    for seed in $(seq 1 "$n"); do
      args=(run --runtime live --system $sys --duration 4s --rate 4000 --seed "$seed" --out "$out/res$total" "$@")
      [ -n "$fault" ] && args+=(--fault "$fault")
      set +e
      "$bin" "${args[@]}" >"$out/log" 2>&1
      code=$?
      set -e
      js=$(echo "$out/res$total"/2*/run.json)
      line=$(python3 - "$js" "$code" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
eo = r["claimed_guarantee"] == "exactly-once"
ok = r["claim_held"] and sys.argv[2] != "3" and (not eo or (r["duplicates"] == 0 and r["lost"] == 0))
print(("ok  " if ok else "BAD ") + "exit=%s held=%s drained=%s dup=%d lost=%d wrong=%d" % (
    sys.argv[2], r["claim_held"], r["drained"], r["duplicates"], r["lost"], r["wrong_keys"]))
PY
)
      total=$((total + 1))
      case "$line" in BAD*) bad=$((bad + 1)) ;; esac
      printf '%-32s %-6s seed %-3s %s\n' "$sys" "${fault:-none}" "$seed" "$line"
    done
  done
done
echo "$total runs, $bad broke a claim"
[ "$bad" -eq 0 ] || exit 3
