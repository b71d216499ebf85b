package faults

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/engine/sim"
)

type call struct {
	kind     string
	worker   int
	id       engine.ProcID
	from, to engine.Time
	restart  engine.Time
	value    float64 // factor, rate or p
	match    func(from, to engine.ProcID) bool
}

type fakeTarget struct {
	calls    []call
	crashErr error
}

func (f *fakeTarget) Crash(worker int, at, restart engine.Time) error {
	if f.crashErr != nil {
		return f.crashErr
	}
	f.calls = append(f.calls, call{kind: "crash", worker: worker, from: at, restart: restart})
	return nil
}

func (f *fakeTarget) Slow(id engine.ProcID, from, to engine.Time, factor float64) error {
	f.calls = append(f.calls, call{kind: "slow", id: id, from: from, to: to, value: factor})
	return nil
}

func (f *fakeTarget) Reorder(from, to engine.Time, p float64, match func(from, to engine.ProcID) bool) {
	f.calls = append(f.calls, call{kind: "reorder", from: from, to: to, value: p, match: match})
}

func (f *fakeTarget) Pause(worker int, from, to engine.Time) error {
	f.calls = append(f.calls, call{kind: "pause", worker: worker, from: from, to: to})
	return nil
}

func (f *fakeTarget) StoreSlow(from, to engine.Time, factor float64) error {
	f.calls = append(f.calls, call{kind: "store-slow", from: from, to: to, value: factor})
	return nil
}

func (f *fakeTarget) StoreDown(from, to engine.Time) error {
	f.calls = append(f.calls, call{kind: "store-down", from: from, to: to})
	return nil
}

func (f *fakeTarget) Throttle(from, to engine.Time, rate float64, match func(from, to engine.ProcID) bool) {
	f.calls = append(f.calls, call{kind: "throttle", from: from, to: to, value: rate, match: match})
}

// partitionTarget is a fakeTarget with a network to partition.
type partitionTarget struct{ fakeTarget }

func (f *partitionTarget) Partition(far []int, from, to engine.Time) error {
	f.calls = append(f.calls, call{kind: "partition", worker: far[0], from: from, to: to})
	return nil
}

// testDeployment: source/0-1, split/0-1, count/0-2, sink/0 on 3 workers, plus
// a coordinator on the master node. Procs are deliberately not grouped by op
// and count's instances are out of index order.
func testDeployment() *engine.Deployment {
	d := &engine.Deployment{}
	add := func(op string, idx, worker int) {
		name := "coordinator"
		if op != "" {
			name = fmt.Sprintf("%s/%d", op, idx)
		}
		d.Add(engine.ProcSpec{Name: name, Op: op, Index: idx, Worker: worker})
	}
	add("", 0, -1)       // 0 coordinator
	add("source", 0, 0)  // 1
	add("source", 1, 1)  // 2
	add("split", 0, 0)   // 3
	add("count", 1, 1)   // 4
	add("split", 1, 1)   // 5
	add("count", 0, 2)   // 6
	add("count", 2, 0)   // 7
	add("sink", 0, 2)    // 8
	add("badop", 0, -1)  // 9: an operator on the master node
	add("nowhere", 0, 7) // 10: on a worker the run does not have
	d.Coordinator = 0
	return d
}

const workers = 3

