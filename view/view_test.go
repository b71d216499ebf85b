package view

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/trace"
)

var barrierFixture = fixture{checkpoints: 5, crashAt: 3e9, from: 5e8, to: 45e8}

// The page's data are the trace's lanes and records and one history row per
// checkpoint the run triggered, whether or not it falls in the window.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	h, recs, events := barrierFixture.write(t, dir)
	p, err := Load(dir, "the summary")
	if err != nil {
		t.Fatal(err)
	}
	d := p.Diagram
	if len(d.Lanes) != len(h.Processes) {
		t.Errorf("%d lanes, want %d (the header's processes)", len(d.Lanes), len(h.Processes))
	}
	want := map[string]int{}
	for _, r := range recs {
		want[r.Type]++
	}
	if len(d.Msgs) != want[trace.TypeMsg] || len(d.Events) != want[trace.TypeEvent] || len(d.Counts) != want[trace.TypeCount] || len(d.Faults) != want[trace.TypeFault] {
		t.Errorf("msgs/events/counts/faults %d/%d/%d/%d, want %v", len(d.Msgs), len(d.Events), len(d.Counts), len(d.Faults), want)
	}
	for _, m := range d.Msgs {
		if m[2] < 0 || m[3] < 0 {
			t.Fatalf("message %v on no lane: every fixture process is in the header", m)
		}
	}
	triggered := 0
	for _, e := range events {
		if e.Kind == "checkpoint_triggered" {
			triggered++
		}
	}
	if p.History.Unit != "checkpoint" || len(p.History.Rows) != triggered {
		t.Fatalf("history %q with %d rows, want checkpoint with %d", p.History.Unit, len(p.History.Rows), triggered)
	}
	statuses := map[string]int{}
	for _, u := range p.History.Rows {
		statuses[u.Status]++
	}
	if statuses["aborted"] != 1 || statuses["completed"] != triggered-1 {
		t.Errorf("statuses %v, want 1 aborted (the crash's) and the rest completed", statuses)
	}
	// Checkpoint 1: count/1 got its first barrier 2 ms after the trigger and
	// aligned for 1 ms, buffering 100 records.
	var c1 *Unit
	for i := range p.History.Rows {
		if p.History.Rows[i].ID == 1 {
			c1 = &p.History.Rows[i]
		}
	}
	var task *Task
	for i := range c1.Tasks {
		if c1.Tasks[i].Proc == "count/1" {
			task = &c1.Tasks[i]
		}
	}
	if task == nil || task.StartDelayNS != 2e6 || task.AlignmentNS != 1e6 || task.Buffered != 100 || c1.DurationNS != 10e6 || c1.Bytes != 4096 {
		t.Errorf("checkpoint 1: %+v, count/1 %+v", c1, task)
	}
	if len(d.Phases) != 4 || d.Phases[0].Label != "detected" || d.Phases[0].AtNS != 4e9 || d.Phases[3].Label != "caught up" {
		t.Errorf("phases %+v, want detected at 4 s ... caught up", d.Phases)
	}
}

// run.html must open from file:// with no network: nothing it loads may
// name a URL, and the data must be inlined.
func TestRenderSelfContained(t *testing.T) {
	dir := t.TempDir()
	barrierFixture.write(t, dir)
	path, err := Write(dir, "barrier/aligned on wordcount")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if loads := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?[a-z]*:?//|@import|url\(\s*["']?(https?:)?//`).FindAllString(page, -1); len(loads) > 0 {
		t.Errorf("the page loads from elsewhere: %q", loads)
	}
	for _, want := range []string{`"lanes":[{"name":"coordinator"`, "barrier/aligned on wordcount", "uPlot", "Content-Security-Policy"} {
		if !strings.Contains(page, want) {
			t.Errorf("run.html lacks %q", want)
		}
	}
	if strings.Count(page, "<script") != 4 {
		t.Errorf("%d scripts, want 4 inline ones (uPlot, data, common, view)", strings.Count(page, "<script"))
	}
}

