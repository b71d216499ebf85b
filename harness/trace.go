package harness

import (
	"bytes"
	"slices"
	"sort"

	"ftbench/engine"
	"ftbench/engine/sim"
	"ftbench/faults"
	"ftbench/trace"
)

// A run's trace (bench run --trace, docs/metrics.md "Trace"): the
// simulator records it in a window of simulated time (engine/sim's
// trace.go), and the harness gives it its header (the system, the seed,
// the window and every process with its worker) and the fault bands, and
// writes it as trace.jsonl beside run.json.

// The trace's defaults and bound.
const (
	// TraceBefore and TraceAfter set the default window around the first
	// fault: [fault - 1 s, fault + 3 s), from the start at the earliest;
	// TraceSpan is the default window of a run without faults, its first
	// 2 s.
	TraceBefore = 1 * engine.Second
	TraceAfter  = 3 * engine.Second
	TraceSpan   = 2 * engine.Second
	// TraceBuckets is how many count buckets the window is cut into (each
	// at least a millisecond), and TraceSample how many messages of each
	// sampled kind the trace records per channel per bucket.
	TraceBuckets = 400
	TraceSample  = 2
	// MaxTraceRecords bounds a trace: the recorder stops there and marks
	// the trace truncated. A record takes about 117 bytes of trace.jsonl,
	// so a full trace is about 29 MB; the main job's default window holds
	// 11 385 records (1.3 MB).
	MaxTraceRecords = 250_000
	// bytesPerTraceRecord is what a record costs in memory at its peak,
	// for the size budget: the record (176 bytes) with the slice's growth,
	// and its encoding in trace.jsonl.
	bytesPerTraceRecord = 2*176 + 117
)

// traceWindow is the window to trace: the configured one, or the default.
func (r *runner) traceWindow() (from, to engine.Time) {
	if r.cfg.TraceTo > 0 {
		return r.cfg.TraceFrom, r.cfg.TraceTo
	}
	first := engine.Time(-1)
	for _, s := range r.specs {
		if first < 0 || s.At < first {
			first = s.At
		}
	}
	if first < 0 {
		return 0, TraceSpan
	}
	return max(0, first-TraceBefore), first + TraceAfter
}

// checkTrace refuses a trace window that starts after the run's longest
// simulated time (input, drain and settle window): it would trace nothing.
func (r *runner) checkTrace() error {
	if !r.cfg.Trace {
		return nil
	}
	from, _ := r.traceWindow()
	if end := r.cfg.Duration + r.drainMax + r.settle; from >= end {
		return inputErr("--trace-window starts at %s, after the run's longest simulated time (%s of input, drain and settle window): nothing to trace",
			fmtDur(from), fmtDur(end))
	}
	return nil
}

func (r *runner) traceMax() int {
	if n := r.cfg.TraceMaxRecords; n > 0 && n < MaxTraceRecords {
		return n
	}
	return MaxTraceRecords
}

// traceConfig is the simulator's trace configuration; nil without --trace.
func (r *runner) traceConfig() *sim.TraceConfig {
	if !r.cfg.Trace {
		return nil
	}
	from, to := r.traceWindow()
	return &sim.TraceConfig{From: from, To: to, Bucket: traceBucket(from, to), Sample: TraceSample, MaxRecords: r.traceMax()}
}

// traceBucket cuts the window into TraceBuckets buckets of whole
// milliseconds, at least one.
func traceBucket(from, to engine.Time) engine.Time {
	b := (to - from) / TraceBuckets
	return max(engine.Millisecond, b/engine.Millisecond*engine.Millisecond)
}

// processes lists every process of the system's deployment with the
// worker it was placed on and the operators it runs, in deployment order:
// run.json's processes and the trace's lanes. The harness's own client
// processes (--observe's reader) are not the system's, and are left out.
func processes(dep *engine.Deployment) []trace.Process {
	ps := make([]trace.Process, 0, len(dep.Procs))
	for i := range dep.Procs {
		p := &dep.Procs[i]
		if p.Worker == engine.ClientNode {
			continue
		}
		ps = append(ps, trace.Process{Name: p.Name, Worker: p.Worker, Ops: p.Ops()})
	}
	return ps
}

// traceFile is trace.jsonl: the header, the simulator's records and the
// fault bands that meet the window, in time order.
func (r *runner) traceFile() ([]byte, error) {
	s, ok := r.rt.(simRuntime)
	if !ok {
		return nil, nil
	}
	recs, truncated := s.Trace()
	cfg := r.traceConfig()
	h := trace.Header{
		Format: 1, System: r.cfg.System, Variant: r.variant, Seed: r.cfg.Seed,
		FromNS: int64(cfg.From), ToNS: int64(cfg.To), BucketNS: int64(cfg.Bucket), SamplePerBucket: cfg.Sample,
		Processes: processes(r.dep), Truncated: truncated,
	}
	recs = mergeByTime(recs, r.faultRecords(cfg.From, cfg.To))
	var b bytes.Buffer
	if err := trace.Write(&b, h, recs); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// faultRecords are the bands of the faults that meet [from, to), as the
// run applied them: a crash's lasts until its worker restarts, the others'
// their window (to the run's hard end at the latest).
func (r *runner) faultRecords(from, to engine.Time) []trace.Record {
	var out []trace.Record
	hard := r.faultBounds().HardEnd
	for _, s := range r.specs {
		end := s.End
		if s.Kind == faults.Crash {
			restart := s.Restart
			if restart < 0 {
				restart = r.cost.RestartDelay
			}
			end = s.At + restart
		}
		end = min(end, hard)
		if s.At >= to || end < from {
			continue
		}
		out = append(out, trace.Record{Type: trace.TypeFault, T: int64(s.At), End: int64(end), Kind: string(s.Kind), Note: s.String()})
	}
	return out
}

// mergeByTime inserts b into a, both in time order, each after a's
// records of its time (b is short: the faults).
func mergeByTime(a, b []trace.Record) []trace.Record {
	for _, rec := range b {
		i := sort.Search(len(a), func(i int) bool { return a[i].T > rec.T })
		a = slices.Insert(a, i, rec)
	}
	return a
}
