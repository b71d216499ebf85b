package kstreams

import (
	"slices"
	"testing"

	"ftbench/systems/internal/stream"
)

// testLog builds a partition log from batches of the given sizes, batch i
// written by transaction states[i] (nil entry: outside a transaction): a
// changelog of key-values or a repartition log of records. Record at
// offset o has key o and value 10*o.
func testLog(sizes []int, states []*txnState, changelog bool) (*plog, []*txn) {
	var byID []*txn
	l := &plog{txns: &byID, changelog: changelog}
	var off uint64
	for i, n := range sizes {
		recs := make([]entry, n)
		kvs := make([]stream.KV, n)
		for j := range recs {
			recs[j] = entry{key: off, val: int64(off) * 10, size: 8}
			kvs[j] = stream.KV{Key: off, Val: int64(off) * 10}
			off++
		}
		var t *txn
		if states[i] != nil {
			t = &txn{state: *states[i], id: int32(len(byID) + 1)}
			byID = append(byID, t)
		}
		if changelog {
			l.push(nil, kvs, t)
		} else {
			l.push(recs, nil, t)
		}
	}
	l.advance()
	return l, byID
}

// naiveScan is the per-record reading the batched one must equal: the
// records from `from` up to limit not written by an aborted transaction,
// at most n, and the offset after the last one taken (limit when fewer).
func naiveScan(l *plog, sizes []int, states []*txnState, from, limit int64, n int) ([]uint64, int64) {
	var keys []uint64
	next := max(from, l.start)
	for ; next < limit && len(keys) < n; next++ {
		var off int64
		for i, s := range sizes {
			if next < off+int64(s) {
				if states[i] == nil || *states[i] != txnAborted {
					keys = append(keys, uint64(next))
				}
				break
			}
			off += int64(s)
		}
	}
	return keys, next
}

func TestLogScanSkipsAbortedBatches(t *testing.T) {
	committed, aborted, open := txnCommitted, txnAborted, txnOpen
	cases := []struct {
		name   string
		sizes  []int
		states []*txnState
		purge  int64
	}{
		{"non-transactional", []int{3, 1, 4}, []*txnState{nil, nil, nil}, 0},
		{"an aborted batch between committed ones", []int{2, 3, 2}, []*txnState{&committed, &aborted, &committed}, 0},
		{"aborted first and last", []int{2, 2, 2, 2}, []*txnState{&aborted, &committed, &committed, &aborted}, 0},
		{"an open batch stops the LSO", []int{2, 3, 2}, []*txnState{&committed, &open, &committed}, 0},
		{"purged inside the first batch", []int{4, 3, 2}, []*txnState{&committed, &aborted, &committed}, 2},
		{"purged past whole batches", []int{1, 2, 5}, []*txnState{&committed, &committed, &committed}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, _ := testLog(c.sizes, c.states, false)
			l.purge(c.purge)
			if l.start != min(c.purge, l.stable) {
				t.Fatalf("start %d after purge(%d), stable %d", l.start, c.purge, l.stable)
			}
			for _, limit := range []int64{l.stable, l.end()} {
				for from := int64(0); from <= limit; from++ {
					for n := 1; n <= 9; n++ {
						var got []uint64
						next := l.scan(from, limit, n, func(es []entry) {
							for _, e := range es {
								got = append(got, e.key)
							}
						})
						want, wantNext := naiveScan(l, c.sizes, c.states, from, limit, n)
						if !slices.Equal(got, want) || next != wantNext {
							t.Fatalf("scan(%d, %d, %d) = %v next %d, want %v next %d", from, limit, n, got, next, want, wantNext)
						}
					}
				}
			}
		})
	}
}

// A purge or a compaction hands over the arrays of exactly the batches it
// dropped (the broker gives them to producers to fill again): a live
// batch's array among them would be overwritten while the log serves it.
func TestLogDropsWholeBatchesOnly(t *testing.T) {
	committed := txnCommitted
	sizes := []int{3, 3, 3, 3}
	states := []*txnState{&committed, &committed, &committed, &committed}
	l, _ := testLog(sizes, states, false)
	arrays := make([]*entry, len(l.bs))
	for i := range l.bs {
		arrays[i] = &l.bs[i].recs[0]
	}
	l.purge(5) // inside the second batch: only the first is dropped
	if len(l.dropped) != 1 || &l.dropped[0][:1][0] != arrays[0] || len(l.dropped[0]) != 0 {
		t.Fatalf("purge(5) dropped %d arrays, want the first batch's, emptied", len(l.dropped))
	}
	var keys []uint64
	l.scan(0, l.stable, 100, func(es []entry) {
		for _, e := range es {
			keys = append(keys, e.key)
		}
	})
	if want := []uint64{5, 6, 7, 8, 9, 10, 11}; !slices.Equal(keys, want) {
		t.Fatalf("after purge(5) the log reads %v, want %v", keys, want)
	}
	c, _ := testLog(sizes, states, true)
	if removed := c.compact(); removed != 0 || len(c.droppedKV) != 4 || len(c.dropped) != 0 {
		t.Fatalf("compaction removed %d records and dropped %d+%d arrays, want 0 and the 4 batches' key-value arrays", removed, len(c.dropped), len(c.droppedKV))
	}
}

// A restore reads the compacted base first, then the log.
func TestReadChangelogAfterCompaction(t *testing.T) {
	committed, aborted := txnCommitted, txnAborted
	l, byID := testLog([]int{2, 2}, []*txnState{&committed, &aborted}, true)
	l.compact()
	// Keys 0 and 1 were committed; 2 and 3 aborted and dropped.
	kvs := []stream.KV{{Key: 0, Val: 7}, {Key: 5, Val: 50}}
	t2 := &txn{state: txnCommitted, id: int32(len(byID) + 1)}
	*l.txns = append(*l.txns, t2)
	l.push(nil, kvs, t2)
	l.advance()
	kvs, next := l.readChangelog(0, l.stable, 10)
	want := []stream.KV{{Key: 0, Val: 0}, {Key: 1, Val: 10}, {Key: 0, Val: 7}, {Key: 5, Val: 50}}
	if !slices.Equal(kvs, want) || next != l.stable {
		t.Fatalf("readChangelog = %v next %d, want %v next %d", kvs, next, want, l.stable)
	}
	kvs, next = l.readChangelog(0, l.stable, 1)
	if len(kvs) != 1 || next != 1 {
		t.Fatalf("readChangelog with room for one = %v next %d, want one record, next 1", kvs, next)
	}
}
