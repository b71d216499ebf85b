package capacity

import (
	"fmt"
	"time"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/workloads"
)

// MinProbeRecords is the fewest records a probe may append: its rate times
// its input duration. Far below it a probe judges noise: a search that
// halved its way down reported 1 record/s as barrier's capacity under a
// 500 ms bound on a 1 s cycle (14 records: p99 anywhere from 261 to 862 ms,
// lag slopes of -16% to +7% of the rate), or stopped with a usage error
// ("appends no record") after twenty probes. From about 1000 records p99
// is the tenth highest latency or better (fewer effects than records on
// grep, which passes one in --match-every) and the lag slope of wordcount
// on a 1 s cycle settles within 0.3% of the rate (measured: 60 records/s
// over 14 s); a sawtooth lag in short probes can still miss the 1%
// criterion near it (grep, 200 ms cycle, 250 records/s over 6 s: +1.4%).
const MinProbeRecords = 1000

// MinRate is the lowest rate a probe of the given input duration judges:
// MinProbeRecords over it.
func MinRate(duration engine.Time) float64 {
	return MinProbeRecords / duration.Seconds()
}

// cycleOption names, for each system whose sink makes effects visible once
// per commit cycle (systems.CommitCycler), the option that sets the
// cycle, and why effects wait for it; a refused --latency-bound then says
// what to shorten. The systems give the cycle's length, not which option
// sets it, so this table does; TestCycleOptions checks every entry
// against systems.CommitCycle, and that every system with a cycle has one.
var cycleOption = map[string]struct{ option, why string }{
	"barrier":  {"checkpoint-interval", "its two-phase-commit sink makes effects visible when their checkpoint completes"},
	"lineage":  {"batch-interval", "a micro-batch's effects become visible when its job completes, after the batch interval"},
	"snapshot": {"checkpoint-interval", "on a dataflow its two-phase-commit sink makes effects visible when their checkpoint completes"},
	"kstreams": {"commit-interval", "under exactly-once its output becomes visible when its transaction commits, every commit interval"},
	"trident":  {"batch-emit-interval", "a batch's state updates, and so its effects, are committed once per batch, and batches start at most once per emit interval"},
}

// MinP99 is the lowest p99 end-to-end latency any rate can give a system
// whose effects become visible once per commit cycle: a record waits from
// its append until the first commit after it, records are appended evenly
// over the cycle (workloads.Log: Rate/Parts per second), so waits spread
// evenly over (0, cycle] and 1% of them exceed 0.99 of the cycle, before
// any processing. Measured p99 at 2000 and 50000 records/s: barrier 2s
// cycle 1996-2005 ms, unaligned 500 ms 529-531 ms, lineage 300 ms 317-359
// ms, snapshot 1 s 1015-1023 ms.
func MinP99(cycle engine.Time) engine.Time {
	return cycle / 100 * 99
}

// checkLatencyBound refuses a latency bound below MinP99 of the plan's
// commit cycle (*harness.InputError naming the bound and the cycle), before
// any probe: every probe would fail it and the search would halve its way
// down to MinRate for nothing. A peer-to-peer workload (bank-p2p) has no
// sink to wait for: its effects are not cycled, whatever the system's
// cycle says.
func checkLatencyBound(p *Plan, bound engine.Time) error {
	floor := MinP99(p.Cycle)
	if bound <= 0 || p.Cycle <= 0 || bound >= floor {
		return nil
	}
	w, err := workloads.New(p.Config.Workload, p.Config.Seed, p.Config.WorkloadOpts)
	if err != nil {
		return &harness.InputError{Err: err}
	}
	if _, p2p := w.(workloads.PeerToPeer); p2p {
		return nil
	}
	cycle := fmt.Sprintf("a commit cycle of %v", time.Duration(p.Cycle))
	why, change := "effects become visible once per commit cycle", "the commit cycle"
	if o, ok := cycleOption[p.Config.System]; ok {
		cycle = fmt.Sprintf("--%s %v", o.option, time.Duration(p.Cycle))
		why, change = o.why, "--"+o.option
	}
	return &harness.InputError{Err: fmt.Errorf("--latency-bound %v cannot be met at any rate: %s/%s has %s (%s), so p99 latency is at least %v, 0.99 of it; raise the bound or shorten %s",
		time.Duration(bound), p.Config.System, p.Variant, cycle, why, time.Duration(floor), change)}
}
