package harness

import (
	"fmt"
	"ftbench/engine"
	"strings"
)

// Lines in words for run summaries (bench run's terminal summary and
// bench report's summary.md), so that both say the same thing.

// String lists the recorded recovery steps of a crash in time order, in
// seconds after it ("" when none was recorded): "detected 1s, worker up
// 1s, redeployed 1.201s, restored 1.206s, then 2.894s catching up".
func (p *Phases) String() string {
	if p == nil {
		return ""
	}
	var parts []string
	for _, s := range []struct {
		name string
		v    *float64
	}{
		{"detected", p.DetectedS}, {"worker up", p.WorkerUpS}, {"redeployed", p.RedeployedS},
		{"restored", p.RestoredS}, {"recomputed", p.RecomputedS}, {"spout resumed", p.SpoutResumedS},
	} {
		if s.v != nil {
			parts = append(parts, fmt.Sprintf("%s %gs", s.name, *s.v))
		}
	}
	if p.CatchUpS != nil {
		parts = append(parts, fmt.Sprintf("then %gs catching up", *p.CatchUpS))
	}
	return strings.Join(parts, ", ")
}

// CrashLine says what a crash took down: its whole worker, so a crash aimed
// at one operator instance also kills the instance's neighbours. "" for
// other faults, or a crash that found its worker already down.
func (rc Recovery) CrashLine() string {
	c := rc.Crashed
	if c == nil {
		return ""
	}
	if c.Worker == engine.MasterNode {
		if len(c.Processes) == 0 {
			return rc.Fault + " took down the master node, where this system runs no process"
		}
		return fmt.Sprintf("%s took down the master node and every process on it or bound to it: %s", rc.Fault, strings.Join(c.Processes, ", "))
	}
	return fmt.Sprintf("%s took down worker %d and every process on it: %s", rc.Fault, c.Worker, strings.Join(c.Processes, ", "))
}

// ReaderView says in one line what a reader of the run's sink saw: how
// many effects it got more than once and never, whether a key's value
// ever went back, whether the final values were right, and the observed
// against the claimed guarantee.
func ReaderView(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d duplicated and %d lost of %d expected effects", r.Duplicates, r.Lost, r.ExpectedEffects)
	if r.PendingEffects > 0 {
		fmt.Fprintf(&b, " (%d more still pending when the run stopped undrained)", r.PendingEffects)
	}
	switch {
	case r.ObservedReader == "": // results written before the reader half: not measured
	case r.ReaderRegressions == 0:
		b.WriteString("; values never went back")
	case r.FirstRegression != nil:
		f := r.FirstRegression
		fmt.Fprintf(&b, "; a key's value went back %d times (first key %d at %.3fs, %d to %d)", r.ReaderRegressions, f.Key, f.AtS, f.From, f.To)
	default:
		fmt.Fprintf(&b, "; a key's value went back %d times", r.ReaderRegressions)
	}
	if r.WrongKeys == 0 {
		b.WriteString("; every final value right")
	} else {
		fmt.Fprintf(&b, "; %d keys ended with a wrong value (%d stale, %d ahead of the oracle)", r.WrongKeys, r.StaleFinalKeys, r.AheadFinalKeys)
	}
	held := "held"
	if !r.ClaimHeld {
		held = "BROKEN"
	}
	observed, claimed := r.Verdict, r.ClaimedGuarantee
	if r.ClaimedReader != "" { // results written before the reader half
		observed += ", " + r.ObservedReader
		claimed += ", " + r.ClaimedReader
	}
	fmt.Fprintf(&b, " — observed %s; claimed %s: %s", observed, claimed, held)
	return b.String()
}
