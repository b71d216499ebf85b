package harness

import (
	"testing"

	"ftbench/engine"
)

// The checkpoint summary counts what the events say, and says n/a where a
// figure does not exist.
func TestSummarizeCheckpoints(t *testing.T) {
	ev := func(kind string, v int64) engine.Event { return engine.Event{Kind: kind, Value: v} }
	ms := int64(engine.Millisecond)
	cases := []struct {
		name   string
		events []engine.Event
		want   string
	}{
		{"none", []engine.Event{ev("worker_crash", 0)}, ""},
		{"barrier", []engine.Event{
			ev("checkpoint_triggered", 0), ev("checkpoint_completed", 20*ms),
			ev("checkpoint_triggered", 0), ev("checkpoint_aborted", 0),
			ev("checkpoint_triggered", 0), ev("checkpoint_completed", 30*ms),
			ev("checkpoint_triggered", 0), ev("checkpoint_completed", 150*ms),
			ev("checkpoint_triggered", 0), // still in progress at the end
		}, "5 triggered, 3 completed, 1 aborted; duration p50 30.0 ms, max 150.0 ms"},
		{"none completed", []engine.Event{ev("checkpoint_triggered", 0), ev("checkpoint_aborted", 0)},
			"1 triggered, 0 completed, 1 aborted; duration n/a (none completed)"},
		{"lineage", []engine.Event{ev("checkpoint_done", 0), ev("checkpoint_done", 0)}, "2 completed; duration n/a (not recorded)"},
	}
	for _, tc := range cases {
		got := ""
		if c := SummarizeCheckpoints(tc.events); c != nil {
			got = c.String()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
