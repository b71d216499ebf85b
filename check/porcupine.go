package check

// Porcupine models of what a reader of the sink observes (DESIGN.md
// section 6, "porcupine checks"), in the style of Jepsen and
// github.com/anishathalye/porcupine.
//
// The sink is a register per key. Three kinds of operation touch it:
//
//   - apply: a commit of one effect, returning the value it made visible
//     (like Redis INCR returning the new count). It is instantaneous at the
//     commit instant: the harness sees the exact simulated instant the sink
//     changed, so a wider window (from the record's append, Born, which is
//     recorded and shown) would only weaken the check and make it slower.
//   - read: a reader's request with an invocation and a response time; the
//     sink served it at some instant in between.
//   - final: a read of every key after the run has drained, which must
//     reflect every effect the oracle expects for the key.
//
// The model state of a key is the set of applied effect ids — kept as its
// size and an order-independent fingerprint, so that a duplicate and a loss
// on the same key cannot cancel out — and the visible value. An apply moves
// the value by the effect's contribution (Delta): the oracle's value of the
// effect minus the oracle's previous value of its key. The models thus
// assume additive sinks (counts, sums, balances), which every workload's
// sink is.
//
// Whether an apply re-applies an effect already in the set is carried on
// the operation (Repeat, from the commit order): applies are points in
// time, so their linearization order is the commit order, and ties at one
// instant between two commits of the same effect give the same verdict
// either way.
//
//   - exactly-once: an apply adds its effect to the set and moves the value
//     by its contribution; re-applying an effect is illegal. A read returns
//     the current value. The final read's set equals the oracle's.
//   - at-least-once: as exactly-once, but re-applying is allowed, and either
//     counts again (an external store incremented twice: Storm's word
//     counts) or leaves the value as it is (an idempotent write: Storm's
//     grep sink). Any other change is illegal: a value going back when a
//     plain sink replays from a restored checkpoint, a count that restarts
//     after state was lost. So a reader never sees the value go back, and
//     it reflects every applied effect.

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"ftbench/engine"
)

// OpKind is the kind of an observed operation.
type OpKind uint8

// Operation kinds.
const (
	OpApply OpKind = iota + 1
	OpRead
	OpFinal
)

// Op is one operation of an observed history. It holds no pointers, so a
// history of millions of commits costs the garbage collector nothing.
type Op struct {
	Key uint64
	ID  engine.EffectID // apply: the effect
	// Born is, for an apply, the append time of the effect's input record
	// (its submission); for a read, the instant the sink served it.
	Born engine.Time
	// Delta is an apply's contribution to its key's value.
	Delta int64
	// Value is what an apply made visible, or what a read returned.
	Value int64
	// Call and Return are simulated times; an apply has both at its commit.
	Call, Return engine.Time
	Kind         OpKind
	// Repeat marks an apply of an effect that was committed before.
	Repeat bool
	// Unexpected marks an apply of an effect no appended record produces.
	Unexpected bool
}

// finalRead is a final read with its key's expected effects (Check's want).
type finalRead struct {
	op   *Op
	want Expect
}

// segmentStart leads a segment: the state of everything before it.
type segmentStart struct {
	key   uint64
	state State
}

// Expect is a set of effects of one key, as the oracle produces them.
type Expect struct {
	N    int64  // effects
	Hash uint64 // order-independent fingerprint of their ids
	Sum  int64  // sum of their contributions
}

// Add adds an effect with contribution delta.
func (e *Expect) Add(id engine.EffectID, delta int64) {
	e.N++
	e.Hash += IDHash(id)
	e.Sum += delta
}

// IDHash is an effect id's term in a set fingerprint. Fingerprints add
// terms, so they do not depend on the order effects arrive in.
func IDHash(id engine.EffectID) uint64 {
	return engine.Mix64(uint64(uint32(id.Part))<<32 ^ uint64(uint32(id.Sub)) ^ engine.Mix64(uint64(id.Off)))
}

// State is a key's model state.
type State struct {
	Started bool   // the segment's start operation has been applied
	N       int64  // distinct effects applied: the set's size
	Hash    uint64 // the set's fingerprint (sum of IDHash)
	Apps    int64  // applications, including re-applications
	Value   int64  // the visible value
}

