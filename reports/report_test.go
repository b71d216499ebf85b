package reports

import (
	"bytes"
	"encoding/csv"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"ftbench/sweep"
)

var update = flag.Bool("update", false, "rewrite the golden CSV files under testdata/golden")

// readCSV reads a CSV written next to a plot.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// column returns the cells of name in the rows whose first cell is series.
func column(t *testing.T, recs [][]string, series, name string) []string {
	t.Helper()
	idx := -1
	for i, h := range recs[0] {
		if h == name {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no column %s in %v", name, recs[0])
	}
	var out []string
	for _, r := range recs[1:] {
		if r[0] == series {
			out = append(out, r[idx])
		}
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return v
}

// checkPNG checks that a plot exists, decodes, and is 1200x800.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	if s := decodePNG(t, path).Bounds().Size(); s.X != 1200 || s.Y != 800 {
		t.Errorf("%s is %dx%d, want 1200x800", path, s.X, s.Y)
	}
}

// golden compares a written CSV with testdata/golden/<name>.
func golden(t *testing.T, out, name, goldenDir string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", goldenDir, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (run with -update after checking the change)", name, path)
	}
}

// generateFixture reports the fixture testdata/name into a fresh folder.
func generateFixture(t *testing.T, name string) (*Report, string) {
	t.Helper()
	out := t.TempDir()
	rep, err := Generate(filepath.Join("testdata", name), Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	return rep, out
}

// checkSummaryHas fails for each of wants that out/summary.md lacks.
func checkSummaryHas(t *testing.T, out string, wants ...string) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
}

