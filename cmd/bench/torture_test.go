package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/systems"
)

// liar is none claiming exactly-once: a broken build for torture to catch.
type liar struct{ systems.System }

func (liar) Name() string                         { return "test-liar" }
func (liar) Claim(string, systems.Options) string { return systems.ExactlyOnce }

func init() {
	if none, err := systems.Lookup("none"); err == nil {
		systems.Register(liar{none})
	}
}

// shellSplit undoes the harness's shell quoting: words separated by spaces,
// single-quoted where needed (a quote inside is closed, escaped, reopened).
func shellSplit(s string) []string {
	var words []string
	var w strings.Builder
	in, started := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			in, started = !in, true
		case c == '\\' && !in && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		case c == ' ' && !in:
			if started || w.Len() > 0 {
				words = append(words, w.String())
			}
			w.Reset()
			started = false
		default:
			w.WriteByte(c)
		}
	}
	if started || w.Len() > 0 {
		words = append(words, w.String())
	}
	return words
}

func readRun(t *testing.T, path string) *harness.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r harness.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	r.Host = harness.Host{}
	return &r
}

func TestTortureNone(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "torture", "--system", "none", "--runs", "4", "--duration", "1.5s", "--rate", "3000", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"torture none/default on wordcount (claims at-most-once), 4 runs from seed 1",
		"runs  passed  claim-broken  expected", "torture.json"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "torture.json")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := bench(t, "torture", "--fault", "crash", "--runs", "1", "--out", dir); code != harness.ExitUsage || !strings.Contains(stderr, "--fault") {
		t.Fatalf("--fault: exit %d %s", code, stderr)
	}
	if code, _, stderr := bench(t, "torture", "--system", "nope", "--out", dir); code != harness.ExitUsage || !strings.Contains(stderr, "nope") {
		t.Fatalf("unknown system: exit %d %s", code, stderr)
	}
}

// A broken claim exits 3; the printed replay line and the shrunk one
// reproduce the failing runs exactly.
func TestTortureReplaysAreExact(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "torture", "--system", "test-liar", "--runs", "2", "--duration", "1s", "--rate", "3000",
		"--shrink", "1", "--shrink-budget", "12", "--out", dir)
	if code != harness.ExitSafety {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	var rep struct {
		Runs []struct {
			Class, Replay, Dir string
		}
		Shrunk []struct{ Replay, Dir string }
	}
	b, _ := os.ReadFile(filepath.Join(dir, "torture.json"))
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Shrunk) != 1 {
		t.Fatalf("torture.json: %v %s", err, b)
	}
	line := regexp.MustCompile(`(?m)^run (\d+) CLAIM BROKEN: .*  replay: (bench run .*)$`).FindStringSubmatch(stdout)
	if line == nil {
		t.Fatalf("no failing-run line:\n%s", stdout)
	}
	shrunk := regexp.MustCompile(`(?m)^shrunk run \d+: .*  replay: (bench run .*)$`).FindStringSubmatch(stdout)
	if shrunk == nil {
		t.Fatalf("no shrunk line:\n%s", stdout)
	}
	for _, tc := range []struct{ replay, dir string }{
		{line[2], rep.Runs[atoi(line[1])].Dir},
		{shrunk[1], rep.Shrunk[0].Dir},
	} {
		out := t.TempDir()
		args := append(shellSplit(tc.replay)[1:], "--out", out)
		if code, stdout, stderr := bench(t, args...); code != harness.ExitSafety {
			t.Fatalf("replay %q: exit %d\n%s\n%s", tc.replay, code, stdout, stderr)
		}
		want, got := readRun(t, filepath.Join(tc.dir, "run.json")), readRun(t, filepath.Join(out, "latest", "run.json"))
		a, _ := harness.MarshalResult(want)
		b, _ := harness.MarshalResult(got)
		if string(a) != string(b) {
			t.Fatalf("replay %q gives another run.json", tc.replay)
		}
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func registered(t *testing.T, name string) {
	t.Helper()
	if _, err := systems.Lookup(name); err != nil {
		t.Skipf("system %s is not registered yet", name)
	}
}

func observer(t *testing.T, r *harness.Result, model string) *harness.ModelResult {
	t.Helper()
	if r.Observer == nil || r.Observer.Models[model] == nil {
		t.Fatalf("no %s result in run.json's observer block: %+v", model, r.Observer)
	}
	return r.Observer.Models[model]
}

// Storm's duplicates pass its own claim's model and fail exactly-once.
func TestObserveStormack(t *testing.T) {
	registered(t, "stormack")
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "run", "--system", "stormack", "--fault", "crash", "--ack-timeout", "1s",
		"--duration", "4s", "--rate", "5000", "--observe", "--out", dir)
	r := readRun(t, filepath.Join(dir, "latest", "run.json"))
	if code != 0 || r.Duplicates == 0 || r.Lost != 0 {
		t.Fatalf("exit %d dup %d lost %d\n%s\n%s", code, r.Duplicates, r.Lost, stdout, stderr)
	}
	if eo := observer(t, r, "exactly-once"); eo.Result != "illegal" {
		t.Errorf("exactly-once: %+v", eo)
	}
	if alo := observer(t, r, "at-least-once"); alo.Result != "ok" || r.Observer.Result != "ok" {
		t.Errorf("at-least-once: %+v %+v", alo, alo.FirstViolation)
	}
	if !strings.Contains(stdout, "observer:    exactly-once illegal, at-least-once ok (required by the claim)") {
		t.Errorf("summary:\n%s", stdout)
	}
}

