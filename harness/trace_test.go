package harness

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"ftbench/engine"
	_ "ftbench/systems/all"
	"ftbench/trace"
)

// traced runs cfg with --trace and reads its trace.jsonl back.
func traced(t *testing.T, cfg Config) (trace.Header, []trace.Record, *Outcome) {
	t.Helper()
	cfg.Trace = true
	out, err := Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := out.Files["trace.jsonl"]
	if !ok {
		t.Fatal("no trace.jsonl among the run's files")
	}
	h, recs, err := trace.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return h, recs, out
}

// checkShape checks what every trace must be: records in time order,
// messages and events inside the window, receipts after sends, names that
// are lanes, kinds named (never a bare number), the header's processes
// those of run.json.
func checkShape(t *testing.T, h trace.Header, recs []trace.Record, res *Result) {
	t.Helper()
	if !slices.EqualFunc(h.Processes, res.Processes, func(a, b trace.Process) bool {
		return a.Name == b.Name && a.Worker == b.Worker && slices.Equal(a.Ops, b.Ops)
	}) {
		t.Errorf("trace lanes %v differ from run.json's processes %v", h.Processes, res.Processes)
	}
	lanes := map[string]bool{}
	for _, p := range h.Processes {
		lanes[p.Name] = true
	}
	for i, r := range recs {
		if i > 0 && r.T < recs[i-1].T {
			t.Fatalf("record %d at %d after one at %d: not in time order", i, r.T, recs[i-1].T)
		}
		if r.Kind == "" || strings.HasPrefix(r.Kind, "kind-") || r.Kind == "runtime" {
			t.Errorf("record %d (%s) has no kind name: %q", i, r.Type, r.Kind)
		}
		switch r.Type {
		case trace.TypeMsg, trace.TypeEvent:
			if r.T < h.FromNS || r.T >= h.ToNS {
				t.Errorf("%s %s at %d outside the window [%d, %d)", r.Type, r.Kind, r.T, h.FromNS, h.ToNS)
			}
		}
		switch r.Type {
		case trace.TypeMsg, trace.TypeCount:
			if !lanes[r.From] || !lanes[r.To] {
				t.Errorf("%s %s from %q to %q: not lanes", r.Type, r.Kind, r.From, r.To)
			}
			if r.Recv != 0 && r.Recv < r.T {
				t.Errorf("%s %s sent at %d, received before at %d", r.Type, r.Kind, r.T, r.Recv)
			}
		case trace.TypeEvent:
			if r.Proc != "" && !lanes[r.Proc] {
				t.Errorf("event %s on %q: not a lane", r.Kind, r.Proc)
			}
		}
	}
}

// has reports whether recs hold a record of type typ and kind.
func has(recs []trace.Record, typ, kind string) bool {
	return slices.ContainsFunc(recs, func(r trace.Record) bool { return r.Type == typ && r.Kind == kind })
}

// The same seed gives the same trace byte for byte; another seed another.
func TestTraceDeterministic(t *testing.T) {
	cfg := short("barrier", "crash")
	cfg.Duration, cfg.Rate = 2*engine.Second, 10_000
	cfg.Trace = true
	file := func() []byte {
		out, err := Execute(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return out.Files["trace.jsonl"]
	}
	a, b := file(), file()
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("two traces of one seed differ (%d and %d bytes)", len(a), len(b))
	}
	cfg.Seed = 2
	if bytes.Equal(a, file()) {
		t.Fatal("another seed gave the same trace")
	}
}

