package harness

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/workloads"
)

// committedIn sums the effects committed in the buckets inside [from, to).
func committedIn(rows []metrics.Row, from, to engine.Time) int64 {
	var n int64
	for _, r := range rows {
		if r.Start >= from && r.Start < to {
			n += r.Committed
		}
	}
	return n
}

// source-down on every system (docs/faults.md, "Source outage"): partition
// 1 cannot be read from 1.5 s to 3.5 s. Every system keeps its claim and
// catches up within the drain (exit 0); a record of partition 1 appended
// just after 1.5 s is committed only after 3.5 s, so the longest latency is
// at least the outage. What goes on meanwhile is each system's own:
// sources that read partitions independently (none, stormack, barrier,
// snapshot, kstreams, trident's opaque spout) go on committing the other
// partitions; lineage's batches wait for the partition's offsets and
// trident's transactional spout halts every batch, so neither commits
// anything once the batches in flight at 1.5 s are done.
func TestSourceDownEverySystem(t *testing.T) {
	t.Parallel()
	const from, to = 1500 * engine.Millisecond, 3500 * engine.Millisecond
	tests := []struct {
		system string
		opts   map[string]string
		goesOn bool // commits during the outage, after the work in flight at its start
	}{
		{"none", nil, true},
		{"stormack", map[string]string{"ack-timeout": "2s"}, true},
		{"stormack", map[string]string{"ackers": "0"}, true},
		{"barrier", nil, true},
		{"snapshot", nil, true},
		{"kstreams", nil, true},
		{"lineage", nil, false},
		{"trident", map[string]string{"spout": "opaque", "ack-timeout": "2s"}, true},
		{"trident", map[string]string{"spout": "non-transactional", "ack-timeout": "2s"}, true},
		{"trident", map[string]string{"spout": "transactional", "ack-timeout": "2s"}, false},
	}
	for _, tt := range tests {
		cfg := short(tt.system, "source-down@1.5s-3.5s:partition=1")
		cfg.Rate = 20_000
		cfg.SystemOpts = tt.opts
		out, err := Execute(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := out.Result
		name := fmt.Sprintf("%s %v", tt.system, tt.opts)
		if !r.ClaimHeld || r.ExitCode != ExitOK || !r.Drained || r.Lost != 0 {
			t.Errorf("%s: held %v exit %d drained %v lost %d %v", name, r.ClaimHeld, r.ExitCode, r.Drained, r.Lost, r.Problems)
		}
		if got, want := r.LatencyMS.Max, 0.95*float64(to-from)/1e6; got < want {
			t.Errorf("%s: longest latency %.0f ms, want at least %.0f ms (partition 1's records wait out the outage)", name, got, want)
		}
		// A second after the outage starts, the batches and
		// checkpoints in flight then are done.
		during := committedIn(out.Rows, from+engine.Second, to)
		if (during > 0) != tt.goesOn {
			t.Errorf("%s: %d effects committed in [2.5s, 3.5s) of the outage; want commits: %v", name, during, tt.goesOn)
		}
		waited := false
		for _, e := range out.Events {
			if e.Kind == workloads.EventSourceDown && e.ID == 1 && engine.Time(e.Value) == to {
				waited = true
			}
			if e.Kind == workloads.EventSourceDown && (e.ID != 1 || e.Time < from || e.Time >= to) {
				t.Errorf("%s: %+v: only partition 1 is down, from 1.5 s to 3.5 s", name, e)
				break
			}
		}
		if !waited {
			t.Errorf("%s: no source recorded partition 1 down until 3.5 s", name)
		}
	}
}

// A source still down when the run stops holds it up: the run is not
// quiescent, its missing effects are pending (never lost), it exits 4 and
// its problem line names the partition.
func TestSourceDownPastTheDrainIsLiveness(t *testing.T) {
	t.Parallel()
	for _, system := range []string{"barrier", "lineage"} {
		cfg := short(system, "source-down@1s-1h:partition=2")
		cfg.Rate, cfg.Drain = 20_000, 2*engine.Second
		r := runCfg(t, cfg)
		if r.ExitCode != ExitLiveness || r.Lost != 0 || r.PendingEffects == 0 || r.Quiescent || !r.ClaimHeld {
			t.Fatalf("%s: exit %d lost %d pending %d quiescent %v held %v", system, r.ExitCode, r.Lost, r.PendingEffects, r.Quiescent, r.ClaimHeld)
		}
		if r.Pending == nil || r.Pending.SourceDown != "partition 2 until 7s" || !strings.Contains(strings.Join(r.Problems, "\n"), "source-down held the run up") {
			t.Fatalf("%s: pending %+v, problems %v", system, r.Pending, r.Problems)
		}
	}
}

// A partition the run does not have is bad input, refused before any work.
func TestSourceDownBadPartition(t *testing.T) {
	cfg := short("barrier", "source-down@1s-2s:partition=4")
	cfg.Parallelism = 4
	_, err := Execute(cfg)
	var in *InputError
	if err == nil || !errors.As(err, &in) || !strings.Contains(err.Error(), "no partition 4 (source partitions are 0-3") {
		t.Fatalf("err %v", err)
	}
}
