package harness

// The observer (--observe): what an outside reader of the sink sees, checked
// with porcupine (check/porcupine.go has the models).
//
// During the run it records every commit: the effect, its key, the value it
// made visible, its submission (Commit.Born, the append time of the input
// record) and its visibility (the commit instant). After the run it
//
//   - runs the workload's plan once more, sequentially, to learn each
//     effect's contribution to its key's value and each key's expected set of
//     effects (the oracle's view; see deltaOracle);
//   - simulates a reader: at Poisson-distributed instants (DefaultReadRate per
//     simulated second, from a RNG derived from the run seed, so runs stay
//     reproducible) it reads one key — half the time the key of the latest
//     commit, so hot keys and recoveries are read often, otherwise a key
//     chosen uniformly among those committed so far. A read takes a request
//     and a response delay of up to two network latencies each, and is served
//     at the instant the request arrives, with the value of the key's last
//     commit at or before that instant. Reads are derived after the run from
//     the recorded commits, which is exact: the sink's visible state only
//     changes at commits, and the runtime hands commits to the harness out of
//     time order by up to a CPU slice, so the live map would be approximate;
//   - adds a final read of every key after the run, which must reflect every
//     effect the oracle expects;
//   - checks the history against the exactly-once model and, if that fails,
//     the at-least-once model. The claim decides which model must hold.
//
// A check that times out is "unknown", never a pass. An illegal history gets
// porcupine's HTML view (porcupine-<model>.html next to run.json, fault
// windows as annotations), and run.json's observer block names the file.

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/workloads"
)

// DefaultReadRate is the reader's reads per simulated second.
const DefaultReadRate = 500.0

// Observation is run.json's "observer" block. Apart from "unknown" results
// (the checker's timeout is wall time) it is a function of config and seed.
type Observation struct {
	Applies      int64   `json:"applies"`
	Reads        int64   `json:"reads"`
	FinalReads   int64   `json:"final_reads"`
	ReadRatePerS float64 `json:"read_rate_per_s"`
	Keys         int     `json:"keys"`
	Segments     int     `json:"segments"`
	// RequiredModel is the model the claim requires ("" for at-most-once and
	// none); Result is that model's result, "none-required" without one, or
	// "not-applicable" for a workload without a sink.
	RequiredModel string                  `json:"required_model"`
	Result        string                  `json:"result"`
	Models        map[string]*ModelResult `json:"models"`
	// Visualization is the HTML file (in the run's folder) of the required
	// model's failure, else of the first failing model.
	Visualization string `json:"visualization,omitempty"`
}

// ModelResult is one model's check.
type ModelResult struct {
	Result            string           `json:"result"`
	ImpliedBy         string           `json:"implied_by,omitempty"`
	IllegalSegments   int              `json:"illegal_segments"`
	UncheckedSegments int              `json:"unchecked_segments"`
	FirstViolation    *check.Violation `json:"first_violation,omitempty"`
	Visualization     string           `json:"visualization,omitempty"`
}

// Observer results besides check.LinOK/LinIllegal/LinUnknown.
const (
	ObsNoneRequired  = "none-required"
	ObsNotApplicable = "not-applicable"
)

// observer records commits in fixed-size chunks: appending to one slice
// of millions of records spent more time copying it than the run took.
type observer struct {
	chunks [][]commitRec
	n      int
	ops    []check.Op
}

type commitRec struct {
	at, born engine.Time
	key      uint64
	id       engine.EffectID
	value    int64
}

const chunkRecs = 1 << 15

func (o *observer) commit(at engine.Time, c engine.Commit) {
	if len(o.chunks) == 0 || len(o.chunks[len(o.chunks)-1]) == chunkRecs {
		o.chunks = append(o.chunks, make([]commitRec, 0, chunkRecs))
	}
	last := &o.chunks[len(o.chunks)-1]
	*last = append(*last, commitRec{at: at, born: c.Born, key: c.Key, id: c.ID, value: c.Value})
	o.n++
}

// history turns the recorded commits into apply operations, leaving room
// for the reads.
func (o *observer) history(extra int) {
	o.ops = make([]check.Op, 0, o.n+extra)
	for i, ch := range o.chunks {
		for _, c := range ch {
			o.ops = append(o.ops, check.Op{Kind: check.OpApply, Key: c.key, ID: c.id, Born: c.born, Value: c.value, Call: c.at, Return: c.at})
		}
		o.chunks[i] = nil
	}
	o.chunks = nil
}

