// Package check judges what a run delivered: exact per-effect duplicate and
// loss counts, the observed delivery semantics and whether the system's
// claim held, and the final sink state against an oracle.
//
// It is single-goroutine and deterministic like the rest of the harness.
package check

import (
	"fmt"
	"math/bits"

	"ftbench/engine"
)

// MaxSubs is the most effects one input record may have: one bit each in a
// uint64 mask.
const MaxSubs = 64

// MaxOffset bounds the offsets Delivery tracks, so that a corrupted offset
// from a buggy system counts as Unexpected instead of growing a page table
// without bound (just below 2^36 the table is 1 Mi pointers, 8 MiB). No
// simulated run comes near 2^36 records per partition.
const MaxOffset = 1 << 36

// Bitmap pages: 2^16 offsets (512 KiB) each.
const (
	pageBits = 16
	pageSize = 1 << pageBits
	pageMask = pageSize - 1
)

// Delivery counts, per effect id, how often each expected effect was
// committed. It is not safe for concurrent use.
type Delivery struct {
	expected func(part int32, off int64) int32
	// seen[p] is partition p's bitmap, one uint64 per offset with bit s set
	// once effect (p, s, off) was committed, split in pages indexed by
	// off>>pageBits. Pages are allocated on first use and never move: a flat
	// slice grown by doubling spent most of its time copying and re-zeroing
	// memory, and a gap in offsets would have cost memory for the gap.
	seen         [][]*[pageSize]uint64
	maxCommitted []int64
	distinct     int64
	duplicates   int64
	unexpected   int64
}

// NewDelivery returns a checker for parts source partitions. expected(p, off)
// is how many effects (subs 0..n-1, n <= MaxSubs) the record at (p, off)
// must produce at the sink, 0 if it is filtered out; it must be a pure
// function, since Commit and Finish both call it.
func NewDelivery(expected func(part int32, off int64) int32, parts int) *Delivery {
	d := &Delivery{
		expected:     expected,
		seen:         make([][]*[pageSize]uint64, parts),
		maxCommitted: make([]int64, parts),
	}
	for p := range d.maxCommitted {
		d.maxCommitted[p] = -1
	}
	return d
}

// effects returns expected(p, off), rejecting a contract violation loudly:
// silently clamping it would turn a workload bug into phantom losses.
func (d *Delivery) effects(p int32, off int64) int32 {
	n := d.expected(p, off)
	if n < 0 || n > MaxSubs {
		panic(fmt.Sprintf("check: expected(%d, %d) = %d, want 0..%d", p, off, n, MaxSubs))
	}
	return n
}

// CommitStatus is what one commit was to the delivery checker.
type CommitStatus uint8

// Commit statuses.
const (
	CommitFirst      CommitStatus = iota // the effect's first commit
	CommitDuplicate                      // a repeat of a committed effect
	CommitUnexpected                     // an effect no record produces
)

// Commit records one commit of effect id. A repeat of an already committed
// effect is a duplicate; an id that no record can produce (unknown
// partition, negative or out-of-range offset, Sub >= expected) is
// Unexpected and otherwise ignored.
func (d *Delivery) Commit(id engine.EffectID) { d.Record(id) }

// Record is Commit, returning what the commit was, so that the observer
// flags re-applications exactly as the delivery checker counts them.
func (d *Delivery) Record(id engine.EffectID) CommitStatus {
	p, off := id.Part, id.Off
	if mutantDeliverySkipPartition && int(p) == len(d.seen)-1 {
		return CommitFirst // the mutant: the last partition is not checked
	}
	if p < 0 || int(p) >= len(d.seen) || off < 0 || off >= MaxOffset ||
		id.Sub < 0 || id.Sub >= d.effects(p, off) {
		d.unexpected++
		return CommitUnexpected
	}
	var pg *[pageSize]uint64
	if t := d.seen[p]; int(off>>pageBits) < len(t) {
		pg = t[off>>pageBits]
	}
	if pg == nil {
		pg = d.page(p, off)
	}
	w := &pg[off&pageMask]
	bit := uint64(1) << uint(id.Sub)
	if *w&bit != 0 {
		d.duplicates++
		return CommitDuplicate
	}
	*w |= bit
	d.distinct++
	if off > d.maxCommitted[p] {
		d.maxCommitted[p] = off
	}
	return CommitFirst
}

// page returns the page of partition p holding off, allocating it (and
// extending the page table) on first use.
func (d *Delivery) page(p int32, off int64) *[pageSize]uint64 {
	pg := int(off >> pageBits)
	t := d.seen[p]
	if pg >= len(t) {
		t = append(t, make([]*[pageSize]uint64, pg+1-len(t))...)
		d.seen[p] = t
	}
	if t[pg] == nil {
		t[pg] = new([pageSize]uint64)
	}
	return t[pg]
}