// A barrier crash run's default window (1 s before to 3 s after the
// crash) shows the checkpoints, the crash, the restarts and the restores.
func TestTraceBarrierCrash(t *testing.T) {
	cfg := short("barrier", "crash@2s:worker=1")
	h, recs, out := traced(t, cfg)
	checkShape(t, h, recs, out.Result)
	if h.FromNS != int64(engine.Second) || h.ToNS != int64(5*engine.Second) {
		t.Errorf("window [%d, %d), want 1s-5s around the crash at 2s", h.FromNS, h.ToNS)
	}
	if h.System != "barrier" || h.Variant != "aligned" || h.Seed != cfg.Seed || h.Truncated {
		t.Errorf("header %+v", h)
	}
	for _, want := range [][2]string{
		{trace.TypeMsg, "barrier"}, {trace.TypeMsg, "trigger"}, {trace.TypeMsg, "checkpoint_ack"},
		{trace.TypeMsg, "checkpoint_complete"}, {trace.TypeMsg, "deploy"}, {trace.TypeMsg, "record"},
		{trace.TypeEvent, "checkpoint_completed"}, {trace.TypeEvent, "crash"}, {trace.TypeEvent, "restart"},
		{trace.TypeEvent, "restore"}, {trace.TypeEvent, "snapshot_write"}, {trace.TypeEvent, "failure_notice"},
		{trace.TypeCount, "record"}, {trace.TypeFault, "crash"},
	} {
		if !has(recs, want[0], want[1]) {
			t.Errorf("no %s %q in the trace", want[0], want[1])
		}
	}
	// Every process on worker 1 crashed, and only those.
	on1 := map[string]bool{}
	for _, p := range h.Processes {
		if p.Worker == 1 {
			on1[p.Name] = true
		}
	}
	crashed := map[string]bool{}
	for _, r := range recs {
		if r.Type == trace.TypeEvent && r.Kind == "crash" {
			crashed[r.Proc] = true
			if r.T != int64(2*engine.Second) {
				t.Errorf("%s crashed at %d, want 2s", r.Proc, r.T)
			}
		}
	}
	if len(on1) == 0 || fmt.Sprint(crashed) != fmt.Sprint(on1) {
		t.Errorf("crashed %v, want the processes of worker 1 %v", crashed, on1)
	}
	// Barriers carry their checkpoint and arrive.
	received := 0
	for _, r := range recs {
		if r.Type == trace.TypeMsg && r.Kind == "barrier" {
			if r.ID <= 0 || !r.Ctrl {
				t.Errorf("barrier %+v: want a control message with its checkpoint", r)
			}
			if r.Recv > 0 {
				received++
			}
		}
	}
	if received == 0 {
		t.Error("no barrier was received")
	}
	for _, r := range recs {
		if r.Type == trace.TypeFault && (r.T != int64(2*engine.Second) || r.End <= r.T || r.Note != "crash@2s:worker=1") {
			t.Errorf("fault band %+v", r)
		}
	}
}

// Data messages are sampled, at most SamplePerBucket per channel, kind and
// bucket, and every sampled one is counted.
func TestTraceSamplesData(t *testing.T) {
	h, recs, out := traced(t, short("none", "crash"))
	checkShape(t, h, recs, out.Result)
	if h.SamplePerBucket != TraceSample || h.BucketNS <= 0 {
		t.Fatalf("header %+v", h)
	}
	type cell struct {
		from, to, kind string
		bucket         int64
	}
	sampled, counted := map[cell]int64{}, map[cell]int64{}
	var msgs, total int64
	for _, r := range recs {
		switch {
		case r.Type == trace.TypeMsg && !r.Ctrl:
			sampled[cell{r.From, r.To, r.Kind, (r.T - h.FromNS) / h.BucketNS}]++
			msgs++
		case r.Type == trace.TypeCount:
			if (r.T-h.FromNS)%h.BucketNS != 0 {
				t.Errorf("count at %d: not a bucket start", r.T)
			}
			c := cell{r.From, r.To, r.Kind, (r.T - h.FromNS) / h.BucketNS}
			if counted[c] > 0 {
				t.Errorf("two counts of %+v", c)
			}
			counted[c] += r.Data
			total += r.Data
		}
	}
	for c, n := range sampled {
		if n > int64(h.SamplePerBucket) {
			t.Errorf("%+v: %d sampled, at most %d", c, n, h.SamplePerBucket)
		}
		if counted[c] < n {
			t.Errorf("%+v: %d sampled but %d counted", c, n, counted[c])
		}
	}
	if msgs == 0 || total < 10*msgs {
		t.Errorf("%d data messages sampled of %d counted: want a small sample of many", msgs, total)
	}
}

// Storm's ack stream is sampled message by message, but a followed tree
// (one in 256, by its id) is recorded whole: its init, acks and done are
// all in the trace.
func TestTraceFollowsWholeTrees(t *testing.T) {
	cfg := short("stormack", "crash")
	cfg.Duration, cfg.Rate = 3*engine.Second, 30_000 // too many acks per bucket to sample whole trees
	h, recs, out := traced(t, cfg)
	checkShape(t, h, recs, out.Result)
	kinds := map[int64]map[string]int{}
	for _, r := range recs {
		if r.Type == trace.TypeMsg && r.Ctrl && r.ID != 0 && (r.Kind == "init" || r.Kind == "ack" || r.Kind == "tree_done") {
			if kinds[r.ID] == nil {
				kinds[r.ID] = map[string]int{}
			}
			kinds[r.ID][r.Kind]++
		}
	}
	whole := 0
	for _, k := range kinds {
		if k["init"] > 0 && k["ack"] > 1 && k["tree_done"] > 0 {
			whole++
		}
	}
	// About 470 trees are followed (30 000 a second over the 4 s window,
	// one in 256), most of them inside it; the sample alone keeps 9 whole.
	if whole < 100 {
		t.Fatalf("%d trees of %d traced have their init, acks and done: want the followed ones, about 470", whole, len(kinds))
	}
	t.Logf("%d whole trees of %d traced", whole, len(kinds))
}

