package chapter

import (
	"strings"
	"testing"

	"ftbench/capacity"
	"ftbench/harness"
)

// fake is a campaign whose every job produced a result that agrees with
// the seed: the base each test case breaks one figure of.
func fake(t *testing.T) *Results {
	t.Helper()
	jobs, err := Jobs(Quick)
	if err != nil {
		t.Fatal(err)
	}
	r := &Results{Caps: map[string]*capacity.Result{}, Runs: map[string]*harness.Result{}, Failed: map[string]string{}, Dirs: map[string]string{}}
	for _, j := range jobs {
		if j.Capacity {
			rate := 600000.0 // Spark and the others
			if j.Setup.ID == "storm-ack" {
				rate = 100000
			}
			if j.Measure == Cap1000 {
				rate /= 2 // Spark/Storm 6x at 100 B, 6x at 1000 B: changed below
			}
			if j.Measure == Cap1000 && j.Setup.ID == "storm-ack" {
				rate = 150000 // Spark/Storm 2x at 1000 B
			}
			r.Caps[j.ID] = &capacity.Result{CapacityRPS: &rate}
			r.Dirs[j.ID] = "runs/" + j.ID
			continue
		}
		res := &harness.Result{LatencyMS: harness.Latency{P50: 10, P99: 20}}
		switch j.Setup.System {
		case "lineage":
			res.LatencyMS = harness.Latency{P50: 600, P99: 900}
			res.Config.CommitCycleS = 0.5
		case "barrier", "kstreams", "trident":
			res.LatencyMS = harness.Latency{P50: 300, P99: 600}
		}
		res.Config.WorkloadOpts = j.Config.WorkloadOpts
		if j.Setup.System == "barrier" && j.Measure == Slow {
			// The straggler delays aligned barriers more than unaligned.
			delay := 500.0
			if j.Setup.Variant == "unaligned" {
				delay = 1
			}
			res.SystemMetrics = map[string]any{"alignment_ms": map[string]any{"max": 3.0}, "checkpoint_start_delay_ms": map[string]any{"max": delay}}
		}
		if j.Setup.System == "kstreams" {
			// Restore grows with the state, as a changelog rebuild does.
			restored := 1.0
			if j.Measure == StateLarge {
				restored = 3
			}
			res.Recoveries = []harness.Recovery{{Phases: &harness.Phases{RestoredS: &restored}}}
		}
		r.Runs[j.ID] = res
		r.Dirs[j.ID] = "runs/" + string(j.Measure) + "/x-" + j.ID
	}
	return r
}

// entry finds a setup's entry in a row of the built table.
func entry(t *testing.T, rows []Row, row, setup string) Entry {
	t.Helper()
	for _, r := range rows {
		if r.Name != row {
			continue
		}
		for _, c := range r.Cells {
			for _, e := range c.Entries {
				if e.Setup == setup {
					return e
				}
			}
		}
	}
	t.Fatalf("no entry for %s in row %s", setup, row)
	return Entry{}
}

func label(id string) string {
	for _, s := range Setups {
		if s.ID == id {
			return s.Label
		}
	}
	return ""
}

