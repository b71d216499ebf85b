package check

import (
	"slices"
	"testing"

	"ftbench/engine"
)

// pattern is a test workload: even offsets produce 2 effects, offsets that
// are 3 mod 4 produce 1, offsets 1 mod 4 are filtered out (0).
func pattern(_ int32, off int64) int32 {
	switch {
	case off%2 == 0:
		return 2
	case off%4 == 3:
		return 1
	default:
		return 0
	}
}

func eff(p int32, off int64, sub int32) engine.EffectID {
	return engine.EffectID{Part: p, Sub: sub, Off: off}
}

// allOf lists every expected effect of offsets [0, n) of partition p.
func allOf(p int32, n int64) []engine.EffectID {
	var ids []engine.EffectID
	for off := int64(0); off < n; off++ {
		for s := int32(0); s < pattern(p, off); s++ {
			ids = append(ids, eff(p, off, s))
		}
	}
	return ids
}

func TestDelivery(t *testing.T) {
	// 8 offsets per partition: 0,2,4,6 -> 2 each, 3,7 -> 1 each: 10 effects.
	const perPart = 10
	tests := []struct {
		name     string
		parts    int
		commits  []engine.EffectID
		appended []int64
		want     Result
	}{
		{
			name: "exactly once", parts: 2,
			commits:  slices.Concat(allOf(0, 8), allOf(1, 8)),
			appended: []int64{8, 8},
			want:     Result{Expected: 2 * perPart, Distinct: 2 * perPart},
		},
		{
			name: "duplicates", parts: 1,
			commits:  slices.Concat(allOf(0, 8), []engine.EffectID{eff(0, 0, 1), eff(0, 0, 1), eff(0, 7, 0)}),
			appended: []int64{8},
			want:     Result{Expected: perPart, Distinct: perPart, Duplicates: 3},
		},
		{
			name: "losses with examples in order", parts: 2,
			commits:  slices.Concat(allOf(0, 2), allOf(1, 8)[1:]),
			appended: []int64{8, 8},
			want: Result{Expected: 2 * perPart, Distinct: 2 + perPart - 1, Lost: perPart - 2 + 1,
				LostExamples: []engine.EffectID{eff(0, 2, 0), eff(0, 2, 1), eff(0, 3, 0), eff(0, 4, 0), eff(0, 4, 1)}},
		},
		{
			name: "unexpected ids", parts: 1,
			commits: []engine.EffectID{
				eff(0, 1, 0),  // filtered record
				eff(0, 3, 1),  // sub beyond its one effect
				eff(0, 0, -1), // negative sub
				eff(-1, 0, 0), // unknown partitions
				eff(1, 0, 0),
				eff(0, -2, 0),        // negative offset
				eff(0, MaxOffset, 0), // absurd offset: must not grow the page table
			},
			appended: []int64{4},
			want: Result{Expected: 5, Lost: 5, Unexpected: 7,
				LostExamples: []engine.EffectID{eff(0, 0, 0), eff(0, 0, 1), eff(0, 2, 0), eff(0, 2, 1), eff(0, 3, 0)}},
		},
		{
			// Offsets 8.. were committed but never declared appended; the
			// repeat of (0,8,0) stays a duplicate.
			name: "beyond appended is unexpected", parts: 1,
			commits:  slices.Concat(allOf(0, 10), []engine.EffectID{eff(0, 8, 0)}),
			appended: []int64{8},
			want:     Result{Expected: perPart, Distinct: perPart, Duplicates: 1, Unexpected: 2},
		},
		{
			// appended lists a partition the checker was not told about: all
			// its effects are lost; a short appended means no records.
			name: "appended longer than parts", parts: 1,
			commits:  allOf(0, 4),
			appended: []int64{4, 1},
			want:     Result{Expected: 5 + 2, Distinct: 5, Lost: 2, LostExamples: []engine.EffectID{eff(1, 0, 0), eff(1, 0, 1)}},
		},
		{
			name: "appended shorter than parts", parts: 2,
			commits:  allOf(0, 4),
			appended: []int64{4},
			want:     Result{Expected: 5, Distinct: 5},
		},
		{
			name: "nothing", parts: 3,
			want: Result{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDelivery(pattern, tt.parts)
			for _, id := range tt.commits {
				d.Commit(id)
			}
			got := d.Finish(tt.appended)
			if got.Expected != tt.want.Expected || got.Distinct != tt.want.Distinct ||
				got.Duplicates != tt.want.Duplicates || got.Lost != tt.want.Lost ||
				got.Unexpected != tt.want.Unexpected || !slices.Equal(got.LostExamples, tt.want.LostExamples) {
				t.Errorf("Finish = %+v\nwant     %+v", got, tt.want)
			}
			if again := d.Finish(tt.appended); again.Lost != got.Lost || again.Unexpected != got.Unexpected {
				t.Errorf("second Finish differs: %+v vs %+v", again, got)
			}
		})
	}
}

