package torture

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// torture.json holds replay lines a reader copies into a shell: they are
// written as typed, not with > escaped as \u003e.
func TestReportReplayUnescaped(t *testing.T) {
	dir := t.TempDir()
	replay := "bench run --system barrier --fault 'throttle@1s-2s:edge=split->count,rate=10/s' && echo <ok>"
	rep := &Report{Format: ReportFormat, Runs: []*Run{{Index: 0, Class: Broken, Faults: []string{"throttle@1s-2s:edge=split->count,rate=10/s"}, Replay: replay}}}
	if err := writeReport(dir, rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{ReportFile, SummaryFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `\u003`) || strings.Contains(string(b), `\u0026`) {
			t.Errorf("%s escapes <, > or &:\n%s", f, b)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	if !strings.Contains(string(b), "edge=split->count") || !strings.Contains(string(b), "&& echo <ok>") {
		t.Errorf("%s lacks the replay line as typed:\n%s", ReportFile, b)
	}
}