// A folder without trace.jsonl is refused with ErrNotTraced, which the
// command reports as bad input.
func TestNotTraced(t *testing.T) {
	dir := t.TempDir()
	barrierFixture.write(t, dir)
	if err := os.Remove(filepath.Join(dir, TraceFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, ""); !errors.Is(err, ErrNotTraced) {
		t.Errorf("err %v, want ErrNotTraced", err)
	}
}

// The budget: every embedded asset together under 300 KB.
func TestAssetsBudget(t *testing.T) {
	total := len(uplotJS) + len(uplotCSS) + len(viewCSS) + len(commonJS) + len(viewJS) + len(indexJS)
	err := fs.WalkDir(pageTemplates, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := pageTemplates.ReadFile(path)
			total += len(b)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(uplotJS) == 0 || total > 300<<10 {
		t.Errorf("embedded assets %d bytes (uPlot %d), want some, at most %d", total, len(uplotJS), 300<<10)
	}
	t.Logf("embedded assets: %d bytes", total)
}

func withBytes(e engine.Event, b int64) engine.Event {
	e.Bytes = b
	return e
}

// Each system's units: which events open, close and abort them.
func TestHistoryUnits(t *testing.T) {
	ev := func(ts int64, proc, kind string, id, value int64) engine.Event {
		return engine.Event{Time: engine.Time(ts), Proc: proc, Kind: kind, ID: id, Value: value}
	}
	for _, tc := range []struct {
		system string
		events []engine.Event
		unit   string
		want   []Unit // ID, Status, StartNS, EndNS, DurationNS, Bytes, InFlightBytes, Tasks
	}{
		{"lineage", []engine.Event{ev(1e9, "driver", "batch_cut", 0, 100), ev(1.3e9, "driver", "batch_committed", 0, 3e8), ev(2e9, "driver", "batch_cut", 1, 100)},
			"batch", []Unit{{ID: 0, Status: "completed", StartNS: 1e9, EndNS: 1.3e9, DurationNS: 3e8}, {ID: 1, Status: "open", StartNS: 2e9}}},
		{"trident", []engine.Event{ev(10, "mbc/0", "batch_started", 1, 0), ev(110, "mbc/0", "batch_committed", 1, 0)},
			"batch", []Unit{{ID: 1, Status: "completed", StartNS: 10, EndNS: 110, DurationNS: 100}}},
		// kstreams' ids are threads: thread 3's offsets open its
		// transaction, the broker's commit or abort closes it, the next
		// offsets open the next one; thread 4's interleave.
		{"kstreams", []engine.Event{ev(5, "thread/1.1", "ks_txn_offsets", 3, 0), ev(6, "thread/1.1", "ks_txn_offsets", 3, 0), ev(7, "thread/1.2", "ks_txn_offsets", 4, 0),
			ev(9, "broker", "ks_txn_aborted", 3, 0), ev(10, "thread/1.1", "ks_txn_offsets", 3, 0), ev(12, "broker", "ks_txn_committed", 4, 4), ev(13, "broker", "ks_txn_committed", 3, 2)},
			"transaction", []Unit{{ID: 1, Status: "aborted", StartNS: 5, EndNS: 9, DurationNS: 4}, {ID: 2, Status: "completed", StartNS: 7, EndNS: 12, DurationNS: 5},
				{ID: 3, Status: "completed", StartNS: 10, EndNS: 13, DurationNS: 3}}},
		{"snapshot", []engine.Event{ev(1, "coordinator", "checkpoint_triggered", 1, 0), withBytes(ev(3, "p/0", "snapshot_write", 1, 0), 40), ev(9, "coordinator", "checkpoint_completed", 1, 7)},
			"checkpoint", []Unit{{ID: 1, Status: "completed", StartNS: 1, EndNS: 9, DurationNS: 7, Tasks: []Task{{Proc: "p/0", StartDelayNS: 2, AlignmentNS: -1, Buffered: -1, AckedNS: -1, Bytes: 40}}}}},
		// An unaligned checkpoint persists in-flight records as channel state.
		{"barrier", []engine.Event{ev(1, "coordinator", "checkpoint_triggered", 2, 0), withBytes(ev(9, "coordinator", "checkpoint_completed", 2, 8), 500),
			withBytes(ev(9, "coordinator", "checkpoint_channel_state", 2, 0), 120)},
			"checkpoint", []Unit{{ID: 2, Status: "completed", StartNS: 1, EndNS: 9, DurationNS: 8, Bytes: 500, InFlightBytes: 120}}},
		// Peer-to-peer snapshots record their completion only, with the duration.
		{"snapshot", []engine.Event{ev(10, "process/0", "snapshot_completed", 1, 4)},
			"checkpoint", []Unit{{ID: 1, Status: "completed", StartNS: 6, EndNS: 10, DurationNS: 4}}},
	} {
		t.Run(tc.system, func(t *testing.T) {
			k := unitsBySystem[tc.system]
			h := units(k, tc.events)
			if h.Unit != tc.unit || len(h.Rows) != len(tc.want) {
				t.Fatalf("%s with %d rows, want %s with %d", h.Unit, len(h.Rows), tc.unit, len(tc.want))
			}
			for i, u := range h.Rows {
				w := tc.want[i]
				if u.ID != w.ID || u.Status != w.Status || u.StartNS != w.StartNS || u.EndNS != w.EndNS || u.DurationNS != w.DurationNS ||
					u.Bytes != w.Bytes || u.InFlightBytes != w.InFlightBytes || len(u.Tasks) != len(w.Tasks) {
					t.Errorf("row %d: %+v, want %+v", i, u, w)
				}
				for j := range w.Tasks {
					if j < len(u.Tasks) && u.Tasks[j] != w.Tasks[j] {
						t.Errorf("row %d task %d: %+v, want %+v", i, j, u.Tasks[j], w.Tasks[j])
					}
				}
			}
		})
	}
}

// A kstreams transaction's messages are its thread's requests and their
// answers from the end of the thread's previous transaction to its own:
// the page numbers them with the row's id, over the requests' own ids.
func TestTagMsgs(t *testing.T) {
	ev := func(ts int64, proc, kind string, id int64) engine.Event {
		return engine.Event{Time: engine.Time(ts), Proc: proc, Kind: kind, ID: id}
	}
	// Rows, in the order they open: 1 = thread 3's first (0, 20], 2 =
	// thread 4's (0, 25], 3 = thread 3's second (20, 35], aborted.
	h := units(unitsBySystem["kstreams"], []engine.Event{
		ev(10, "thread/1.1", "ks_txn_offsets", 3), ev(15, "thread/1.2", "ks_txn_offsets", 4), ev(20, "broker", "ks_txn_committed", 3),
		ev(25, "broker", "ks_txn_committed", 4), ev(30, "thread/1.1", "ks_txn_offsets", 3), ev(35, "broker", "ks_txn_aborted", 3)})
	d := &Diagram{Lanes: []Lane{{Name: "broker"}, {Name: "thread/1.1"}, {Name: "thread/1.2"}},
		Kinds: []string{"produce", "produce_ack", "commit_txn", "end_txn_ack", "fetch", "txn_offsets"}}
	const broker, th3, th4 = 0, 1, 2
	cases := []struct {
		t, from, to, kind, id int64
		want                  int64
		why                   string
	}{
		{5, th3, broker, 0, 41, 1, "a write before the first commit"},
		{6, broker, th3, 1, 41, 1, "its answer, to the thread"},
		{18, th3, broker, 2, 0, 1, "the commit request"},
		{20, broker, th3, 3, 0, 1, "the answer sent as the commit ends"},
		{21, th3, broker, 0, 42, 3, "the first write after the commit: the next transaction"},
		{40, th3, broker, 0, 43, 0, "after the abort: no transaction recorded yet"},
		{12, th3, broker, 4, 99, 99, "a fetch is no part of a transaction: its id stays"},
		{14, th4, broker, 5, 7, 2, "the other thread's offsets (their id a generation)"},
		{26, th4, broker, 0, 44, 0, "past the other thread's last commit"},
		{8, -1, broker, 0, 45, 0, "from no lane"},
	}
	for _, c := range cases {
		d.Msgs = append(d.Msgs, [7]int64{c.t, c.t + 1, c.from, c.to, c.kind, c.id, 1})
	}
	h.tagMsgs(d)
	for i, c := range cases {
		if got := d.Msgs[i][5]; got != c.want {
			t.Errorf("%s: unit %d, want %d", c.why, got, c.want)
		}
	}
}

// Stormack's ack trees are the trace's control messages grouped by root id;
// a tree with a message never received stays open.
func TestAckTrees(t *testing.T) {
	msg := func(ts, recv int64, id int64) trace.Record {
		return trace.Record{Type: trace.TypeMsg, T: ts, Recv: recv, From: "bolt/0", To: "acker/0", Kind: "ack", ID: id, Ctrl: true, Bytes: 24}
	}
	h := ackTrees([]trace.Record{msg(1, 3, 7), msg(2, 0, 8), msg(4, 9, 7), {Type: trace.TypeMsg, T: 5, Recv: 6, Kind: "tuple"}})
	if len(h.Rows) != 2 {
		t.Fatalf("%d trees, want 2", len(h.Rows))
	}
	if r := h.Rows[0]; r.ID != 7 || r.Status != "closed" || r.StartNS != 1 || r.EndNS != 9 || len(r.Tasks) != 2 || r.Bytes != 48 {
		t.Errorf("tree 7: %+v", r)
	}
	if r := h.Rows[1]; r.ID != 8 || r.Status != "open" {
		t.Errorf("tree 8: %+v, want open (its only message never arrived)", r)
	}
}

// index.html lists the runs with their views and inlines the report's CSVs.
func TestWriteIndex(t *testing.T) {
	out := t.TempDir()
	csv := "series,t_s,throughput_rps\nbarrier/aligned,0,10\nbarrier/aligned,0.1,20\n"
	if err := os.WriteFile(filepath.Join(out, "throughput.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	path, err := WriteIndex(out, "report of 2 runs", []IndexRun{{Name: "r1", Href: "../r1/run.html", Title: "barrier"}, {Name: "r2", Title: "none"}}, []string{"throughput.csv"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{`"href":"../r1/run.html"`, `"name":"throughput.csv"`, `["barrier/aligned","0.1","20"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
}