func TestDeliveryIncremental(t *testing.T) {
	d := NewDelivery(pattern, 2)
	steps := []struct {
		commit            engine.EffectID
		distinct, dups    int64
		max0, max1        int64
		completeAt        int64 // expected total passed to Complete
		complete          bool
		unexpectedSoFar   int64
		describeForErrors string
	}{
		{eff(0, 0, 0), 1, 0, 0, -1, 2, false, 0, "first effect of a 2-effect record"},
		{eff(0, 0, 1), 2, 0, 0, -1, 2, true, 0, "second effect"},
		{eff(0, 0, 1), 2, 1, 0, -1, 2, true, 0, "duplicate leaves distinct alone"},
		{eff(1, 6, 0), 3, 1, 0, 6, 3, true, 0, "out of order offset on partition 1"},
		{eff(1, 3, 0), 4, 1, 0, 6, 5, false, 0, "lower offset keeps max"},
		{eff(1, 1, 0), 4, 1, 0, 6, 4, true, 1, "filtered record: unexpected, no state change"},
		{eff(0, 5000, 1), 5, 1, 5000, 6, 5, true, 1, "offset far beyond the bitmap grows it"},
	}
	for i, s := range steps {
		d.Commit(s.commit)
		if d.Distinct() != s.distinct || d.Duplicates() != s.dups || d.Unexpected() != s.unexpectedSoFar ||
			d.MaxCommitted(0) != s.max0 || d.MaxCommitted(1) != s.max1 || d.Complete(s.completeAt) != s.complete {
			t.Fatalf("step %d (%s): distinct %d dups %d unexpected %d max %d/%d complete(%d) %v",
				i, s.describeForErrors, d.Distinct(), d.Duplicates(), d.Unexpected(),
				d.MaxCommitted(0), d.MaxCommitted(1), s.completeAt, d.Complete(s.completeAt))
		}
	}
	for _, p := range []int32{-1, 2} {
		if got := d.MaxCommitted(p); got != -1 {
			t.Errorf("MaxCommitted(%d) = %d, want -1", p, got)
		}
	}
}

// TestDeliveryPages checks offsets on both sides of a power of two (the
// window's growth) and far beyond a gap, where "beyond appended" starts
// mid-window.
func TestDeliveryPages(t *testing.T) {
	const pageSize = 1 << 16
	one := func(int32, int64) int32 { return 1 }
	offs := []int64{pageSize - 1, pageSize, 3*pageSize + 5}
	tests := []struct {
		appended              int64
		distinct, lost, unexp int64
	}{
		{pageSize + 1, 2, pageSize - 1, 1},
		{3*pageSize + 5, 2, 3*pageSize + 3, 1},
		{3*pageSize + 6, 3, 3*pageSize + 3, 0},
		{pageSize - 1, 0, pageSize - 1, 3},
	}
	d := NewDelivery(one, 1)
	for _, off := range offs {
		d.Commit(eff(0, off, 0))
		d.Commit(eff(0, off, 0))
	}
	if d.MaxCommitted(0) != 3*pageSize+5 || d.Distinct() != 3 || d.Duplicates() != 3 {
		t.Fatalf("max %d distinct %d dups %d", d.MaxCommitted(0), d.Distinct(), d.Duplicates())
	}
	for _, tt := range tests {
		r := d.Finish([]int64{tt.appended})
		if r.Expected != tt.appended || r.Distinct != tt.distinct || r.Lost != tt.lost || r.Unexpected != tt.unexp {
			t.Errorf("appended %d: %+v, want distinct %d lost %d unexpected %d", tt.appended, r, tt.distinct, tt.lost, tt.unexp)
		}
	}
}

