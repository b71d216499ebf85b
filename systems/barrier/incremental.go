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

// chainState is the keyed state snapshot s stands for: its own State, or,
// for an incremental snapshot, its chain's pieces applied oldest first. get
// reads the snapshot of an older checkpoint (nil if it is gone). ok is
// false when a piece is missing.
func chainState(s *snapshot, get func(n int64) *snapshot) (kvs []stream.KV, ok bool) {
	if len(s.Chain) <= 1 {
		return s.State, true
	}
	op := &stream.Operator{State: keyed.New(0)}
	for i, p := range s.Chain {
		piece := s
		if i < len(s.Chain)-1 {
			if piece = get(p.ID); piece == nil {
				return nil, false
			}
		}
		op.Apply(piece.State)
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