func TestApply(t *testing.T) {
	dep := testDeployment()
	end := 20 * s
	specs := []Spec{
		mustParse(t, "crash@8s:op=count/0"),                        // worker 2
		mustParse(t, "crash@1s:worker=1,restart=500ms"),            // worker 1
		mustParse(t, "slow@5s-10s:op=count/2,factor=4"),            // proc 7
		mustParse(t, "slow@15s-40s:op=count/1"),                    // clipped to the hard end, 30s
		mustParse(t, "throttle@5s-25s:edge=split->count,rate=200"), // through the drain
		mustParse(t, "reorder@1s-2s:edge=all,p=0.5"),
		mustParse(t, "reorder@2s-3s:edge=count->sink"),
		mustParse(t, "pause@3s-4s:op=count/1"), // worker 1
		mustParse(t, "pause@19s-35s:worker=0"), // clipped
		mustParse(t, "store-slow@2s-3s:factor=5"),
		mustParse(t, "store-down@18s-60s"), // clipped
		mustParse(t, "crash@6s:master,restart=2s"),
	}
	ft := &fakeTarget{}
	if err := Apply(specs, dep, Bounds{Workers: workers, InputEnd: end, HardEnd: end + 10*s, RestartDelay: engine.Second}, ft); err != nil {
		t.Fatal(err)
	}
	want := []call{
		{kind: "crash", worker: 2, from: 8 * s, restart: -1},
		{kind: "crash", worker: 1, from: 1 * s, restart: 500 * ms},
		{kind: "slow", id: 7, from: 5 * s, to: 10 * s, value: 4},
		{kind: "slow", id: 4, from: 15 * s, to: 30 * s, value: 8},
		{kind: "throttle", from: 5 * s, to: 25 * s, value: 200},
		{kind: "reorder", from: 1 * s, to: 2 * s, value: 0.5},
		{kind: "reorder", from: 2 * s, to: 3 * s, value: 0.2},
		{kind: "pause", worker: 1, from: 3 * s, to: 4 * s},
		{kind: "pause", worker: 0, from: 19 * s, to: 30 * s},
		{kind: "store-slow", from: 2 * s, to: 3 * s, value: 5},
		{kind: "store-down", from: 18 * s, to: 30 * s},
		{kind: "crash", worker: engine.MasterNode, from: 6 * s, restart: 2 * s},
	}
	if len(ft.calls) != len(want) {
		t.Fatalf("got %d calls, want %d: %+v", len(ft.calls), len(want), ft.calls)
	}
	for i, w := range want {
		g := ft.calls[i]
		if g.kind != w.kind || g.worker != w.worker || g.id != w.id || g.from != w.from ||
			g.to != w.to || g.restart != w.restart || g.value != w.value {
			t.Errorf("call %d = %+v, want %+v", i, g, w)
		}
	}

	// Edge matching: exactly the channels from an instance of A to an
	// instance of B, and nothing for ids outside the deployment.
	ids := []engine.ProcID{engine.Runtime, -7, 11, 1000}
	for i := range dep.Procs {
		ids = append(ids, engine.ProcID(i))
	}
	isOp := func(id engine.ProcID, op string) bool {
		return id >= 0 && int(id) < len(dep.Procs) && dep.Procs[id].Op == op
	}
	checks := []struct {
		call int
		want func(from, to engine.ProcID) bool
	}{
		{4, func(from, to engine.ProcID) bool { return isOp(from, "split") && isOp(to, "count") }},
		{5, func(from, to engine.ProcID) bool { return true }},
		{6, func(from, to engine.ProcID) bool { return isOp(from, "count") && isOp(to, "sink") }},
	}
	for _, c := range checks {
		m := ft.calls[c.call].match
		n := 0
		for _, from := range ids {
			for _, to := range ids {
				got := m(from, to)
				if got != c.want(from, to) {
					t.Errorf("%s: match(%d, %d) = %v", specs[c.call], from, to, got)
				}
				if got {
					n++
				}
			}
		}
		if c.call == 4 && n != 2*3 {
			t.Errorf("split->count matches %d channels, want 6", n)
		}
	}
}

