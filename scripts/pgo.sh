#!/usr/bin/env bash
# Regenerates cmd/bench/default.pgo, the CPU profile that `go build
# ./cmd/bench` uses for profile-guided optimisation (Go builds a main
# package with the default.pgo beside it; https://go.dev/doc/pgo). PGO
# inlines the hot calls across interfaces and closures (a process's
# Handle, Ctx.Send, the observer's Commit, a stage's cost function) that
# the compiler cannot see through on its own.
#
# The profile is the merge of the workloads the harness spends its time
# on: the main job (barrier, 2PC sink, crash), the 60 s wordcount (the
# baseline system, plain sink) and kstreams' wordcount (its broker, logs
# and threads are code the other two never run), all through the whole
# harness. Re-run it
# after a change that moves where the time goes; a stale profile still
# builds, it only helps less.
#
#   scripts/pgo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/harness.test" ./harness
go test -c -o "$tmp/sim.test" ./engine/sim
go test -c -o "$tmp/kstreams.test" ./systems/kstreams
"$tmp/harness.test" -test.run '^$' -test.bench '^BenchmarkMainJob$/^plain$' -test.benchtime 5x \
	-test.cpuprofile "$tmp/main.prof" >/dev/null
"$tmp/sim.test" -test.run '^$' -test.bench '^BenchmarkWordcount60s$' -test.benchtime 2x \
	-test.cpuprofile "$tmp/wordcount.prof" >/dev/null
"$tmp/kstreams.test" -test.run '^$' -test.bench '^BenchmarkWordcount$' -test.benchtime 5x \
	-test.cpuprofile "$tmp/kstreams.prof" >/dev/null
go tool pprof -proto "$tmp/main.prof" "$tmp/wordcount.prof" "$tmp/kstreams.prof" >"$tmp/default.pgo" 2>/dev/null
mv "$tmp/default.pgo" cmd/bench/default.pgo
echo "wrote cmd/bench/default.pgo ($(wc -c <cmd/bench/default.pgo) bytes)"
