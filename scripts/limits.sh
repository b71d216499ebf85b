#!/usr/bin/env bash
# Measures issue 14's acceptance table for hostile inputs: every input is
# refused with one line and exit 2; prints exit code, the line, wall time and
# peak RSS of the built binary (/usr/bin/time -v). Usage: scripts/limits.sh [DIR]
set -u
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
bin="$dir/bench"
go build -o "$bin" ./cmd/bench || exit 1
cd "$dir" || exit 1
touch a-file
# Shards for the merge rows: one small grid cut in two and in three, and half a campaign.
grid=(sweep --system none --param rate=1000,2000 --duration 1s --drain 1s --jobs 1)
"$bin" "${grid[@]}" --shard 1/2 --out s12 >/dev/null 2>&1
"$bin" "${grid[@]}" --shard 1/2 --out s12b >/dev/null 2>&1
"$bin" "${grid[@]}" --shard 1/3 --out s13 >/dev/null 2>&1
"$bin" torture --system none --runs 2 --shard 1/2 --duration 1s --rate 1000 --drain 1s --observe=false --jobs 1 --out t12 >/dev/null 2>&1

rows=(
  "run --system barrier --duration 1000000h"
  "run --system barrier --rate 1e12"
  "sweep --system barrier --param duration=1000000h --out sw1"
  "sweep --system barrier --param rate=1e12 --out sw2"
  "torture --system barrier --duration 1000000h --out to1"
  "run --bucket 1ns"
  "run --system lineage --batch-interval 1ns"
  "run --system barrier --checkpoint-interval 1ns"
  "run --rate NaN"
  "run --rate Inf"
  "run --system barrier --duration 100h --fault crash"
  "run --cost net-bandwidth=NaN"
  "run --cost poll-interval=1ns"
  "run --fault slow@1s-2s:op=count/0,factor=1e300"
  "run --fault throttle@1s-2s:edge=split->count,rate=1e-300/s"
  "run --fault throttle@1s-2s:edge=count->split,rate=10/s"
  "run --fault reorder@1s-2s:edge=sink->source"
  "run --fault slow@1s-2s:op=map/0"
  "run --record-size 100"
  "run --duration 1ns"
  "report --max-groups -5 s12"
  "torture --system none --shrink -1 --out to2"
  "run --bucket 1000000h"
  "run --out a-file"
  "run --out /proc/x"
  "run --out="
  "sweep --system barrier --param checkpoint-interval=1s,abc --out sw3"
  "merge --out m1 s12 s13"
  "merge --out m2 s12 s12"
  "merge --out m3 s12 s12b"
  "merge --out m4 s12"
  "merge --out m5 t12"
)
printf 'input\texit\tstderr\twall_s\tpeak_rss_kb\n'
for row in "${rows[@]}"; do
  # shellcheck disable=SC2206
  args=($row)
  case " $row " in *" --out"*) ;; *) [ "${args[0]}" = run ] && args+=(--out r) ;; esac
  /usr/bin/time -v -o time.txt "$bin" "${args[@]}" >out.txt 2>err.txt
  code=$?
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' time.txt)
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' time.txt)
  printf '%s\t%s\t%s\t%s\t%s\n' "bench $row" "$code" "$(tr '\n' '|' <err.txt | sed 's/|$//')" "$wall" "$rss"
done
