//go:build !race

// The race detector makes the main job take about ten times as long; the
// README's test command (go test ./..., no -race) runs this test.

package benchcli

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README shows one run of the main job's output. Every simulated figure
// in it is a pure function of the code, so this test runs the main job and
// requires the README's block line for line; only the last line's results
// folder and wall time are the machine's.
func TestReadmeShowsTheMainJobsOutput(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)## What the main job prints.*?```\n(.*?)```").FindSubmatch(b)
	if block == nil {
		t.Fatal("README.md has no fenced output block under \"What the main job prints\"")
	}
	code, stdout, stderr := bench(t, "run", "--system", "barrier", "--fault", "crash", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("the main job exited %d: %s", code, stderr)
	}
	machine := regexp.MustCompile(`^(results:\s+)\S+( \(simulated [^,]+, \d+ events), [0-9.]+s wall\)$`)
	norm := func(s string) []string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = machine.ReplaceAllString(l, "${1}RUN${2}, WALL)")
		}
		return lines
	}
	want, got := norm(string(block[1])), norm(stdout)
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("README.md's main-job output is stale; the main job now prints:\n%s\nREADME.md shows:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
