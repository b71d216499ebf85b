package metrics

import "ftbench/engine"

// Staleness computes output staleness after a run (docs/metrics.md: "Output
// staleness"): at each sampling instant t_k = (k+1)·bucket, the end of
// bucket k, the age t_k − born of the oldest appended input record (born <=
// t_k) one of whose expected effects is first committed after t_k.
//
// done[p][off] is, for the record at offset off of partition p, the time
// its last eventually-committed expected effect was first committed (the
// latest of its effects' first commits), or 0 if none of its effects was
// ever committed: a record whose effects are all lost (or that has none)
// never makes the output stale — losses are counted as losses. bornAt(off)
// is the append time of offset off, the same in every partition
// (workloads.Log.BornAt), and must not decrease with off.
//
// Records are visited oldest first, so the first record that is pending at
// a sampling instant is the oldest one there. A union-find over bucket
// indices ("next bucket not yet assigned") lets each record claim only the
// still-unassigned instants of its pending interval, so the whole pass is
// O(records + buckets), near enough: the finds cost an inverse Ackermann
// factor. The result has one entry per bucket (0: nothing pending).
func Staleness(done [][]int64, bornAt func(off int64) engine.Time, bucket engine.Time, buckets int) []engine.Time {
	t := NewStalenessTracker(bucket)
	var longest int64
	for _, d := range done {
		longest = max(longest, int64(len(d)))
	}
	for off := int64(0); off < longest; off++ {
		born := bornAt(off)
		for p := range done {
			if off < int64(len(done[p])) {
				t.Record(born, engine.Time(done[p][off]))
			}
		}
	}
	return t.Result(buckets)
}

// StalenessTracker computes Staleness one record at a time, so that the
// harness need not keep a done time per record of the log: Record takes
// records oldest first (the union-find pass), Late takes, after them and
// in any order, the few records whose done time was only known later (a
// record's staleness contribution is a maximum, so order does not change
// the result; Late costs one step per bucket the record was pending).
type StalenessTracker struct {
	bucket engine.Time
	stale  []engine.Time
	// next[k] leads to the first unassigned instant >= k (union-find).
	next []int32
}

// NewStalenessTracker returns a tracker for sampling buckets of bucket.
func NewStalenessTracker(bucket engine.Time) *StalenessTracker {
	return &StalenessTracker{bucket: bucket}
}

// span is the record's pending instants [lo, hi] (empty if lo > hi).
func (t *StalenessTracker) span(born, done engine.Time) (lo, hi int, ok bool) {
	if t.bucket <= 0 || done <= born {
		return 0, 0, false // never committed (0), or at its birth: never pending
	}
	// Smallest k with t_k >= born; largest k with t_k < done.
	lo = max(int((born+t.bucket-1)/t.bucket)-1, 0)
	hi = int((done+t.bucket-1)/t.bucket) - 2
	t.grow(max(lo, hi) + 1)
	return lo, hi, true
}

func (t *StalenessTracker) grow(n int) {
	for len(t.next) <= n {
		t.next = append(t.next, int32(len(t.next)))
		t.stale = append(t.stale, 0)
	}
}

func (t *StalenessTracker) find(k int) int {
	root := k
	for int(t.next[root]) != root {
		root = int(t.next[root])
	}
	for int(t.next[k]) != root { // path compression
		k, t.next[k] = int(t.next[k]), int32(root)
	}
	return root
}

// Record adds a record appended at born whose effects were done at done
// (0: none committed). Records must come in order of born.
func (t *StalenessTracker) Record(born, done engine.Time) {
	lo, hi, ok := t.span(born, done)
	if !ok {
		return
	}
	for k := t.find(lo); k <= hi; k = t.find(k) {
		t.stale[k] = engine.Time(k+1)*t.bucket - born
		t.next[k] = int32(k + 1)
	}
}

// Late adds a record after every Record, in any order.
func (t *StalenessTracker) Late(born, done engine.Time) {
	lo, hi, ok := t.span(born, done)
	if !ok {
		return
	}
	for k := lo; k <= hi; k++ {
		t.stale[k] = max(t.stale[k], engine.Time(k+1)*t.bucket-born)
	}
}

// Result is the staleness of buckets buckets.
func (t *StalenessTracker) Result(buckets int) []engine.Time {
	stale := make([]engine.Time, buckets)
	copy(stale, t.stale)
	return stale
}
