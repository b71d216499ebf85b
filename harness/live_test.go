package harness

import (
	"strings"
	"testing"
)

// Faults the live runtime cannot apply are refused before the run, as bad
// input.
func TestLiveRefusesNetworkFaults(t *testing.T) {
	for _, f := range []string{"throttle", "reorder"} {
		cfg := DefaultConfig()
		cfg.Runtime = RuntimeLive
		cfg.Faults = []string{f}
		_, err := Execute(cfg)
		if !IsInputError(err) || !strings.Contains(err.Error(), "not supported with --runtime live") {
			t.Errorf("%s: err = %v, want an input error naming --runtime live", f, err)
		}
	}
	cfg := DefaultConfig()
	cfg.Runtime, cfg.Observe = RuntimeLive, true
	if _, err := Execute(cfg); !IsInputError(err) || !strings.Contains(err.Error(), "--observe") {
		t.Errorf("--observe live: err = %v, want an input error naming --observe", err)
	}
	cfg = DefaultConfig()
	cfg.Work = "none"
	if _, err := Execute(cfg); !IsInputError(err) {
		t.Errorf("--work without --runtime live: err = %v, want an input error", err)
	}
}
