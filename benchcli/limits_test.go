package benchcli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"ftbench/harness"
)

// Every input of issue 14's "Inputs that hurt the tool", "Nonsense
// accepted" and "Late errors" is refused before any work: exit 2, one line
// on stderr naming the problem, no stack trace. Each row runs the command
// in-process through run, as main does. Guards suited to a test, not
// timings: a row that has not returned after a minute is a hang, and a row
// that allocates more than 256 MB did work it should have refused (the
// acceptance numbers, wall time and peak RSS of the built binary, are
// measured with /usr/bin/time -v by scripts/limits.sh).
func TestInputLimits(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	shards := sweepShards(t, dir)
	campaign := tortureShard(t, dir)
	tiny := []string{"--duration", "1s", "--rate", "1000"}
	rows := []struct {
		name string
		args []string
		want string // in the one line of stderr
	}{
		// Inputs that hurt the tool.
		{"duration 1000000h", []string{"run", "--system", "barrier", "--duration", "1000000h", "--out", out}, "--duration must be at most"},
		{"rate 1e12", []string{"run", "--system", "barrier", "--rate", "1e12", "--out", out}, "--rate must be at most"},
		{"sweep duration 1000000h", []string{"sweep", "--system", "barrier", "--param", "duration=1000000h", "--out", filepath.Join(dir, "s1")}, "--duration must be at most"},
		{"sweep rate 1e12", []string{"sweep", "--system", "barrier", "--param", "rate=1e12", "--out", filepath.Join(dir, "s2")}, "--rate must be at most"},
		{"torture duration 1000000h", []string{"torture", "--system", "barrier", "--duration", "1000000h", "--out", filepath.Join(dir, "t1")}, "--duration must be at most"},
		{"bucket 1ns", []string{"run", "--bucket", "1ns", "--out", out}, "--bucket must be at least 1ms"},
		{"batch-interval 1ns", []string{"run", "--system", "lineage", "--batch-interval", "1ns", "--out", out}, "--batch-interval must be at least 1ms"},
		{"checkpoint-interval 1ns", []string{"run", "--system", "barrier", "--checkpoint-interval", "1ns", "--out", out}, "--checkpoint-interval must be at least 1ms"},
		{"rate 1e9 for 2s", []string{"run", "--system", "barrier", "--rate", "1e9", "--duration", "2s", "--out", out}, "run too long for the time budget: estimated 20 min"},
		{"sweep of a run over the time budget", []string{"sweep", "--system", "barrier", "--param", "rate=1000,1e9", "--duration", "2s", "--out", filepath.Join(dir, "s6")}, "time budget"},
		{"compare over the time budget", []string{"compare", "--system", "none,barrier", "--rate", "1e9", "--duration", "2s", "--out", filepath.Join(dir, "c1")}, "time budget"},
		{"torture over the time budget", []string{"torture", "--system", "barrier", "--rate", "1e9", "--duration", "2s", "--runs", "1", "--out", filepath.Join(dir, "t2")}, "time budget"},
		{"live over the time budget", []string{"run", "--runtime", "live", "--duration", "1h", "--rate", "1000", "--out", out}, "time budget"},
		{"rate NaN", []string{"run", "--rate", "NaN", "--out", out}, "--rate must be a finite number"},
		{"rate Inf", []string{"run", "--rate", "Inf", "--out", out}, "--rate must be a finite number"},
		{"sweep rate NaN", []string{"sweep", "--param", "rate=NaN", "--out", filepath.Join(dir, "s3")}, "--param rate=NaN: want a positive number"}, // names the flag typed
		{"cost NaN", []string{"run", "--cost", "net-bandwidth=NaN", "--out", out}, `cost net-bandwidth="NaN": want a finite positive number`},
		{"cost Inf", []string{"run", "--cost", "store-write-bw=Inf", "--out", out}, `cost store-write-bw="Inf": want a finite positive number`},
		{"poll every nanosecond", []string{"run", "--cost", "poll-interval=1ns", "--out", out}, "cost poll-interval must be at least 10µs"},
		{"slow factor 1e300", []string{"run", "--fault", "slow@1s-2s:op=count/0,factor=1e300", "--out", out}, "factor must be at most"},
		{"throttle 1e-300/s", []string{"run", "--fault", "throttle@1s-2s:edge=split->count,rate=1e-300/s", "--out", out}, "rate must be at least"},
		{"sweep cost NaN", []string{"sweep", "--param", "cost.net-latency=1ms,NaN", "--out", filepath.Join(dir, "s5")}, "net-latency"},
		{"over the budget", []string{"run", "--system", "barrier", "--duration", "100h", "--fault", "crash", "--out", out}, "--no-budget"},
		// Nonsense accepted.
		{"throttle on a missing edge", []string{"run", "--fault", "throttle@1s-2s:edge=count->split,rate=10/s", "--out", out}, "no edge count->split"},
		{"reorder on a missing edge", []string{"run", "--fault", "reorder@1s-2s:edge=sink->source", "--out", out}, "no edge sink->source"},
		{"throttle inside a chain", []string{"run", "--fault", "throttle@1s-2s:edge=count->sink,rate=10/s", "--out", out}, "count and sink are chained into one task ([count→sink]), with no channel between them; run with --chaining=false"},
		{"reorder inside a chain", []string{"run", "--system", "none", "--workload", "grep", "--fault", "reorder@1s-2s:edge=source->filter", "--out", out}, "run with --chaining=false"},
		{"fault on a missing operator", []string{"run", "--fault", "slow@1s-2s:op=map/0", "--out", out}, `no operator "map"`},
		{"another workload's option", []string{"run", "--record-size", "100", "--out", out}, "--record-size is an option of workload grep, not of wordcount"},
		{"another workload's option in compare", []string{"compare", "--system", "all", "--record-size", "100", "--out", filepath.Join(dir, "c1")}, "--record-size is an option of workload grep"},
		{"duration 1ns", []string{"run", "--duration", "1ns", "--out", out}, "--duration 1ns is shorter than one time-series bucket"},
		{"no record appended", []string{"run", "--duration", "10ms", "--bucket", "1ms", "--rate", "10", "--out", out}, "appends no record"},
		{"max-groups -5", []string{"report", "--max-groups", "-5", dir}, "--max-groups must be at least 1"},
		{"shrink -1", []string{"torture", "--system", "none", "--shrink", "-1", "--out", filepath.Join(dir, "t2")}, "--shrink must be 0 or more"},
		{"bucket 1000000h", []string{"run", "--bucket", "1000000h", "--out", out}, "shorter than one time-series bucket"},
		{"trace window reversed", []string{"run", "--trace", "--trace-window", "5s-2s", "--out", out}, "--trace-window=\"5s-2s\": window \"5s-2s\" ends at or before it starts"},
		{"trace window not times", []string{"run", "--trace", "--trace-window", "soon", "--out", out}, "trace-window needs a window T1-T2"},
		{"trace window past the run", []string{"run", "--trace", "--trace-window", "100s-200s", "--duration", "2s", "--out", out}, "nothing to trace"},
		{"trace window without trace", []string{"run", "--trace-window", "1s-2s", "--out", out}, "--trace-window applies with --trace only"},
		{"trace of a live run", []string{"run", "--trace", "--runtime", "live", "--out", out}, "--trace applies to --runtime sim only"},
		{"system given twice", []string{"compare", "--system", "barrier", "--system", "lineage", "--out", filepath.Join(dir, "c2")}, "--system is given twice"},
		{"seeds given twice to sweep", []string{"sweep", "--seeds", "1", "--param", "rate=1000", "--seeds=2", "--out", filepath.Join(dir, "s6")}, "--seeds is given twice"},
		// Late errors.
		{"out is a file", []string{"run", "--out", file}, "is not a folder"},
		{"out under a file", []string{"run", "--out", filepath.Join(file, "x")}, "is not a folder"},
		{"out in /proc", []string{"run", "--out", "/proc/x"}, "cannot write in /proc"},
		{"out empty", []string{"run", "--out", ""}, "--out is empty"},
		{"sweep out is a file", args([]string{"sweep", "--out", file}, tiny), "is not a folder"},
		{"sweep bad value", []string{"sweep", "--system", "barrier", "--param", "checkpoint-interval=1s,abc", "--out", filepath.Join(dir, "s4")}, `checkpoint-interval="abc"`},
		{"merge of different shardings", []string{"merge", "--out", filepath.Join(dir, "m1"), shards["1/2"], shards["1/3"]}, "of 2 shards"},
		{"merge of one shard twice", []string{"merge", "--out", filepath.Join(dir, "m2"), shards["1/2"], shards["1/2"]}, "named twice"},
		{"merge of the same shard from two folders", []string{"merge", "--out", filepath.Join(dir, "m3"), shards["1/2"], shards["1/2 again"]}, "are both shard 1/2"},
		{"merge of an incomplete set", []string{"merge", "--out", filepath.Join(dir, "m4"), shards["1/2"]}, "shard(s) 2/2 missing"},
		{"merge of an incomplete campaign", []string{"merge", "--out", filepath.Join(dir, "m5"), campaign}, "shard(s) 2/2 missing"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, o, e := bench(t, tc.args...)
				done <- result{code, o, e}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatalf("still running after a minute: the input was not refused before work")
			}
			runtime.ReadMemStats(&after)
			if r.code != harness.ExitUsage {
				t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
				t.Fatalf("stderr must be one line naming %q, got:\n%s", tc.want, r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, "goroutine") || strings.Contains(r.stderr+r.stdout, "panic") {
				t.Fatalf("stack trace reached the user:\n%s%s", r.stdout, r.stderr)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
				t.Fatalf("allocated %d MB before refusing: work was done", alloc>>20)
			}
		})
	}
	// The options of at least one chosen system are valid.
	if code, o, e := bench(t, args([]string{"compare", "--system", "all", "--checkpoint-interval", "2s", "--out", filepath.Join(dir, "ok")}, tiny)...); code != 0 {
		t.Fatalf("compare --system all --checkpoint-interval 2s: exit %d\n%s\n%s", code, o, e)
	}
}

