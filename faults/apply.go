package faults

import (
	"fmt"
	"strconv"
	"strings"

	"ftbench/engine"
)

// Installing specs on a run: Apply checks every spec against the run (its
// deployment's operators, its workers, its end) before it installs any on a
// Target.

// Target is a runtime that faults can be installed on; *sim.Sim implements it.
type Target interface {
	// Crash crashes a worker, or the master node when worker is
	// engine.MasterNode.
	Crash(worker int, at, restart engine.Time) error
	Slow(id engine.ProcID, from, to engine.Time, factor float64) error
	Reorder(from, to engine.Time, p float64, match func(from, to engine.ProcID) bool)
	Throttle(from, to engine.Time, rate float64, match func(from, to engine.ProcID) bool)
	Pause(worker int, from, to engine.Time) error
	StoreSlow(from, to engine.Time, factor float64) error
	StoreDown(from, to engine.Time) error
}

// Partitioner is a Target that can cut workers off by a network partition
// (*sim.Sim; the live runtime cannot).
type Partitioner interface {
	Partition(far []int, from, to engine.Time) error
}

// Bounds is what Apply needs to know of the run besides its deployment.
type Bounds struct {
	// Workers is the run's worker count (workers 0..Workers-1).
	Workers int
	// InputEnd is when the input ends: a fault must start before it.
	InputEnd engine.Time
	// HardEnd is when the run stops at the latest (the input and the
	// longest drain): a window is clipped there, never earlier, so a store
	// outage "longer than the run" lasts through the drain as the user
	// asked.
	HardEnd engine.Time
	// RestartDelay is the cost model's restart delay: how long a crash that
	// names no restart holds its worker down (overlap.go).
	RestartDelay engine.Time
	// Parts is the number of source partitions (partitions 0..Parts-1).
	Parts int
}

// Apply resolves every spec against dep and b and installs it on t.
//
// Windows that reach past b.HardEnd are clipped there; a window that starts
// at or after b.InputEnd, and a crash at or after it, are errors, since
// they would act on a run with no input left. Unknown operators, instance
// indexes out of range and workers outside 0..Workers-1 are errors naming
// the spec, and so are two faults the runtime cannot run at once
// (overlap.go). Every spec is checked before any is installed.
func Apply(specs []Spec, dep *engine.Deployment, b Bounds, t Target) error {
	if dep == nil {
		return fmt.Errorf("faults: no deployment to apply faults to")
	}
	if t == nil {
		return fmt.Errorf("faults: no target to apply faults to")
	}
	workers, end := b.Workers, b.InputEnd
	claims := make([]claim, 0, len(specs))
	steps := make([]func() error, 0, len(specs))
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		name := s.String()
		fail := func(format string, a ...any) error {
			return fmt.Errorf("fault %q: %s", name, fmt.Sprintf(format, a...))
		}
		if msg := validate(s); msg != "" {
			return fail("%s", msg)
		}
		if s.At >= end {
			if s.Kind == Crash {
				return fail("crash at %s is at or after the end of the run (%s)", fmtTime(s.At), fmtTime(end))
			}
			return fail("window starts at %s, at or after the end of the run (%s)", fmtTime(s.At), fmtTime(end))
		}
		from, to := s.At, min(s.End, b.HardEnd)
		var held []int // the workers whose liveness it takes (overlap.go)
		switch s.Kind {
		case Crash, Pause:
			if s.Master {
				at, restart := s.At, s.Restart
				to = at + downFor(restart, b.RestartDelay)
				steps = append(steps, func() error { return t.Crash(engine.MasterNode, at, restart) })
				break
			}
			w := s.Worker
			if s.Op != "" {
				id, msg := instance(dep, s.Op, s.Index)
				if msg != "" {
					return fail("%s", msg)
				}
				w = dep.Procs[id].Worker
				if w < 0 {
					verb := map[Kind]string{Crash: "crashes", Pause: "pauses"}[s.Kind]
					return fail("%q runs on the master node, which never %s", fmt.Sprintf("%s/%d", s.Op, s.Index), verb)
				}
			}
			if msg := checkWorker(w, workers); msg != "" {
				return fail("%s", msg)
			}
			held = []int{w}
			if s.Kind == Pause {
				steps = append(steps, func() error { return t.Pause(w, from, to) })
				break
			}
			restart := s.Restart
			if restart < 0 {
				restart = -1
			}
			at := s.At
			to = at + downFor(restart, b.RestartDelay)
			steps = append(steps, func() error { return t.Crash(w, at, restart) })
		case Partition:
			far, msg := farSide(s, dep, workers)
			if msg != "" {
				return fail("%s", msg)
			}
			held = far
			pt, ok := t.(Partitioner)
			if !ok {
				return fail("this runtime has no network to partition")
			}
			steps = append(steps, func() error { return pt.Partition(far, from, to) })
		case Slow:
			id, msg := instance(dep, s.Op, s.Index)
			if msg != "" {
				return fail("%s", msg)
			}
			factor := s.Factor
			steps = append(steps, func() error { return t.Slow(id, from, to, factor) })
		case StoreSlow:
			factor := s.Factor
			steps = append(steps, func() error { return t.StoreSlow(from, to, factor) })
		case StoreDown:
			steps = append(steps, func() error { return t.StoreDown(from, to) })
		case SourceDown:
			// Not a fault of the runtime: the harness installs it on the
			// source log (Outages), after Apply accepts the schedule.
			if msg := checkPart(s.Part, b.Parts); msg != "" {
				return fail("%s", msg)
			}
		case Throttle, Reorder:
			match, msg := edgeMatch(dep, s)
			if msg != "" {
				return fail("%s", msg)
			}
			if s.Kind == Throttle {
				rate := s.Rate
				steps = append(steps, func() error { t.Throttle(from, to, rate, match); return nil })
			} else {
				p := s.P
				steps = append(steps, func() error { t.Reorder(from, to, p, match); return nil })
			}
		}
		names = append(names, name)
		claims = append(claims, claimOf(s, name, from, to, held, fmt.Sprintf("%s/%d", s.Op, s.Index)))
	}
	if msg := firstConflict(claims); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("fault %q: %w", names[i], err)
		}
	}
	return nil
}

