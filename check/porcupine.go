package check

// Porcupine models of what a reader of the sink observes (docs/metrics.md, Metric
// definitions, "Observer"), in the style of Jepsen and
// github.com/anishathalye/porcupine.
//
// The sink is a register per key. Three kinds of operation touch it:
//
//   - apply: commits of effects to one key, as the sink made them visible.
//     A commit is instantaneous at its commit instant (the harness sees the
//     exact simulated instant the sink changed). One apply operation folds
//     a run of a key's commits, in commit-time order, that no read overlaps
//     (the observer folds them as it records them, harness/observe.go), or
//     the commits of one instant that a read overlaps: a read is served from
//     the commits strictly before the instant it is served at, so it never
//     sees part of an instant, and the commits of one instant are one step
//     of the model. So applies of one key never tie, whatever the sink
//     commits at one instant (a 2PC sink's thousands), and the check is
//     linear in the history.
//   - read: a reader process's request, with its invocation and response
//     times; the output store served it at some instant in between.
//   - final: a read of every key after the run has drained.
//
// The model state of a key is the set of applied effect ids — kept as its
// size and an order-independent fingerprint, so that a duplicate and a loss
// on the same key cannot cancel out — and the visible value. A claim
// (check.Claim) is checked with the same definitions as the harness's
// delivery and monotonicity checks, on the same commits in the same order:
//
//   - every claim: a read returns the current value (a reader is shown
//     exactly what the commits made visible: never an uncommitted value,
//     never a stale one); an apply of an effect no record produces is
//     illegal; the final read returns the current value.
//   - exactly-once: a re-application is illegal; the final read's set is the
//     oracle's and its value the oracle's final value (no duplicate, no
//     loss, no wrong key).
//   - at-least-once: re-applications are allowed; the final read's set is
//     the oracle's (no loss).
//   - at-most-once: a re-application is illegal; losses are allowed.
//   - none: no delivery condition.
//   - monotonic: an apply never lowers the key's visible value, neither
//     from the value before it nor between the commits it folds
//     (non-negative contributions: the visible value never drops an effect).

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
// long history costs the garbage collector nothing.
type Op struct {
	Key uint64
	ID  engine.EffectID // apply: its first commit's effect, for descriptions
	// Born is, for an apply, the append time of its first commit's input
	// record (its submission); for a read, the instant the store served it.
	Born engine.Time
	// Value is what an apply left visible (its last commit's value), or
	// what a read returned.
	Value int64
	// First is an apply's first commit's value.
	First int64
	// Call and Return are simulated times; an apply spans its first and
	// last commit instants.
	Call, Return engine.Time
	// An apply's commits: Apps in all, New of them first commits of their
	// effect (Hash their fingerprint), Repeats re-applications, Unexpected
	// effects no record produces.
	Apps, New, Repeats, Unexpected int32
	Hash                           uint64
	Kind                           OpKind
	// Decrease marks an apply whose commits lowered the visible value
	// between two of them.
	Decrease bool
}

// Add folds one commit (in commit-time order) into apply op.
func (op *Op) Add(id engine.EffectID, born engine.Time, at engine.Time, value int64, status CommitStatus) {
	if op.Apps == 0 {
		op.Kind, op.ID, op.Born, op.Call, op.First = OpApply, id, born, at, value
	} else if value < op.Value {
		op.Decrease = true
	}
	op.Apps++
	op.Return, op.Value = at, value
	switch status {
	case CommitFirst:
		op.New++
		op.Hash += IDHash(id)
	case CommitDuplicate:
		op.Repeats++
	default:
		op.Unexpected++
	}
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
	Sum  int64  // sum of their contributions: the oracle's final value
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
	Seen    bool   // some commit made the key visible
	N       int64  // distinct effects applied: the set's size
	Hash    uint64 // the set's fingerprint (sum of IDHash)
	Apps    int64  // applications, including re-applications
	Value   int64  // the visible value
}

// after is the state once op took effect, whether or not the model allows
// it. Segments start from the fold of after over everything before them.
func (s State) after(op *Op) State {
	if op.Kind == OpApply {
		s.Seen = true
		s.Apps += int64(op.Apps)
		s.N += int64(op.New)
		s.Hash += op.Hash
		s.Value = op.Value
	}
	return s
}

// ModelName is the name of the model of claim c, as run.json spells it.
func ModelName(c Claim) string { return c.String() }

// step is the sequential specification of claim c's model. input is a *Op
// (apply or read), a *finalRead or a *segmentStart.
func step(c Claim, s State, input any) (bool, State) {
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
		if op.Unexpected > 0 {
			return false, s
		}
		if op.Repeats > 0 && (c.Guarantee == ExactlyOnce || c.Guarantee == AtMostOnce) {
			return false, s
		}
		if c.Monotonic && (op.Decrease || (s.Seen && op.First < s.Value)) {
			return false, s
		}
		return true, s.after(op)
	case OpRead:
		return op.Value == s.Value, s
	case OpFinal:
		if op.Value != s.Value {
			return false, s
		}
		switch c.Guarantee {
		case ExactlyOnce:
			return s.N == want.N && s.Hash == want.Hash && s.Value == want.Sum, s
		case AtLeastOnce:
			return s.N == want.N && s.Hash == want.Hash, s
		}
		return true, s
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
		var note string
		if op.Repeats > 0 {
			note += fmt.Sprintf(", %d again", op.Repeats)
		}
		if op.Unexpected > 0 {
			note += fmt.Sprintf(", %d no record produces", op.Unexpected)
		}
		if op.Decrease {
			note += ", the value went back between them"
		}
		if op.Apps == 1 {
			return fmt.Sprintf("apply %s%s -> %d at %.6fs (appended %.6fs)", fmtID(op.ID), note, op.Value, op.Call.Seconds(), op.Born.Seconds())
		}
		return fmt.Sprintf("apply %d commits from %s%s: %d -> %d at %.6fs-%.6fs", op.Apps, fmtID(op.ID), note, op.First, op.Value, op.Call.Seconds(), op.Return.Seconds())
	case OpRead:
		return fmt.Sprintf("read -> %d (called %.6fs, served %.6fs, returned %.6fs)", op.Value, op.Call.Seconds(), op.Born.Seconds(), op.Return.Seconds())
	case OpFinal:
		return fmt.Sprintf("final read -> %d", op.Value)
	}
	return "unknown operation"
}

// Model returns claim c's model as a porcupine model, partitioned by
// segment (each segment is a key's operations between two quiescent
// instants, led by a start operation carrying the state before it;
// Metadata is the segment number).
func Model(c Claim) porcupine.Model {
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
			ok, ns := step(c, state.(State), input)
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
