package metrics

import "ftbench/engine"

// RecoveryOptions parameterise RecoveryTime: recovery lasts from the fault
// until the series returns to within (1+ε) of its pre-fault level (plus a
// small absolute slack) and stays there for a hold window (docs/metrics.md, Metric
// definitions, "Recovery time" and "Lag recovery time").
type RecoveryOptions struct {
	// WarmUp: buckets starting before it never set the pre-fault level, so a
	// fault soon after start is not judged against start-up lag.
	WarmUp engine.Time
	// PreWindow is how far before the fault the pre-fault level is taken.
	PreWindow engine.Time
	// Hold is how long lag must stay within the threshold to count as
	// recovered, so a brief dip between two spikes is not a recovery.
	Hold engine.Time
	// Epsilon is the relative tolerance over the pre-fault level.
	Epsilon float64
	// Slack is an absolute tolerance in records; without it a pre-fault lag
	// of 0 would make any single in-flight record a disruption.
	Slack int64
	// End: rows starting at or after End are ignored (0 = no limit). The
	// harness passes the end of the simulation, so a recovery may complete
	// during the drain (the backlog is still worked off); a caller that
	// wants recovery under load only passes the end of the input.
	End engine.Time
	// Settled, if positive, is when the level is known to stay where it is
	// for good (the harness passes the instant the run drained: input over,
	// every expected effect committed, so neither lag nor staleness can rise
	// again). A hold window that runs past the rows is then confirmed if the
	// rows reach Settled, instead of leaving the recovery unconfirmed: the
	// hold of a long commit cycle may outlast the simulation.
	Settled engine.Time
}

// DefaultRecoveryOptions returns the defaults: PreWindow 2s, Hold 1s,
// Epsilon 0.1, Slack 0 (the harness derives Slack from the input rate).
func DefaultRecoveryOptions() RecoveryOptions {
	return RecoveryOptions{
		PreWindow: 2 * engine.Second,
		Hold:      1 * engine.Second,
		Epsilon:   0.1,
	}
}

// RecoveryTime measures recovery from a fault at time fault over rows as
// Series.Rows returns them (consecutive, equally long buckets from 0).
//
// A row's Lag is sampled at the row's end, so the rule works with sampling
// instants:
//
//  1. Pre-fault level L = max Lag over the buckets that start in
//     [fault-PreWindow, fault), start at or after WarmUp, and end at or
//     before the fault (a bucket the fault falls inside is sampled after the
//     fault and must not raise L). L = 0 if there is no such bucket.
//  2. threshold = L*(1+Epsilon) + Slack; a bucket is bad if Lag > threshold.
//  3. The disruption is the first bad bucket that ends after the fault. If
//     there is none (before End), the fault caused no visible disruption:
//     rec = 0, ok = true. A sawtooth that never exceeds its pre-fault peak
//     by more than the tolerance is therefore not a disruption.
//  4. Recovery is at the first later good bucket b such that every bucket
//     starting in [b.Start, b.Start+Hold) exists (within rows and before
//     End) and is good, i.e. every lag sample in (b.Start, b.Start+Hold] is
//     within the threshold. If a bad bucket interrupts the hold, the search
//     resumes after it.
//  5. rec = b.Start - fault. b.Start is the end of the last bad bucket: the
//     last instant lag was seen above the threshold. The lag crossed back
//     somewhere in (b.Start, b.Start+bucket], so rec can understate the true
//     time by less than one bucket, never overstate it.
//
// ok = false when the disruption never satisfies step 4 within the rows
// (run.json then reports null: not recovered within the run).
func RecoveryTime(rows []Row, fault engine.Time, opt RecoveryOptions) (rec engine.Time, ok bool) {
	return RecoveryTimeOf(rows, func(r Row) int64 { return r.Lag }, fault, opt)
}

// RecoveryTimeOf is RecoveryTime on another level sampled at each bucket's
// end (output staleness in ns: the harness's recovery_time_s), with Slack in
// that level's unit.
func RecoveryTimeOf(rows []Row, value func(Row) int64, fault engine.Time, opt RecoveryOptions) (rec engine.Time, ok bool) {
	limit := len(rows)
	if opt.End > 0 {
		for limit > 0 && rows[limit-1].Start >= opt.End {
			limit--
		}
	}
	width := DefaultBucket // only used when a single row leaves it unknown
	if len(rows) >= 2 {
		width = rows[1].Start - rows[0].Start
	}

	var level int64
	for _, r := range rows[:limit] {
		if r.Start >= fault-opt.PreWindow && r.Start >= opt.WarmUp && r.Start+width <= fault && value(r) > level {
			level = value(r)
		}
	}
	threshold := float64(level)*(1+opt.Epsilon) + float64(opt.Slack)
	bad := func(i int) bool { return float64(value(rows[i])) > threshold }

	d := -1
	for i := 0; i < limit; i++ {
		if rows[i].Start+width > fault && bad(i) {
			d = i
			break
		}
	}
	if d < 0 {
		return 0, true
	}

	for b := d + 1; b < limit; b++ {
		if bad(b) {
			continue
		}
		holdEnd := rows[b].Start + opt.Hold
		held := true
		j := b
		for ; j < limit && rows[j].Start < holdEnd; j++ {
			if bad(j) {
				held = false
				break
			}
		}
		if !held {
			b = j // resume after the bad bucket that broke the hold
			continue
		}
		if j == limit && rows[limit-1].Start+width < holdEnd &&
			!(opt.Settled > 0 && rows[limit-1].Start+width >= opt.Settled) {
			// The rows end before the hold window does: recovery cannot be
			// confirmed, and any later candidate has even less room.
			return 0, false
		}
		return rows[b].Start - fault, true
	}
	return 0, false
}