func mustParse(t *testing.T, in string) Spec {
	t.Helper()
	sp, err := Parse(in, defs)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestApplyErrors(t *testing.T) {
	end := 20 * s
	tests := []struct {
		spec Spec
		want []string
	}{
		{mustParse(t, "crash@20s:worker=0"), []string{"crash at 20s is at or after the end of the run (20s)"}},
		{mustParse(t, "crash@25s:op=count/0"), []string{"at or after the end of the run"}},
		{mustParse(t, "slow@20s-30s:op=count/0"), []string{"window starts at 20s, at or after the end of the run (20s)"}},
		{mustParse(t, "reorder@21s-30s:edge=all"), []string{"window starts at 21s"}},
		{mustParse(t, "crash@1s:worker=3"), []string{"no worker 3 (workers are 0-2)"}},
		{mustParse(t, "crash@1s:op=nowhere/0"), []string{"no worker 7 (workers are 0-2)"}},
		{mustParse(t, "crash@1s:op=badop/0"), []string{`"badop/0" runs on the master node`}},
		{mustParse(t, "pause@1s-2s:op=badop/0"), []string{`"badop/0" runs on the master node, which never pauses`}},
		{mustParse(t, "pause@1s-2s:worker=3"), []string{"no worker 3 (workers are 0-2)"}},
		{mustParse(t, "pause@20s-22s:worker=0"), []string{"window starts at 20s"}},
		{Spec{Kind: Pause, At: 1, End: 2, Worker: -1}, []string{"missing target"}},
		{mustParse(t, "crash@1s:op=map/0"), []string{`no operator "map" in the deployment (operators: "source", "split", "count", "sink", "badop", "nowhere")`}},
		{mustParse(t, "crash@1s:op=count/3"), []string{`operator "count" has no instance 3 (it has 3 instances)`}},
		{mustParse(t, "slow@1s-2s:op=count/9"), []string{`operator "count" has no instance 9`}},
		{mustParse(t, "slow@1s-2s:op=map/0"), []string{`no operator "map"`}},
		{mustParse(t, "throttle@1s-2s:edge=map->count,rate=1"), []string{`edge "map->count": no operator "map"`}},
		{mustParse(t, "reorder@1s-2s:edge=split->reduce"), []string{`edge "split->reduce": no operator "reduce"`}},
		// Specs built by hand are validated too.
		{Spec{Kind: "boom"}, []string{`unknown kind "boom"`}},
		{Spec{Kind: Crash, Worker: -1, Restart: -1}, []string{"missing target"}},
		{Spec{Kind: Crash, At: -1, Worker: 0}, []string{"negative"}},
		{Spec{Kind: Slow, At: 2 * s, End: 1 * s, Op: "count", Factor: 2}, []string{"window ends at or before it starts"}},
		{Spec{Kind: Slow, At: 1, End: 2, Op: "count", Factor: 0}, []string{"factor 0 must be positive"}},
		{Spec{Kind: Throttle, At: 1, End: 2, AllEdges: true, Rate: 1}, []string{"not edge=all"}},
		{Spec{Kind: Throttle, At: 1, End: 2, From: "split", To: "count"}, []string{"rate 0 must be positive"}},
		{Spec{Kind: Reorder, At: 1, End: 2, AllEdges: true, P: 2}, []string{"p 2 is not in (0,1]"}},
		// source-down names a source partition: 0..Parts-1 (4 here).
		{mustParse(t, "source-down@1s-2s:partition=4"), []string{"no partition 4 (source partitions are 0-3, one per source instance)"}},
		{mustParse(t, "source-down@20s-22s:partition=0"), []string{"window starts at 20s"}},
		{Spec{Kind: SourceDown, At: 1, End: 2, Part: -1}, []string{"partition -1 is negative"}},
	}
	for _, tt := range tests {
		ft := &fakeTarget{}
		// A valid spec first: nothing is installed when a later one is bad.
		specs := []Spec{mustParse(t, "reorder@1s-2s:edge=all"), tt.spec}
		err := Apply(specs, testDeployment(), Bounds{Workers: workers, InputEnd: end, HardEnd: end, RestartDelay: engine.Second, Parts: 4}, ft)
		if err == nil {
			t.Errorf("Apply(%s) succeeded, want an error", tt.spec)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, fmt.Sprintf("fault %q", tt.spec.String())) {
			t.Errorf("Apply(%s): error %q does not name the spec", tt.spec, msg)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("Apply(%s): error has a newline: %q", tt.spec, msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("Apply(%s): error %q does not contain %q", tt.spec, msg, w)
			}
		}
		if len(ft.calls) != 0 {
			t.Errorf("Apply(%s) installed %d faults before failing", tt.spec, len(ft.calls))
		}
	}
}

func TestApplyEdgeCases(t *testing.T) {
	ft := &fakeTarget{}
	if err := Apply(nil, testDeployment(), Bounds{Workers: workers, InputEnd: s, HardEnd: s, RestartDelay: engine.Second}, ft); err != nil || len(ft.calls) != 0 {
		t.Errorf("Apply(nil) = %v, calls %d", err, len(ft.calls))
	}
	if err := Apply([]Spec{mustParse(t, "reorder")}, nil, Bounds{Workers: workers, InputEnd: s, HardEnd: s}, ft); err == nil {
		t.Error("Apply with a nil deployment succeeded")
	}
	if err := Apply([]Spec{mustParse(t, "reorder")}, testDeployment(), Bounds{Workers: workers, InputEnd: s, HardEnd: s}, nil); err == nil {
		t.Error("Apply with a nil target succeeded")
	}
	if err := Apply([]Spec{mustParse(t, "crash@1s:worker=0")}, testDeployment(), Bounds{Workers: 0, InputEnd: 20 * s, HardEnd: 20 * s, RestartDelay: engine.Second}, ft); err == nil ||
		!strings.Contains(err.Error(), "no worker 0 (the run has no workers)") {
		t.Errorf("Apply with no workers: %v", err)
	}
	// Errors from the target are wrapped with the spec.
	boom := errors.New("boom")
	ft = &fakeTarget{crashErr: boom}
	err := Apply([]Spec{mustParse(t, "crash@1s:worker=0")}, testDeployment(), Bounds{Workers: workers, InputEnd: 20 * s, HardEnd: 20 * s, RestartDelay: engine.Second}, ft)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), `fault "crash@1s:worker=0"`) {
		t.Errorf("target error: %v", err)
	}
	// A crash by op with a hand-built negative restart uses the default.
	ft = &fakeTarget{}
	sp := Spec{Kind: Crash, At: s, Worker: -1, Op: "count", Index: 2, Restart: -5}
	if err := Apply([]Spec{sp}, testDeployment(), Bounds{Workers: workers, InputEnd: 20 * s, HardEnd: 20 * s, RestartDelay: engine.Second}, ft); err != nil {
		t.Fatal(err)
	}
	if c := ft.calls[0]; c.worker != 0 || c.restart != -1 {
		t.Errorf("crash call %+v, want worker 0, restart -1", c)
	}
	// Bare defaults apply cleanly to a deployment that has the operators.
	ft = &fakeTarget{}
	var specs []Spec
	for _, k := range []string{"crash", "slow", "throttle", "reorder"} {
		specs = append(specs, mustParse(t, k))
	}
	if err := Apply(specs, testDeployment(), Bounds{Workers: workers, InputEnd: defs.Duration, HardEnd: defs.Duration, RestartDelay: engine.Second}, ft); err != nil {
		t.Fatal(err)
	}
	if len(ft.calls) != 4 || ft.calls[0].worker != 2 || ft.calls[1].id != 6 {
		t.Errorf("bare defaults installed %+v", ft.calls)
	}
}

