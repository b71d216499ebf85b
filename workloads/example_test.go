// This file is the worked example of docs/workloads.md ("Adding a
// workload"): the page quotes its code blocks, and TestWorkloadPageQuotesThisFile
// fails when the two differ, so the page cannot rot silently.
package workloads_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	_ "ftbench/systems/all"
	"ftbench/workloads"
)

// --- page: workload ---

// clicks counts page views: source -> parse (drop bots, key by page) ->
// views (count per page) -> sink. One in eight clicks comes from a bot.
type clicks struct {
	seed  uint64
	pages uint64
	plan  workloads.Plan
}

const (
	clickBytes = 64 // a source record on the wire
	viewBytes  = 16 // a (page, count) record
	botEvery   = 8
)

func newClicks(seed uint64, opts map[string]string) (workloads.Workload, error) {
	pages, err := strconv.Atoi(opts["pages"])
	if err != nil || pages < 1 || pages > 1<<20 {
		return nil, fmt.Errorf("--pages=%q: want an integer from 1 to %d", opts["pages"], 1<<20)
	}
	w := &clicks{seed: engine.ChildSeed(seed, "workload/clicks"), pages: uint64(pages)}
	w.plan = workloads.Plan{Source: "source", Stages: []workloads.Stage{
		{
			Name:  "parse",
			Input: workloads.Forward,
			Cost: func(c *engine.CostModel, m engine.Msg) engine.Time {
				return c.RecordCPU + engine.Time(m.Size)*c.ScanPerByte
			},
			Fn: func(m engine.Msg, emit func(engine.Msg)) {
				h := w.hash(m.ID.Part, m.ID.Off)
				if h%botEvery == 0 {
					return // a bot: no effect
				}
				m.Key = (h >> 8) % w.pages
				m.Size = viewBytes
				emit(m)
			},
		},
		{
			Name:  "views",
			Input: workloads.Hash,
			Cost:  func(c *engine.CostModel, _ engine.Msg) engine.Time { return c.StateCPU },
			Update: func(state *int64, m engine.Msg, emit func(engine.Msg)) {
				*state++
				m.Val = *state
				emit(m)
			},
		},
		{
			Name:  "sink",
			Input: workloads.Forward,
			Cost:  func(c *engine.CostModel, _ engine.Msg) engine.Time { return c.SinkCPU },
			Sink:  true,
		},
	}}
	return w, nil
}

// hash is the click at (part, off): a pure function of the seed, the
// partition and the offset.
func (w *clicks) hash(part int32, off int64) uint64 {
	return engine.Mix64(w.seed ^ uint64(part)<<48 ^ uint64(off))
}

func (w *clicks) Name() string          { return "clicks" }
func (w *clicks) Plan() *workloads.Plan { return &w.plan }

func (w *clicks) Record(part int32, off int64) engine.Msg {
	return engine.Msg{ID: engine.EffectID{Part: part, Off: off}, Size: clickBytes}
}

func (w *clicks) CostPerRecord(c *engine.CostModel) map[string]engine.Time {
	kept := float64(botEvery-1) / botEvery // records that pass parse
	share := func(t engine.Time) engine.Time { return engine.Time(kept * float64(t)) }
	return map[string]engine.Time{
		"source": c.SourceRecord + c.SendCost(clickBytes),
		"parse":  c.RecordCPU + clickBytes*c.ScanPerByte + share(c.SendCost(viewBytes)),
		"views":  share(c.StateCPU + c.SendCost(viewBytes)),
		"sink":   share(c.SinkCPU),
	}
}

// --- page: register ---

func init() {
	workloads.Register(workloads.Factory{
		Name:     "clicks",
		Describe: "page views per page, bots filtered out (source, parse, views, sink)",
		Options: []workloads.Option{
			{Name: "pages", Default: "100", Usage: "number of distinct pages (clicks)"},
		},
		New: newClicks,
	})
}

// --- page: oracle test ---

