package checkpoint

import (
	"maps"
	"slices"
	"testing"

	"ftbench/engine"
	"ftbench/keyed"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// counter is a keyed operator whose state counts its records.
func counter() *stream.Operator {
	st := &workloads.Stage{Name: "count", Update: func(s *int64, _ engine.Msg, _ func(engine.Msg)) { *s++ }}
	return stream.NewOperator(st, nil)
}

func touch(op *stream.Operator, keys ...uint64) {
	for _, k := range keys {
		v, _ := op.State.Ptr(k)
		*v++
		if op.Changed != nil {
			op.Changed.Add(k)
		}
	}
}

func keysOf(kvs []stream.KV) []uint64 {
	var ks []uint64
	for _, kv := range kvs {
		ks = append(ks, kv.Key)
	}
	return ks
}

// restore applies a chain's pieces, as a restore does.
func restore(pieces map[int64][]stream.KV, c Chain) *keyed.Table {
	op := &stream.Operator{State: keyed.New(0)}
	for _, p := range c {
		op.Apply(pieces[p.ID])
	}
	return op.State
}

func TestIncrementalState(t *testing.T) {
	op := counter()
	inc := NewIncremental(op, 3)
	pieces := map[int64][]stream.KV{}
	take := func(n int64, wantKeys []uint64, wantChain []int64, wantFull bool) {
		t.Helper()
		kvs, chain := inc.Take(n)
		pieces[n] = kvs
		if wantKeys != nil && !slices.Equal(keysOf(kvs), wantKeys) {
			t.Errorf("checkpoint %d wrote keys %v, want %v", n, keysOf(kvs), wantKeys)
		}
		var ids []int64
		for _, p := range chain {
			ids = append(ids, p.ID)
		}
		if !slices.Equal(ids, wantChain) {
			t.Errorf("checkpoint %d references %v, want %v", n, ids, wantChain)
		}
		if last := chain[len(chain)-1]; last.Full != wantFull || last.Bytes != stream.StateBytes(len(kvs)) {
			t.Errorf("checkpoint %d: piece %+v, want full=%v and %d bytes", n, last, wantFull, stream.StateBytes(len(kvs)))
		}
		if got := restore(pieces, chain); !maps.Equal(got.Map(), op.State.Map()) {
			t.Errorf("checkpoint %d: its chain restores %v, the state is %v", n, got.Map(), op.State.Map())
		}
	}
	for k := uint64(1); k <= 20; k++ {
		touch(op, k)
	}
	take(1, nil, []int64{1}, true) // nothing to build on: full
	inc.Complete(1)
	touch(op, 5, 6, 5)
	take(2, []uint64{5, 6}, []int64{1, 2}, false)
	// 2's completion notice is late: 3 builds on 1 and re-uploads 5 and 6.
	touch(op, 7)
	take(3, []uint64{5, 6, 7}, []int64{1, 3}, false)
	inc.Complete(3)
	inc.Complete(2) // stale: 3 already covers it
	if c := inc.Confirmed(); len(c) != 2 || c[1].ID != 3 {
		t.Fatalf("confirmed chain %v, want [1 3]", c)
	}
	// An aborted checkpoint's keys go into the next delta.
	touch(op, 8)
	take(4, []uint64{8}, []int64{1, 3, 4}, false)
	inc.Abort(4)
	touch(op, 9)
	take(5, []uint64{8, 9}, []int64{1, 3, 5}, false)
	inc.Complete(5)
	// The chain holds 3 = FullEvery pieces: the next snapshot is full.
	touch(op, 1)
	take(6, nil, []int64{6}, true)
	inc.Complete(6)
	// Deltas reaching the base's bytes (space amplification 2): full.
	touch(op, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	take(7, nil, []int64{6, 7}, false)
	inc.Complete(7)
	touch(op, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)
	take(8, nil, []int64{8}, true) // 10 + 10 changed keys of 20
	// A restore starts a fresh chain: the next delta builds on it.
	chain7 := Chain{{ID: 6, Bytes: 320, Full: true}, {ID: 7, Bytes: 160}}
	state := restore(pieces, chain7)
	op.State = state
	inc.Restored(chain7)
	touch(op, 3)
	take(9, []uint64{3}, []int64{6, 7, 9}, false)
}

func TestSharedRegistry(t *testing.T) {
	r := sharedRegistry{count: map[string]int{}, refs: map[int64][]string{}}
	r.register(1, []string{"a", "b"})
	r.register(2, []string{"a", "c"})
	r.register(3, []string{"a", "c", "d"})
	steps := []struct {
		release, next, oldest int64 // discard release (next to trigger: next), then collect with oldest in progress
		want                  []string
	}{
		{1, 4, 4, []string{"b"}},           // nothing in progress: b goes at once
		{2, 5, 5, nil},                     // a and c are still 3's
		{3, 6, 5, nil},                     // checkpoint 5 is in progress: it may build on 3's files
		{0, 0, 6, []string{"a", "c", "d"}}, // 5 finished
	}
	for _, st := range steps {
		if st.release > 0 {
			r.release(st.release, st.next)
		}
		if got := r.collect(st.oldest); !slices.Equal(got, st.want) {
			t.Errorf("release %d, oldest in progress %d: deleted %v, want %v", st.release, st.oldest, got, st.want)
		}
	}
	// A released file that a newer checkpoint references again is kept.
	r.register(7, []string{"e"})
	r.release(7, 8)
	r.register(8, []string{"e"})
	if got := r.collect(8); got != nil {
		t.Errorf("deleted %v, still referenced by 8", got)
	}
	if len(r.count) != 1 || len(r.refs) != 1 || len(r.dead) != 0 {
		t.Errorf("registry holds %v %v %v, want only 8's e", r.count, r.refs, r.dead)
	}
}