// The rollback anomaly of a plain sink after barrier recovery: a reader
// sees a count, then a smaller one. The two-phase-commit sink shows none.
func TestObserveBarrierPlainSink(t *testing.T) {
	registered(t, "barrier")
	dir := t.TempDir()
	run := func(sink string) (int, *harness.Result) {
		code, stdout, stderr := bench(t, "run", "--system", "barrier", "--sink", sink, "--fault", "crash",
			"--duration", "6s", "--rate", "5000", "--observe", "--out", dir)
		if code != 0 && code != harness.ExitSafety {
			t.Fatalf("--sink %s: exit %d\n%s\n%s", sink, code, stdout, stderr)
		}
		return code, readRun(t, filepath.Join(dir, "latest", "run.json"))
	}
	code, r := run("plain")
	alo := observer(t, r, "at-least-once")
	if alo.Result != "illegal" || alo.FirstViolation == nil || code != harness.ExitSafety {
		t.Fatalf("plain sink: exit %d, at-least-once %+v", code, alo)
	}
	t.Logf("plain sink, first violation: %+v", alo.FirstViolation)
	if code, r := run("2pc"); code != 0 || observer(t, r, "exactly-once").Result != "ok" {
		t.Fatalf("2pc sink: exit %d observer %+v", code, r.Observer)
	}
}

// early is barrier built wrongly: its two-phase-commit sink makes effects
// visible before their checkpoint completes — which is what the plain sink
// does — while it still claims exactly-once.
type early struct{ systems.System }

func (early) Name() string                         { return "test-barrier-early-commit" }
func (early) Claim(string, systems.Options) string { return systems.ExactlyOnce }
func (e early) Compile(job systems.Job) (*engine.Deployment, error) {
	opts := systems.Options{}
	for k, v := range job.Opts {
		opts[k] = v
	}
	opts["sink"] = "plain"
	job.Opts = opts
	return e.System.Compile(job)
}

func init() {
	if b, err := systems.Lookup("barrier"); err == nil {
		systems.Register(early{b})
	}
}

// The deliberately broken build is caught within 50 runs and shrunk to at
// most two faults.
func TestTortureCatchesEarlyCommit(t *testing.T) {
	registered(t, "barrier")
	requireCaughtAndShrunk(t, "test-barrier-early-commit")
}

// requireCaughtAndShrunk runs a 50-run campaign against a system that breaks
// its claim and requires torture to catch it and shrink the failing schedule
// to at most two faults.
func requireCaughtAndShrunk(t *testing.T, system string, extra ...string) {
	t.Helper()
	dir := t.TempDir()
	code, stdout, stderr := bench(t, append([]string{"torture", "--system", system, "--runs", "50", "--stop",
		"--shrink", "1", "--shrink-budget", "40", "--out", dir}, extra...)...)
	if code != harness.ExitSafety {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`(?m)^shrunk run (\d+): (\d+) faults -> (\d+),`).FindStringSubmatch(stdout)
	if m == nil || atoi(m[3]) > 2 {
		t.Fatalf("not shrunk to at most two faults:\n%s", stdout)
	}
	t.Logf("caught by run %s, shrunk from %s to %s faults\n%s", m[1], m[2], m[3], stdout)
}
