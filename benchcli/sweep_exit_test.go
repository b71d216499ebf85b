package benchcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ftbench/harness"
)

// A sweep finishes every run and writes its curve, then exits 3 if any run
// broke a claim and 4 if any stopped undrained: the CI
// regression must not pass over either.
func TestSweepExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		flags []string
		code  int
		say   string
	}{
		// none claiming exactly-once loses records in a crash.
		{"broken", []string{"--system", "test-liar,none", "--fault", "crash"}, harness.ExitSafety, "1 run(s) broke a claim, first test-liar/default seed 1"},
		// A worker that never comes back: the backlog is pending, not lost.
		{"undrained", []string{"--system", "barrier", "--fault", "crash@500ms:worker=1,restart=1000000h"}, harness.ExitLiveness, "1 run(s) stopped undrained, first barrier/aligned seed 1"},
		{"clean", []string{"--system", "none"}, 0, ""},
	} {
		out := filepath.Join(dir, tc.name)
		code, stdout, stderr := bench(t, args([]string{"sweep", "--duration", "1s", "--rate", "2000", "--drain", "2s", "--out", out}, tc.flags)...)
		if code != tc.code || !strings.Contains(stderr, tc.say) {
			t.Errorf("%s: exit %d, want %d with %q\n%s\n%s", tc.name, code, tc.code, tc.say, stdout, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "curve.json")); err != nil {
			t.Errorf("%s: no curve written: %v", tc.name, err)
		}
		if tc.name == "undrained" && !strings.Contains(stdout, "(1 undrained)") {
			t.Errorf("the curve table must show the undrained seed:\n%s", stdout)
		}
	}
}
