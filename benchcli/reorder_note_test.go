package benchcli

import (
	"strings"
	"testing"
)

// A reorder window on a system that relies on FIFO channels gets a note on
// stderr (its broken claim is the fault's, not a bug's); one on a system
// that does not rely on them gets none. stdout is the summary alone.
func TestReorderOnFIFOSystemIsNoted(t *testing.T) {
	for _, tc := range []struct {
		system string
		noted  bool
	}{
		{"barrier", true},
		{"stormack", false},
	} {
		t.Run(tc.system, func(t *testing.T) {
			_, stdout, stderr := bench(t, "run", "--system", tc.system, "--fault", "reorder", "--duration", "1s",
				"--rate", "2000", "--out", t.TempDir())
			const note = "relies on FIFO channels"
			if got := strings.Contains(stderr, "note: "+tc.system+" "+note); got != tc.noted {
				t.Errorf("note on stderr: %v, want %v\nstderr: %s", got, tc.noted, stderr)
			}
			if strings.Contains(stdout, note) {
				t.Errorf("the note went to stdout")
			}
		})
	}
}
