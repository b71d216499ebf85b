package faults

import (
	"fmt"
	"slices"

	"ftbench/engine"
)

// This file owns which faults may be active at once. Every kind declares it
// (overlapRules); Apply refuses a schedule that breaks a rule before
// anything runs, so a run never injects fewer faults than its config lists.
// The runtimes model one fault of a kind per target at a time: a second
// crash of a worker that is down, a pause of a worker that is paused, down
// or cut off, a partition while one is on are no-ops in the simulator, and
// for slow, throttle, reorder and store-slow the first window that matches
// wins. Rather than drop a fault silently, bench refuses the schedule and
// names the pair (docs/faults.md, "Overlapping faults").

// Overlap says whether two faults of one kind may be active at once.
type Overlap uint8

const (
	// OverlapNever: at most one at a time, whatever their targets (a
	// partition: the simulator models one cut; store-slow: one store).
	OverlapNever Overlap = iota
	// OverlapOtherTargets: at once only on different targets (two crashes
	// of different workers, two slow instances).
	OverlapOtherTargets
	// OverlapAny: may be active together with any fault, of its kind or
	// another, and both take effect (store-down: the store is down while
	// any outage is, whatever its speed).
	OverlapAny
)

// overlapRules is every kind's rule. Crash, pause and partition also share
// a target across kinds: the liveness of a worker (resources).
var overlapRules = map[Kind]Overlap{
	Crash:     OverlapOtherTargets,
	Pause:     OverlapOtherTargets,
	Partition: OverlapNever,
	Slow:      OverlapOtherTargets,
	Throttle:  OverlapOtherTargets,
	Reorder:   OverlapOtherTargets,
	StoreSlow: OverlapNever,
	StoreDown: OverlapAny,
	// Two outages of a partition add up (workloads.Log.Down), and an
	// outage of the source log acts on no worker, store or channel.
	SourceDown: OverlapAny,
}

// OverlapRule returns kind's rule.
func OverlapRule(k Kind) Overlap { return overlapRules[k] }

// claim is what one resolved fault holds from From to To: the resources it
// acts on ("worker 2", "master", "op count/0", "edge split->count",
// "network", "store"). Two claims on one resource with overlapping windows
// break the rules, unless both are of a kind that allows any overlap.
type claim struct {
	spec      string
	kind      Kind
	from, to  engine.Time // [from, to)
	resources []string
	allEdges  bool // reorder on every edge: overlaps every other reorder
}

// claimOf is the resources spec s holds once resolved: workers w (crash,
// pause: one; partition: the far side) and, for a crash, the worker (or
// master) down from At until its restart.
func claimOf(s Spec, name string, from, to engine.Time, workers []int, opID string) claim {
	c := claim{spec: name, kind: s.Kind, from: from, to: to}
	switch s.Kind {
	case Crash, Pause:
		if s.Master {
			c.resources = []string{"the master node"}
			break
		}
		c.resources = []string{fmt.Sprintf("worker %d", workers[0])}
	case Partition:
		c.resources = []string{"the network"}
		for _, w := range workers {
			c.resources = append(c.resources, fmt.Sprintf("worker %d", w))
		}
	case Slow:
		c.resources = []string{"operator instance " + opID}
	case Throttle:
		c.resources = []string{"throttled edge " + s.From + "->" + s.To}
	case Reorder:
		c.allEdges = s.AllEdges
		c.resources = []string{"reordered edge " + s.From + "->" + s.To}
	case StoreSlow, StoreDown:
		c.resources = []string{"the checkpoint store"}
	}
	return c
}

// conflict returns why a and b may not both be scheduled, or "".
func conflict(a, b claim) string {
	if a.spec == b.spec {
		return fmt.Sprintf("fault %q is given twice", a.spec)
	}
	if a.from >= b.to || b.from >= a.to {
		return ""
	}
	if overlapRules[a.kind] == OverlapAny || overlapRules[b.kind] == OverlapAny {
		// A kind that may overlap anything: store-down (two outages add
		// up, and an outage during a slow spell fails the write whatever
		// its speed).
		return ""
	}
	shared := ""
	switch {
	case a.kind == Reorder && b.kind == Reorder && (a.allEdges || b.allEdges):
		shared = "the same channels"
	case a.kind == b.kind && overlapRules[a.kind] == OverlapNever:
		shared = a.resources[0]
	default:
		for _, r := range a.resources {
			if slices.Contains(b.resources, r) {
				shared = r
				break
			}
		}
	}
	if shared == "" {
		return ""
	}
	return fmt.Sprintf("fault %q overlaps %q: both act on %s from %s to %s, and the runtime models one such fault at a time; "+
		"move one so their windows do not overlap (docs/faults.md, Overlapping faults)",
		b.spec, a.spec, shared, fmtTime(max(a.from, b.from)), fmtTime(min(a.to, b.to)))
}

// firstConflict checks every pair of claims, in schedule order.
func firstConflict(cs []claim) string {
	for j := range cs {
		for i := range j {
			if msg := conflict(cs[i], cs[j]); msg != "" {
				return msg
			}
		}
	}
	return ""
}
