package harness

// The observer (--observe): what an outside reader of the sink sees,
// checked with porcupine (check/porcupine.go has the models).
//
// During the run:
//
//   - a reader process, on a client machine outside the cluster
//     (engine.ClientNode: its own CPU, never crashed, so it does not perturb
//     the system under test), reads the sink's output store (outputStore,
//     the key -> value map the commits update) as a client of that store
//     would: at Poisson-distributed instants (DefaultReadRate per simulated
//     second) it picks a key — half the time the key of the latest commit,
//     so hot keys and recoveries are read often, otherwise one chosen
//     uniformly among the keys committed so far — and sends a request that
//     takes up to two network latencies (uniform) to reach the store, which
//     serves it with what the key shows at that instant, and a response
//     that takes as long again. Its times, keys and latencies come from the
//     run seed's child "observer/reader", so observed runs stay
//     deterministic. The read's invocation, serving and response times and
//     the value served are recorded.
//   - every commit, as the output store settles it in commit-time order,
//     is folded into the key's open apply operation: a run of commits that
//     no read overlaps is one apply; commits that a read's window covers
//     are one apply per instant (check/porcupine.go explains why that is
//     exact). So the history grows with the reads, not with the commits,
//     and a 2PC sink's thousands of commits at one instant are one step.
//
// After the run, every key is read once more (the final reads), and the
// history is checked against the model of the system's claim: reads must
// show exactly what the commits made visible, and the commits must keep the
// claim by the same definitions as the harness's delivery and monotonicity
// checks. A check that does not finish is "unknown" and makes the run exit
// non-zero, never a pass. An illegal history gets porcupine's HTML view
// (porcupine.html next to run.json, fault windows as annotations).

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/workloads"
)

// DefaultReadRate is the reader's reads per simulated second.
const DefaultReadRate = 500.0

// observerTimeout bounds the porcupine check's wall time; 0 is twice the
// simulation's wall time, at least minObserverTimeout and at most
// check.DefaultTimeout, so --observe costs at most about three times a
// run's wall time: a check that would take longer is reported as unknown,
// never as a pass. Tests shorten it.
var observerTimeout time.Duration

const minObserverTimeout = 20 * time.Second

// Observation is run.json's "observer" block. Apart from "unknown" results
// (the checker's timeout is wall time) it is a function of config and seed.
type Observation struct {
	Applies      int64   `json:"applies"` // commits observed
	ApplyOps     int64   `json:"apply_ops"`
	Reads        int64   `json:"reads"`
	FinalReads   int64   `json:"final_reads"`
	ReadRatePerS float64 `json:"read_rate_per_s"`
	Keys         int     `json:"keys"`
	Segments     int     `json:"segments"`
	// RequiredModel is the claim's model ("exactly-once, monotonic");
	// Result is its result (check.LinOK, LinIllegal, LinUnknown), or
	// "not-applicable" for a workload without a sink.
	RequiredModel string                  `json:"required_model"`
	Result        string                  `json:"result"`
	Models        map[string]*ModelResult `json:"models"`
	// Visualization is the HTML file (in the run's folder) of the failure.
	Visualization string `json:"visualization,omitempty"`
}

// ModelResult is one model's check.
type ModelResult struct {
	Result            string           `json:"result"`
	IllegalSegments   int              `json:"illegal_segments"`
	UncheckedSegments int              `json:"unchecked_segments"`
	FirstViolation    *check.Violation `json:"first_violation,omitempty"`
	Visualization     string           `json:"visualization,omitempty"`
}

// ObsNotApplicable is the observer's result for a workload without a sink.
const ObsNotApplicable = "not-applicable"

