package check

import (
	"cmp"
	"fmt"
	"slices"
)

// Guarantee is a delivery semantics, as a system claims it or as a run
// observes it (docs/metrics.md, "Verdict").
type Guarantee string

// The guarantees, named as in run.json.
const (
	AtMostOnce  Guarantee = "at-most-once"
	AtLeastOnce Guarantee = "at-least-once"
	ExactlyOnce Guarantee = "exactly-once"
	None        Guarantee = "none"
)

// Verdict returns the semantics a run exhibited: exactly-once if nothing was
// duplicated or lost, at-least-once if only duplicated, at-most-once if only
// lost, none if both.
func Verdict(dups, lost int64) Guarantee {
	switch {
	case dups == 0 && lost == 0:
		return ExactlyOnce
	case lost == 0:
		return AtLeastOnce
	case dups == 0:
		return AtMostOnce
	default:
		return None
	}
}

// ClaimHeld reports whether a run is consistent with a claimed guarantee,
// with wrongKeys final values wrong but none of them known to be stale:
// Claim.Broken's rule (exactly-once needs no duplicate, loss or wrong key;
// at-least-once no loss; at-most-once no duplicate; none always holds; an
// unknown claim never holds, so a typo in a system's declaration cannot pass
// silently).
func ClaimHeld(claim Guarantee, dups, lost, wrongKeys int64) bool {
	return len(Claim{Guarantee: claim}.Broken(dups, lost, Finals{Wrong: wrongKeys})) == 0
}

// KeyDiff is one key whose final visible value differs from the oracle's.
type KeyDiff struct {
	Key       uint64
	Got, Want int64
}

// Finals is how a sink's final reader-visible values compare with the
// oracle's, key by key. Wrong keys differ; of them, Stale ones are behind
// the oracle (a lost update, or a zombie's late write of an older value over
// a newer one) and Ahead ones beyond it (an update applied twice). Stale +
// Ahead = Wrong.
type Finals struct {
	Wrong, Stale, Ahead int64
}

// String is the split as every line that prints it says it: "3 stale, 0
// ahead of the oracle".
func (f Finals) String() string {
	return fmt.Sprintf("%d stale, %d ahead of the oracle", f.Stale, f.Ahead)
}

// WrongKeys compares the final visible sink state got with the oracle's
// want. A key missing from one side counts as value 0 there, so a key the
// oracle holds at 0 and the sink never wrote is not wrong. It returns the
// number of wrong keys and up to MaxExamples of them, smallest keys first
// (sorted, so the answer does not depend on map iteration order).
func WrongKeys(got, want map[uint64]int64) (wrong int64, examples []KeyDiff) {
	f, examples := CompareFinals(got, want)
	return f.Wrong, examples
}

// CompareFinals is WrongKeys with the wrong keys split into stale and ahead.
func CompareFinals(got, want map[uint64]int64) (f Finals, examples []KeyDiff) {
	note := func(d KeyDiff) {
		f.Wrong++
		if d.Got < d.Want {
			f.Stale++
		} else {
			f.Ahead++
		}
		// Keep only the MaxExamples smallest keys, so memory stays bounded
		// when every key is wrong.
		if len(examples) == MaxExamples {
			if d.Key > examples[MaxExamples-1].Key {
				return
			}
			examples = examples[:MaxExamples-1]
		}
		i, _ := slices.BinarySearchFunc(examples, d.Key, func(e KeyDiff, k uint64) int { return cmp.Compare(e.Key, k) })
		examples = slices.Insert(examples, i, d)
	}
	for k, g := range got {
		if w := want[k]; g != w {
			note(KeyDiff{Key: k, Got: g, Want: w})
		}
	}
	for k, w := range want {
		if _, ok := got[k]; !ok && w != 0 {
			note(KeyDiff{Key: k, Got: 0, Want: w})
		}
	}
	return f, examples
}
