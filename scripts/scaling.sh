#!/usr/bin/env bash
# Cost of the harness as parallelism grows with the hardware: for each P,
# `bench run --system barrier --parallelism P --workers P --zipf-s 0`
# (uniform keys, the default rate and duration; DURATION=5s in the
# environment shortens the runs, too short for the overload test), one
# after the other. It
# prints each run's wall and CPU time per appended record, peak RSS, whether
# the run was overloaded and drained, and the wall and CPU per record over
# those of the first P. Issue 13 asks for wall per record at P = 64 within
# 1.5x of P = 4, under 1.5 GB, with no default run overloaded. Needs GNU
# time (/usr/bin/time) for the peak RSS; measure on an idle machine.
#
#   [DURATION=D] scripts/scaling.sh [P ...]    (default 4 16 64)
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
if ! [ -x /usr/bin/time ]; then
	echo "scaling.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/bench" ./cmd/bench
dur=()
[ -z "${DURATION:-}" ] || dur=(--duration "$DURATION")

num() { grep -o "\"$1\": *[-0-9.a-z]*" "$2" | head -n 1 | sed 's/.*: *//'; }

printf '%4s %11s %8s %10s %10s %9s %10s %7s %10s %9s\n' P records wall-s wall-us/r cpu-us/r rss-MB overloaded drained wall-ratio cpu-ratio
first_wall='' first_cpu=''
for p in "${ps[@]}"; do
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$tmp/bench" run --system barrier --parallelism "$p" --workers "$p" \
		--zipf-s 0 "${dur[@]}" --out "$tmp/runs" >/dev/null
	read -r wall user sys rss <"$tmp/time"
	json="$tmp/runs/latest/run.json"
	records=$(num appended_records "$json")
	over=$(num overloaded "$json")
	drained=$(num drained "$json")
	wpr=$(awk -v w="$wall" -v n="$records" 'BEGIN { printf "%.3f", w / n * 1e6 }')
	cpr=$(awk -v u="$user" -v s="$sys" -v n="$records" 'BEGIN { printf "%.3f", (u + s) / n * 1e6 }')
	[ -n "$first_wall" ] || { first_wall=$wpr; first_cpu=$cpr; }
	printf '%4s %11s %8s %10s %10s %9.0f %10s %7s %10.2f %9.2f\n' "$p" "$records" "$wall" "$wpr" "$cpr" \
		"$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$over" "$drained" \
		"$(awk -v a="$wpr" -v b="$first_wall" 'BEGIN { print a / b }')" \
		"$(awk -v a="$cpr" -v b="$first_cpu" 'BEGIN { print a / b }')"
done