func TestDeliverySixtyFourSubs(t *testing.T) {
	d := NewDelivery(func(int32, int64) int32 { return MaxSubs }, 1)
	for s := int32(0); s < MaxSubs; s++ {
		if s != 40 {
			d.Commit(eff(0, 0, s))
		}
	}
	d.Commit(eff(0, 0, 64))
	r := d.Finish([]int64{1})
	want := Result{Expected: 64, Distinct: 63, Lost: 1, Unexpected: 1, LostExamples: []engine.EffectID{eff(0, 0, 40)}}
	if r.Expected != want.Expected || r.Distinct != want.Distinct || r.Lost != want.Lost ||
		r.Unexpected != want.Unexpected || !slices.Equal(r.LostExamples, want.LostExamples) {
		t.Errorf("Finish = %+v, want %+v", r, want)
	}
}

func TestDeliveryRejectsTooManySubs(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("expected(…) = 65 did not panic")
		}
	}()
	d := NewDelivery(func(int32, int64) int32 { return MaxSubs + 1 }, 1)
	d.Commit(eff(0, 0, 0))
}

func TestDeliveryCommitDoesNotAllocate(t *testing.T) {
	d := NewDelivery(pattern, 1)
	d.Commit(eff(0, 4000, 0)) // size the bitmap up front
	off := int64(0)
	if n := testing.AllocsPerRun(1000, func() {
		d.Commit(eff(0, off%4000, 0))
		off += 2
	}); n != 0 {
		t.Errorf("Commit allocates %v times", n)
	}
}

// BenchmarkDeliveryCommit measures Commit with 8 partitions interleaved.
// "in-order" has one effect per record committed in offset order (rows
// leave the window as they complete); "in-flight" has two effects per
// record, the second committed 2^16 offsets after the first, so the window
// holds 2^16 rows throughout (the hot path with records in flight).
func BenchmarkDeliveryCommit(b *testing.B) {
	const parts = 8
	b.Run("in-order", func(b *testing.B) {
		one := func(int32, int64) int32 { return 1 }
		d := NewDelivery(one, parts)
		b.ReportAllocs()
		var off int64
		for i := 0; b.Loop(); i++ {
			d.Commit(engine.EffectID{Part: int32(i % parts), Off: off})
			if i%parts == parts-1 {
				off++
			}
		}
	})
	b.Run("in-flight", func(b *testing.B) {
		const lag = 1 << 16
		two := func(int32, int64) int32 { return 2 }
		d := NewDelivery(two, parts)
		for off := int64(0); off < lag; off++ {
			for p := int32(0); p < parts; p++ {
				d.Commit(engine.EffectID{Part: p, Off: off})
			}
		}
		b.ReportAllocs()
		off := int64(lag)
		for i := 0; b.Loop(); i++ {
			p := int32(i % parts)
			d.Commit(engine.EffectID{Part: p, Off: off})
			d.Commit(engine.EffectID{Part: p, Sub: 1, Off: off - lag})
			if i%parts == parts-1 {
				off++
			}
		}
		if d.Duplicates() != 0 || d.Unexpected() != 0 {
			b.Fatalf("duplicates %d unexpected %d", d.Duplicates(), d.Unexpected())
		}
	})
}