// The simulator is a Target.
var _ Target = (*sim.Sim)(nil)

// Two faults the runtime cannot run at once are refused before anything is
// installed, naming both; faults that may overlap are installed, every one.
func TestApplyOverlaps(t *testing.T) {
	tests := []struct {
		a, b string
		want string // "" = both installed
	}{
		{"partition@2s-4s:worker=1", "partition@3s-5s:worker=2", "the network"},
		{"partition@2s-4s:worker=1", "partition@4s-5s:worker=2", ""},
		{"crash@5s:worker=1", "crash@5500ms:worker=1", "worker 1"}, // default restart 1s
		{"crash@5s:worker=1", "crash@6500ms:worker=1", ""},
		{"crash@5s:worker=1,restart=3s", "crash@7s:worker=1", "worker 1"},
		{"crash@5s:worker=1", "crash@5500ms:worker=2", ""},
		{"crash@5s:master", "crash@5500ms:master", "the master node"},
		{"crash@5s:master", "crash@5500ms:worker=1", ""},
		{"pause@4s-6s:worker=1", "crash@5s:worker=1", "worker 1"},
		{"pause@4s-6s:worker=1", "pause@5s-7s:op=count/1", "worker 1"}, // count/1 is on worker 1
		{"partition@2s-4s:worker=1", "pause@3s-5s:worker=1", "worker 1"},
		{"partition@2s-4s:workers=0|1,2", "crash@3s:worker=2", "worker 2"},
		{"partition@2s-4s:worker=1", "pause@3s-5s:worker=2", ""},
		{"slow@1s-3s:op=count/0", "slow@2s-4s:op=count/0", "operator instance count/0"},
		{"slow@1s-3s:op=count/0", "slow@2s-4s:op=count/1", ""},
		{"throttle@1s-3s:edge=split->count,rate=100", "throttle@2s-4s:edge=split->count,rate=50", "split->count"},
		{"throttle@1s-3s:edge=split->count,rate=100", "throttle@2s-4s:edge=count->sink,rate=50", ""},
		{"reorder@1s-3s:edge=all", "reorder@2s-4s:edge=count->sink", "the same channels"},
		{"reorder@1s-3s:edge=split->count", "reorder@2s-4s:edge=count->sink", ""},
		{"reorder@1s-3s:edge=all", "throttle@2s-4s:edge=count->sink,rate=50", ""},
		{"store-slow@1s-3s", "store-slow@2s-4s:factor=2", "the checkpoint store"},
		{"store-down@1s-3s", "store-down@2s-4s", ""},
		{"store-down@1s-3s", "store-slow@2s-4s", ""},
		{"crash@5s:worker=1", "crash@5s:worker=1", "given twice"},
		{"store-down@1s-3s", "store-down@1s-3s", "given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.a+"+"+tt.b, func(t *testing.T) {
			ft := &partitionTarget{}
			specs := []Spec{mustParse(t, tt.a), mustParse(t, tt.b)}
			err := Apply(specs, testDeployment(), Bounds{Workers: workers, InputEnd: 20 * s, HardEnd: 30 * s, RestartDelay: engine.Second}, ft)
			if tt.want == "" {
				if err != nil || len(ft.calls) != 2 {
					t.Fatalf("err %v, %d calls; want both installed", err, len(ft.calls))
				}
				return
			}
			if err == nil {
				t.Fatalf("both installed (%+v), want a refusal naming %q", ft.calls, tt.want)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || !strings.Contains(msg, specs[0].String()) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming %q and both faults", msg, tt.want)
			}
			if len(ft.calls) != 0 {
				t.Errorf("installed %d faults before refusing", len(ft.calls))
			}
		})
	}
}

