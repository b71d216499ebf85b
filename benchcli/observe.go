package benchcli

import (
	"fmt"
	"io"

	"ftbench/check"
	"ftbench/harness"
)

// heldWord is the verdict line's last word: the worse of the harness's
// and the observer's judgement, so "claim held" never stands beside a
// failed or unfinished observation.
func heldWord(r *harness.Result) string {
	switch {
	case r.ClaimHeld:
		return "claim held"
	case r.Observer != nil && r.Observer.Result == check.LinUnknown && r.ExitCode != harness.ExitSafety:
		return "claim UNKNOWN (the observer's check did not finish)"
	}
	return "CLAIM BROKEN"
}

// finalsNote completes the verdict line with the final values when any is
// wrong: what broke, or what the claim allows (a plain sink's stale values
// after a zombie), so a broken claim never reads "claimed exactly-once,
// observed exactly-once: CLAIM BROKEN" with nothing said.
func finalsNote(r *harness.Result) string {
	if r.WrongKeys == 0 {
		return ""
	}
	note := fmt.Sprintf("; final values: %d stale, %d ahead of the oracle", r.StaleFinalKeys, r.AheadFinalKeys)
	if r.ClaimHeld && r.StaleFinalKeys > 0 {
		note += " (the claim allows stale ones: a zombie sink's late writes, as Flink's non-transactional sinks)"
	}
	return note
}

// printObserver prints the observer's porcupine verdict, one line.
func printObserver(w io.Writer, r *harness.Result) {
	o := r.Observer
	if o == nil {
		return
	}
	if o.Result == harness.ObsNotApplicable {
		fmt.Fprintf(w, "observer:    not applicable (the workload has no sink)\n")
		return
	}
	res := o.Result
	if res == check.LinUnknown {
		res += " (checker timed out: not a pass)"
	}
	fmt.Fprintf(w, "observer:    %s: %s; %d commits in %d applies, %d reads, %d final reads on %d keys (%.2fs wall)\n",
		o.RequiredModel, res, o.Applies, o.ApplyOps, o.Reads, o.FinalReads, o.Keys, r.Host.ObserverWallS)
	if o.Visualization != "" {
		fmt.Fprintf(w, "             porcupine view: %s\n", o.Visualization)
	}
}