// A trace that reaches its bound stops there and says so.
func TestTraceTruncated(t *testing.T) {
	cfg := short("barrier", "crash")
	cfg.Duration = 3 * engine.Second
	cfg.TraceMaxRecords = 100
	h, recs, _ := traced(t, cfg)
	faults := 0
	for _, r := range recs {
		if r.Type == trace.TypeFault {
			faults++
		}
	}
	if !h.Truncated || len(recs)-faults > 100 {
		t.Fatalf("truncated=%v with %d records, want truncated at 100", h.Truncated, len(recs)-faults)
	}
	// The budget counts a full trace.
	cfg.Trace, cfg.TraceMaxRecords = false, 0
	without, err := EstimateRun(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Trace = true
	with, err := EstimateRun(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := with.Bytes - without.Bytes; got != MaxTraceRecords*bytesPerTraceRecord || with.TraceRecords != MaxTraceRecords {
		t.Errorf("the trace adds %d bytes (%d records) to the estimate, want %d", got, with.TraceRecords, MaxTraceRecords*bytesPerTraceRecord)
	}
}

// Every system and variant names its control messages: a trace of each
// has at least one control message, every kind named (none, which has no
// control messages, names its data records).
func TestTraceNamesEverySystem(t *testing.T) {
	for _, tc := range []struct {
		system, variant, workload, fault string
		want                             []string // control message kinds
	}{
		{"barrier", "aligned", "", "crash", []string{"barrier", "checkpoint_complete"}},
		{"barrier", "unaligned", "", "crash", []string{"unaligned_barrier", "checkpoint_ack"}},
		{"barrier", "aligned-timeout", "", "crash", []string{"barrier", "barrier_announcement"}},
		{"snapshot", "cl", "", "crash", []string{"marker", "checkpoint_complete"}},
		{"snapshot", "cl", "bank-p2p", "reorder", []string{"marker", "report"}},
		{"snapshot", "lai-yang", "bank-p2p", "reorder", []string{"done", "report"}},
		{"snapshot", "mattern", "bank-p2p", "reorder", []string{"announce", "ack"}},
		{"stormack", "", "", "crash", []string{"ack", "init", "tree_done"}},
		{"lineage", "", "", "crash", []string{"launch", "task_result", "recompute"}},
		{"kstreams", "", "", "crash", []string{"commit_txn", "produce", "rebalance"}},
		{"trident", "", "", "crash", []string{"success", "ack"}},
		{"none", "", "", "crash", nil},
	} {
		name := tc.system + "/" + tc.variant + "/" + tc.workload
		t.Run(name, func(t *testing.T) {
			cfg := short(tc.system, tc.fault)
			cfg.Variant = tc.variant
			cfg.Duration, cfg.Rate = 3*engine.Second, 10_000
			if tc.system == "stormack" {
				cfg.Rate = 3_000 // a tree per record, several messages each
			}
			if tc.workload != "" {
				cfg.Workload = tc.workload
				cfg.Rate = 0
			}
			h, recs, out := traced(t, cfg)
			checkShape(t, h, recs, out.Result)
			ctrl := map[string]bool{}
			data := map[string]bool{}
			for _, r := range recs {
				if r.Type == trace.TypeMsg {
					if r.Ctrl {
						ctrl[r.Kind] = true
					} else {
						data[r.Kind] = true
					}
				}
			}
			for _, k := range tc.want {
				if !ctrl[k] {
					t.Errorf("no %q among the control messages %v", k, ctrl)
				}
			}
			if len(ctrl) == 0 && tc.system != "none" {
				t.Errorf("no control message traced")
			}
			if len(data) == 0 && tc.system != "lineage" && tc.system != "kstreams" {
				t.Errorf("no data message traced (control: %v)", ctrl)
			}
			if tc.system == "none" && (len(ctrl) > 0 || !data["record"]) {
				t.Errorf("none: control %v, data %v; want records only", ctrl, data)
			}
		})
	}
}

// A window past the run's end is refused before any work.
func TestTraceWindowChecked(t *testing.T) {
	cfg := short("none")
	cfg.Duration = 2 * engine.Second
	cfg.Trace, cfg.TraceFrom, cfg.TraceTo = true, 100*engine.Second, 200*engine.Second
	if _, err := Validate(cfg); err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "nothing to trace") {
		t.Errorf("window past the end: %v", err)
	}
	cfg.TraceFrom, cfg.TraceTo = 3*engine.Second, 2*engine.Second
	if _, err := Validate(cfg); err == nil || !strings.Contains(err.Error(), "must end after it starts") {
		t.Errorf("reversed window: %v", err)
	}
	cfg.Trace = false
	if _, err := Validate(cfg); err == nil || !strings.Contains(err.Error(), "with --trace only") {
		t.Errorf("window without --trace: %v", err)
	}
	cfg = short("none")
	cfg.Trace, cfg.Runtime = true, RuntimeLive
	if _, err := Validate(cfg); err == nil || !strings.Contains(err.Error(), "--runtime sim only") {
		t.Errorf("live: %v", err)
	}
}