func TestReportCompareFixture(t *testing.T) {
	t.Parallel()
	rep, out := generateFixture(t, "compare")
	if rep.Runs != 6 {
		t.Fatalf("read %d runs, want 6", rep.Runs)
	}
	for _, name := range []string{"throughput", "latency", "delivery", "checkpoint-size"} {
		checkPNG(t, filepath.Join(out, name+".png"))
		golden(t, out, name+".csv", "compare")
	}
	golden(t, out, "faults.csv", "compare")

	// The crash band: from the crash until the worker is back, detected
	// 1 s after the crash (systems with a failure detector exist here).
	bands := readCSV(t, filepath.Join(out, "faults.csv"))
	if len(bands) != 2 || bands[1][0] != "crash" || num(t, bands[1][2]) != 0.8 || num(t, bands[1][3]) != 1.8 || num(t, bands[1][4]) != 1.8 {
		t.Fatalf("faults.csv = %v", bands)
	}
	// Throughput: one line per system, in input records/s; every system
	// dips to zero in the crash band and none comes back at the rate.
	tp := readCSV(t, filepath.Join(out, "throughput.csv"))
	for _, s := range []string{"none/default", "stormack/default", "lineage/parallel", "barrier/aligned", "barrier/unaligned", "snapshot/cl"} {
		vals := column(t, tp, s, "throughput_rps")
		ts := column(t, tp, s, "t_s")
		if len(vals) != 30 {
			t.Fatalf("%s: %d throughput points, want 30", s, len(vals))
		}
		if num(t, vals[2]) != 10000 {
			t.Errorf("%s: pre-crash throughput %s, want 10000 records/s", s, vals[2])
		}
		if ts[10] != "1" || num(t, vals[10]) != 0 {
			t.Errorf("%s: at t=%s throughput %s, want 0 inside the crash band", s, ts[10], vals[10])
		}
	}
	if v := column(t, tp, "stormack/default", "throughput_rps")[19]; num(t, v) != 20000 {
		t.Errorf("stormack catches up at twice the rate after 1.9 s, got %s", v)
	}
	// Latency: no commits, no point (a gap, not a zero).
	lat := readCSV(t, filepath.Join(out, "latency.csv"))
	for i, ts := range column(t, lat, "none/default", "t_s") {
		if v := num(t, ts); v >= 0.8 && v < 1.8 {
			t.Errorf("none has a latency at %gs, inside the outage", v)
		}
		if p50 := column(t, lat, "none/default", "latency_p50_ms")[i]; num(t, p50) <= 0 {
			t.Errorf("latency p50 of none at %s: %s", ts, p50)
		}
	}
	// Cumulative committed records: none ends short by what it lost
	// (30000 effects = 10000 records), the others commit all 20000.
	for s, want := range map[string]float64{"none/default": 10000, "stormack/default": 20000, "barrier/aligned": 20000} {
		cum := column(t, tp, s, "committed_records")
		if got := num(t, cum[len(cum)-1]); got != want {
			t.Errorf("%s commits %v records in all, want %v", s, got, want)
		}
	}
	// The fixture's sinks commit every bucket: 1 s steps; in the first
	// second none commits 10000 records/s until the crash at 0.8 s.
	if w, r := column(t, tp, "none/default", "window_s"), column(t, tp, "none/default", "window_rps"); w[0] != "1" || r[0] != "8000" {
		t.Errorf("rate steps %v s at %v records/s, want 1 s at 8000", w[0], r[0])
	}
	// Delivery bars: none loses, stormack duplicates, the rest neither.
	del := readCSV(t, filepath.Join(out, "delivery.csv"))
	want := map[string][3]string{
		"none/default": {"0", "30000", "420"}, "stormack/default": {"2400", "0", "0"}, "lineage/parallel": {"0", "0", "0"},
		"barrier/aligned": {"0", "0", "0"}, "snapshot/cl": {"0", "0", "0"},
	}
	for s, w := range want {
		got := [3]string{column(t, del, s, "duplicates")[0], column(t, del, s, "lost")[0], column(t, del, s, "wrong_keys")[0]}
		if got != w {
			t.Errorf("%s delivery %v, want %v", s, got, w)
		}
	}
	if c := column(t, del, "none/default", "claimed"); c[0] != "at-most-once" {
		t.Errorf("claimed %v", c)
	}
	// Overhead: the tolerant lookup found the nested snapshot keys and
	// computed stormack's acks per record (120000 acks / 20000 records).
	cp := readCSV(t, filepath.Join(out, "checkpoint-size.csv"))
	if k := column(t, cp, "snapshot/cl", "channel_key"); len(k) != 1 || k[0] != "snapshot.channel_state_bytes" {
		t.Errorf("snapshot channel key %v", k)
	}
	if v := column(t, cp, "barrier/unaligned", "channel_state_bytes"); v[0] != "18000" {
		t.Errorf("unaligned channel state %v", v)
	}
	if v := column(t, cp, "barrier/aligned", "state_key"); len(v) != 1 || v[0] != "checkpoint_state_bytes.mean" {
		t.Errorf("barrier state key %v", v)
	}
	if v := column(t, cp, "lineage/parallel", "state_bytes"); len(v) != 1 || v[0] != "48000" {
		t.Errorf("lineage checkpoint size %v, want 96000 bytes / 2 checkpoints", v)
	}
	if v := column(t, cp, "none/default", "state_bytes"); len(v) != 0 {
		t.Errorf("none has no checkpoints but appears: %v", v)
	}
	// One run reports acks, and one point per variant has an alignment
	// time: neither is a plot, summary.md gives the numbers and says why.
	for _, f := range []string{"acks-per-record.png", "alignment-vs-backpressure.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("%s drawn for a single value per series", f)
		}
	}

	checkSummaryHas(t, out, "![Throughput over time](throughput.png)", "(delivery.csv)", "| none/default | 1 |", "at-least-once",
		"crash op=count/0 (down 1s): 0.8 s – 1.8 s, detected at 1.8 s", "not a sweep",
		"only stormack/default reports acks: 6 ack messages per input record",
		"Alignment time vs backpressure: skipped — every system/variant has a single run", "barrier/aligned 12.5 ms")
}

func TestReportSweepFixture(t *testing.T) {
	t.Parallel()
	rep, out := generateFixture(t, "sweep")
	for _, name := range []string{"recovery-vs-param", "throughput-vs-param", "latency-p99-vs-param"} {
		checkPNG(t, filepath.Join(out, name+".png"))
		golden(t, out, name+".csv", "sweep")
	}
	rec := readCSV(t, filepath.Join(out, "recovery-vs-param.csv"))
	xs := column(t, rec, "barrier/aligned", "x")
	if strings.Join(xs, " ") != "1 2 5 10" {
		t.Errorf("durations must map to seconds on the x axis: %v", xs)
	}
	med := column(t, rec, "lineage/parallel", "median")
	if num(t, med[0]) >= num(t, med[2]) {
		t.Errorf("lineage recovery should grow with the interval: %v", med)
	}
	if null := column(t, rec, "barrier/aligned", "null"); null[3] != "3" || column(t, rec, "barrier/aligned", "median")[3] != "" {
		t.Errorf("barrier at 10s never recovered: null %v", null)
	}
	checkSummaryHas(t, out, "![Recovery time vs the swept parameter](recovery-vs-param.png)", "| barrier/aligned checkpoint-interval=10s | 3 | never |")
	if len(rep.Files) != 7 {
		t.Errorf("files %v", rep.Files)
	}
}