func TestBuildMarks(t *testing.T) {
	cases := []struct {
		name  string
		row   string
		setup string
		// breakIt changes the agreeing campaign; nil keeps it.
		breakIt func(r *Results)
		want    Mark
	}{
		{"exactly-once held", "Delivery semantics", "spark", nil, Agrees},
		{"exactly-once broken by a duplicate", "Delivery semantics", "spark",
			func(r *Results) { r.Runs["spark.crash"].Duplicates = 3 }, Disagrees},
		{"at-least-once allows duplicates", "Delivery semantics", "storm-ack",
			func(r *Results) { r.Runs["storm-ack.partition"].Duplicates = 9 }, Agrees},
		{"at-least-once broken by a loss", "Delivery semantics", "storm-ack",
			func(r *Results) { r.Runs["storm-ack.partition"].Lost = 1 }, Disagrees},
		{"no claim for acking off: unchecked", "Delivery semantics", "storm-noack",
			func(r *Results) { r.Runs["storm-noack.crash"].Lost = 100 }, Unchecked},
		{"Storm latency in milliseconds", "Latency", "storm-ack", nil, Agrees},
		{"Storm latency above another column's", "Latency", "storm-ack",
			func(r *Results) { r.Runs["ks-alos.latency"].LatencyMS.P50 = 2 }, Disagrees},
		{"Storm latency of half a second", "Latency", "storm-ack",
			func(r *Results) { r.Runs["storm-ack.latency"].LatencyMS.P50 = 500 }, Disagrees},
		{"Spark latency below its batch", "Latency", "spark",
			func(r *Results) { r.Runs["spark.latency"].LatencyMS.P50 = 20 }, Disagrees},
		{"Spark ahead of Storm, more at 100 B", "Throughput", "storm-ack", nil, Agrees},
		{"Storm ahead of Spark at 1000 B", "Throughput", "storm-ack",
			func(r *Results) { x := 400000.0; r.Caps["storm-ack.cap-grep1000"].CapacityRPS = &x }, Disagrees},
		{"Spark's output in micro-batches", "Processing model", "spark", nil, Agrees},
		{"Spark's output continuous", "Processing model", "spark",
			func(r *Results) { r.Runs["spark.latency"].Config.CommitCycleS = 0 }, Disagrees},
		{"changelog restore grows with state", "State management", "ks-eos", nil, Agrees},
		{"changelog restore flat", "State management", "ks-eos",
			func(r *Results) { *r.Runs["ks-eos.restore-large"].Recoveries[0].Phases.RestoredS = 1 }, Disagrees},
		{"unaligned relieves the alignment stall", "Backpressure", "flink-unaligned-2pc", nil, Agrees},
		{"unaligned waits as long as aligned", "Backpressure", "flink-unaligned-plain",
			func(r *Results) {
				r.Runs["flink-unaligned-plain.slow"].SystemMetrics["checkpoint_start_delay_ms"] = map[string]any{"max": 500.0}
			}, Disagrees},
		{"a missing run is not measured", "Delivery semantics", "spark",
			func(r *Results) { delete(r.Runs, "spark.partition"); r.Failed["spark.partition"] = "boom" }, NotMeasured},
		{"a search with no sustained rate is not measured", "Throughput", "trident",
			func(r *Results) { r.Caps["trident.cap-grep100"].CapacityRPS = nil }, NotMeasured},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := fake(t)
			if c.breakIt != nil {
				c.breakIt(r)
			}
			e := entry(t, Build(r), c.row, label(c.setup))
			if e.Mark != c.want {
				t.Errorf("mark %d (%s: %s), want %d", e.Mark, e.Text, e.Why, c.want)
			}
			if (e.Mark == Disagrees || e.Mark == NotMeasured) && e.Why == "" {
				t.Errorf("a %d mark says no why", e.Mark)
			}
		})
	}
}

// The page shows a disagreement and a missing figure as such, and every
// row, including the one no run can measure, fills every column.
func TestMarkdown(t *testing.T) {
	r := fake(t)
	r.Runs["spark.crash"].Duplicates = 3
	delete(r.Runs, "ks-eos.slow")
	delete(r.Dirs, "ks-eos.slow")
	r.Failed["ks-eos.slow"] = "boom"
	jobs, _ := Jobs(Quick)
	md := Markdown(Page{Command: "bench chapter --quick", Quick: true, Hardware: Hardware, Rows: Build(r), Papers: PaperFigures(r), Jobs: jobs, Res: r})
	for _, want := range []string{"**✗ disagrees:** claimed exactly-once", "not measured: ks-eos.slow failed: boom",
		"| **Unification with batch processing** | *seed:* “none", "(runs/crash/x-spark.crash)", "- [ks-eos.slow](#runs) — FAILED: boom"} {
		if !strings.Contains(md, want) {
			t.Errorf("chapter.md lacks %q", want)
		}
	}
	for _, row := range Build(r) {
		if len(row.Cells) != 4 {
			t.Fatalf("row %s has %d cells, want the seed's 4 columns", row.Name, len(row.Cells))
		}
		for i, c := range row.Cells {
			if c.Claim == "" || len(c.Entries) == 0 {
				t.Errorf("row %s, column %s: empty cell", row.Name, Columns[i])
			}
		}
	}
}

