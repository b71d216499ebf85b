// Package check judges what a run delivered: exact per-effect duplicate and
// loss counts, the observed delivery semantics and whether the system's
// claim held, and the final sink state against an oracle.
//
// It is single-goroutine and deterministic like the rest of the harness.
package check

import (
	"fmt"
	"math/bits"
	"sort"

	"ftbench/engine"
)

// MaxSubs is the most effects one input record may have: one bit each in a
// uint64 mask.
const MaxSubs = 64

// MaxOffset bounds the offsets Delivery accepts, so that a corrupted offset
// from a buggy system counts as Unexpected. No simulated run comes near 2^36
// records per partition.
const MaxOffset = 1 << 36

// maxWindowSlots bounds the window: rows x partitions slots of 16 bytes
// (64 MiB). A run keeps in flight far fewer records than that unless it
// loses some, and lost records leave the window as exceptions.
const maxWindowSlots = 1 << 22

// slot is one record's progress: the committed subs and the latest of
// their first commits (the record's done time, metrics.Staleness).
type slot struct {
	mask uint64
	done int64
}

// span is a run [from, to) of one partition's offsets that left the window
// with nothing committed.
type span struct{ from, to int64 }

// excKey names a record that left the window incomplete.
type excKey struct {
	part int32
	off  int64
}

// Delivery counts, per effect id, how often each expected effect was
// committed. It models nothing in a real system: it is the harness's exact
// ledger of the sink, and keeps memory bounded by the records in flight,
// not by the log.
//
// Invariant: a record is in exactly one of three places. Rows (offsets, the
// same in every partition) [base, hi) are a window of slots. A record below
// base either left the window complete, and then nothing is kept (every
// expected effect committed once; any further commit of it is a duplicate),
// or it is an exception: in exc with its slot, or, when nothing of it was
// committed when it left, in its partition's zero spans. Rows leave the
// window in order once every partition's record in them is complete, or
// when the window would exceed maxWindowSlots; so the memory held is the
// in-flight window plus the exceptions, which are what a run lost (or
// delivered very late). It is not safe for concurrent use.
type Delivery struct {
	expected func(part int32, off int64) int32
	parts    int
	// ring holds rows [base, hi): row r's slot of partition p is
	// ring[p*rows+(r&(rows-1))] (rows is a power of two), so that one
	// partition's consecutive offsets are adjacent in memory. open[r&(rows-1)]
	// counts row r's records not yet complete, so that a row's completion
	// costs nothing per partition.
	ring     []slot
	open     []int32
	rows     int64
	maxRows  int64
	base, hi int64
	exc      map[excKey]slot
	zero     [][]span
	// onSettle, if set, sees every row as it leaves the window, in order,
	// with each partition's done time (0 for a record still incomplete:
	// its done time is reported by Exceptions).
	onSettle func(row int64, done []int64)
	doneBuf  []int64

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
		parts:        parts,
		maxRows:      1,
		exc:          map[excKey]slot{},
		zero:         make([][]span, parts),
		doneBuf:      make([]int64, parts),
		maxCommitted: make([]int64, parts),
	}
	for p := range d.maxCommitted {
		d.maxCommitted[p] = -1
	}
	for parts > 0 && d.maxRows*2*int64(parts) <= maxWindowSlots {
		d.maxRows *= 2
	}
	return d
}

// OnSettle sets a function that sees every row (offset) as it leaves the
// window, in offset order, with each partition's done time: the latest of
// its effects' first commits (RecordAt's at), 0 if none was committed or
// the record is still incomplete. An incomplete record's done time comes
// later, from Exceptions. The harness derives output staleness from it.
func (d *Delivery) OnSettle(f func(row int64, done []int64)) { d.onSettle = f }

// effects returns expected(p, off), rejecting a contract violation loudly:
// silently clamping it would turn a workload bug into phantom losses.
func (d *Delivery) effects(p int32, off int64) int32 {
	n := d.expected(p, off)
	if n < 0 || n > MaxSubs {
		panic(fmt.Sprintf("check: expected(%d, %d) = %d, want 0..%d", p, off, n, MaxSubs))
	}
	return n
}

