package benchcli

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ftbench/harness"
	"ftbench/sweep"
	"ftbench/systems"
)

// tinyRun are run flags for a run of a few tens of milliseconds.
var tinyRun = []string{"--duration", "2s", "--rate", "5000", "--drain", "2s", "--fault", "crash"}

func args(a ...[]string) []string {
	var out []string
	for _, x := range a {
		out = append(out, x...)
	}
	return out
}

func TestCompareThenReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cmp")
	code, stdout, stderr := bench(t, args([]string{"compare", "--system", "all", "--out", dir}, tinyRun)...)
	// Exit 3 exactly when some system's claim broke (as bench run).
	if broken := strings.Contains(stdout, "CLAIM BROKEN"); code != 0 && !(code == harness.ExitSafety && broken) {
		t.Fatalf("compare exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := []string{"none/default", "at-most-once", "faults:  crash@800ms:op=count/0", "bench report " + dir}
	for _, name := range systems.Names() {
		want = append(want, "\n"+name+"/") // one line per registered system
	}
	for _, want := range want {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare output lacks %q:\n%s", want, stdout)
		}
	}
	st, err := sweep.Scan(dir)
	if err != nil || len(st.Runs) == 0 {
		t.Fatalf("compare stored %v runs: %v", st, err)
	}
	code, stdout, stderr = bench(t, "report", dir)
	if code != 0 {
		t.Fatalf("report exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"throughput.png", "latency.png", "delivery.png"} {
		fh, err := os.Open(filepath.Join(dir, "report", f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(fh); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		fh.Close()
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report", "summary.md"))
	if !strings.Contains(string(md), "| none/default | 1 |") {
		t.Errorf("summary.md lacks the none run:\n%s", md)
	}
}

// The regress acceptance: a sweep with a changed cost default moves the
// loss points and regress exits 3 naming them; the original cost model
// exits 0. (none's output staleness does not move: what it sends to a
// crashed worker is lost, not late, so it is counted in lost.)
func TestRegressAcceptance(t *testing.T) {
	dir := t.TempDir()
	sweepArgs := func(out string, extra ...string) []string {
		return args([]string{"sweep", "--system", "none", "--param", "rate=4000,5000", "--seeds", "1-2", "--jobs", "2", "--out", out},
			tinyRun, extra)
	}
	base := filepath.Join(dir, "base")
	if code, out, errs := bench(t, sweepArgs(base, "--cost", "restart-delay=400ms")...); code != 0 {
		t.Fatalf("sweep exit %d\n%s\n%s", code, out, errs)
	}
	baseline := filepath.Join(dir, "baseline", "none-crash.json")
	code, out, errs := bench(t, "regress", "--baseline", baseline, "--current", base, "--update")
	if code != 0 || !strings.Contains(out, "baseline "+baseline+" written: 2 points") {
		t.Fatalf("regress --update exit %d\n%s\n%s", code, out, errs)
	}
	// Same code, same results: within tolerance.
	code, out, errs = bench(t, "regress", "--baseline", baseline, "--current", filepath.Join(base, "curve.json"))
	// Two points of verdict, claim_held, recovery time, duplicates, lost.
	if code != 0 || !strings.Contains(out, "all 10 values within tolerance") {
		t.Fatalf("unchanged: exit %d\n%s\n%s", code, out, errs)
	}
	// Double the restart delay for every point: twice as long down, about
	// twice as many records lost.
	moved := filepath.Join(dir, "moved")
	if code, out, errs := bench(t, sweepArgs(moved, "--cost", "restart-delay=800ms")...); code != 0 {
		t.Fatalf("sweep exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = bench(t, "regress", "--baseline", baseline, "--current", moved)
	if code != harness.ExitSafety {
		t.Fatalf("doubled restart delay: exit %d, want 3\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "none/default rate=4000 lost") || !strings.Contains(errs, "none/default rate=5000 lost") ||
		!strings.Contains(out, "OUTSIDE") ||
		!strings.Contains(out, "note: base options differ: cost overrides [restart-delay=400ms] in the baseline, [restart-delay=800ms] now") {
		t.Errorf("regress must name the moved points:\n%s\n%s", out, errs)
	}
	if lines := strings.Split(strings.TrimSpace(errs), "\n"); len(lines) != 1 {
		t.Errorf("want one line on stderr, got %q", errs)
	}
}

func TestSweepResumeCLI(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sw")
	sweepArgs := args([]string{"sweep", "--system", "none", "--param", "rate=4000,5000", "--seeds", "1-2", "--out", out}, tinyRun)
	code, stdout, stderr := bench(t, sweepArgs...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Not a terminal: one plain progress line per run, with an ETA.
	if n := strings.Count(stdout, "seed "); n != 4 || !strings.Contains(stdout, "[1/4] ") || !strings.Contains(stdout, "ETA") {
		t.Errorf("progress lines:\n%s", stdout)
	}
	// Without --resume the folder is refused.
	if code, _, stderr := bench(t, sweepArgs...); code != 2 || !strings.Contains(stderr, "--resume") {
		t.Fatalf("rerun without --resume: exit %d %s", code, stderr)
	}
	st, _ := sweep.Scan(out)
	corrupt := filepath.Join(st.Runs[1].Dir, "run.json")
	if err := os.WriteFile(corrupt, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(st.Runs[2].Dir); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = bench(t, append(sweepArgs, "--resume")...)
	if code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, corrupt) || !strings.Contains(stdout, "4 runs in") || !strings.Contains(stdout, "2 executed (0 failed), 2 already done") {
		t.Errorf("resume output:\n%s\n%s", stdout, stderr)
	}
	var c sweep.Curve
	b, _ := os.ReadFile(filepath.Join(out, "curve.json"))
	if err := json.Unmarshal(b, &c); err != nil || len(c.Points) != 2 || len(c.Missing) != 0 || len(c.Points[0].Seeds) != 2 {
		t.Fatalf("curve after resume: %v %+v", err, c)
	}
}

func TestShardMergeCLI(t *testing.T) {
	dir := t.TempDir()
	var shards []string
	for _, s := range []string{"1/2", "2/2"} {
		out := filepath.Join(dir, "shard"+s[:1])
		shards = append(shards, out)
		code, stdout, stderr := bench(t, args([]string{"sweep", "--system", "none", "--param", "rate=4000,5000", "--shard", s, "--out", out}, tinyRun)...)
		if code != 0 || strings.Count(stdout, "seed 1:") != 1 {
			t.Fatalf("shard %s: exit %d\n%s\n%s", s, code, stdout, stderr)
		}
	}
	merged := filepath.Join(dir, "merged")
	code, stdout, stderr := bench(t, append([]string{"merge", "--out", merged}, shards...)...)
	if code != 0 || !strings.Contains(stdout, "2 points, 0 missing") {
		t.Fatalf("merge exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := bench(t, "merge", "--out", merged, t.TempDir()); code != 2 || !strings.Contains(stderr, "not a sweep folder") {
		t.Errorf("merging a non-sweep: exit %d %s", code, stderr)
	}
}

// A point that cannot run is refused before the first run (issue 14:
// validate before running), naming the point: no run folder is written.
func TestSweepRefusesBadPointFirst(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sw")
	code, stdout, stderr := bench(t, args([]string{"sweep", "--system", "none", "--param", "fault=crash;crash@1s:op=nope/0", "--out", out}, tinyRun)...)
	if code != 2 || !strings.Contains(stderr, "none/default fault=crash@1s:op=nope/0") || !strings.Contains(stderr, `no operator "nope"`) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("a refused sweep wrote %d entries into %s", len(entries), out)
	}
	code, _, stderr = bench(t, args([]string{"compare", "--system", "none", "--out", filepath.Join(t.TempDir(), "c"), "--fault", "crash@1s:op=nope/0"}, tinyRun[:6])...)
	if code != 2 || !strings.Contains(stderr, "nope") {
		t.Errorf("compare: exit %d %s", code, stderr)
	}
}

func TestGridBadInput(t *testing.T) {
	dir := t.TempDir()
	baseline := filepath.Join(dir, "b.json")
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A real curve and a baseline of a different grid.
	cur := filepath.Join(dir, "cur")
	if code, o, e := bench(t, args([]string{"sweep", "--system", "none", "--param", "rate=5000", "--out", cur}, tinyRun)...); code != 0 {
		t.Fatalf("sweep: %d\n%s\n%s", code, o, e)
	}
	other := filepath.Join(dir, "other")
	if code, _, _ := bench(t, args([]string{"sweep", "--system", "none", "--param", "rate=4000", "--out", other}, tinyRun)...); code != 0 {
		t.Fatal("sweep other")
	}
	if code, _, _ := bench(t, "regress", "--baseline", baseline, "--current", other, "--update"); code != 0 {
		t.Fatal("update")
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown param", []string{"sweep", "--param", "warp=1"}, "unknown run parameter"},
		{"bad param value", []string{"sweep", "--param", "rate=fast"}, "--param rate=fast"},
		{"param without values", []string{"sweep", "--param", "rate"}, "NAME=V1,V2"},
		{"bad seeds", []string{"sweep", "--seeds", "5-1"}, "--seeds"},
		{"seed and seeds", []string{"sweep", "--seeds", "1-2", "--seed", "3"}, "not both"},
		{"bad shard", []string{"sweep", "--shard", "3/2"}, "--shard"},
		{"unknown system", []string{"sweep", "--system", "none,nope"}, `unknown system "nope"`},
		{"bad variant", []string{"compare", "--system", "none/fast"}, `no variant "fast"`},
		{"bad fault", []string{"compare", "--fault", "crash@soon"}, "crash@soon"},
		{"bad cost", []string{"compare", "--cost", "warp=1"}, "warp"},
		{"bad jobs", []string{"sweep", "--jobs", "0"}, "--jobs"},
		{"sweep argument", []string{"sweep", "rate=1"}, "takes no arguments"},
		{"report missing", []string{"report", filepath.Join(dir, "nope")}, "nope"},
		{"report empty", []string{"report", t.TempDir()}, "no results"},
		{"report no arg", []string{"report"}, "one results folder"},
		{"regress no flags", []string{"regress"}, "--baseline"},
		{"regress missing baseline", []string{"regress", "--baseline", filepath.Join(dir, "none.json"), "--current", cur}, "none.json"},
		{"regress garbage baseline", []string{"regress", "--baseline", garbage, "--current", cur}, "not a baseline file"},
		{"regress garbage curve", []string{"regress", "--baseline", baseline, "--current", garbage}, "not a curve file"},
		{"regress different grid", []string{"regress", "--baseline", baseline, "--current", cur}, "different grid: rate takes 4000 in the baseline, 5000"},
		{"regress metrics without update", []string{"regress", "--baseline", baseline, "--current", cur, "--metrics", "lost"}, "--update"},
		{"regress update missing metric", []string{"regress", "--baseline", filepath.Join(dir, "n.json"), "--current", cur, "--update", "--metrics", "nope"}, "lacks metric nope"},
		{"merge no out", []string{"merge", cur}, "--out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.args
			if a[0] == "sweep" || a[0] == "compare" {
				a = append(a, "--out", filepath.Join(t.TempDir(), "o"))
			}
			requireUsageError(t, tc.want, a...)
		})
	}
}
