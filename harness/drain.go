package harness

import (
	"fmt"
	"strings"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/metrics"
)

// Drain, settle and quiescence (docs/metrics.md, "Drained, quiescent, undrained").
//
// After the input ends a run goes on until every expected effect is
// committed (drained) and then for the settle window, so that a late
// duplicate — a 2PC commit one checkpoint later, a stormack replay after its
// ack timeout — is still seen. A run that is not drained by the drain limit
// is judged by what the runtime and the harness observe, never by the
// system's own word: it is quiescent when no data is queued or in flight, no
// process is down with a restart pending, no one-shot timer is due within
// another settle window (engine.Activity) and nothing was committed during the
// last settle window. Only then are its missing effects losses; otherwise
// the run is undrained (exit 4) and they are reported as pending.

// settleWindow is how long a drained run goes on, and how long an undrained
// one must have been without a commit to count as quiescent: the staleness
// hold window (max(1 s, two commit cycles)), so a 2PC sink's next two
// checkpoints or a micro-batch system's next two batches happen within it,
// and the system's replay timeout (DrainExtra: stormack's ack timeout), so
// a replay of work that was in fact committed shows up as a duplicate.
func settleWindow(cycle, drainExtra engine.Time) engine.Time {
	return max(stalenessOptions(metrics.DefaultRecoveryOptions(), cycle).Hold, 2*cycle, drainExtra)
}

// Pending says where an undrained run's missing effects are and what the
// runtime still saw going on when it stopped.
type Pending struct {
	// Partitions lists every partition with pending effects, by partition.
	Partitions []PendingPartition `json:"partitions"`
	// OldestPartition and OldestOffset name the pending record appended
	// first, and OldestAgeS how long before the end of the run.
	OldestPartition int32   `json:"oldest_partition"`
	OldestOffset    int64   `json:"oldest_offset"`
	OldestAgeS      float64 `json:"oldest_age_s"`
	// LastCommitS is the time of the run's last commit (null: none).
	LastCommitS *float64 `json:"last_commit_s"`
	// Activity is the runtime's account (engine.Activity) in words, Runtime
	// the same in detail.
	Activity string          `json:"activity"`
	Runtime  engine.Activity `json:"runtime"`
	// SourceDown names the source partitions down (source-down) when the
	// run stopped, and until when: they held the run up.
	SourceDown string `json:"source_down,omitempty"`
}

// PendingPartition is one partition's pending effects.
type PendingPartition struct {
	Partition    int32   `json:"partition"`
	Effects      int64   `json:"effects"`
	OldestOffset int64   `json:"oldest_offset"`
	OldestAgeS   float64 `json:"oldest_age_s"`
}

// Undrained reports whether the run stopped with expected effects pending
// while it was still busy (exit 4, not a safety finding).
func (r *Result) Undrained() bool { return r.PendingEffects > 0 }

// judgeDrain decides, at the end of the run, whether missing effects are
// losses or pending, and fills in drained, quiescent and pending. It runs
// before the verdict: an undrained run's missing effects are not lost, and
// only keys none of them touch are compared with the oracle.
func (r *runner) judgeDrain(res *Result, del *check.Result) {
	now := r.rt.Now()
	act := r.rt.Activity(now + r.settle)
	// now-1: an outage that lasts past the run is clipped to end at
	// its last instant (faultBounds), and still held it up.
	down := r.sourcesDown(now - 1)
	res.Quiescent = act.Quiet() && down == "" && (!r.anyCommit || r.lastCommit <= now-r.settle)
	if r.drained || res.Quiescent || del.Lost == 0 {
		return
	}
	res.PendingEffects, del.Lost = del.Lost, 0
	p := &Pending{Activity: act.String(), Runtime: act, OldestOffset: -1, SourceDown: down}
	if r.anyCommit {
		t := round3(r.lastCommit.Seconds())
		p.LastCommitS = &t
	}
	oldest := engine.Time(-1)
	for part, n := range del.LostPerPart {
		if n == 0 {
			continue
		}
		off := del.FirstLost[part]
		born := r.log.BornAt(off)
		p.Partitions = append(p.Partitions, PendingPartition{Partition: int32(part), Effects: n, OldestOffset: off,
			OldestAgeS: round3((now - born).Seconds())})
		if oldest < 0 || born < oldest {
			oldest, p.OldestPartition, p.OldestOffset = born, int32(part), off
			p.OldestAgeS = round3((now - born).Seconds())
		}
	}
	res.Pending = p
}

