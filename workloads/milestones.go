package workloads

import "ftbench/keyed"

// Milestones are copies of the oracle's keyed state taken during the
// harness's one oracle pass over the log, so that the snapshot checks after
// the run get the oracle at any checkpoint's source offsets without
// replaying the log from offset 0.
//
// The pass feeds the log in rounds (round r feeds offset r of every
// partition); a milestone at round r holds the keyed stages' states after
// rounds 0..r-1. An oracle fed exactly the records {(p, off): off <
// offsets[p]} is then a copy of the latest milestone at or below every
// offsets[p], plus the rest of each partition fed partition by partition.
// That is exact because of the contract on Stage.Update: keyed state
// depends only on the set of records fed. The sink's state follows the
// order (last writer wins), so it is not kept: an oracle from At answers
// State, not Final.
//
// Memory is bounded whatever the input: at most maxMilestones copies at
// evenly spaced rounds, holding at most milestoneKeys keys over all of
// them. When the state grows past what the budget allows, every other
// milestone is dropped and the spacing doubles; a state larger than the
// whole budget stops the taking (those taken stay), and offsets below every
// milestone are replayed from offset 0, as if there were none (a large
// state takes none at all). The end of the pass is kept too (the
// pass's own state, no copy) when it fits the budget on its own:
// the retained checkpoints of a drained run are usually taken after the
// input ended, at the end of the log.
type Milestones struct {
	parts  int   // partitions the pass fed
	total  int64 // rounds of the pass
	every  int64 // spacing of the milestone rounds
	taken  []milestone
	keys   int            // keys over taken
	budget int            // most keys over taken, and in end (milestoneKeys)
	off    bool           // the state outgrew the budget: no more milestones
	end    []*keyed.Table // the state at the end of the pass, nil if too large
}

// milestone is the keyed state after rounds 0..round-1.
type milestone struct {
	round  int64
	states []*keyed.Table // one per plan stage, as Oracle.states
	keys   int
}

const (
	// maxMilestones: copies kept during the pass; a checkpoint at any
	// offsets is at most total/maxMilestones rounds past one (unless the
	// budget thinned them).
	maxMilestones = 32
	// milestoneKeys bounds the keys over all milestones, and the end
	// state's on its own: a keyed.Table takes at most 16 bytes a slot and
	// 8/3 slots a key, so each is under 23 MB.
	milestoneKeys = 1 << 19
)

// MilestoneKeys is the most keys the milestones copy in a pass whose keyed
// state holds stateKeys keys (the size budget's memory model).
func MilestoneKeys(stateKeys int64) int64 {
	return min(stateKeys*maxMilestones, milestoneKeys)
}

// NewMilestones prepares milestones for a pass of total rounds over parts
// partitions.
func NewMilestones(parts int, total int64) *Milestones {
	return &Milestones{parts: parts, total: total, every: max(1, (total+maxMilestones-1)/maxMilestones), budget: milestoneKeys}
}

// Take is called by the pass before it feeds round r: o holds rounds
// 0..r-1. It copies o's keyed state when r is a milestone round and the
// budget allows.
func (m *Milestones) Take(r int64, o *Oracle) {
	if m.off || r <= 0 || r >= m.total || r%m.every != 0 {
		return
	}
	n := o.keys()
	if n > m.budget {
		m.off = true // the state only grows; the milestones taken stay usable
		return
	}
	for len(m.taken) > 0 && (m.keys+n > m.budget || len(m.taken) >= maxMilestones) {
		m.thin()
	}
	if r%m.every == 0 {
		m.taken = append(m.taken, milestone{round: r, states: o.cloneStates(), keys: n})
		m.keys += n
	}
}

// thin drops every other milestone and doubles the spacing.
func (m *Milestones) thin() {
	m.every *= 2
	kept := m.taken[:0]
	m.keys = 0
	for _, ms := range m.taken {
		if ms.round%m.every == 0 {
			kept = append(kept, ms)
			m.keys += ms.keys
		}
	}
	clear(m.taken[len(kept):]) // let the dropped copies go
	m.taken = kept
}

// End is called when the pass has fed every round: o's keyed state is
// kept, without a copy, as the state at the end of the log if it fits the
// budget (the pass must not feed o any more).
func (m *Milestones) End(o *Oracle) {
	if o.keys() <= m.budget {
		m.end = o.states
	}
}

// Base is the round of the milestone At starts from for offsets: the
// latest at or below every offsets[p], or 0 (a fresh oracle) when there is
// none or m is nil.
func (m *Milestones) Base(offsets []int64) int64 {
	r, _ := m.base(offsets)
	return r
}

// base is Base with the milestone's states (nil for round 0).
func (m *Milestones) base(offsets []int64) (int64, []*keyed.Table) {
	if m == nil || len(offsets) != m.parts {
		return 0, nil
	}
	low := m.total
	for _, off := range offsets {
		low = min(low, off)
	}
	if m.end != nil && low >= m.total {
		return m.total, m.end
	}
	for i := len(m.taken) - 1; i >= 0; i-- {
		if m.taken[i].round <= low {
			return m.taken[i].round, m.taken[i].states
		}
	}
	return 0, nil
}

// At returns a new oracle for w (the workload the pass ran) fed exactly
// the records {(p, off): off < offsets[p]}: a copy of the milestone at
// Base(offsets), then each partition from there in offset order. Its keyed
// states (State) are exact; its sink state (Final) is not kept. A nil m
// replays from offset 0.
func (m *Milestones) At(w Workload, offsets []int64) *Oracle {
	o := NewOracle(w)
	from, states := m.base(offsets)
	if states != nil && len(states) == len(o.states) {
		for i, t := range states {
			o.states[i] = t.Clone()
		}
	} else {
		from = 0
	}
	for p, end := range offsets {
		for off := from; off < end; off++ {
			o.Feed(int32(p), off)
		}
	}
	return o
}
