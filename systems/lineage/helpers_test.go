package lineage

import (
	"testing"

	"ftbench/engine"
	"ftbench/engine/sim"
	"ftbench/faults"
	"ftbench/systems"
	"ftbench/workloads"
)

// simRun is one lineage run driven directly on the simulator, so a test can
// look at the driver's lineage bookkeeping and the events afterwards.
type simRun struct {
	job    systems.Job
	dep    *engine.Deployment
	sim    *sim.Sim
	driver *driver
	obs    *observer
}

type observer struct {
	events  []engine.Event
	commits map[engine.EffectID]int
	counts  map[string]int64
}

func (o *observer) Commit(_ engine.Time, c engine.Commit) { o.commits[c.ID]++ }
func (o *observer) Event(e engine.Event)                  { o.events = append(o.events, e) }
func (o *observer) Count(name string, d int64)            { o.counts[name] += d }
func (o *observer) Sample(engine.Time)                    {}

type runOpts struct {
	workload string
	wopts    map[string]string
	variant  string
	opts     map[string]string
	par      int
	workers  int
	rate     float64
	dur      engine.Time
	faults   []string
	cost     []string
}

func newSimRun(t testing.TB, o runOpts) *simRun {
	t.Helper()
	if o.workload == "" {
		o.workload = "wordcount"
	}
	w, err := workloads.New(o.workload, 1, o.wopts)
	if err != nil {
		t.Fatal(err)
	}
	cost := engine.DefaultCost()
	for _, c := range o.cost {
		if err := cost.Set(c); err != nil {
			t.Fatal(err)
		}
	}
	s := system{}
	variant := o.variant
	if variant == "" {
		variant = s.Variants()[0]
	}
	opts := systems.Options{}
	for _, f := range s.Flags() {
		opts[f.Name] = f.Default
	}
	for k, v := range o.opts {
		opts[k] = v
	}
	r := &simRun{obs: &observer{commits: map[engine.EffectID]int{}, counts: map[string]int64{}}}
	r.job = systems.Job{Workload: w, Log: &workloads.Log{Parts: o.par, Rate: o.rate, End: o.dur},
		Parallelism: o.par, Workers: o.workers, Variant: variant, Opts: opts, Cost: &cost, Seed: 7}
	if r.dep, err = s.Compile(r.job); err != nil {
		t.Fatal(err)
	}
	spec := &r.dep.Procs[r.dep.Coordinator]
	mk := spec.New
	spec.New = func() engine.Process { p := mk(); r.driver = p.(*driver); return p }
	if r.sim, err = sim.New(r.dep, sim.Config{Seed: 3, Cost: cost, Workers: o.workers, Observer: r.obs}); err != nil {
		t.Fatal(err)
	}
	plan := w.Plan()
	_, name := plan.FirstStateful()
	specs, err := faults.ParseAll(o.faults, faults.Defaults{Duration: o.dur, StatefulOp: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := faults.Apply(specs, r.dep, faults.Bounds{Workers: o.workers, InputEnd: o.dur, HardEnd: o.dur, RestartDelay: engine.DefaultCost().RestartDelay}, r.sim); err != nil {
		t.Fatal(err)
	}
	return r
}

// run simulates until the input has ended and every batch holding input is
// committed (or until limit).
func (r *simRun) run(limit engine.Time) {
	end := r.job.Log.End
	for t := end; t <= limit; t += r.driver.e.cfg.interval {
		r.sim.Run(t)
		if r.driver.drainedInput() {
			return
		}
	}
}

// drainedInput reports whether every appended record is in a committed batch.
func (d *driver) drainedInput() bool {
	if d.nextJob == 0 || len(d.batches) == 0 {
		return false
	}
	var committed *batch
	for _, b := range d.batches {
		if !b.done {
			break
		}
		committed = b
	}
	return committed != nil && committed.hi[0] >= d.e.log.Total()
}

// checkExactlyOnce compares the committed effects with the oracle.
func (r *simRun) checkExactlyOnce(t testing.TB) {
	t.Helper()
	appended := make([]int64, r.job.Parallelism)
	for p := range appended {
		appended[p] = r.job.Log.Total()
	}
	effects, total, _ := workloads.Expected(r.job.Workload, appended)
	var dup, lost int64
	for p := range effects {
		for off, n := range effects[p] {
			for sub := 0; sub < int(n); sub++ {
				switch c := r.obs.commits[engine.EffectID{Part: int32(p), Sub: int32(sub), Off: int64(off)}]; {
				case c == 0:
					lost++
				case c > 1:
					dup += int64(c - 1)
				}
			}
		}
	}
	if dup != 0 || lost != 0 || int64(len(r.obs.commits)) != total-lost {
		t.Fatalf("duplicates %d, lost %d, committed %d distinct of %d expected effects", dup, lost, len(r.obs.commits), total)
	}
}

func (r *simRun) eventsOf(kind string) []engine.Event {
	var out []engine.Event
	for _, e := range r.obs.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}