func TestReportSkipsCorruptRuns(t *testing.T) {
	t.Parallel()
	dir := copyTree(t, filepath.Join("testdata", "compare"))
	entries, _ := os.ReadDir(dir)
	// Keep two runs (rendering is the slow part) and damage one.
	for _, e := range entries[2:] {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, entries[1].Name(), "timeseries.csv")
	if err := os.WriteFile(bad, []byte("t_s,committed\n0,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Generate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 1 || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].String(), bad) {
		t.Fatalf("runs %d, problems %v; want the corrupt file named", rep.Runs, rep.Problems)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report", "summary.md"))
	if !strings.Contains(string(md), "skipped unreadable results") || !strings.Contains(string(md), bad) {
		t.Errorf("summary.md does not name the skipped file:\n%s", md)
	}
	checkPNG(t, filepath.Join(dir, "report", "throughput.png"))
}

func TestReportBadInput(t *testing.T) {
	if _, err := Generate(filepath.Join("testdata", "nope"), Options{}); err == nil || !os.IsNotExist(err) {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := Generate(t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "no results") {
		t.Errorf("empty folder: %v", err)
	}
}

func TestKeyLookup(t *testing.T) {
	cases := []struct {
		l    lookup
		keys map[string]any
		want string
	}{
		{lookupState, map[string]any{"checkpointStateBytesMax": 1.0, "checkpointStateBytesMean": 2.0}, "checkpointStateBytesMean"},
		{lookupState, map[string]any{"channel_state_bytes": 1.0}, ""},
		{lookupChannel, map[string]any{"unaligned": map[string]any{"overtaken_bytes_total": 3.0}}, "unaligned.overtaken_bytes_total"},
		{lookupAlignment, map[string]any{"alignment_buffered_bytes": 1.0, "align_duration_ns": 5e6}, "align_duration_ns"},
		{lookupAcks, map[string]any{"ack_timeouts": 1.0, "acker_msgs": 7.0}, "acker_msgs"},
		{lookupAcksPerRecord, map[string]any{"acks_per_record": 2.0}, "acks_per_record"},
		// The names the systems use today (barrier, snapshot, stormack).
		{lookupState, map[string]any{"checkpoint_state_bytes": dist(5)}, "checkpoint_state_bytes.mean"},
		{lookupChannel, map[string]any{"checkpoint_state_bytes": dist(5), "checkpoint_channel_state_bytes": dist(2)}, "checkpoint_channel_state_bytes.mean"},
		{lookupState, map[string]any{"state_bytes": dist(5), "channel_state_bytes": dist(2)}, "state_bytes.mean"},
		{lookupAlignment, map[string]any{"alignment_ms": dist(5), "alignment_buffered_records": map[string]any{"total": 3.0}}, "alignment_ms.mean"},
		{lookupAcks, map[string]any{"ack_messages": 10.0, "ack_messages_per_tree": 3.0, "acker_updates": 9.0}, "ack_messages"},
		{lookupAcksPerRecord, map[string]any{"ack_messages_per_tree": 3.0, "acker_state_bytes_per_tree": 3.0}, ""},
		{lookupState, map[string]any{"checkpoint_bytes": 100.0, "checkpoints": 4.0}, "checkpoint_bytes/checkpoints"},
		{lookupState, map[string]any{"acker_state_bytes_peak": 100.0}, ""},
	}
	for _, tc := range cases {
		r := fixtureRuns()[0].outcome()
		r.Result.SystemMetrics = tc.keys
		_, key, ok := tc.l.find(storedOf(r.Result))
		if key != tc.want || ok != (tc.want != "") {
			t.Errorf("%s in %v: got %q, want %q", tc.l.what, tc.keys, key, tc.want)
		}
	}
	if ms, ok := toMillis("align_duration_ns", 5e6); ms != 5 || !ok {
		t.Errorf("toMillis ns: %v", ms)
	}
	if ms, ok := toMillis("alignment_time_s", 0.25); ms != 250 || !ok {
		t.Errorf("toMillis s: %v", ms)
	}
}

// A system committing once per second reads as a flat rate; a commit that
// comes late makes a longer, lower step, never a spike.
func TestRateStepsBurstyCommits(t *testing.T) {
	r := storedOf(fixtureRuns()[0].outcome().Result)
	r.Result.Recoveries = nil
	r.Result.Config.CommitCycleS = 1
	r.Result.AppendedRecords, r.Result.ExpectedEffects = 1, 1
	for i := range 60 {
		row := sweep.SeriesRow{T: float64(i) / 10}
		// A burst of 100 effects at the end of every second, except that
		// the one due at 2.9 s comes at 3.5 s with 0.6 s more of input
		// (160), and the next one (3.9 s) has the rest of its second (40).
		switch {
		case i == 35:
			row.Committed = 160
		case i == 39:
			row.Committed = 40
		case i%10 == 9 && i != 29:
			row.Committed = 100
		}
		r.Series = append(r.Series, row)
	}
	r.Result.Config.DurationS = 6
	starts, lens, rates := rateSteps(r)
	if len(starts) != 6 {
		t.Fatalf("%d steps (%v), want 6: one per commit", len(starts), starts)
	}
	for i := range starts {
		if math.Abs(rates[i]-100) > 1e-9 {
			t.Errorf("step at %v s (%v s long): %v records/s, want a flat 100", starts[i], lens[i], rates[i])
		}
	}
	// A continuous sink (commits in every bucket) gets 1 s steps.
	r.Result.Config.CommitCycleS = 0
	for i := range r.Series {
		r.Series[i].Committed = 10
	}
	starts, lens, rates = rateSteps(r)
	if len(starts) != 6 || lens[0] != 1 || math.Abs(rates[3]-100) > 1e-9 {
		t.Errorf("continuous: steps %v %v %v", starts, lens, rates)
	}
}

// Runs on different hardware are different scenarios: spare slots
// (--slots) split a group as the worker count does, so a run with them is
// never plotted as the same scenario under a label that omits them.
func TestSlotsSplitGroups(t *testing.T) {
	a := storedOf(fixtureRuns()[3].outcome().Result)
	b := storedOf(fixtureRuns()[3].outcome().Result)
	b.Result.Config.Slots = 6
	gs := groupRuns([]*sweep.StoredRun{a, b})
	if len(gs) != 2 {
		t.Fatalf("runs with and without spare slots make %d group(s), want 2", len(gs))
	}
	if strings.Contains(gs[0].Title, "slots") || !strings.Contains(gs[1].Title, "workers, 6 slots each") {
		t.Errorf("titles %q and %q: want the slots named only where given", gs[0].Title, gs[1].Title)
	}
}

// Run labels hold only what differs between the runs: the variant when
// one system is swept, and the options whose values differ, in natural
// order (500ms before 1s); the system goes into the title.
func TestRunLabelsByDifference(t *testing.T) {
	var runs []*sweep.StoredRun
	for _, v := range []string{"unaligned", "aligned"} {
		for _, iv := range []string{"1s", "500ms"} {
			r := storedOf(fixtureRuns()[3].outcome().Result)
			r.Result.Variant = v
			r.Result.Config.SystemOpts = map[string]string{"checkpoint-interval": iv, "sink": "2pc", "max-concurrent-checkpoints": "1"}
			runs = append(runs, r)
		}
	}
	g := groupRuns(runs)[0]
	want := []string{"aligned checkpoint-interval=500ms", "aligned checkpoint-interval=1s", "unaligned checkpoint-interval=500ms", "unaligned checkpoint-interval=1s"}
	if strings.Join(g.Labels, "|") != strings.Join(want, "|") {
		t.Errorf("labels %q, want %q", g.Labels, want)
	}
	if !strings.HasPrefix(g.Title, "barrier, ") {
		t.Errorf("title %q does not name the common system", g.Title)
	}
	// Colour by interval, marker by variant: four distinct pairs.
	seen := map[[2]int]bool{}
	for i := range g.Runs {
		seen[[2]int{g.Colors[i], g.Marks[i]}] = true
	}
	if !g.Shared || len(seen) != 4 || g.Colors[0] != g.Colors[2] || g.Marks[0] != g.Marks[1] {
		t.Errorf("colours %v marks %v shared %v", g.Colors, g.Marks, g.Shared)
	}
	// Options of different systems are not differences.
	a, b := storedOf(fixtureRuns()[0].outcome().Result), storedOf(fixtureRuns()[1].outcome().Result)
	a.Result.Config.SystemOpts = map[string]string{"x": "1"}
	b.Result.Config.SystemOpts = map[string]string{"ack-timeout": "30s"}
	if l := runLabels([]*sweep.StoredRun{a, b}); l[0] != "none/default" || l[1] != "stormack/default" {
		t.Errorf("compare labels %q", l)
	}
}
