package check

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
func (c Claim) Held(dups, lost, wrongKeys int64, monotonic bool) bool {
	return ClaimHeld(c.Guarantee, dups, lost, wrongKeys) && (monotonic || !c.Monotonic)
}
