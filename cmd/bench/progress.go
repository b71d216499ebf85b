package main

import (
	"fmt"
	"io"

	"ftbench/harness"
)

// progressPrinter writes the harness's progress reports of a long run to w
// (stderr: stdout is the run's summary alone), one line each.
func progressPrinter(w io.Writer) func(harness.Progress) {
	return func(p harness.Progress) {
		where := p.Phase
		if p.Phase == harness.PhaseSimulating {
			where = fmt.Sprintf("simulated %.1fs of at most %.1fs, %d events", p.SimTime.Seconds(), p.End.Seconds(), p.Events)
		}
		fmt.Fprintf(w, "bench: progress: %s/%s on %s seed %d: %s (%.0fs wall)\n", p.System, p.Variant, p.Workload, p.Seed, where, p.Wall.Seconds())
	}
}