// observe finishes the observation of r into res.Observer and returns the
// files to write next to run.json.
func (r *runner) observe(res *Result) map[string][]byte {
	start := time.Now()
	defer func() { r.observeWall = time.Since(start) }()
	o := r.obs
	obs := &Observation{ReadRatePerS: DefaultReadRate, Models: map[string]*ModelResult{}}
	res.Observer = obs
	tab, ok := deltas(r.w, r.effects)
	if !ok {
		obs.Result = ObsNotApplicable
		return nil
	}
	obs.Applies = int64(o.n)
	end := r.sim.Now()
	o.history(int(end.Seconds()*DefaultReadRate*1.1) + len(tab.expect) + 64)
	tab.annotate(o.ops)
	obs.Reads, obs.FinalReads = o.read(engine.ChildSeed(r.cfg.Seed, "observer/reader"), end, r.cost.NetLatency, tab.expect)

	files := map[string][]byte{}
	report := func(m check.Guarantee) *ModelResult {
		rep, err := check.Check(o.ops, tab.expect, m, check.Options{})
		if err != nil {
			panic(err) // both models exist
		}
		obs.Keys, obs.Segments = rep.Keys, rep.Segments
		mr := &ModelResult{Result: rep.Result, IllegalSegments: rep.Illegal, UncheckedSegments: rep.Unchecked, FirstViolation: rep.First}
		var html bytes.Buffer
		if found, err := rep.Visualize(&html, r.annotations()); found && err == nil {
			mr.Visualization = "porcupine-" + string(m) + ".html"
			files[mr.Visualization] = html.Bytes()
		}
		obs.Models[string(m)] = mr
		return mr
	}
	if eo := report(check.ExactlyOnce); eo.Result == check.LinOK {
		// Exactly-once is at-least-once without re-applications.
		obs.Models[string(check.AtLeastOnce)] = &ModelResult{Result: check.LinOK, ImpliedBy: string(check.ExactlyOnce)}
	} else {
		report(check.AtLeastOnce)
	}
	obs.Result = ObsNoneRequired
	if m, ok := check.ModelFor(check.Guarantee(r.claim)); ok {
		obs.RequiredModel = string(m)
		obs.Result = obs.Models[string(m)].Result
		obs.Visualization = obs.Models[string(m)].Visualization
	}
	for _, m := range []check.Guarantee{check.ExactlyOnce, check.AtLeastOnce} {
		if obs.Visualization == "" {
			obs.Visualization = obs.Models[string(m)].Visualization
		}
	}
	o.ops = nil
	return files
}

// observerProblem is the safety problem of an illegal history under the
// model the claim requires, or "".
func observerProblem(res *Result) string {
	o := res.Observer
	if o == nil || o.Result != check.LinIllegal {
		return ""
	}
	msg := fmt.Sprintf("porcupine: what a reader of the sink observed is not %s", o.RequiredModel)
	if v := o.Models[o.RequiredModel].FirstViolation; v != nil {
		msg += fmt.Sprintf(" (key %d at %.6fs: %s; before it %s)", v.Key, v.AtS, v.Op, v.State)
	}
	return msg
}

// annotations are the fault windows, shown above porcupine's view.
func (r *runner) annotations() []check.Annotation {
	var notes []check.Annotation
	for _, s := range r.specs {
		n := check.Annotation{Start: s.At, End: min(s.End, r.cfg.Duration), Description: string(s.Kind), Details: s.String()}
		if s.Kind == "crash" {
			restart := s.Restart
			if restart < 0 {
				restart = r.cost.RestartDelay
			}
			n.End = s.At + restart
			n.Details += fmt.Sprintf(" (worker back at %.3fs)", n.End.Seconds())
		}
		notes = append(notes, n)
	}
	return notes
}