// observer records the history: its operations, the reader's state and
// each key's open apply.
type observer struct {
	store   *outputStore
	rng     *rand.Rand
	latency engine.Time
	ops     []check.Op
	keys    []uint64 // keys committed so far, in the order first seen
	latest  uint64
	open    map[uint64]*openApply
	applies int64
	// inflight maps a serve timer's id to its read's index in ops.
	inflight map[int64]int
	nextID   int64
	// pending (drain.go): in an undrained run, keys some pending
	// effect writes get no final read, as they are left out of wrong_keys:
	// their value legitimately lags the oracle's.
	pending map[uint64]bool
}

// openApply is a key's apply being folded, and the latest response time
// of a read of the key: commits up to it are covered by a read, so they
// are folded per instant, not across instants.
type openApply struct {
	op      check.Op
	instant bool // op holds one instant inside a read's window
	watched engine.Time
}

func newObserver(store *outputStore, seed uint64, latency engine.Time) *observer {
	o := &observer{store: store, rng: engine.NewRand(seed), latency: latency, open: map[uint64]*openApply{}, inflight: map[int64]int{}}
	store.onSettle = o.settled
	return o
}

// settled folds one commit, in commit-time order. An open apply absorbs
// it when both are outside every read's window (a run no read can see
// into), or both are at one instant inside a window (a read sees an
// instant whole); otherwise the open apply is closed first.
func (o *observer) settled(p *pending) {
	o.applies++
	k := o.open[p.key]
	if k == nil {
		k = &openApply{watched: -1}
		o.open[p.key] = k
		o.keys = append(o.keys, p.key)
	}
	o.latest = p.key
	covered := p.at <= k.watched
	if k.op.Apps > 0 && (covered != k.instant || (covered && k.op.Call != p.at)) {
		o.close(k)
	}
	if k.op.Apps == 0 {
		k.instant = covered
	}
	k.op.Add(p.id, p.born, p.at, p.value, p.status)
	k.op.Key = p.key
}

func (o *observer) close(k *openApply) {
	if k.op.Apps > 0 {
		o.ops = append(o.ops, k.op)
		k.op = check.Op{}
	}
}

// reader is the reader process: a client of the output store on
// engine.ClientNode. Timer 0 issues the next read; other timers serve one.
type reader struct{ o *observer }

func (r *reader) Init(ctx engine.Ctx)                          { r.o.next(ctx) }
func (r *reader) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (r *reader) Timer(ctx engine.Ctx, id int64) {
	if id == 0 {
		r.o.call(ctx)
		r.o.next(ctx)
		return
	}
	r.o.serve(ctx, id)
}

func (o *observer) next(ctx engine.Ctx) {
	ctx.After(max(1, engine.Time(o.rng.ExpFloat64()/DefaultReadRate*float64(engine.Second))), 0)
}

// call issues a read at ctx.Now().
func (o *observer) call(ctx engine.Ctx) {
	now := ctx.Now()
	// Draw everything first, so the random stream does not depend on
	// whether a key exists yet.
	req := engine.Time(o.rng.Int64N(int64(2*o.latency) + 1))
	resp := engine.Time(o.rng.Int64N(int64(2*o.latency) + 1))
	anyKey, u := o.rng.IntN(2) == 1, o.rng.Float64()
	o.store.settle(now) // the keys committed before now are known
	if len(o.keys) == 0 {
		return
	}
	key := o.latest
	if anyKey {
		key = o.keys[int(u*float64(len(o.keys)))]
	}
	k := o.open[key]
	o.close(k) // commits before the call come before the read
	k.watched = max(k.watched, now+req+resp)
	o.nextID++
	o.inflight[o.nextID] = len(o.ops)
	o.ops = append(o.ops, check.Op{Kind: check.OpRead, Key: key, Call: now, Born: -1, Return: now + req + resp})
	ctx.After(req, o.nextID)
}

// serve answers a read when its request reaches the store.
func (o *observer) serve(ctx engine.Ctx, id int64) {
	i, ok := o.inflight[id]
	if !ok {
		return
	}
	delete(o.inflight, id)
	// Read first: settling may fold commits into o.ops and move it.
	v := o.store.read(o.ops[i].Key, ctx.Now())
	o.ops[i].Born, o.ops[i].Value = ctx.Now(), v
}

