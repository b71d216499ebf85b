#!/usr/bin/env bash
# Cost of the harness as parallelism grows with the hardware: for each P,
# `bench run --system barrier --parallelism P --workers P --zipf-s 0`
# (uniform keys, the default rate and duration; DURATION=5s in the
# environment shortens the runs, too short for the overload test). The
# sizes run in turn, ROUNDS times over (default 3), so that a slow spell of
# a shared machine falls on every size alike. It prints, per P, the median
# over the rounds of wall and CPU time per appended record, the largest
# peak RSS, whether any run was overloaded, whether every run drained, and
# the median wall and CPU per record over those of the first P. Issue 13
# asks for wall per record at P = 64 within 1.5x of P = 4, under 1.5 GB,
# with no default run overloaded. Needs GNU time (/usr/bin/time) for the
# peak RSS; measure on an idle machine.
#
#   [ROUNDS=N] [DURATION=D] [FLAGS=...] scripts/scaling.sh [P ...]    (default 4 16 64)
set -euo pipefail
cd "$(dirname "$0")/.."
ps=("$@")
[ ${#ps[@]} -gt 0 ] || ps=(4 16 64)
for p in "${ps[@]}"; do
	if ! [[ $p =~ ^[1-9][0-9]*$ ]]; then
		echo "scaling.sh: P must be a positive integer, got '$p'" >&2
		exit 2
	fi
done
rounds=${ROUNDS:-3}
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
	echo "scaling.sh: ROUNDS must be a positive integer, got '$rounds'" >&2
	exit 2
fi
if ! [ -x /usr/bin/time ]; then
	echo "scaling.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bench" ./cmd/bench
dur=()
[ -z "${DURATION:-}" ] || dur=(--duration "$DURATION")
# FLAGS: extra flags for every run, e.g. FLAGS=--chaining=false.
read -r -a extra <<<"${FLAGS:-}"

num() { grep -o "\"$1\": *[-0-9.a-z]*" "$2" | head -n 1 | sed 's/.*: *//'; }

# One line per run: P records wall user sys rss-KB overloaded drained.
: >"$tmp/runs.txt"
for r in $(seq "$rounds"); do
	for p in "${ps[@]}"; do
		echo "round $r of $rounds: P = $p" >&2
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$tmp/bench" run --system barrier --parallelism "$p" --workers "$p" \
			--zipf-s 0 "${dur[@]}" "${extra[@]}" --out "$tmp/runs" >/dev/null
		read -r wall user sys rss <"$tmp/time"
		json="$tmp/runs/latest/run.json"
		echo "$p $(num appended_records "$json") $wall $user $sys $rss $(num overloaded "$json") $(num drained "$json")" >>"$tmp/runs.txt"
	done
done

awk -v order="${ps[*]}" -v rounds="$rounds" '
	function median(a, m,   i, j, t) {
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	{
		k = ++n[$1]
		records[$1] = $2
		wpr[$1, k] = $3 / $2 * 1e6
		cpr[$1, k] = ($4 + $5) / $2 * 1e6
		if ($6 > rss[$1]) rss[$1] = $6
		if ($7 != "false") over[$1] = "true"
		if ($8 != "true") undrained[$1] = 1
	}
	END {
		printf "median of %d rounds\n", rounds
		printf "%4s %11s %10s %10s %9s %10s %7s %10s %9s\n", "P", "records", "wall-us/r", "cpu-us/r", "rss-MB", "overloaded", "drained", "wall-ratio", "cpu-ratio"
		np = split(order, ps, " ")
		for (i = 1; i <= np; i++) {
			p = ps[i]
			if (p in seen) continue
			seen[p] = 1
			m = n[p]
			for (j = 1; j <= m; j++) { w[j] = wpr[p, j]; c[j] = cpr[p, j] }
			mw = median(w, m); mc = median(c, m)
			if (i == 1) { fw = mw; fc = mc }
			printf "%4s %11s %10.3f %10.3f %9.0f %10s %7s %10.2f %9.2f\n", p, records[p], mw, mc, rss[p] / 1024,
				(p in over) ? "true" : "false", (p in undrained) ? "false" : "true", mw / fw, mc / fc
		}
	}' "$tmp/runs.txt"
