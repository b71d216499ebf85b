package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/sweep"
	"ftbench/trace"
)

// fixture is a small barrier run as the harness and the trace recorder
// store it: two sources feeding two counts through barriers, a coordinator
// triggering a checkpoint every second, a crash of worker 1 at crashAt with
// its recovery phases, and the run's trace over [from, to). The numbers are
// shaped like a real barrier run (events.jsonl kinds and values as
// systems/barrier records them), small enough to check by hand.
type fixture struct {
	checkpoints int   // triggered at 1 s, 2 s, ...; the one at crash time aborts
	crashAt     int64 // ns
	from, to    int64 // trace window, ns
}

var fixtureProcs = []trace.Process{
	{Name: "coordinator", Worker: -1},
	{Name: "source/0", Worker: 0, Ops: []string{"source"}},
	{Name: "count/0", Worker: 0, Ops: []string{"count", "sink"}},
	{Name: "source/1", Worker: 1, Ops: []string{"source"}},
	{Name: "count/1", Worker: 1, Ops: []string{"count", "sink"}},
}

// write stores the run in dir and returns the trace records written.
func (f fixture) write(t *testing.T, dir string) (trace.Header, []trace.Record, []engine.Event) {
	t.Helper()
	const s = int64(1e9)
	var events []engine.Event
	var recs []trace.Record
	in := func(ts int64) bool { return ts >= f.from && ts < f.to }
	ev := func(ts int64, proc, kind string, id, value int64) {
		events = append(events, engine.Event{Time: engine.Time(ts), Proc: proc, Kind: kind, ID: id, Value: value})
		if in(ts) {
			recs = append(recs, trace.Record{Type: trace.TypeEvent, T: ts, Proc: proc, Kind: kind, ID: id, Value: value})
		}
	}
	msg := func(ts, recv int64, from, to, kind string, id int64, ctrl bool) {
		if in(ts) {
			recs = append(recs, trace.Record{Type: trace.TypeMsg, T: ts, Recv: recv, From: from, To: to, Kind: kind, ID: id, Ctrl: ctrl})
		}
	}
	// Data: each source sends to both counts every 50 ms; counts per bucket.
	for ts := int64(0); ts < int64(f.checkpoints+1)*s; ts += 50e6 {
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				from, to := fmt.Sprintf("source/%d", i), fmt.Sprintf("count/%d", j)
				msg(ts+int64(i)*1e6, ts+int64(i)*1e6+3e6, from, to, "record", 0, false)
				if in(ts) && ts%(100e6) == 0 {
					recs = append(recs, trace.Record{Type: trace.TypeCount, T: ts, From: from, To: to, Data: 200, Kind: "record"})
				}
			}
		}
	}
	for id := int64(1); id <= int64(f.checkpoints); id++ {
		trig := id * s
		ev(trig, "coordinator", "checkpoint_triggered", id, 0)
		if trig >= f.crashAt && trig < f.crashAt+s {
			events = append(events, engine.Event{Time: engine.Time(trig + s/2), Proc: "coordinator", Kind: "checkpoint_aborted", ID: id, Note: "failure"})
			continue
		}
		for i := 0; i < 2; i++ {
			src := fmt.Sprintf("source/%d", i)
			msg(trig, trig+100e3, "coordinator", src, "trigger", id, true)
			ev(trig+100e3, src, "checkpoint_start", id, 0)
			for j := 0; j < 2; j++ {
				msg(trig+100e3, trig+int64(1+i+j)*1e6, src, fmt.Sprintf("count/%d", j), "barrier", id, true)
			}
			msg(trig+5e6, trig+5e6+100e3, src, "coordinator", "checkpoint_ack", id, true)
		}
		for j := 0; j < 2; j++ {
			cnt := fmt.Sprintf("count/%d", j)
			ev(trig+int64(1+j)*1e6, cnt, "checkpoint_start", id, 0)
			ev(trig+int64(1+j)*1e6, cnt, "alignment_start", id, 0)
			ev(trig+int64(2+j)*1e6, cnt, "alignment", id, 1e6)
			ev(trig+int64(2+j)*1e6, cnt, "alignment_buffered", id, 100)
			msg(trig+8e6, trig+8e6+100e3, cnt, "coordinator", "checkpoint_ack", id, true)
			ev(trig+9e6, cnt, "snapshot_acked", id, 0)
		}
		events = append(events, engine.Event{Time: engine.Time(trig + 10e6), Proc: "coordinator", Kind: "checkpoint_completed", ID: id, Value: 10e6, Bytes: 4096})
		if in(trig + 10e6) {
			recs = append(recs, trace.Record{Type: trace.TypeEvent, T: trig + 10e6, Proc: "coordinator", Kind: "checkpoint_completed", ID: id, Value: 10e6, Bytes: 4096})
		}
	}
	events = append(events, engine.Event{Time: engine.Time(f.crashAt), Kind: "fault_start", Note: "crash@3s:op=count/1"},
		engine.Event{Time: engine.Time(f.crashAt), Kind: "worker_crash", Value: s})
	recs = append(recs, trace.Record{Type: trace.TypeFault, T: f.crashAt, End: f.crashAt + s, Kind: "crash", Note: "crash@3s:op=count/1"})
	ev(f.crashAt+s, "count/1", "restore", 0, 0)
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].T < recs[j].T })
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time < events[j].Time })

	h := trace.Header{Format: 1, System: "barrier", Variant: "aligned", Seed: 1, FromNS: f.from, ToNS: f.to, BucketNS: 100e6, SamplePerBucket: 2, Processes: fixtureProcs}
	var tb bytes.Buffer
	if err := trace.Write(&tb, h, recs); err != nil {
		t.Fatal(err)
	}
	var eb bytes.Buffer
	for _, e := range events {
		b, _ := json.Marshal(e)
		eb.Write(append(b, '\n'))
	}
	series := metrics.CSVHeader + "\n"
	for ts := 0; ts < f.checkpoints+1; ts++ {
		series += fmt.Sprintf("%d,1000,1000,%d,10,20,%d,10,100\n", ts, 50*ts, ts)
	}
	run := map[string]any{
		"system": "barrier", "variant": "aligned", "workload": "wordcount", "seed": 1,
		"config":     map[string]any{"duration_s": f.checkpoints + 1},
		"faults":     []string{"crash@3s:op=count/1"},
		"replay":     "bench run --system barrier --fault crash@3s:op=count/1",
		"recoveries": []any{map[string]any{"fault": "crash@3s:op=count/1", "at_s": float64(f.crashAt) / 1e9, "phases": map[string]any{"detected_s": 1, "worker_up_s": 1, "restored_s": 1.2, "catch_up_s": 0.8}}},
	}
	var cps []map[string]any // as harness lists them: one per triggered checkpoint
	for id := 1; id <= f.checkpoints; id++ {
		cps = append(cps, map[string]any{"id": id})
	}
	run["system_metrics"] = map[string]any{"checkpoints": cps}
	rb, _ := json.Marshal(run)
	for name, b := range map[string][]byte{TraceFile: tb.Bytes(), sweep.EventsFile: eb.Bytes(), sweep.SeriesFile: []byte(series), sweep.RunFile: rb} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return h, recs, events
}