// sweepShards runs shards of one small sweep (and a shard of the same grid
// cut in three) and returns their folders by name.
func sweepShards(t *testing.T, dir string) map[string]string {
	t.Helper()
	grid := []string{"sweep", "--system", "none", "--param", "rate=1000,2000", "--duration", "1s", "--drain", "1s", "--jobs", "1"}
	shards := map[string]string{}
	for _, s := range []struct{ name, shard string }{{"1/2", "1/2"}, {"1/2 again", "1/2"}, {"1/3", "1/3"}} {
		d := filepath.Join(dir, "shard-"+strings.NewReplacer("/", "-", " ", "-").Replace(s.name))
		if code, o, e := bench(t, append(grid, "--shard", s.shard, "--out", d)...); code != 0 {
			t.Fatalf("sweep shard %s: exit %d\n%s\n%s", s.shard, code, o, e)
		}
		shards[s.name] = d
	}
	return shards
}

// tortureShard runs shard 1/2 of a tiny campaign.
func tortureShard(t *testing.T, dir string) string {
	t.Helper()
	d := filepath.Join(dir, "campaign-1-of-2")
	code, o, e := bench(t, "torture", "--system", "none", "--runs", "2", "--shard", "1/2", "--duration", "1s", "--rate", "1000",
		"--drain", "1s", "--observe=false", "--jobs", "1", "--out", d)
	if _, err := os.Stat(filepath.Join(d, "torture.json")); err != nil {
		t.Fatalf("torture shard: exit %d, no torture.json\n%s\n%s", code, o, e)
	}
	return d
}