// read appends the reader's reads and the final reads; end is when the run
// stopped.
func (o *observer) read(seed uint64, end, latency engine.Time, expect map[uint64]check.Expect) (reads, finals int64) {
	n := len(o.ops)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	// Commits arrive in commit order per sink process; across processes
	// they may be out of time order by up to a CPU slice.
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(o.ops[a].Call, o.ops[b].Call) })
	visible := map[uint64]int64{}
	var keys []uint64
	var latest uint64
	next := 0
	advance := func(x engine.Time) {
		for ; next < n && o.ops[order[next]].Call <= x; next++ {
			op := &o.ops[order[next]]
			if _, ok := visible[op.Key]; !ok {
				keys = append(keys, op.Key)
			}
			visible[op.Key] = op.Value
			latest = op.Key
		}
	}
	// Draw every read first, then serve them in the order they reach the
	// sink: a read called later may be served earlier.
	type request struct {
		call, served, ret engine.Time
		any               bool    // a uniformly chosen key, not the latest
		u                 float64 // which one
	}
	rng := engine.NewRand(seed)
	var reqs []request
	for t := engine.Time(0); ; {
		t += engine.Time(rng.ExpFloat64() / DefaultReadRate * float64(engine.Second))
		if t > end {
			break
		}
		served := t + engine.Time(rng.Int64N(int64(2*latency)+1))
		ret := served + engine.Time(rng.Int64N(int64(2*latency)+1))
		reqs = append(reqs, request{call: t, served: served, ret: ret, any: rng.IntN(2) == 1, u: rng.Float64()})
	}
	slices.SortStableFunc(reqs, func(a, b request) int { return cmp.Compare(a.served, b.served) })
	last := end
	if n > 0 {
		// A process's clock runs ahead of the simulator's by up to a CPU
		// slice, so a commit may be stamped after end: the final reads
		// come after every commit, or they would see a value the model
		// has not applied yet (a false "not at-least-once").
		last = max(last, o.ops[order[n-1]].Call)
	}
	for _, q := range reqs {
		advance(q.served)
		if len(keys) == 0 {
			continue
		}
		k := latest
		if q.any {
			k = keys[int(q.u*float64(len(keys)))]
		}
		o.ops = append(o.ops, check.Op{Kind: check.OpRead, Key: k, Born: q.served, Value: visible[k], Call: q.call, Return: q.ret})
		reads++
		last = max(last, q.ret)
	}
	advance(engine.Time(1<<62 - 1))
	for k := range expect {
		if _, ok := visible[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		o.ops = append(o.ops, check.Op{Kind: check.OpFinal, Key: k, Value: visible[k], Call: last + 1, Return: last + 2})
		finals++
	}
	return reads, finals
}

// effectTable holds every expected effect's contribution, record by record.
type effectTable struct {
	base   [][]int64 // base[p][off]: index of effect (p, off, sub 0)
	count  [][]uint8 // effects of the record
	delta  []int64
	expect map[uint64]check.Expect
}

func (t *effectTable) index(id engine.EffectID) (int64, bool) {
	if id.Part < 0 || int(id.Part) >= len(t.base) || id.Off < 0 || id.Off >= int64(len(t.base[id.Part])) ||
		id.Sub < 0 || id.Sub >= int32(t.count[id.Part][id.Off]) {
		return 0, false
	}
	return t.base[id.Part][id.Off] + int64(id.Sub), true
}

// annotate fills in each apply's contribution, and whether it repeats an
// earlier commit (in commit order) or names an effect no record produces.
func (t *effectTable) annotate(ops []check.Op) {
	seen := make([]uint64, (len(t.delta)+63)/64)
	for i := range ops {
		op := &ops[i]
		j, ok := t.index(op.ID)
		if !ok {
			op.Unexpected = true
			continue
		}
		op.Delta = t.delta[j]
		if seen[j/64]&(1<<(j%64)) != 0 {
			op.Repeat = true
		}
		seen[j/64] |= 1 << (j % 64)
	}
}

type sinkEffect struct {
	id    engine.EffectID
	key   uint64
	delta int64
}

// deltas feeds every appended record (effects[p] has one entry per record of
// partition p) in the oracle's order. ok is false for a plan without a sink.
func deltas(w workloads.Workload, effects [][]uint8) (*effectTable, bool) {
	plan := w.Plan()
	if len(plan.Stages) == 0 || !plan.Stages[len(plan.Stages)-1].Sink {
		return nil, false
	}
	// The oracle's sink hook records each effect's contribution: its value
	// minus the previous value of its key.
	o := workloads.NewOracle(w)
	var out []sinkEffect
	o.OnEffect = func(m engine.Msg, prev int64) {
		out = append(out, sinkEffect{id: m.ID, key: m.Key, delta: m.Val - prev})
	}
	t := &effectTable{base: make([][]int64, len(effects)), count: effects, expect: map[uint64]check.Expect{}}
	var total, maxN int64
	for p, recs := range effects {
		t.base[p] = make([]int64, len(recs))
		for off, k := range recs {
			t.base[p][off] = total
			total += int64(k)
		}
		maxN = max(maxN, int64(len(recs)))
	}
	t.delta = make([]int64, total)
	for off := int64(0); off < maxN; off++ {
		for p := range effects {
			if off >= int64(len(effects[p])) {
				continue
			}
			out = out[:0]
			o.Feed(int32(p), off)
			for _, e := range out {
				if j, ok := t.index(e.id); ok {
					t.delta[j] = e.delta
				}
				x := t.expect[e.key]
				x.Add(e.id, e.delta)
				t.expect[e.key] = x
			}
		}
	}
	return t, true
}
