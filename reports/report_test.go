package reports

import (
	"bytes"
	"encoding/csv"
	"flag"
	"image/png"
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
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if s := img.Bounds().Size(); s.X != 1200 || s.Y != 800 {
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

func TestReportCompareFixture(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	rep, err := Generate(filepath.Join("testdata", "compare"), Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 6 {
		t.Fatalf("read %d runs, want 6", rep.Runs)
	}
	for _, name := range []string{"throughput", "latency", "delivery", "checkpoint-size", "acks-per-record", "alignment-vs-backpressure"} {
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
	// Throughput is smoothed over a window of whole commit periods.
	if w := column(t, tp, "none/default", "window_s"); w[0] != "1" {
		t.Errorf("smoothing window %v", w[0])
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
	acks := readCSV(t, filepath.Join(out, "acks-per-record.csv"))
	if v := column(t, acks, "stormack/default", "acks_per_record"); len(v) != 1 || num(t, v[0]) != 6 || len(acks) != 2 {
		t.Errorf("acks per record %v (rows %v)", v, acks)
	}
	al := readCSV(t, filepath.Join(out, "alignment-vs-backpressure.csv"))
	if v := column(t, al, "barrier/aligned", "alignment_ms"); len(v) != 1 || v[0] != "12.5" {
		t.Errorf("alignment %v", v)
	}

	md, err := os.ReadFile(filepath.Join(out, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"![Throughput over time](throughput.png)", "(delivery.csv)", "| none/default | 1 |", "at-least-once",
		"crash op=count/0 (down 1s): 0.8 s – 1.8 s, detected at 1.8 s", "not a sweep", "![Alignment time vs backpressure]"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
}

func TestReportSweepFixture(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	rep, err := Generate(filepath.Join("testdata", "sweep"), Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
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
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	for _, want := range []string{"![Recovery time vs the swept parameter](recovery-vs-param.png)", "| barrier/aligned checkpoint-interval=10s | 3 | never |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
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

// A system committing once per second reads as a flat rate, not spikes.
func TestSmoothingBurstyCommits(t *testing.T) {
	r := storedOf(fixtureRuns()[0].outcome().Result)
	r.Result.Recoveries = nil
	for i := range 60 {
		row := sweep.SeriesRow{T: float64(i) / 10}
		if i%10 == 3 {
			row.Committed, row.CommittedPerS = 100, 1000
		}
		r.Series = append(r.Series, row)
	}
	r.Result.Config.DurationS = 6
	if p := commitPeriod(r); p != 1 {
		t.Fatalf("commit period %v, want 1", p)
	}
	if w := smoothingWindow(r); w != 1 {
		t.Fatalf("window %v, want 1", w)
	}
	raw := make([]float64, len(r.Series))
	for i, row := range r.Series {
		raw[i] = row.CommittedPerS
	}
	for i, v := range movingAverage(raw, 10)[5:55] {
		if math.Abs(v-100) > 1e-9 {
			t.Fatalf("smoothed[%d] = %v, want a flat 100", i+5, v)
		}
	}
	r.Series[13].Committed = 0 // irregular: median gap still 1 s
	if w := smoothingWindow(r); w != 1 {
		t.Errorf("window %v", w)
	}
}
