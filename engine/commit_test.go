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
}

func (c *batched) CommitAll(cs []Commit) {
	c.batches++
	c.got = append(c.got, cs...)
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
