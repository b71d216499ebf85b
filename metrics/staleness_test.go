package metrics

import (
	"math/rand/v2"
	"slices"
	"testing"

	"ftbench/engine"
)

// Hand-made runs whose staleness is known: records born at 50 ms, 150 ms,
// ... (one per 100 ms bucket, every partition alike), sampled at the bucket
// ends 100 ms, 200 ms, ...
func TestStaleness(t *testing.T) {
	ms := engine.Millisecond
	born := func(off int64) engine.Time { return 50*ms + engine.Time(off)*100*ms }
	d := func(ts ...engine.Time) []int64 {
		out := make([]int64, len(ts))
		for i, x := range ts {
			out[i] = int64(x)
		}
		return out
	}
	tests := []struct {
		name string
		done [][]int64
		want []engine.Time // per bucket, in ms
	}{
		{"every record committed within its bucket", [][]int64{d(60*ms, 160*ms, 260*ms)}, []engine.Time{0, 0, 0, 0}},
		{"a late record ages until its commit", [][]int64{d(350*ms, 160*ms, 260*ms)}, []engine.Time{50, 150, 250, 0}},
		{"committed exactly at a sampling instant is not pending there", [][]int64{d(200*ms, 160*ms)}, []engine.Time{50, 0, 0}},
		{"a lost record (0) is a loss, not staleness", [][]int64{d(0, 450*ms, 260*ms, 360*ms)}, []engine.Time{0, 50, 150, 250, 0}},
		{"the oldest pending record decides", [][]int64{d(250*ms, 450*ms, 260*ms, 360*ms)}, []engine.Time{50, 150, 150, 250, 0}},
		{"oldest over partitions", [][]int64{d(60*ms, 550*ms), d(250*ms, 160*ms)}, []engine.Time{50, 150, 150, 250, 350, 0}},
		{"partitions of different lengths", [][]int64{d(60 * ms), d(60*ms, 160*ms, 400*ms)}, []engine.Time{0, 0, 50, 0, 0}},
		{"nothing committed", [][]int64{d(0, 0)}, []engine.Time{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Staleness(tt.done, born, 100*ms, len(tt.want))
			for i := range got {
				got[i] /= ms
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Staleness = %v ms, want %v ms", got, tt.want)
			}
		})
	}
}

// The union-find pass agrees with the definition evaluated directly.
func TestStalenessMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		bucket := engine.Time(1 + rng.IntN(50))
		step := engine.Time(1 + rng.IntN(20))
		born := func(off int64) engine.Time { return engine.Time(off+1) * step }
		parts := 1 + rng.IntN(4)
		done := make([][]int64, parts)
		for p := range done {
			done[p] = make([]int64, rng.IntN(60))
			for off := range done[p] {
				if rng.IntN(10) > 0 {
					done[p][off] = int64(born(int64(off)) + engine.Time(rng.IntN(300)))
				}
			}
		}
		buckets := 1 + rng.IntN(40)
		got := Staleness(done, born, bucket, buckets)
		// The tracker with some records left for Late (the harness's
		// exceptions) gives the same result.
		tr := NewStalenessTracker(bucket)
		var late [][2]engine.Time
		for off := 0; off < 60; off++ {
			for p := range done {
				if off >= len(done[p]) {
					continue
				}
				b, c := born(int64(off)), engine.Time(done[p][off])
				if rng.IntN(4) == 0 {
					late = append(late, [2]engine.Time{b, c})
					continue
				}
				tr.Record(b, c)
			}
		}
		rng.Shuffle(len(late), func(i, j int) { late[i], late[j] = late[j], late[i] })
		for _, l := range late {
			tr.Late(l[0], l[1])
		}
		if split := tr.Result(buckets); !slices.Equal(split, got) {
			t.Fatalf("trial %d: with late records %v, in order %v", trial, split, got)
		}
		for k := 0; k < buckets; k++ {
			at := engine.Time(k+1) * bucket
			var want engine.Time
			for p := range done {
				for off, c := range done[p] {
					b := born(int64(off))
					if c != 0 && b <= at && engine.Time(c) > at {
						want = max(want, at-b)
					}
				}
			}
			if got[k] != want {
				t.Fatalf("trial %d bucket %d: got %v, want %v (bucket %v, step %v, done %v)", trial, k, got[k], want, bucket, step, done)
			}
		}
	}
}