// source-down is a fault of the source log, not of the runtime: Apply
// accepts it (any partition below Parts, overlapping anything, even
// another outage of its partition, since outages add up) and installs
// nothing on the Target; SourceOutage clips its window at HardEnd, as
// Apply clips every window.
func TestApplySourceDown(t *testing.T) {
	b := Bounds{Workers: workers, InputEnd: 20 * s, HardEnd: 25 * s, RestartDelay: engine.Second, Parts: 4}
	specs := []Spec{
		mustParse(t, "source-down@1s-5s:partition=3"),
		mustParse(t, "source-down@2s-30s:partition=3"),
		mustParse(t, "crash@3s:worker=1"),
		mustParse(t, "store-down@2s-4s"),
	}
	ft := &fakeTarget{}
	if err := Apply(specs, testDeployment(), b, ft); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	for _, c := range ft.calls {
		if c.kind != "crash" && c.kind != "store-down" {
			t.Errorf("source-down installed %q on the runtime", c.kind)
		}
	}
	if len(ft.calls) != 2 {
		t.Errorf("%d faults installed on the runtime, want the crash and the store outage", len(ft.calls))
	}
	tests := []struct {
		spec     Spec
		part     int
		from, to engine.Time
	}{
		{specs[0], 3, 1 * s, 5 * s},
		{specs[1], 3, 2 * s, 25 * s},
	}
	for _, tt := range tests {
		part, from, to := SourceOutage(tt.spec, b)
		if part != tt.part || from != tt.from || to != tt.to {
			t.Errorf("SourceOutage(%s) = %d [%s, %s), want %d [%s, %s)", tt.spec, part, from, to, tt.part, tt.from, tt.to)
		}
	}
}
