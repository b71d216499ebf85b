package checkpoint

import (
	"slices"

	"ftbench/keyed"
	"ftbench/systems/internal/stream"
)

// Piece is one checkpoint's file of one task's keyed state: a full base
// (every key) or a delta (the keys changed since the base or the previous
// delta). Its bytes are what the checkpoint wrote for that task's state.
type Piece struct {
	ID    int64 // the checkpoint that wrote it; its snapshot holds the KVs
	Bytes int64
	Full  bool
}

// Chain is what a task's incremental snapshot references, oldest first: a
// full base, then deltas. Restoring it reads every piece and applies them in
// order, so a restore costs the chain's bytes, not just the state's.
type Chain []Piece

// Bytes is what restoring the chain reads.
func (c Chain) Bytes() int64 {
	var b int64
	for _, p := range c {
		b += p.Bytes
	}
	return b
}

// IncrementalState is a keyed task's side of incremental checkpoints, as
// Flink's RocksDB backend with incremental checkpoints takes them: a
// checkpoint uploads only the files (here: the keys) that changed since the
// last checkpoint the task knows to be complete, and references the older
// ones, which the coordinator's SharedRegistry keeps alive while any
// retained checkpoint refers to them. Like RocksDB's
// RocksIncrementalSnapshotStrategy, the base of a new delta is the last
// *confirmed* checkpoint (notifyCheckpointComplete): when a notification is
// late or a checkpoint is aborted, the next delta re-uploads what that
// checkpoint changed, so a chain never references a file that is not part
// of a completed checkpoint.
//
// Consolidation bounds the chain, as RocksDB compaction (or the changelog
// backend's periodic materialisation) does: a snapshot is written in full,
// and the chain restarts from it, when the chain already holds FullEvery
// pieces or when its deltas together would reach the base's bytes (space
// amplification 2). So a restore reads at most FullEvery pieces and at most
// twice the live state's bytes however long the run.
//
// Invariant: the keys of every delta since the confirmed chain's last piece
// are in segs (one set per snapshot taken since) or changed; so a delta of
// them, applied to the confirmed chain, gives the state at the snapshot.
type IncrementalState struct {
	FullEvery int
	op        *stream.Operator
	confirmed Chain
	pending   map[int64]Chain
	segs      []segment
}

// segment holds the keys changed between the previous snapshot and
// snapshot id.
type segment struct {
	id   int64
	keys *keyed.Set
}

// DefaultFullEvery is how many pieces a chain may hold before a snapshot is
// written in full again.
const DefaultFullEvery = 10

// NewIncremental tracks op's changed keys for incremental snapshots.
func NewIncremental(op *stream.Operator, fullEvery int) *IncrementalState {
	op.Changed = keyed.NewSet()
	return &IncrementalState{FullEvery: max(fullEvery, 1), op: op, pending: map[int64]Chain{}}
}

// Take is the synchronous part of snapshot n: the key-values to write (the
// whole state, in key order, for a full piece; else the keys changed since
// the confirmed chain) and the chain n's snapshot references, ending with
// n's own piece.
func (s *IncrementalState) Take(n int64) ([]stream.KV, Chain) {
	keys := s.op.Changed
	if len(s.segs) > 0 { // a late notification or an abort: re-upload those keys too
		keys = keyed.NewSet()
		keys.AddAll(s.op.Changed)
		for _, sg := range s.segs {
			keys.AddAll(sg.keys)
		}
	}
	s.segs = append(s.segs, segment{id: n, keys: s.op.Changed})
	s.op.Changed = keyed.NewSet()
	delta := stream.StateBytes(keys.Len())
	var deltas int64
	if len(s.confirmed) > 0 {
		deltas = s.confirmed.Bytes() - s.confirmed[0].Bytes
	}
	var kvs []stream.KV
	var chain Chain
	if len(s.confirmed) == 0 || len(s.confirmed) >= s.FullEvery || deltas+delta >= s.confirmed[0].Bytes {
		kvs = s.op.Snapshot()
		chain = Chain{{ID: n, Bytes: stream.StateBytes(len(kvs)), Full: true}}
	} else {
		kvs = make([]stream.KV, 0, keys.Len())
		for _, k := range keys.Keys() {
			kvs = append(kvs, stream.KV{Key: k, Val: s.op.State.Get(k)})
		}
		slices.SortFunc(kvs, func(a, b stream.KV) int { return cmpKey(a.Key, b.Key) })
		chain = append(slices.Clip(s.confirmed), Piece{ID: n, Bytes: delta})
	}
	s.pending[n] = chain
	return kvs, chain
}

func cmpKey(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Complete is the notification that checkpoint n completed: its chain is
// the new base for deltas, and the keys changed before its snapshot are
// in it.
func (s *IncrementalState) Complete(n int64) {
	chain, ok := s.pending[n]
	if !ok {
		return
	}
	s.confirmed = chain
	for id := range s.pending {
		if id <= n {
			delete(s.pending, id)
		}
	}
	s.segs = slices.DeleteFunc(s.segs, func(sg segment) bool { return sg.id <= n })
}

// Abort forgets checkpoint n; the keys it changed stay in the next delta.
func (s *IncrementalState) Abort(n int64) { delete(s.pending, n) }

// Restored starts tracking from a restored chain: nothing has changed since.
func (s *IncrementalState) Restored(chain Chain) {
	s.confirmed = chain
	s.pending = map[int64]Chain{}
	s.segs = nil
	s.op.Changed = keyed.NewSet()
}

// Confirmed is the chain of the last checkpoint known complete (for tests).
func (s *IncrementalState) Confirmed() Chain { return s.confirmed }