// Runs executing at once share the budget: fitJobs lowers the parallelism
// until the largest runs fit together, and says so.
func TestFitJobs(t *testing.T) {
	const gb = 1_000_000_000
	for _, tc := range []struct {
		sizes    []int64
		jobs     int
		noBudget bool
		want     int
	}{
		{[]int64{gb, gb, gb, gb}, 4, false, 3},         // 3 GB fit in 3.22 GB, 4 do not
		{[]int64{2 * gb, gb / 2, 2 * gb}, 3, false, 1}, // the two largest do not fit together
		{[]int64{gb / 10, gb / 10}, 8, false, 8},       // fewer runs than jobs: nothing to lower
		{[]int64{gb, gb, gb, gb}, 4, true, 4},          // --no-budget
		{[]int64{3 * gb}, 2, false, 2},
	} {
		var note strings.Builder
		if got := fitJobs(&note, append([]int64(nil), tc.sizes...), tc.jobs, tc.noBudget); got != tc.want {
			t.Errorf("fitJobs(%v, %d, %v) = %d, want %d", tc.sizes, tc.jobs, tc.noBudget, got, tc.want)
		}
		if lowered := tc.want < tc.jobs && tc.want < len(tc.sizes); lowered != strings.Contains(note.String(), "running at most") {
			t.Errorf("fitJobs(%v, %d): note %q", tc.sizes, tc.jobs, note.String())
		}
	}
}
