package torture

import (
	"ftbench/engine"
	"ftbench/harness"
)

// WorstCase is the largest run a campaign over base can draw: every drawn
// parameter at the top of its range, the user's where fixed says so. A
// command checks it (harness.Validate) before the campaign, so that a run
// refused as too large is refused before any other has run.
func WorstCase(base harness.Config, fixed Fixed) harness.Config {
	cfg := base
	cfg.Faults = nil
	if !fixed.Duration {
		cfg.Duration = minDuration + (durationSteps-1)*500*engine.Millisecond
	}
	if !fixed.Rate {
		cfg.Rate = maxRate
	}
	if !fixed.Parallelism {
		cfg.Parallelism = maxPar
	}
	if !fixed.Workers {
		cfg.Workers = maxWorkers
	}
	return cfg
}