// full is the mask of all n subs (n == 64 wraps to all ones).
func full(n int32) uint64 { return uint64(1)<<uint(n) - 1 }

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
func (d *Delivery) Commit(id engine.EffectID) { d.RecordAt(id, 0) }

// Record is Commit, returning what the commit was, so that the observer
// flags re-applications exactly as the delivery checker counts them.
func (d *Delivery) Record(id engine.EffectID) CommitStatus { return d.RecordAt(id, 0) }

// RecordAt is Record for a commit at time at: a first commit raises its
// record's done time to at (OnSettle, Exceptions).
func (d *Delivery) RecordAt(id engine.EffectID, at int64) CommitStatus {
	p, off := id.Part, id.Off
	if mutantDeliverySkipPartition && int(p) == d.parts-1 {
		return CommitFirst // the mutant: the last partition is not checked
	}
	var want int32
	if p >= 0 && int(p) < d.parts && off >= 0 && off < MaxOffset {
		want = d.effects(p, off)
	}
	if id.Sub < 0 || id.Sub >= want { // also every invalid part or offset
		d.unexpected++
		return CommitUnexpected
	}
	bit := uint64(1) << uint(id.Sub)
	if off < d.base {
		k := excKey{p, off}
		s, ok := d.exc[k]
		if !ok {
			if !d.inZeroSpan(p, off) {
				d.duplicates++ // the record left the window complete
				return CommitDuplicate
			}
		}
		if s.mask&bit != 0 {
			d.duplicates++
			return CommitDuplicate
		}
		s.mask |= bit
		s.done = max(s.done, at)
		d.exc[k] = s
		d.first(p, off)
		return CommitFirst
	}
	d.cover(off)
	s := d.slot(p, off)
	if s.mask&bit != 0 {
		d.duplicates++
		return CommitDuplicate
	}
	s.mask |= bit
	s.done = max(s.done, at)
	d.first(p, off)
	if s.mask == full(want) {
		d.open[off&(d.rows-1)]--
		if off == d.base {
			d.advance()
		}
	}
	return CommitFirst
}

func (d *Delivery) first(p int32, off int64) {
	d.distinct++
	if off > d.maxCommitted[p] {
		d.maxCommitted[p] = off
	}
}

// inZeroSpan reports whether (p, off), below base, left the window with
// nothing committed.
func (d *Delivery) inZeroSpan(p int32, off int64) bool {
	z := d.zero[p]
	i := sort.Search(len(z), func(i int) bool { return z[i].to > off })
	return i < len(z) && z[i].from <= off
}

// cover makes the window hold row off: it grows the ring up to maxRows,
// beyond that it lets the oldest rows leave the window incomplete.
func (d *Delivery) cover(off int64) {
	if off < d.hi {
		return
	}
	if need := off - d.base + 1; need > d.rows {
		if need <= d.maxRows {
			d.grow(need)
		} else {
			d.forceBase(off - d.maxRows + 1)
			if d.rows < d.maxRows {
				d.grow(off - d.base + 1)
			}
		}
	}
	for r := max(d.hi, d.base); r <= off; r++ {
		var n int32
		for p := 0; p < d.parts; p++ {
			if d.effects(int32(p), r) > 0 {
				n++
			}
		}
		d.open[r&(d.rows-1)] = n
	}
	d.hi = off + 1
}

// slot is (p, off)'s slot; off must be in the window.
func (d *Delivery) slot(p int32, off int64) *slot {
	return &d.ring[int64(p)*d.rows+(off&(d.rows-1))]
}