// TestDeliveryWindowMatchesLedger drives the bounded-window checker and a
// naive ledger of every effect id with the same random commits (in and out
// of order, duplicates, losses, commits far ahead and long after a record
// left the window) and windows of a few rows, so that records leave the
// window complete, incomplete and untouched: every status, count, lost
// example, Committed answer and done time must agree.
func TestDeliveryWindowMatchesLedger(t *testing.T) {
	for _, maxRows := range []int64{1, 2, 4, 64} {
		for seed := uint64(1); seed <= 20; seed++ {
			const parts, n = 3, 200
			d := NewDelivery(pattern, parts)
			d.maxRows = maxRows
			ledger := map[engine.EffectID]int{}
			wantDone := map[engine.EffectID]int64{} // Sub 0: the record
			gotDone := map[engine.EffectID]int64{}
			d.OnSettle(func(row int64, done []int64) {
				for p, t := range done {
					if t != 0 {
						gotDone[eff(int32(p), row, 0)] = t
					}
				}
			})
			rng := seed
			next := func(k uint64) int64 { rng = engine.Mix64(rng + 1); return int64(rng % k) }
			cursor := int64(0)
			for i := 0; i < 3000; i++ {
				var id engine.EffectID
				switch next(10) {
				case 0: // anywhere, maybe beyond appended
					id = eff(int32(next(parts)), next(n+20), int32(next(3)))
				case 1: // far ahead of the window
					id = eff(int32(next(parts)), cursor+next(50), int32(next(2)))
				default: // near the cursor, mostly in order
					id = eff(int32(next(parts)), max(0, cursor-next(6)), int32(next(2)))
					if next(3) == 0 {
						cursor++
					}
				}
				at := int64(i + 1)
				status := d.RecordAt(id, at)
				valid := id.Sub < pattern(id.Part, id.Off)
				want := CommitUnexpected
				if valid {
					want = CommitFirst
					if ledger[id] > 0 {
						want = CommitDuplicate
					}
					if ledger[id] == 0 {
						rec := eff(id.Part, id.Off, 0)
						wantDone[rec] = max(wantDone[rec], at)
					}
					ledger[id]++
				}
				if status != want {
					t.Fatalf("rows %d seed %d commit %d %+v: status %d, want %d", maxRows, seed, i, id, status, want)
				}
			}
			appended := []int64{n, n - 7, n + 3}
			got := d.Finish(appended)
			// The ledger's verdict.
			var ref Result
			for _, c := range ledger {
				ref.Duplicates += int64(c - 1)
			}
			for p := int32(0); p < parts; p++ {
				for off := int64(0); off < 4000; off++ {
					for s := int32(0); s < pattern(p, off); s++ {
						id := eff(p, off, s)
						c := ledger[id]
						if off >= appended[p] {
							if c > 0 {
								ref.Unexpected++
							}
							continue
						}
						ref.Expected++
						if c > 0 {
							ref.Distinct++
						} else {
							ref.Lost++
						}
						if d.Committed(id) != (c > 0) {
							t.Fatalf("rows %d seed %d: Committed(%+v) = %v, ledger %d", maxRows, seed, id, !(c > 0), c)
						}
					}
				}
			}
			if got.Expected != ref.Expected || got.Distinct != ref.Distinct || got.Lost != ref.Lost ||
				got.Unexpected-d.Unexpected() != ref.Unexpected || got.Duplicates != ref.Duplicates ||
				d.Distinct() != ref.Distinct+ref.Unexpected {
				t.Fatalf("rows %d seed %d: Finish %+v, ledger %+v", maxRows, seed, got, ref)
			}
			d.SettleAll()
			d.Exceptions(func(p int32, off, done int64) {
				if done != 0 {
					gotDone[eff(p, off, 0)] = done
				}
			})
			for rec, at := range wantDone {
				if gotDone[rec] != at {
					t.Fatalf("rows %d seed %d: done of %+v = %d, want %d", maxRows, seed, rec, gotDone[rec], at)
				}
			}
			if len(gotDone) != len(wantDone) {
				t.Fatalf("rows %d seed %d: %d done times, want %d", maxRows, seed, len(gotDone), len(wantDone))
			}
		}
	}
}
