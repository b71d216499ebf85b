package check

import "fmt"

// Claim is what a system promises in one configuration, in two parts that
// the harness (from the commits) and the observer (from what readers see)
// check with the same definitions:
//
//   - Guarantee: the delivery guarantee of the effect stream (every
//     expected effect committed exactly once, at least once, at most once,
//     or no promise), counted per effect id.
//   - Monotonic: what a reader of the sink sees. A monotonic sink never
//     takes back an effect once it was visible: for each key, the sequence
//     of values the sink makes visible, in commit-time order, never drops an
//     effect. Every workload's sink is additive with non-negative
//     contributions (counts, cumulative sums), so this is "each key's
//     visible value is non-decreasing from one commit to the next". A
//     non-monotonic sink may show a value and later a smaller one (a plain
//     sink replaying from a restored checkpoint, a count restarting after
//     its state was lost).
type Claim struct {
	Guarantee Guarantee
	Monotonic bool
	// MayEndStale says the sink's final values may end behind the
	// oracle's although every effect was delivered: a zombie (a task
	// declared failed that runs on, partitioned away) writes an older value
	// over a newer one after the replacement's last write of that key.
	// Flink's non-transactional sinks do this under a partition; a
	// transactional one cannot (its zombie's transaction is never
	// committed). Without it, an at-least-once claim breaks on a stale
	// final value: a reader would see an update lost.
	MayEndStale bool
}

// Reader views, as run.json spells them (claimed_reader, observed_reader).
const (
	ReaderMonotonic    = "monotonic"
	ReaderNonMonotonic = "non-monotonic"
)

// ReaderView names a reader view: monotonic or non-monotonic.
func ReaderView(monotonic bool) string {
	if monotonic {
		return ReaderMonotonic
	}
	return ReaderNonMonotonic
}

// Reader is the claimed reader view.
func (c Claim) Reader() string { return ReaderView(c.Monotonic) }

// String is the claim as reports print it: "at-least-once, non-monotonic".
func (c Claim) String() string { return string(c.Guarantee) + ", " + c.Reader() }

// Held reports whether a run kept both parts of the claim: the delivery
// part as ClaimHeld judges it, and, for a monotonic claim, no visible value
// ever went back (monotonic is what the run showed).
func (c Claim) Held(dups, lost int64, f Finals, monotonic bool) bool {
	return len(c.Broken(dups, lost, f)) == 0 && (monotonic || !c.Monotonic)
}

// Broken names each property of the delivery half of the claim that a run
// broke, in words a verdict line can print ("45 effects lost"); empty if it
// held. Exactly-once needs no duplicate, no loss and every final value right;
// at-least-once no loss and no final value behind the oracle (unless
// MayEndStale); at-most-once no duplicate; none nothing.
func (c Claim) Broken(dups, lost int64, f Finals) []string {
	var out []string
	dup := func() {
		if dups > 0 {
			out = append(out, fmt.Sprintf("%d effects duplicated", dups))
		}
	}
	loss := func() {
		if lost > 0 {
			out = append(out, fmt.Sprintf("%d effects lost", lost))
		}
	}
	switch c.Guarantee {
	case ExactlyOnce:
		dup()
		loss()
		if f.Wrong > 0 {
			out = append(out, fmt.Sprintf("%d keys with a wrong final value (%s)", f.Wrong, f))
		}
	case AtLeastOnce:
		loss()
		if f.Stale > 0 && !c.MayEndStale {
			out = append(out, fmt.Sprintf("%d keys with a stale final value (behind the oracle: an update a reader never sees)", f.Stale))
		}
	case AtMostOnce:
		dup()
	case None:
	default:
		out = append(out, fmt.Sprintf("an unknown claim %q", c.Guarantee))
	}
	return out
}
