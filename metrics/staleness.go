package metrics

import "ftbench/engine"

// Staleness computes output staleness after a run (README: "Output
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
	stale := make([]engine.Time, buckets)
	if buckets == 0 || bucket <= 0 {
		return stale
	}
	// next[k] leads to the first unassigned instant >= k; buckets is the
	// sentinel "none left".
	next := make([]int32, buckets+1)
	for k := range next {
		next[k] = int32(k)
	}
	find := func(k int) int {
		root := k
		for int(next[root]) != root {
			root = int(next[root])
		}
		for int(next[k]) != root { // path compression
			k, next[k] = int(next[k]), int32(root)
		}
		return root
	}
	var longest int64
	for _, d := range done {
		longest = max(longest, int64(len(d)))
	}
	left := buckets
	for off := int64(0); off < longest && left > 0; off++ {
		born := bornAt(off)
		// Smallest k with t_k >= born.
		lo := int((born+bucket-1)/bucket) - 1
		lo = max(lo, 0)
		if lo >= buckets {
			break // every later record is born after the last instant
		}
		for p := range done {
			if off >= int64(len(done[p])) {
				continue
			}
			d := engine.Time(done[p][off])
			if d <= born {
				continue // never committed (0), or at its birth: never pending
			}
			// Largest k with t_k < d.
			hi := min(int((d+bucket-1)/bucket)-2, buckets-1)
			for k := find(lo); k <= hi; k = find(k) {
				stale[k] = engine.Time(k+1)*bucket - born
				next[k] = int32(k + 1)
				left--
			}
		}
	}
	return stale
}
