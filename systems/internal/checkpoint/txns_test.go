package checkpoint

import (
	"slices"
	"testing"
)

// A checkpoint waits for the records of the transactions it lists, not for
// later ones; completing it commits those, oldest first, and keeps the rest.
func TestPrecommittedDurableThroughAndCommit(t *testing.T) {
	var p Precommitted[string]
	p.Add(1, "a")
	p.Add(2, "b")
	p.Add(4, "c")
	if ids := p.IDs(); !slices.Equal(ids, []int64{1, 2, 4}) {
		t.Fatalf("IDs %v", ids)
	}
	p.Stored(1)
	p.Stored(4)
	if !p.DurableThrough(1) || p.DurableThrough(2) || p.DurableThrough(4) {
		t.Fatal("durable through 1 only, before transaction 2's record is")
	}
	p.Stored(2)
	if !p.DurableThrough(4) {
		t.Fatal("every record durable, yet not durable through 4")
	}
	var committed []string
	p.CommitThrough(3, func(tx Txn[string]) { committed = append(committed, tx.Effects) })
	if !slices.Equal(committed, []string{"a", "b"}) || !slices.Equal(p.IDs(), []int64{4}) {
		t.Fatalf("committed %v, left %v", committed, p.IDs())
	}
}
