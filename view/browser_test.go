//go:build browser

// The browser tests open the generated pages in headless Chromium (Debian's
// chromium package) through chromedp and check what a user sees: no console
// errors, no request leaving the machine, one lane per process, one history
// row per checkpoint (batch, transaction) of run.json, a click on a
// checkpoint highlighting its messages, zoom changing the visible window.
// They run as their own CI step (.ci/run):
//
//	CI=true go test -tags browser -run Browser ./view/
//
// Outside CI a missing browser skips with a message; under CI=true it fails.
// FTBENCH_SCREENSHOTS=DIR keeps the screenshots (docs/img takes its
// pictures from there); otherwise they go to the test's temporary folder.
package view

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"ftbench/trace"
)

// collector keeps what the page did that a test must see: requests and
// errors, from the browser's event loop (hence the lock).
type collector struct {
	mu       sync.Mutex
	requests []string
	errors   []string
}

func (c *collector) on(ev any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		c.requests = append(c.requests, e.Request.URL)
	case *runtime.EventExceptionThrown:
		msg := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
		c.errors = append(c.errors, "exception: "+msg)
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, string(a.Value))
			}
			c.errors = append(c.errors, "console.error: "+strings.Join(parts, " "))
		}
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			c.errors = append(c.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	}
}

// check fails t on any error and any request other than file: and data:.
func (c *collector) check(t *testing.T, page string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.errors {
		t.Errorf("%s: %s", page, e)
	}
	for _, u := range c.requests {
		if !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") && u != "about:blank" {
			t.Errorf("%s: request leaves the page: %s", page, u)
		}
	}
	c.requests, c.errors = nil, nil
}