// The oracle runs the plan sequentially; here it must agree with a count
// written without the plan.
func TestClicksOracle(t *testing.T) {
	w, err := workloads.New("clicks", 1, map[string]string{"pages": "10"})
	if err != nil {
		t.Fatal(err)
	}
	const parts, perPart = 2, 1000
	want := map[uint64]int64{}
	var effects int64
	for off := int64(0); off < perPart; off++ {
		for p := int32(0); p < parts; p++ {
			if h := w.(*clicks).hash(p, off); h%botEvery != 0 {
				want[(h>>8)%10]++
				effects++
			}
		}
	}
	_, total, final := workloads.Expected(w, []int64{perPart, perPart})
	if total != effects || len(final) != len(want) {
		t.Fatalf("oracle: %d effects over %d pages, want %d over %d", total, len(final), effects, len(want))
	}
	for page, n := range want {
		if final[page] != n {
			t.Errorf("page %d: oracle says %d views, want %d", page, final[page], n)
		}
	}
}

// --- page: harness test ---

// Every system runs the new workload through a crash and keeps its claim:
// the harness checks each committed effect and each page's final count
// against the oracle (stormack, at least once, may overcount).
func TestClicksUnderACrash(t *testing.T) {
	for _, system := range []string{"barrier", "lineage", "stormack", "snapshot"} {
		t.Run(system, func(t *testing.T) {
			cfg := harness.DefaultConfig()
			cfg.System, cfg.Workload = system, "clicks"
			cfg.WorkloadOpts = map[string]string{"pages": "50"}
			cfg.Duration = 4 * engine.Second
			cfg.Rate = 20_000
			cfg.Faults = []string{"crash"} // the worker of views/0, at 40%
			out, err := harness.Execute(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := out.Result
			exact := r.ClaimedGuarantee == "exactly-once"
			if r.ExitCode != harness.ExitOK || !r.ClaimHeld || r.ExpectedEffects == 0 || (exact && r.WrongKeys != 0) {
				t.Fatalf("exit %d, claim held %v, verdict %s, wrong keys %d of %d effects: %v",
					r.ExitCode, r.ClaimHeld, r.Verdict, r.WrongKeys, r.ExpectedEffects, r.Problems)
			}
		})
	}
}

// --- page: end ---

// The operators' names are what --cost OP.NAME=VALUE and fault specs name:
// views' state cost moves the capacity bound, and a name the workload does
// not have is bad input.
func TestClicksPerOperatorCost(t *testing.T) {
	cfg := harness.DefaultConfig()
	cfg.Workload = "clicks"
	before, err := harness.CapacityBound(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.CostOverride = []string{"views.state-cpu=40us"}
	after, err := harness.CapacityBound(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !(after < before) {
		t.Errorf("views.state-cpu=40us: bound %.0f records/s, before %.0f", after, before)
	}
	cfg.CostOverride = []string{"count.state-cpu=40us"}
	if _, err := harness.CapacityBound(cfg); !harness.IsInputError(err) || !strings.Contains(err.Error(), `no operator "count"`) {
		t.Errorf("count.state-cpu on clicks: %v, want bad input naming count", err)
	}
}

// Every Go block of docs/workloads.md is a part of this file, verbatim.
func TestWorkloadPageQuotesThisFile(t *testing.T) {
	page, err := os.ReadFile("../docs/workloads.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(page, -1)
	if len(blocks) < 4 {
		t.Fatalf("docs/workloads.md has %d Go blocks, want the 4 parts of this file", len(blocks))
	}
	for _, b := range blocks {
		if !strings.Contains(string(src), string(b[1])) {
			first, _, _ := strings.Cut(string(b[1]), "\n")
			t.Errorf("docs/workloads.md quotes code that workloads/example_test.go does not hold (block starting %q)", first)
		}
	}
	// The page's summary of the interface names its methods as declared.
	decl, err := os.ReadFile("workload.go")
	if err != nil {
		t.Fatal(err)
	}
	iface := regexp.MustCompile("(?s)\ntype Workload interface \\{\n(.*?)\n\\}").FindSubmatch(page)
	if iface == nil {
		t.Fatal("docs/workloads.md does not show type Workload interface")
	}
	for _, line := range strings.Split(string(iface[1]), "\n") {
		sig, _, _ := strings.Cut(line, "//")
		if sig = strings.TrimSpace(sig); !strings.Contains(string(decl), "\t"+sig+"\n") {
			t.Errorf("docs/workloads.md shows Workload method %q, which workload.go does not declare", sig)
		}
	}
}