// The paper figures: the fitted one is marked, and ratios divide the
// right searches (Spark/Storm at 100 B is 6 in the fake campaign).
func TestPaperFigures(t *testing.T) {
	p := PaperFigures(fake(t))
	if !p[0].Fitted || p[1].Fitted {
		t.Errorf("fitted marks %v %v: want only the first", p[0].Fitted, p[1].Fitted)
	}
	if p[2].Measured != 6 || !p[2].Ok {
		t.Errorf("Spark/Storm at 100 B %g (ok %v), want 6", p[2].Measured, p[2].Ok)
	}
	r := fake(t)
	delete(r.Caps, "spark.cap-wordcount")
	if PaperFigures(r)[4].Ok {
		t.Error("grep/WordCount without the WordCount search is reported as measured")
	}
}

// The campaign's jobs: unique IDs, each latency run's search exists and
// comes first, every run on the profile, and an unknown profile refused.
func TestJobs(t *testing.T) {
	for _, s := range []Shape{Quick, Full} {
		jobs, err := Jobs(s)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, j := range jobs {
			if seen[j.ID] {
				t.Errorf("job %s twice", j.ID)
			}
			if j.HalfOf != "" && !seen[j.HalfOf] {
				t.Errorf("%s takes half of %s, which is not an earlier job", j.ID, j.HalfOf)
			}
			seen[j.ID] = true
			if !strings.Contains(j.Command(), "--hardware "+Hardware) {
				t.Errorf("%s: %s is not on the campaign's hardware", j.ID, j.Command())
			}
		}
	}
	if _, err := Jobs(Shape{Hardware: "nope"}); err == nil {
		t.Error("an unknown hardware profile is accepted")
	}
}

// chapter.html holds the same table as chapter.md: a disagreement marked
// with its reason, a failed job as not measured, each run folder linked,
// a traced run's explorer page linked as "view", and the page's text
// escaped (a claim or reason is data, not markup).
func TestHTML(t *testing.T) {
	r := fake(t)
	r.Runs["spark.crash"].Duplicates = 3
	r.Failed["ks-eos.slow"] = "boom <b>"
	delete(r.Runs, "ks-eos.slow")
	delete(r.Dirs, "ks-eos.slow")
	jobs, _ := Jobs(Quick)
	views := map[string]string{"spark.crash": "runs/crash/x-spark.crash/run.html"}
	b, err := HTML(Page{Command: "bench chapter --quick", Quick: true, Hardware: Hardware, Rows: Build(r), Papers: PaperFigures(r), Jobs: jobs, Res: r}, views)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`class="entry disagrees"`, "disagrees: claimed exactly-once", "not measured: ks-eos.slow failed: boom &lt;b&gt;",
		`<a href="runs/crash/x-spark.crash">spark.crash</a> <a class="view" href="runs/crash/x-spark.crash/run.html">view</a>`,
		"Unification with batch processing", "<th>Kafka Streams</th>", "default-src 'none'"} {
		if !strings.Contains(page, want) {
			t.Errorf("chapter.html lacks %q", want)
		}
	}
	if strings.Contains(page, "boom <b>") {
		t.Error("a failure reason reached the page unescaped")
	}
	if got, want := strings.Count(page, "<tr><td class=\"dim\""), len(Build(r)); got != want {
		t.Errorf("%d table rows, want the seed's %d", got, want)
	}
}
