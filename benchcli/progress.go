package benchcli

import (
	"fmt"
	"io"
	"sync"

	"ftbench/harness"
)

// progressPrinter writes the harness's progress reports of long runs to w
// (stderr: stdout is the summary alone), one line each; runs of a grid
// executing at once report from goroutines of their own, hence the lock.
func progressPrinter(w io.Writer) func(harness.Progress) {
	var mu sync.Mutex
	return func(p harness.Progress) {
		mu.Lock()
		defer mu.Unlock()
		where := p.Phase
		if p.Phase == harness.PhaseSimulating {
			where = fmt.Sprintf("simulated %.1fs of at most %.1fs, %d events", p.SimTime.Seconds(), p.End.Seconds(), p.Events)
		}
		fmt.Fprintf(w, "bench: progress: %s/%s on %s seed %d: %s (%.0fs wall)\n", p.System, p.Variant, p.Workload, p.Seed, where, p.Wall.Seconds())
	}
}