// grow resizes the ring to the smallest power of two >= need rows.
func (d *Delivery) grow(need int64) {
	rows := max(d.rows, 1)
	for rows < need {
		rows *= 2
	}
	ring, open := make([]slot, rows*int64(d.parts)), make([]int32, rows)
	for r := d.base; r < d.hi; r++ {
		for p := int64(0); p < int64(d.parts); p++ {
			ring[p*rows+(r&(rows-1))] = d.ring[p*d.rows+(r&(d.rows-1))]
		}
		open[r&(rows-1)] = d.open[r&(d.rows-1)]
	}
	d.ring, d.open, d.rows = ring, open, rows
}

// advance lets complete rows at the window's start leave it.
func (d *Delivery) advance() {
	for d.base < d.hi && d.open[d.base&(d.rows-1)] == 0 {
		d.settle()
	}
}

// settle moves row base out of the window: complete records are forgotten,
// incomplete ones become exceptions.
func (d *Delivery) settle() {
	r := d.base
	complete := d.open[r&(d.rows-1)] == 0
	for p := 0; p < d.parts; p++ {
		sp := d.slot(int32(p), r)
		s := *sp
		*sp = slot{}
		d.doneBuf[p] = 0
		switch {
		case complete || s.mask == full(d.effects(int32(p), r)):
			d.doneBuf[p] = s.done
		case s.mask == 0:
			d.addZero(int32(p), r, r+1)
		default:
			d.exc[excKey{int32(p), r}] = s
		}
	}
	d.base++
	if d.onSettle != nil {
		d.onSettle(r, d.doneBuf)
	}
}

func (d *Delivery) addZero(p int32, from, to int64) {
	z := d.zero[p]
	if n := len(z); n > 0 && z[n-1].to == from {
		z[n-1].to = to
		return
	}
	d.zero[p] = append(z, span{from, to})
}

// forceBase moves the window's start to base, letting rows leave it
// whether complete or not; rows beyond hi held nothing and leave as zero
// spans at once.
func (d *Delivery) forceBase(base int64) {
	for d.base < base && d.base < d.hi {
		d.settle()
	}
	if d.base < base {
		for p := 0; p < d.parts; p++ {
			d.addZero(int32(p), d.base, base)
		}
		d.base, d.hi = base, base
	}
}

// SettleAll lets every row leave the window (the run is over): OnSettle
// sees the rest of the rows, and incomplete records become exceptions.
// Later commits are still counted exactly.
func (d *Delivery) SettleAll() {
	for d.base < d.hi {
		d.settle()
	}
}

// Exceptions calls f for every record that left the window incomplete and
// had an effect committed, in no particular order, with its done time.
func (d *Delivery) Exceptions(f func(part int32, off int64, done int64)) {
	for k, s := range d.exc {
		f(k.part, k.off, s.done)
	}
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
	if id.Part < 0 || int(id.Part) >= d.parts || id.Off < 0 || id.Off >= MaxOffset || id.Sub < 0 || id.Sub >= MaxSubs {
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
	parts := max(len(appended), d.parts)
	r.LostPerPart, r.FirstLost = make([]int64, parts), make([]int64, parts)
	for p := 0; p < parts; p++ {
		r.FirstLost[p] = -1
		if mutantDeliverySkipPartition && p == d.parts-1 {
			continue
		}
		var n int64
		if p < len(appended) {
			n = appended[p]
		}
		for off := int64(0); off < n; off++ {
			k := d.effects(int32(p), off)
			want := full(k)
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
	switch {
	case p >= d.parts || off >= d.hi:
		return 0
	case off >= d.base:
		return d.slot(int32(p), off).mask
	}
	if len(d.exc) > 0 {
		if s, ok := d.exc[excKey{int32(p), off}]; ok {
			return s.mask
		}
	}
	if len(d.zero[p]) > 0 && d.inZeroSpan(int32(p), off) {
		return 0
	}
	return full(d.effects(int32(p), off))
}

// committedFrom counts the effects committed at offsets >= from of
// partition p: records that were never appended.
func (d *Delivery) committedFrom(p int, from int64) int64 {
	var n int64
	for off := from; off < d.hi; off++ {
		n += int64(bits.OnesCount64(d.word(p, off)))
	}
	return n
}