// browser starts headless Chromium for the test, or skips (fails under
// CI=true) when there is none.
func browser(t *testing.T) (context.Context, *collector) {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		path, err = exec.LookPath("chromium-browser")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no chromium on PATH (apt-get install -y chromium): the browser tests cannot run")
		}
		t.Skip("no chromium on PATH: install Debian's chromium package to run the browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 1000))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	col := &collector{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(col.on))
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", path, err)
	}
	return ctx, col
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func shotDir(t *testing.T) string {
	if d := os.Getenv("FTBENCH_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func screenshot(t *testing.T, ctx context.Context, sel, path string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot %s: %v", sel, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// want is what a run's page must show, computed from its files, not from
// the page's code.
type want struct {
	lanes int
	rows  int // -1: not checked
	// closedRows: rows counts the units that ended (run.json has no
	// figure for the ones open at the end).
	closedRows bool
	// msgs counts per id the messages on known lanes of the kinds that
	// carry the history's ids, which a click on that id's row must
	// highlight.
	msgs map[int64]int
}

func wantOf(t *testing.T, dir string) want {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, recs, err := trace.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		System    string `json:"system"`
		Processes []struct {
			Name string `json:"name"`
		} `json:"processes"`
		SystemMetrics map[string]json.RawMessage `json:"system_metrics"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	w := want{lanes: len(h.Processes), rows: -1, msgs: map[int64]int{}}
	if run.Processes != nil {
		w.lanes = len(run.Processes)
	}
	num := func(keys ...string) int {
		n := 0
		for _, k := range keys {
			var v float64
			if err := json.Unmarshal(run.SystemMetrics[k], &v); err != nil {
				t.Fatalf("run.json system_metrics.%s: %v", k, err)
			}
			n += int(v)
		}
		return n
	}
	switch run.System {
	case "barrier":
		var cps []json.RawMessage
		if err := json.Unmarshal(run.SystemMetrics["checkpoints"], &cps); err != nil {
			t.Fatalf("run.json system_metrics.checkpoints: %v", err)
		}
		w.rows = len(cps)
	case "snapshot":
		if _, ok := run.SystemMetrics["checkpoints_aborted"]; ok {
			w.rows = num("snapshots_taken", "checkpoints_aborted")
		} else { // bank-p2p: snapshots, none aborted
			w.rows = num("snapshots_requested")
		}
	case "lineage":
		w.rows = num("batches")
	case "trident":
		w.rows = num("batches_started")
	case "kstreams":
		w.rows, w.closedRows = num("transactions_committed", "transactions_aborted"), true
	}
	lane := map[string]bool{}
	for _, p := range h.Processes {
		lane[p.Name] = true
	}
	kinds := unitsBySystem[run.System].msgKinds
	if run.System == "stormack" {
		kinds = treeMsgs
	}
	if unitsBySystem[run.System].owner != "" {
		// The messages carry the requests' own ids; the page numbers them
		// with their unit's (tagMsgs, checked in TestTagMsgs).
		p, err := Load(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Diagram.Msgs {
			if m[5] != 0 && m[2] >= 0 && m[3] >= 0 && has(kinds, p.Diagram.Kinds[m[4]]) {
				w.msgs[m[5]]++
			}
		}
		return w
	}
	for _, r := range recs {
		if r.Type == trace.TypeMsg && r.ID != 0 && has(kinds, r.Kind) && lane[r.From] && lane[r.To] {
			w.msgs[r.ID]++
		}
	}
	return w
}

// checkRun opens dir/run.html and checks it against w; name prefixes the
// screenshots. It returns the id it clicked (0: none had messages).
func checkRun(t *testing.T, ctx context.Context, col *collector, dir, name string, w want, needHighlight bool) {
	t.Helper()
	checkPage(t, ctx, col, "file://"+filepath.Join(dir, PageFile), name, w, needHighlight)
}

// checkPage is checkRun on a page address, which may carry a fragment
// (#window=FROM-TO&select=ID) choosing the first screenshot's moment.
func checkPage(t *testing.T, ctx context.Context, col *collector, page, name string, w want, needHighlight bool) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("#charts"))); err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	shots := shotDir(t)
	if n := eval[int](t, ctx, `document.querySelectorAll('#diagram g.lane').length`); n != w.lanes {
		t.Errorf("%s: %d lanes, want %d (run.json's processes)", name, n, w.lanes)
	}
	rows := eval[[]float64](t, ctx, `Array.from(document.querySelectorAll('#history tr.unit')).map(r => +r.dataset.id)`)
	if w.closedRows {
		// run.json counts the transactions that ended; one still open
		// when the run stopped is a row of its own.
		if n := eval[int](t, ctx, `document.querySelectorAll('#history tr.unit:not(.status-open)').length`); n != w.rows {
			t.Errorf("%s: %d ended history rows, want %d (run.json)", name, n, w.rows)
		}
	} else if w.rows >= 0 && len(rows) != w.rows {
		t.Errorf("%s: %d history rows, want %d (run.json)", name, len(rows), w.rows)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#charts .uplot').length`); n != 3 {
		t.Errorf("%s: %d charts, want 3 (throughput, lag, latency)", name, n)
	}
	screenshot(t, ctx, "#diagram-figure", filepath.Join(shots, name+"-diagram.png"))

	// Hover over a protocol message: the tip names its kind and times.
	tip := eval[[]string](t, ctx, `(() => {
		const m = document.querySelector('#diagram .msg.ctrl');
		if (!m) return ['', ''];
		m.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: 10, clientY: 10}));
		const tip = document.getElementById('tip');
		return [m.getAttribute('class'), tip.hidden ? '(hidden)' : tip.textContent];
	})()`)
	if tip[0] == "" {
		t.Errorf("%s: no protocol message drawn in the whole window", name)
	} else if !strings.Contains(tip[1], "sent ") {
		t.Errorf("%s: hovering %q shows %q, want the message's kind and times", name, tip[0], tip[1])
	}

	// Zoom in: the visible window halves and stays inside the old one.
	before := eval[[]float64](t, ctx, `[+diagram.dataset.fromNs, +diagram.dataset.toNs]`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#zoom-in"))); err != nil {
		t.Fatal(err)
	}
	after := eval[[]float64](t, ctx, `[+diagram.dataset.fromNs, +diagram.dataset.toNs]`)
	if span, was := after[1]-after[0], before[1]-before[0]; math.Abs(span-was/2) > 2 || after[0] < before[0] || after[1] > before[1] {
		t.Errorf("%s: zoom in showed [%v, %v] after [%v, %v], want half of it", name, after[0], after[1], before[0], before[1])
	}
	label := eval[string](t, ctx, `document.getElementById('range').textContent`)
	if !strings.Contains(label, "window") {
		t.Errorf("%s: range label %q", name, label)
	}

	// Click the first row whose id has control messages: every one of them
	// is highlighted once the whole window is shown again.
	var id int64
	for _, r := range rows {
		if w.msgs[int64(r)] > 0 {
			id = int64(r)
			break
		}
	}
	if id == 0 {
		if needHighlight {
			t.Errorf("%s: no history row has control messages in the trace (ids %v)", name, ids(w.msgs))
		} else {
			t.Logf("%s: no history row has control messages with its id in the trace; highlight not checked", name)
		}
	} else {
		eval[bool](t, ctx, fmt.Sprintf(`document.querySelector('#history tr.unit[data-id="%d"]').click(), true`, id))
		screenshot(t, ctx, "#diagram-figure", filepath.Join(shots, name+"-selected.png"))
		screenshot(t, ctx, "#history-section", filepath.Join(shots, name+"-history.png"))
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#zoom-reset"))); err != nil {
			t.Fatal(err)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll('#diagram .msg.hl').length`); n != w.msgs[id] {
			t.Errorf("%s: clicking %d highlighted %d messages, want its %d", name, id, n, w.msgs[id])
		}
	}
	if err := chromedp.Do(ctx, chromedp.Sleep(100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	full, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(shots, name+"-page.png"), full, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	col.check(t, name)
}

func ids(m map[int64]int) []int64 {
	var out []int64
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	if len(out) > 10 {
		out = out[:10]
	}
	return out
}

// The fixture's page: a barrier run with a crash in the window.
func TestBrowserFixture(t *testing.T) {
	ctx, col := browser(t)
	dir := t.TempDir()
	barrierFixture.write(t, dir)
	if _, err := Write(dir, "fixture summary"); err != nil {
		t.Fatal(err)
	}
	w := wantOf(t, dir)
	checkRun(t, ctx, col, dir, "fixture", w, true)
	for sel, what := range map[string]string{"#diagram rect.alignment": "alignment bars", "#diagram rect.fault": "the crash's band", "#diagram .ev.recover": "the restore"} {
		if n := eval[int](t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)); n == 0 {
			t.Errorf("fixture: no %s (%s)", what, sel)
		}
	}
}

// Every system and variant, traced by the real recorder with a crash: the
// acceptance runs of issue 34. bench is built from this tree.
func TestBrowserRuns(t *testing.T) {
	ctx, col := browser(t)
	root := t.TempDir()
	bench := filepath.Join(root, "bench")
	if out, err := exec.Command("go", "build", "-o", bench, "ftbench/cmd/bench").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, _ := exec.Command(bench, "run", "--help").CombinedOutput(); !strings.Contains(string(out), "--trace") {
		t.Fatal("bench run has no --trace: the trace recorder (issue 34, item 1) is not in this tree, so no run can be viewed")
	}
	runs := filepath.Join(root, "results")
	for _, tc := range []struct {
		name string
		args []string
		// needHighlight: the protocol's messages carry the history's
		// ids (checkpoint ids on barriers and markers, txids on Trident's
		// batch tuples ...), or the page gives them theirs (kstreams'
		// transactions).
		needHighlight bool
		// crash: the run has one. Lai-Yang and Mattern run on bank-p2p
		// only, whose model has no failures (bench refuses a fault).
		crash bool
	}{
		{"barrier-aligned", []string{"--system", "barrier"}, true, true},
		{"barrier-unaligned", []string{"--system", "barrier", "--variant", "unaligned"}, true, true},
		{"snapshot-cl", []string{"--system", "snapshot", "--variant", "cl"}, true, true},
		{"snapshot-lai-yang", []string{"--system", "snapshot", "--variant", "lai-yang", "--workload", "bank-p2p"}, true, false},
		{"snapshot-mattern", []string{"--system", "snapshot", "--variant", "mattern", "--workload", "bank-p2p"}, true, false},
		{"stormack", []string{"--system", "stormack"}, true, true},
		{"lineage", []string{"--system", "lineage"}, true, true},
		{"kstreams", []string{"--system", "kstreams"}, true, true},
		{"trident", []string{"--system", "trident"}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--trace", "--out", runs}, tc.args...)
			if tc.crash {
				args = append(args, "--fault", "crash")
			}
			if out, err := exec.Command(bench, args...).CombinedOutput(); err != nil {
				t.Fatalf("bench %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			dir, err := filepath.EvalSymlinks(filepath.Join(runs, "latest"))
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bench, "view", dir).CombinedOutput(); err != nil {
				t.Fatalf("bench view: %v\n%s", err, out)
			}
			checkRun(t, ctx, col, dir, tc.name, wantOf(t, dir), tc.needHighlight)
			if n := eval[int](t, ctx, `document.querySelectorAll('#diagram rect.fault').length`); tc.crash && n == 0 {
				t.Errorf("%s: no fault band in the diagram (the crash is outside the trace window?)", tc.name)
			}
		})
	}
	// The report over all of them: index.html links every run's view.
	if out, err := exec.Command(bench, "report", runs).CombinedOutput(); err != nil {
		t.Fatalf("bench report: %v\n%s", err, out)
	}
	page := "file://" + filepath.Join(runs, "report", IndexFile)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS("#tables"))); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#runs a').length`); n != 9 {
		t.Errorf("index.html links %d run views, want 9", n)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#tables .uplot').length`); n == 0 {
		t.Error("index.html draws no chart")
	}
	screenshot(t, ctx, "body", filepath.Join(shotDir(t), "report-index.png"))
	col.check(t, "report/index.html")
}

// Pages of runs made by hand: FTBENCH_VIEW_DIRS="DIR1 DIR2#window=9-9.6 ..." checks each
// traced run folder's run.html (written by bench view) like the runs
// above; the docs' screenshots come from here.
func TestBrowserDirs(t *testing.T) {
	dirs := strings.Fields(os.Getenv("FTBENCH_VIEW_DIRS"))
	if len(dirs) == 0 {
		t.Skip("FTBENCH_VIEW_DIRS not set")
	}
	ctx, col := browser(t)
	for i, entry := range dirs {
		// DIR or DIR#window=FROM-TO&select=ID: the first screenshot shows
		// that moment.
		dir, frag, _ := strings.Cut(entry, "#")
		name := fmt.Sprintf("%s-%d", filepath.Base(dir), i)
		page := "file://" + filepath.Join(dir, PageFile)
		if frag != "" {
			page += "#" + frag
		}
		checkPage(t, ctx, col, page, name, wantOf(t, dir), false)
	}
}