// Distinct returns how many distinct valid effects have been committed.
func (d *Delivery) Distinct() int64 { return d.distinct }

// Duplicates returns how many commits repeated an already committed effect.
func (d *Delivery) Duplicates() int64 { return d.duplicates }

// Unexpected returns how many commits named an effect no record produces
// (so far: offsets beyond the appended ones are only known in Finish).
func (d *Delivery) Unexpected() int64 { return d.unexpected }

// Complete reports whether every expected effect so far has been committed,
// given the number of effects the records appended so far must produce.
// It is O(1) so the harness can poll it to end the drain phase early.
func (d *Delivery) Complete(expectedTotal int64) bool { return d.distinct == expectedTotal }

// Committed reports whether effect id has been committed at least once.
func (d *Delivery) Committed(id engine.EffectID) bool {
	if id.Part < 0 || int(id.Part) >= len(d.seen) || id.Off < 0 || id.Off >= MaxOffset || id.Sub < 0 || id.Sub >= MaxSubs {
		return false
	}
	return d.word(int(id.Part), id.Off)&(uint64(1)<<uint(id.Sub)) != 0
}

// MaxCommitted returns the highest offset of partition p with any committed
// effect, -1 if none (or p is unknown). The harness derives source lag from
// it.
func (d *Delivery) MaxCommitted(p int32) int64 {
	if p < 0 || int(p) >= len(d.maxCommitted) {
		return -1
	}
	return d.maxCommitted[p]
}

// Result is the delivery verdict of a run.
type Result struct {
	Expected   int64 // effects the appended records must produce
	Distinct   int64 // expected effects committed at least once
	Duplicates int64 // commits beyond the first of an effect
	Lost       int64 // expected effects never committed
	// Unexpected counts commits of effects no appended record produces; any
	// is a harness or system bug. For offsets beyond the appended ones it
	// counts distinct effects; their repeats stay in Duplicates.
	Unexpected int64
	// LostExamples are up to MaxExamples lost effects, lowest partition and
	// offset first, to start debugging from.
	LostExamples []engine.EffectID
	// LostPerPart[p] counts partition p's expected effects never committed,
	// and FirstLost[p] is the lowest offset holding one (-1 if none): the
	// harness reports where an undrained run's pending effects are.
	LostPerPart []int64
	FirstLost   []int64
}

// MaxExamples bounds Result.LostExamples.
const MaxExamples = 5

// Finish computes the result, where appended[p] is the number of records
// appended to partition p (a partition missing from appended had none). It
// does not modify d, so it may be called more than once.
func (d *Delivery) Finish(appended []int64) Result {
	r := Result{Duplicates: d.duplicates, Unexpected: d.unexpected}
	parts := max(len(appended), len(d.seen))
	r.LostPerPart, r.FirstLost = make([]int64, parts), make([]int64, parts)
	for p := 0; p < parts; p++ {
		r.FirstLost[p] = -1
		if mutantDeliverySkipPartition && p == len(d.seen)-1 {
			continue
		}
		var n int64
		if p < len(appended) {
			n = appended[p]
		}
		for off := int64(0); off < n; off++ {
			k := d.effects(int32(p), off)
			want := uint64(1)<<uint(k) - 1 // k == 64 wraps to all ones
			got := d.word(p, off) & want
			r.Expected += int64(k)
			r.Distinct += int64(bits.OnesCount64(got))
			missing := want &^ got
			r.Lost += int64(bits.OnesCount64(missing))
			if missing != 0 {
				r.LostPerPart[p] += int64(bits.OnesCount64(missing))
				if r.FirstLost[p] < 0 {
					r.FirstLost[p] = off
				}
			}
			for missing != 0 && len(r.LostExamples) < MaxExamples {
				sub := bits.TrailingZeros64(missing)
				r.LostExamples = append(r.LostExamples, engine.EffectID{Part: int32(p), Sub: int32(sub), Off: off})
				missing &= missing - 1
			}
		}
		r.Unexpected += d.committedFrom(p, max(n, 0))
	}
	return r
}

// word returns the committed-subs mask of (p, off) without allocating.
func (d *Delivery) word(p int, off int64) uint64 {
	if p >= len(d.seen) || int(off>>pageBits) >= len(d.seen[p]) {
		return 0
	}
	pg := d.seen[p][off>>pageBits]
	if pg == nil {
		return 0
	}
	return pg[off&pageMask]
}

// committedFrom counts the effects committed at offsets >= from of
// partition p: records that were never appended.
func (d *Delivery) committedFrom(p int, from int64) int64 {
	if p >= len(d.seen) {
		return 0
	}
	var n int64
	for i, pg := range d.seen[p] {
		if pg == nil || int64(i+1)<<pageBits <= from {
			continue
		}
		for j, w := range pg {
			if int64(i)<<pageBits+int64(j) >= from {
				n += int64(bits.OnesCount64(w))
			}
		}
	}
	return n
}
