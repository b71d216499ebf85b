#!/usr/bin/env bash
# Speed of the harness as a fraction of a plain Go channel pipeline measured
# in the same session (engine/sim BenchmarkChannelPipeline: producer, stage
# and consumer goroutines passing one 32-byte record per send through
# channels buffered to 1024). On a shared machine absolute figures drift
# with the load; the fractions are what to compare between builds.
#
#   scripts/speed.sh [ROUNDS]    (default 3)
#
# Each round runs, one after the other: the reference, the simulator's
# two-process record pipeline (BenchmarkRecords), the 60 s wordcount through
# the whole harness (BenchmarkWordcount60s) and the main job
# (`bench run --system barrier --fault crash`, input records over the
# command's wall time). It prints the median of the rounds of each in
# records per wall second, and that median over the reference's median.
# Both binaries are built as `go build ./cmd/bench` builds bench: with the
# profile-guided optimisation of cmd/bench/default.pgo (scripts/pgo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
	echo "speed.sh: ROUNDS must be a positive integer, got '$rounds'" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bench" ./cmd/bench
go test -c -pgo=cmd/bench/default.pgo -o "$tmp/sim.test" ./engine/sim

# bench NAME BENCHTIME: the records/s metric of one benchmark run.
bench() {
	"$tmp/sim.test" -test.run '^$' -test.bench "^Benchmark$1\$" -test.benchtime "$2" |
		awk '/records\/s/ { for (i = 1; i < NF; i++) if ($(i+1) == "records/s") print $i }'
}

: >"$tmp/figures"
for r in $(seq "$rounds"); do
	echo "round $r of $rounds" >&2
	echo "reference $(bench ChannelPipeline 3000000x)" >>"$tmp/figures"
	echo "records $(bench Records 3000000x)" >>"$tmp/figures"
	echo "wordcount60s $(bench Wordcount60s 1x)" >>"$tmp/figures"
	start=$(date +%s.%N)
	"$tmp/bench" run --system barrier --fault crash --out "$tmp/runs" >/dev/null
	end=$(date +%s.%N)
	appended=$(grep -o '"appended_records": *[0-9]*' "$tmp/runs/latest/run.json" | grep -o '[0-9]*$')
	echo "main-job $(awk -v n="$appended" -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", n / (b - a) }')" >>"$tmp/figures"
done

awk '
	{ v[$1, ++n[$1]] = $2 }
	function median(k,   i, j, t, a, m) {
		m = n[k]
		for (i = 1; i <= m; i++) a[i] = v[k, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		ref = median("reference")
		printf "%-52s %14s %10s\n", "median of " n["reference"] " rounds", "records/s", "fraction"
		split("reference records wordcount60s main-job", order, " ")
		name["reference"] = "reference channel pipeline (ChannelPipeline)"
		name["records"] = "simulator record pipeline (Records)"
		name["wordcount60s"] = "60 s wordcount, whole harness (Wordcount60s)"
		name["main-job"] = "main job (bench run --system barrier --fault crash)"
		for (i = 1; i <= 4; i++) printf "%-52s %14.0f %10.3f\n", name[order[i]], median(order[i]), median(order[i]) / ref
	}' "$tmp/figures"