// downFor is how long a crash holds its worker (or the master) down: its
// own restart delay, or the cost model's when it names none.
func downFor(restart, def engine.Time) engine.Time {
	if restart < 0 {
		return def
	}
	return restart
}

func checkWorker(w, workers int) string { return checkNumber("worker", "workers", "", w, workers) }

func checkPart(p, parts int) string {
	return checkNumber("partition", "source partitions", ", one per source instance", p, parts)
}

// checkNumber says what is wrong with thing number i of a run that has n
// of them (plural), numbered from 0, or "".
func checkNumber(thing, plural, note string, i, n int) string {
	if i >= 0 && i < n {
		return ""
	}
	if n <= 0 {
		return fmt.Sprintf("no %s %d (the run has no %s)", thing, i, plural)
	}
	return fmt.Sprintf("no %s %d (%s are 0-%d%s)", thing, i, plural, n-1, note)
}

// SourceOutage is the window of a source-down spec as Apply clips it: the
// partition, and [from, to) ending at b.HardEnd at the latest.
func SourceOutage(s Spec, b Bounds) (part int, from, to engine.Time) {
	return s.Part, s.At, min(s.End, b.HardEnd)
}

// WorkerOf is the worker a crash or pause spec acts on in dep, resolved as
// Apply resolves it: engine.MasterNode for a master crash, the worker
// hosting op=NAME/I, or worker=N; false when dep has no such instance.
func WorkerOf(s Spec, dep *engine.Deployment) (int, bool) {
	switch {
	case s.Master:
		return engine.MasterNode, true
	case s.Op != "":
		id, msg := instance(dep, s.Op, s.Index)
		if msg != "" {
			return 0, false
		}
		return dep.Procs[id].Worker, true
	}
	return s.Worker, true
}

// instance finds operator op's instance idx.
func instance(dep *engine.Deployment, op string, idx int) (engine.ProcID, string) {
	n := 0
	for i, p := range dep.Procs {
		if !p.Runs(op) {
			continue
		}
		n++
		if p.Index == idx {
			return engine.ProcID(i), ""
		}
	}
	if n == 0 {
		return -1, noOperator(dep, op)
	}
	return -1, fmt.Sprintf("operator %q has no instance %d (it has %d instances)", op, idx, n)
}

func noOperator(dep *engine.Deployment, op string) string {
	var ops []string
	seen := map[string]bool{}
	for _, p := range dep.Procs {
		for _, o := range p.Ops() {
			if !seen[o] {
				seen[o] = true
				ops = append(ops, o)
			}
		}
	}
	for i, o := range ops {
		ops[i] = strconv.Quote(o)
	}
	return fmt.Sprintf("no operator %q in the deployment (operators: %s)", op, strings.Join(ops, ", "))
}

