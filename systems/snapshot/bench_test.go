package snapshot

import (
	"reflect"
	"testing"

	"ftbench/engine"
	"ftbench/engine/sim"
	"ftbench/systems"
	"ftbench/workloads"
)

// runDirect is one bank-p2p run through the system's own path — compile,
// simulate, summarize — without the harness's delivery checker, time
// series or files: the lecture's reference simulation (4 processes, a
// transfer every 2.5 ms, one snapshot at 150 ms) as a function of a seed.
func runDirect(tb testing.TB, seed uint64, variant string) map[string]any {
	w, err := workloads.New("bank-p2p", engine.ChildSeed(seed, "workload"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	cost := engine.DefaultCost()
	log := &workloads.Log{Parts: 4, Rate: 400, End: 300 * engine.Millisecond}
	job := systems.Job{
		Workload: w, Log: log, Parallelism: 4, Workers: 4, Variant: variant, Cost: &cost,
		Opts: systems.Options{flagInterval: "1s", flagSnapshots: "1"}, Seed: engine.ChildSeed(seed, "system"),
	}
	dep, err := system{}.Compile(job)
	if err != nil {
		tb.Fatal(err)
	}
	obs := &observer{counters: map[string]int64{}}
	s, err := sim.New(dep, sim.Config{Seed: engine.ChildSeed(seed, "runtime"), Cost: cost, Workers: 4, Observer: obs})
	if err != nil {
		tb.Fatal(err)
	}
	s.Run(log.End + engine.Second) // returns as soon as nothing is left to do
	return system{}.Summarize(systems.RunInfo{Events: obs.events, Counters: obs.counters, Store: s.StoreValue, Workload: w, Log: log, Job: job})
}

type observer struct {
	events   []engine.Event
	counters map[string]int64
}

func (o *observer) Commit(engine.Time, engine.Commit) {}
func (o *observer) Event(e engine.Event)              { o.events = append(o.events, e) }
func (o *observer) Count(name string, d int64)        { o.counters[name] += d }
func (o *observer) Sample(engine.Time)                {}

// BenchmarkBankP2POneSnapshot is one seeded run per iteration (seed = i+1),
// each checked for a consistent snapshot. The speed target is
//
//	go test ./systems/snapshot -run '^$' -bench BankP2POneSnapshot -benchtime 10000x
//
// 10,000 runs in under 10 s: ns/op * 10000.
func BenchmarkBankP2POneSnapshot(b *testing.B) {
	for i := 0; i < b.N; i++ {
		m := runDirect(b, uint64(i+1), CL)
		if m["snapshots_consistent"].(int64) != 1 {
			b.Fatalf("seed %d: %v", i+1, m)
		}
	}
}

// Each run is a pure function of its seed; different seeds differ.
func TestDirectRunsDeterministic(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 20
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		for _, v := range []string{CL, Naive, LaiYang, Mattern} {
			a, b := runDirect(t, seed, v), runDirect(t, seed, v)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("seed %d %s: two runs differ:\n%v\n%v", seed, v, a, b)
			}
			if v != Naive && (a["snapshots_consistent"].(int64) != 1 || a["safety_violations"].(int64) != 0) {
				t.Fatalf("seed %d %s: %v", seed, v, a)
			}
		}
	}
	if reflect.DeepEqual(runDirect(t, 1, Naive), runDirect(t, 2, Naive)) {
		t.Fatal("seeds 1 and 2 gave the same naive snapshot")
	}
}