// observe finishes the observation of r into res.Observer and returns the
// files to write next to run.json.
func (r *runner) observe(res *Result) map[string][]byte {
	start := time.Now()
	defer func() { r.observeWall = time.Since(start) }()
	o := r.obs
	name := check.ModelName(r.claim)
	obs := &Observation{ReadRatePerS: DefaultReadRate, RequiredModel: name, Models: map[string]*ModelResult{}}
	res.Observer = obs
	want := r.obsWant
	if want == nil {
		obs.Result = ObsNotApplicable
		return nil
	}
	keys := append([]uint64(nil), o.keys...)
	slices.Sort(keys)
	for _, k := range keys {
		o.close(o.open[k])
	}
	// Reads still in flight when the run stopped were never served.
	// The final reads come after everything: the last served read and
	// the last commit. A commit can be made after the instant the run
	// stopped (a CPU slice that began before it reports its commits at
	// the slice's later instants), and the store the final reads read
	// holds it, so a final read placed before it would be shown a value
	// the history has not made visible yet.
	ops := o.ops[:0]
	last := r.rt.Now()
	for _, op := range o.ops {
		switch {
		case op.Kind == check.OpApply:
			obs.ApplyOps++
			last = max(last, op.Return)
		case op.Born < 0:
			continue
		default:
			obs.Reads++
			last = max(last, op.Return)
		}
		ops = append(ops, op)
	}
	for k := range want {
		if _, seen := o.open[k]; !seen {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if o.pending[k] {
			continue
		}
		ops = append(ops, check.Op{Kind: check.OpFinal, Key: k, Value: r.store.read(k, last+1), Call: last + 1, Return: last + 2})
		obs.FinalReads++
	}
	o.ops = nil
	obs.Applies = o.applies

	timeout := observerTimeout
	if timeout == 0 {
		timeout = min(max(2*r.simWall, minObserverTimeout), check.DefaultTimeout)
	}
	rep, err := check.Check(ops, want, r.claim, check.Options{Timeout: timeout})
	if err != nil {
		panic(err) // every claim has a model
	}
	obs.Keys, obs.Segments = rep.Keys, rep.Segments
	mr := &ModelResult{Result: rep.Result, IllegalSegments: rep.Illegal, UncheckedSegments: rep.Unchecked, FirstViolation: rep.First}
	files := map[string][]byte{}
	var html bytes.Buffer
	if found, err := rep.Visualize(&html, r.annotations()); found && err == nil {
		mr.Visualization = "porcupine.html"
		files[mr.Visualization] = html.Bytes()
	}
	obs.Models[name] = mr
	obs.Result, obs.Visualization = mr.Result, mr.Visualization
	if mr.Result != check.LinOK {
		// The verdict is the worse of the harness's and the observer's: an
		// illegal history breaks the claim, and an unknown one does not
		// let it stand.
		res.ClaimHeld = false
	}
	return files
}

// observerProblem is the safety problem of an illegal history, or "".
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
		n := check.Annotation{Start: s.At, End: min(s.End, r.faultBounds().HardEnd), Description: string(s.Kind), Details: s.String()}
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

// expectations accumulates into want, per key, the expected set of effects
// and final value, from the oracle's sink effects (an Oracle.OnEffect).
func expectations(want map[uint64]check.Expect) func(m engine.Msg, prev int64) {
	return func(m engine.Msg, prev int64) {
		x := want[m.Key]
		x.Add(m.ID, m.Val-prev)
		want[m.Key] = x
	}
}

// hasSink reports whether w's plan ends in a sink (the observer is not
// applicable without one).
func hasSink(w workloads.Workload) bool {
	plan := w.Plan()
	return len(plan.Stages) > 0 && plan.Stages[len(plan.Stages)-1].Sink
}
