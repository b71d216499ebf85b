package barrier

import (
	"ftbench/engine"
	"ftbench/keyed"
	"ftbench/systems/internal/checkpoint"
	"ftbench/systems/internal/stream"
)

// Incremental checkpoints (--incremental=true), as Flink's RocksDB backend
// takes them: a keyed task's snapshot of checkpoint n holds only the keys
// changed since the last checkpoint it knows complete, and references the
// older snapshots (the chain) that hold the rest; the coordinator's shared
// registry keeps those alive while a retained checkpoint needs them, and a
// restore reads the whole chain. checkpoint.IncrementalState decides what
// each snapshot writes and when the chain is consolidated.

// chainState is the keyed state of chained operator k that snapshot s
// stands for: its own State, or, for an incremental snapshot, its chain's
// pieces applied oldest first. get reads the snapshot of an older
// checkpoint (nil if it is gone). ok is false when a piece is missing.
func chainState(s *snapshot, k int, get func(n int64) *snapshot) (kvs []stream.KV, ok bool) {
	own := s.Ops[k]
	if len(own.Chain) <= 1 {
		return own.State, true
	}
	op := &stream.Operator{State: keyed.New(0)}
	for i, p := range own.Chain {
		piece := s
		if i < len(own.Chain)-1 {
			if piece = get(p.ID); piece == nil || k >= len(piece.Ops) {
				return nil, false
			}
		}
		op.Apply(piece.Ops[k].State)
	}
	return op.Snapshot(), true
}

// chainRefs is what an incremental snapshot of task id references in the
// store: every piece of its chain.
func chainRefs(c checkpoint.Chain, id engine.ProcID) []string {
	refs := make([]string, len(c))
	for i, p := range c {
		refs[i] = checkpoint.Key(p.ID, id)
	}
	return refs
}