// sourcesDown names the source partitions that cannot be read at now
// (source-down) and when each is back, or "": a source that cannot fetch
// holds the run up as a store that cannot write does, so the run is not
// quiescent and its missing effects are pending, not lost.
func (r *runner) sourcesDown(now engine.Time) string {
	var down []string
	for p := range r.log.Parts {
		if d, until := r.log.Down(int32(p), now); d {
			down = append(down, fmt.Sprintf("partition %d until %s", p, until))
		}
	}
	return strings.Join(down, ", ")
}

// finals compares the visible sink state with the oracle's, leaving out
// in an undrained run the keys that pending effects still write.
func (r *runner) finals(undrained bool) (check.Finals, []check.KeyDiff) {
	if !undrained {
		return check.CompareFinals(r.visible.Map(), r.final)
	}
	skip := r.pendingKeys()
	got, want := map[uint64]int64{}, map[uint64]int64{}
	r.visible.Range(func(k uint64, v int64) {
		if !skip[k] {
			got[k] = v
		}
	})
	for k, v := range r.final {
		if !skip[k] {
			want[k] = v
		}
	}
	return check.CompareFinals(got, want)
}

// undrainedProblem is the exit-4 reason of an undrained run ("" if it is
// not one).
func undrainedProblem(res *Result) string {
	if !res.Undrained() || res.Pending == nil {
		return ""
	}
	p := res.Pending
	parts := make([]string, 0, len(p.Partitions))
	for _, pp := range p.Partitions {
		parts = append(parts, fmt.Sprintf("p%d: %d", pp.Partition, pp.Effects))
	}
	last := "no commit"
	if p.LastCommitS != nil {
		last = fmt.Sprintf("last commit at %.1fs", *p.LastCommitS)
	}
	if st := p.Runtime.Store; st != "" {
		// A stall on the store is the cause, whatever else is queued
		// behind it: say so first, and since when nothing was committed
		// if the run went quiet (a 2PC sink waiting for a checkpoint).
		head := "undrained: "
		switch {
		case p.LastCommitS == nil:
			head += "nothing committed: "
		case *p.LastCommitS < res.SimTimeS-1:
			head += fmt.Sprintf("no commit after %.1fs: ", *p.LastCommitS)
		}
		return fmt.Sprintf("%sthe checkpoint store held the run up (%s); %d of %d expected effects still pending when the run stopped at %.1fs (%s; %s); runtime: %s",
			head, st, res.PendingEffects, res.ExpectedEffects, res.SimTimeS, strings.Join(parts, ", "), last, p.Activity)
	}
	if p.SourceDown != "" {
		// The source could not fetch: the cause, whatever the system
		// did meanwhile.
		return fmt.Sprintf("undrained: source-down held the run up (%s); %d of %d expected effects still pending when the run stopped at %.1fs (%s; %s); runtime: %s",
			p.SourceDown, res.PendingEffects, res.ExpectedEffects, res.SimTimeS, strings.Join(parts, ", "), last, p.Activity)
	}
	return fmt.Sprintf("undrained: %d of %d expected effects still pending when the run stopped at %.1fs (%s; oldest p%d offset %d, appended %.1fs before the end; %s); runtime: %s",
		res.PendingEffects, res.ExpectedEffects, res.SimTimeS, strings.Join(parts, ", "), p.OldestPartition, p.OldestOffset,
		p.OldestAgeS, last, p.Activity)
}
