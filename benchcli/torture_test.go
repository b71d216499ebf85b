package benchcli

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

func (liar) Name() string                                { return "test-liar" }
func (liar) Claim(string, systems.Options) systems.Claim { return systems.ExactlyOnceMonotonic }

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

func observer(t *testing.T, r *harness.Result) *harness.ModelResult {
	t.Helper()
	if r.Observer == nil || r.Observer.Models[r.Observer.RequiredModel] == nil {
		t.Fatalf("no model result in run.json's observer block: %+v", r.Observer)
	}
	return r.Observer.Models[r.Observer.RequiredModel]
}

// Storm's duplicates keep its claim: at-least-once, and readers see counts
// that only grow.
func TestObserveStormack(t *testing.T) {
	registered(t, "stormack")
	dir := t.TempDir()
	code, stdout, stderr := bench(t, "run", "--system", "stormack", "--fault", "crash", "--ack-timeout", "1s",
		"--duration", "4s", "--rate", "5000", "--observe", "--out", dir)
	r := readRun(t, filepath.Join(dir, "latest", "run.json"))
	if code != 0 || r.Duplicates == 0 || r.Lost != 0 || r.ObservedReader != "monotonic" {
		t.Fatalf("exit %d dup %d lost %d reader %s\n%s\n%s", code, r.Duplicates, r.Lost, r.ObservedReader, stdout, stderr)
	}
	if m := observer(t, r); m.Result != "ok" || r.Observer.RequiredModel != "at-least-once, monotonic" {
		t.Errorf("%s: %+v %+v", r.Observer.RequiredModel, m, m.FirstViolation)
	}
	if !strings.Contains(stdout, "verdict:     at-least-once, monotonic (claimed at-least-once, monotonic): claim held") ||
		!strings.Contains(stdout, "observer:    at-least-once, monotonic: ok;") {
		t.Errorf("summary:\n%s", stdout)
	}
}

// The rollback of a plain sink after barrier recovery: a reader sees a
// count, then a smaller one. The plain sink claims exactly that
// (at-least-once, non-monotonic), so the harness and the observer both
// accept it, and the summary never says "claim held" beside a failed
// observation. The two-phase-commit sink is exactly-once and monotonic.
func TestObserveBarrierPlainSink(t *testing.T) {
	registered(t, "barrier")
	dir := t.TempDir()
	run := func(sink string) (int, string, *harness.Result) {
		code, stdout, stderr := bench(t, "run", "--system", "barrier", "--sink", sink, "--fault", "crash",
			"--duration", "6s", "--rate", "5000", "--observe", "--out", dir)
		if code != 0 {
			t.Fatalf("--sink %s: exit %d\n%s\n%s", sink, code, stdout, stderr)
		}
		return code, stdout, readRun(t, filepath.Join(dir, "latest", "run.json"))
	}
	_, stdout, r := run("plain")
	if r.ClaimedReader != "non-monotonic" || r.ObservedReader != "non-monotonic" || r.ReaderRegressions == 0 || r.Duplicates == 0 {
		t.Fatalf("plain sink: claimed %s observed %s regressions %d dups %d", r.ClaimedReader, r.ObservedReader, r.ReaderRegressions, r.Duplicates)
	}
	if m := observer(t, r); m.Result != "ok" || !r.ClaimHeld || r.Observer.RequiredModel != "at-least-once, non-monotonic" {
		t.Fatalf("plain sink: held %v, %s %+v", r.ClaimHeld, r.Observer.RequiredModel, m)
	}
	if strings.Contains(stdout, "illegal") || !strings.Contains(stdout, "claim held") {
		t.Fatalf("plain sink summary:\n%s", stdout)
	}
	_, _, r = run("2pc")
	if m := observer(t, r); m.Result != "ok" || r.ObservedReader != "monotonic" || r.Observer.RequiredModel != "exactly-once, monotonic" {
		t.Fatalf("2pc sink: reader %s observer %+v", r.ObservedReader, r.Observer)
	}
	// The 2PC sink makes each checkpoint's effects visible at one instant;
	// the history grows with the reads, not with the commits.
	// (One apply per commit, as before, would be 90 000 here.)
	if o := r.Observer; o.ApplyOps > 2*(o.Reads+int64(o.Keys)) || o.ApplyOps*5 > o.Applies {
		t.Fatalf("2pc sink: %d commits folded into %d applies for %d reads on %d keys", o.Applies, o.ApplyOps, o.Reads, o.Keys)
	}
}

// A barrier whose plain sink claimed a monotonic view would be caught by
// both checks: the harness from the commits, the observer from the reads.
type monotonicPlain struct{ systems.System }

func (monotonicPlain) Name() string { return "test-barrier-plain-monotonic" }
func (monotonicPlain) Claim(string, systems.Options) systems.Claim {
	return systems.Claim{Guarantee: systems.AtLeastOnce, Monotonic: true}
}

func TestObservePlainSinkClaimingMonotonic(t *testing.T) {
	registered(t, "barrier")
	b, _ := systems.Lookup("barrier")
	systems.Register(monotonicPlain{b})
	dir := t.TempDir()
	code, stdout, _ := bench(t, "run", "--system", "test-barrier-plain-monotonic", "--sink", "plain", "--fault", "crash",
		"--duration", "6s", "--rate", "5000", "--observe", "--out", dir)
	r := readRun(t, filepath.Join(dir, "latest", "run.json"))
	if code != harness.ExitSafety || r.ClaimHeld || observer(t, r).Result != "illegal" || r.ObservedReader != "non-monotonic" {
		t.Fatalf("exit %d held %v observer %+v reader %s", code, r.ClaimHeld, r.Observer, r.ObservedReader)
	}
	if strings.Contains(stdout, "claim held") || !strings.Contains(stdout, "CLAIM BROKEN") {
		t.Fatalf("summary:\n%s", stdout)
	}
}

// early is barrier built wrongly: its two-phase-commit sink makes effects
// visible before their checkpoint completes — which is what the plain sink
// does — while it still claims exactly-once.
type early struct{ systems.System }

func (early) Name() string                                { return "test-barrier-early-commit" }
func (early) Claim(string, systems.Options) systems.Claim { return systems.ExactlyOnceMonotonic }
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
