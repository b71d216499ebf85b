package engine

import (
	"slices"
	"testing"
)

// oneByOne is a Ctx that takes commits one call at a time (the live
// runtime, the protocol tests' fakes).
type oneByOne struct {
	Ctx
	got []Commit
}

func (c *oneByOne) Commit(cm Commit) { c.got = append(c.got, cm) }

// batched also takes a batch in one call.
type batched struct {
	oneByOne
	batches int
	owned   [][]Commit
}

func (c *batched) CommitAll(cs []Commit) {
	c.batches++
	c.got = append(c.got, cs...)
}

func (c *batched) CommitOwned(cs []Commit) {
	c.CommitAll(cs)
	c.owned = append(c.owned, cs)
}

func (c *batched) CommitBuffer(n int) []Commit {
	if k := len(c.owned); k > 0 && cap(c.owned[k-1]) >= n {
		b := c.owned[k-1][:0]
		c.owned = c.owned[:k-1]
		return b
	}
	return make([]Commit, 0, n)
}

// CommitAll hands a runtime that takes batches the whole slice in one call
// and any other the same commits, in order, one Commit each.
func TestCommitAll(t *testing.T) {
	cs := []Commit{{Key: 3, Value: 1}, {Key: 1, Value: 2}, {Key: 3, Value: 3}}
	one := &oneByOne{}
	CommitAll(one, cs)
	if !slices.Equal(one.got, cs) {
		t.Errorf("one by one: got %v, want %v", one.got, cs)
	}
	b := &batched{}
	CommitAll(b, cs)
	CommitAll(b, nil)
	if !slices.Equal(b.got, cs) || b.batches != 2 || len(b.oneByOne.got) != len(cs) {
		t.Errorf("batched: got %v in %d batches, want %v in 2", b.got, b.batches, cs)
	}
}

// CommitOwned and CommitBuffer reach a batching runtime's own methods; any
// other runtime gets one Commit per effect and a new slice.
func TestCommitOwnedAndBuffer(t *testing.T) {
	one := &oneByOne{}
	buf := CommitBuffer(one, 8)
	if len(buf) != 0 || cap(buf) < 8 {
		t.Fatalf("buffer len %d cap %d, want 0 and at least 8", len(buf), cap(buf))
	}
	buf = append(buf, Commit{Key: 1}, Commit{Key: 2})
	CommitOwned(one, buf)
	if len(one.got) != 2 || one.got[1].Key != 2 {
		t.Errorf("one by one: got %v", one.got)
	}
	b := &batched{}
	first := append(CommitBuffer(b, 4), Commit{Key: 7})
	CommitOwned(b, first)
	if len(b.owned) != 1 || len(b.got) != 1 || b.got[0].Key != 7 {
		t.Fatalf("batched: kept %d slices, got %v", len(b.owned), b.got)
	}
	if again := CommitBuffer(b, 4); len(b.owned) != 0 || cap(again) < 4 {
		t.Errorf("CommitBuffer did not reach the runtime's")
	}
}
