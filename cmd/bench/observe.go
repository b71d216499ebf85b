package main

import (
	"fmt"
	"io"
	"strings"

	"ftbench/check"
	"ftbench/harness"
)

// printObserver prints the observer's porcupine verdicts, one line.
func printObserver(w io.Writer, r *harness.Result) {
	o := r.Observer
	if o == nil {
		return
	}
	if o.Result == harness.ObsNotApplicable {
		fmt.Fprintf(w, "observer:    not applicable (the workload has no sink)\n")
		return
	}
	var models []string
	for _, m := range []check.Guarantee{check.ExactlyOnce, check.AtLeastOnce} {
		mr := o.Models[string(m)]
		if mr == nil {
			continue
		}
		s := string(m) + " " + mr.Result
		if mr.Result == check.LinUnknown {
			s += " (checker timed out: not a pass)"
		}
		if string(m) == o.RequiredModel {
			s += " (required by the claim)"
		}
		models = append(models, s)
	}
	fmt.Fprintf(w, "observer:    %s; %d commits, %d reads, %d final reads on %d keys (%.2fs wall)\n",
		strings.Join(models, ", "), o.Applies, o.Reads, o.FinalReads, o.Keys, r.Host.ObserverWallS)
	if o.Visualization != "" {
		fmt.Fprintf(w, "             porcupine view: %s\n", o.Visualization)
	}
}