// edgeMatch builds the channel selector of a throttle or reorder spec.
func edgeMatch(dep *engine.Deployment, s Spec) (func(from, to engine.ProcID) bool, string) {
	if s.AllEdges {
		return func(from, to engine.ProcID) bool { return true }, ""
	}
	a, msg := opSet(dep, s.From)
	if msg != "" {
		return nil, fmt.Sprintf("edge %q: %s", s.From+"->"+s.To, msg)
	}
	b, msg := opSet(dep, s.To)
	if msg != "" {
		return nil, fmt.Sprintf("edge %q: %s", s.From+"->"+s.To, msg)
	}
	return func(from, to engine.ProcID) bool { return in(a, from) && in(b, to) }, ""
}

func opSet(dep *engine.Deployment, op string) ([]bool, string) {
	set := make([]bool, len(dep.Procs))
	n := 0
	for i, p := range dep.Procs {
		if p.Runs(op) {
			set[i] = true
			n++
		}
	}
	if n == 0 {
		return nil, noOperator(dep, op)
	}
	return set, ""
}

func in(set []bool, id engine.ProcID) bool {
	return id >= 0 && int(id) < len(set) && set[id]
}

// farSide resolves a partition's far side: one worker (by number or by the
// operator instance it hosts) or the second side of workers=NEAR|FAR.
func farSide(s Spec, dep *engine.Deployment, workers int) ([]int, string) {
	switch {
	case s.Sides != "":
		near, far, msg := parseSides(s.Sides)
		if msg != "" {
			return nil, msg
		}
		for _, w := range append(near, far...) {
			if msg := checkWorker(w, workers); msg != "" {
				return nil, msg
			}
		}
		return far, ""
	case s.Op != "":
		id, msg := instance(dep, s.Op, s.Index)
		if msg != "" {
			return nil, msg
		}
		w := dep.Procs[id].Worker
		if w < 0 {
			return nil, fmt.Sprintf("%q runs on the master node, which stays on the near side", fmt.Sprintf("%s/%d", s.Op, s.Index))
		}
		return []int{w}, ""
	}
	if msg := checkWorker(s.Worker, workers); msg != "" {
		return nil, msg
	}
	return []int{s.Worker}, ""
}

// Check reports what Apply would refuse in specs, installing nothing: for
// tools that build schedules (torture) and must keep only faults that can
// run together.
func Check(specs []Spec, dep *engine.Deployment, b Bounds) error {
	return Apply(specs, dep, b, discard{})
}

// discard is a Target (and Partitioner) that installs nothing.
type discard struct{}

func (discard) Crash(int, engine.Time, engine.Time) error                                     { return nil }
func (discard) Slow(engine.ProcID, engine.Time, engine.Time, float64) error                   { return nil }
func (discard) Reorder(engine.Time, engine.Time, float64, func(from, to engine.ProcID) bool)  {}
func (discard) Throttle(engine.Time, engine.Time, float64, func(from, to engine.ProcID) bool) {}
func (discard) Pause(int, engine.Time, engine.Time) error                                     { return nil }
func (discard) StoreSlow(engine.Time, engine.Time, float64) error                             { return nil }
func (discard) StoreDown(engine.Time, engine.Time) error                                      { return nil }
func (discard) Partition([]int, engine.Time, engine.Time) error                               { return nil }

// Edges are the channels between operators a throttle or reorder can
// name: the pairs of operators consecutive in the plan (planOps) among
// those deployed (a system may fuse stages). An edge whose two operators
// run in one chained process (ProcSpec.Chain) is chained: records pass
// between them by a method call, with no channel to slow or reorder.
func Edges(dep *engine.Deployment, planOps []string) (network, chained [][2]string) {
	deployed := map[string]bool{}
	together := map[[2]string]bool{}
	for _, p := range dep.Procs {
		ops := p.Ops()
		for i, o := range ops {
			deployed[o] = true
			if i > 0 {
				together[[2]string{ops[i-1], o}] = true
			}
		}
	}
	var ops []string
	for _, o := range planOps {
		if deployed[o] {
			ops = append(ops, o)
		}
	}
	for i := 0; i+1 < len(ops); i++ {
		e := [2]string{ops[i], ops[i+1]}
		if together[e] {
			chained = append(chained, e)
		} else {
			network = append(network, e)
		}
	}
	return network, chained
}
