package harness

import (
	"fmt"

	"ftbench/engine"
	"ftbench/metrics"
)

// Checkpoints summarises a run's checkpoints from its events, the same for
// every checkpointing system: the coordinator's checkpoint_triggered,
// checkpoint_completed (Value: trigger-to-complete duration) and
// checkpoint_aborted (barrier, snapshot), and lineage's checkpoint_done (a
// state RDD written; its driver records no trigger and no duration).
type Checkpoints struct {
	Triggered, Completed, Aborted int
	// TriggersRecorded is false where only completions are recorded
	// (lineage): Triggered and Aborted are then unknown, not 0.
	TriggersRecorded bool
	// Duration is the trigger-to-complete duration in ms over completed
	// checkpoints (metrics.Summary: p50 by linear interpolation, max);
	// N is 0 when no duration was recorded.
	Duration metrics.Stat
}

// SummarizeCheckpoints counts the checkpoints in events; nil when the run
// recorded none (a system without checkpoints, or a run too short for one).
func SummarizeCheckpoints(events []engine.Event) *Checkpoints {
	c := &Checkpoints{}
	var ms []float64
	for _, e := range events {
		switch e.Kind {
		case "checkpoint_triggered":
			c.Triggered++
			c.TriggersRecorded = true
		case "checkpoint_completed":
			c.Completed++
			ms = append(ms, float64(e.Value)/1e6)
		case "checkpoint_aborted":
			c.Aborted++
		case "checkpoint_done":
			c.Completed++
		}
	}
	if c.Triggered == 0 && c.Completed == 0 && c.Aborted == 0 {
		return nil
	}
	c.Duration = metrics.Summary(ms)
	return c
}

// String is the summary's one line: "22 triggered, 21 completed, 1
// aborted; duration p50 23.1 ms, max 149.4 ms". A figure that does not
// exist reads n/a.
func (c *Checkpoints) String() string {
	s := fmt.Sprintf("%d completed", c.Completed)
	if c.TriggersRecorded {
		s = fmt.Sprintf("%d triggered, %d completed, %d aborted", c.Triggered, c.Completed, c.Aborted)
	}
	if c.Duration.N == 0 {
		if c.TriggersRecorded {
			return s + "; duration n/a (none completed)"
		}
		return s + "; duration n/a (not recorded)"
	}
	return s + fmt.Sprintf("; duration p50 %.1f ms, max %.1f ms", c.Duration.P50, c.Duration.Max)
}