// after is the state once op took effect, whether or not the model allows
// it. Segments start from the fold of after over everything before them.
func (s State) after(op *Op) State {
	if op.Kind == OpApply {
		s.Apps++
		s.Value = op.Value
		if !op.Repeat {
			s.N++
			s.Hash += IDHash(op.ID)
		}
	}
	return s
}

// ModelFor returns the model a claim requires: the claim's own model for
// exactly-once and at-least-once; none (false) for at-most-once and none,
// which promise nothing a reader could rely on.
func ModelFor(claim Guarantee) (Guarantee, bool) {
	switch claim {
	case ExactlyOnce, AtLeastOnce:
		return claim, true
	}
	return "", false
}

// step is the sequential specification of model m. input is a *Op (apply
// or read), a *finalRead or a *segmentStart.
func step(m Guarantee, s State, input any) (bool, State) {
	var op *Op
	var want Expect
	switch in := input.(type) {
	case *segmentStart:
		return !s.Started, in.state
	case *finalRead:
		op, want = in.op, in.want
	case *Op:
		op = in
	}
	if !s.Started || op == nil {
		return false, s
	}
	switch op.Kind {
	case OpApply:
		if op.Unexpected || (m == ExactlyOnce && op.Repeat) {
			return false, s
		}
		ok := op.Value == s.Value+op.Delta || (op.Repeat && op.Value == s.Value)
		return ok, s.after(op)
	case OpRead:
		return op.Value == s.Value, s
	case OpFinal:
		return s.N == want.N && s.Hash == want.Hash && op.Value == s.Value, s
	}
	return false, s
}

func (s State) describe() string {
	if !s.Started {
		return "not started"
	}
	return fmt.Sprintf("%d effects applied (%d applications), value %d", s.N, s.Apps, s.Value)
}

func fmtID(id engine.EffectID) string { return fmt.Sprintf("p%d/o%d/s%d", id.Part, id.Off, id.Sub) }

// describe describes a porcupine input for reports and the visualization.
func describe(input any) string {
	switch in := input.(type) {
	case *segmentStart:
		return "segment start: " + in.state.describe()
	case *finalRead:
		return fmt.Sprintf("final read -> %d (the oracle expects %d effects summing to %d)", in.op.Value, in.want.N, in.want.Sum)
	case *Op:
		return in.String()
	}
	return fmt.Sprint(input)
}

// String describes op for reports and the visualization; times in seconds.
func (op *Op) String() string {
	switch op.Kind {
	case OpApply:
		note := ""
		if op.Repeat {
			note = " again"
		}
		if op.Unexpected {
			note += " (no record produces it)"
		}
		return fmt.Sprintf("apply %s%s -> %d at %.6fs (appended %.6fs)", fmtID(op.ID), note, op.Value, op.Call.Seconds(), op.Born.Seconds())
	case OpRead:
		return fmt.Sprintf("read -> %d (called %.6fs, served %.6fs, returned %.6fs)", op.Value, op.Call.Seconds(), op.Born.Seconds(), op.Return.Seconds())
	case OpFinal:
		return fmt.Sprintf("final read -> %d", op.Value)
	}
	return "unknown operation"
}

// Model returns model m as a porcupine model, partitioned by segment (each
// segment is a key's operations between two quiescent instants, led by a
// start operation carrying the state before it; Metadata is the segment
// number).
func Model(m Guarantee) porcupine.Model {
	return porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			var parts [][]porcupine.Operation
			idx := map[int]int{}
			for _, o := range h {
				seg, _ := o.Metadata.(int)
				i, ok := idx[seg]
				if !ok {
					i = len(parts)
					idx[seg] = i
					parts = append(parts, nil)
				}
				parts[i] = append(parts[i], o)
			}
			return parts
		},
		Init: func() any { return State{} },
		Step: func(state, input, _ any) (bool, any) {
			ok, ns := step(m, state.(State), input)
			return ok, ns
		},
		Equal: func(a, b any) bool { return a.(State) == b.(State) },
		Hash: func(state any) uint64 {
			s := state.(State)
			return engine.Mix64(s.Hash ^ uint64(s.N)<<1 ^ engine.Mix64(uint64(s.Apps)^uint64(s.Value)<<7))
		},
		DescribeOperation:         func(input, _ any) string { return describe(input) },
		DescribeState:             func(state any) string { return state.(State).describe() },
		DescribeOperationMetadata: func(any) string { return "" },
	}
}
