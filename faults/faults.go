// Package faults parses fault specs (syntax and per-system behaviour in
// docs/faults.md) and installs them on a runtime.
//
// A spec is one of
//
//	crash@T:worker=N[,restart=D]
//	crash@T:op=NAME/I[,restart=D]
//	crash@T:master[,restart=D]
//	slow@T1-T2:op=NAME/I[,factor=K]
//	throttle@T1-T2:edge=A->B,rate=R/s
//	reorder@T1-T2:edge=A->B|all[,p=P]
//	pause@T1-T2:worker=N
//	pause@T1-T2:op=NAME/I
//	partition@T1-T2:worker=N
//	partition@T1-T2:op=NAME/I
//	partition@T1-T2:workers=A,B|C,D
//	store-slow@T1-T2[:factor=K]
//	store-down@T1-T2
//	source-down@T1-T2:partition=K
//
// or a bare kind ("crash", "slow", "throttle", "reorder", "pause",
// "partition", "store-slow", "store-down", "source-down") that picks
// defaults from the run duration and the workload's first stateful operator. Times are
// simulated time, written as Go durations (10s, 500ms, 1.5s) or as a
// percentage of the run (40%); Parse resolves percentages, so a Spec holds
// absolute times only and Spec.String gives a canonical form that Parse
// accepts back.
//
// Apply resolves operator names against a deployment and installs the specs
// on a Target (the simulator). Faults are part of a run's config, so the same
// specs and seed replay the same run.
package faults

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"ftbench/engine"
)

// This file holds the fault types: Kind and its per-kind tables (the grammar
// and descriptions bench list prints, the keys each kind takes), Spec with
// its canonical form (String) and the checks any Spec must pass, parsed or
// built by hand (validate). parse.go reads the spec syntax; apply.go
// installs specs on a run.

// Kind is the kind of a fault.
type Kind string

// The fault kinds.
const (
	Crash    Kind = "crash"
	Slow     Kind = "slow"
	Throttle Kind = "throttle"
	Reorder  Kind = "reorder"
	Pause    Kind = "pause"
	// Partition cuts workers off from the master and the other workers
	// (engine/sim's partition.go).
	Partition Kind = "partition"
	// StoreSlow and StoreDown are faults of the checkpoint store (durable
	// storage), not of a worker: it slows down or stops taking writes.
	StoreSlow Kind = "store-slow"
	StoreDown Kind = "store-down"
	// SourceDown makes one partition of the source log unreadable (its
	// Kafka leader is down): no consumer fetches from it until the window
	// ends. Producers go on appending, so its records are all there when
	// it returns (workloads.Log.Down).
	SourceDown Kind = "source-down"
)

// Defaults used when a spec leaves a parameter out.
const (
	DefaultFactor = 8.0    // slow: CPU cost multiplier
	DefaultP      = 0.2    // reorder: probability
	DefaultRate   = 1000.0 // bare throttle: records per second per channel
	// DefaultStoreFactor is store-slow's: a store ten times slower than
	// usual, as a throttled or overloaded object store is.
	DefaultStoreFactor = 10.0
)

// Spec is one parsed fault. Times are absolute (percentages are resolved by
// Parse).
type Spec struct {
	Kind    Kind
	At, End engine.Time // End is 0 for crash
	Worker  int         // crash, pause or partition by worker; -1 otherwise
	// Master is a crash of the master node (the coordinator, job manager
	// or driver) instead of a worker.
	Master bool
	// Sides are a two-sided partition's workers, NEAR|FAR in canonical
	// form (workers=0,1|2,3): the master stays with NEAR, and so do workers
	// named on neither side. (A string keeps Spec comparable.)
	Sides string
	Op    string // crash/slow/pause target operator ("" when by worker)
	Index int    // instance index within Op
	// From and To name the operators of a throttle or reorder edge; AllEdges
	// selects every channel instead (reorder only).
	From, To string
	AllEdges bool
	Restart  engine.Time // crash: restart delay; -1 = the cost model's default
	Factor   float64     // slow, store-slow
	Rate     float64     // throttle: records per second per channel
	P        float64     // reorder
	Part     int         // source-down: the source partition
}

// Defaults is what a spec may be resolved against: the run duration (for
// percentages and bare kinds) and the operators bare kinds target.
type Defaults struct {
	Duration   engine.Time
	StatefulOp string // first stateful operator, e.g. "count"
	UpstreamOp string // the operator feeding StatefulOp, e.g. "split"
}

var kinds = []Kind{Crash, Slow, Throttle, Reorder, Pause, Partition, StoreSlow, StoreDown, SourceDown}

var grammars = map[Kind]string{
	Crash:      "crash@T:worker=N[,restart=D] or crash@T:op=NAME/I[,restart=D] or crash@T:master[,restart=D]",
	Slow:       "slow@T1-T2:op=NAME/I[,factor=K]",
	Throttle:   "throttle@T1-T2:edge=A->B,rate=R/s",
	Reorder:    "reorder@T1-T2:edge=A->B|all[,p=P]",
	Pause:      "pause@T1-T2:worker=N or pause@T1-T2:op=NAME/I",
	Partition:  "partition@T1-T2:worker=N, partition@T1-T2:op=NAME/I or partition@T1-T2:workers=A,B|C,D",
	StoreSlow:  "store-slow@T1-T2[:factor=K]",
	StoreDown:  "store-down@T1-T2",
	SourceDown: "source-down@T1-T2:partition=K",
}

var descriptions = map[Kind]string{
	Crash: "crash     kill a worker (every process on it) at T and restart it after D " +
		"(default: the cost model's restart delay); bare: the worker of the first stateful operator's instance 0 at 40% of the run; " +
		"crash@T:master kills the master node (checkpoint coordinator / job manager, Spark driver, Storm's nimbus) instead",
	Slow: "slow      straggler: multiply one operator instance's CPU cost by K (default 8) during T1-T2; " +
		"bare: the first stateful operator's instance 0 from 30% to 60%",
	Throttle: "throttle  link backpressure: limit every channel from an instance of A to an instance of B " +
		"to R records/s during T1-T2; bare: the edge into the first stateful operator from 30% to 60% at 1000/s",
	Reorder: "reorder   non-FIFO delivery with probability P (default 0.2) on the channels of edge A->B, or all channels, " +
		"during T1-T2; bare: all channels from 25% to 75%",
	Pause: "pause     stop every process on a worker (SIGSTOP, a long GC) during T1-T2, state intact; a pause longer than the " +
		"detection delay is declared a failure; bare: the worker of the first stateful operator's instance 0 from 40% to 50%",
	Partition: "partition cut a worker (or the far side of workers=NEAR|FAR) off from the master and the other workers during T1-T2; " +
		"the stores and the source log stay reachable; the master declares the far side failed after the detection delay and its tasks " +
		"run on as zombies until it heals; bare: the worker of the first stateful operator's instance 0 from 40% to 60%",
	StoreSlow: "store-slow the checkpoint store is K times slower (default 10) for writes issued and reads made during T1-T2; " +
		"bare: from 30% to 60%",
	StoreDown: "store-down the checkpoint store fails every write in progress during T1-T2 (the writer is told); " +
		"bare: from 30% to 60%",
	SourceDown: "source-down source partition K (below the parallelism) cannot be read during T1-T2, as when its Kafka leader is down; " +
		"producers go on appending and its records are readable again at T2; bare: partition 0 from 30% to 60%",
}

var keys = map[Kind][]string{
	Crash:      {"worker", "op", "restart"},
	Slow:       {"op", "factor"},
	Throttle:   {"edge", "rate"},
	Reorder:    {"edge", "p"},
	Pause:      {"worker", "op"},
	Partition:  {"worker", "op", "workers"},
	StoreSlow:  {"factor"},
	StoreDown:  {},
	SourceDown: {"partition"},
}

// Grammar returns the spec grammar, one line per kind. Times are Go durations
// (10s, 500ms, 1.5s) or percentages of the run (40%).
func Grammar() string {
	lines := make([]string, len(kinds))
	for i, k := range kinds {
		lines[i] = grammars[k]
	}
	return strings.Join(lines, "\n")
}

// Kinds returns one short description per fault kind.
func Kinds() []string {
	width := 0
	for _, k := range kinds {
		width = max(width, len(k))
	}
	out := make([]string, len(kinds))
	for i, k := range kinds {
		// The descriptions start with their kind; align what follows it
		// in a column as wide as the longest kind.
		out[i] = fmt.Sprintf("%-*s %s", width, k, strings.TrimSpace(strings.TrimPrefix(descriptions[k], string(k))))
	}
	return out
}

func known(k Kind) bool {
	_, ok := grammars[k]
	return ok
}

func kindList() string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// String returns the canonical form of s, which Parse accepts back.
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(string(s.Kind))
	b.WriteByte('@')
	b.WriteString(fmtTime(s.At))
	if s.Kind != Crash {
		b.WriteByte('-')
		b.WriteString(fmtTime(s.End))
	}
	b.WriteByte(':')
	switch s.Kind {
	case Crash:
		switch {
		case s.Master:
			b.WriteString("master")
		case s.Op != "":
			fmt.Fprintf(&b, "op=%s/%d", s.Op, s.Index)
		default:
			fmt.Fprintf(&b, "worker=%d", s.Worker)
		}
		if s.Restart >= 0 {
			b.WriteString(",restart=")
			b.WriteString(fmtTime(s.Restart))
		}
	case Pause, Partition:
		switch {
		case s.Op != "":
			fmt.Fprintf(&b, "op=%s/%d", s.Op, s.Index)
		case s.Sides != "":
			fmt.Fprintf(&b, "workers=%s", s.Sides)
		default:
			fmt.Fprintf(&b, "worker=%d", s.Worker)
		}
	case Slow:
		fmt.Fprintf(&b, "op=%s/%d,factor=%s", s.Op, s.Index, fmtFloat(s.Factor))
	case StoreSlow:
		fmt.Fprintf(&b, "factor=%s", fmtFloat(s.Factor))
	case StoreDown:
		return strings.TrimSuffix(b.String(), ":")
	case SourceDown:
		fmt.Fprintf(&b, "partition=%d", s.Part)
	case Throttle:
		fmt.Fprintf(&b, "edge=%s,rate=%s/s", s.edge(), fmtFloat(s.Rate))
	case Reorder:
		fmt.Fprintf(&b, "edge=%s,p=%s", s.edge(), fmtFloat(s.P))
	default:
		fmt.Fprintf(&b, "op=%s/%d,edge=%s", s.Op, s.Index, s.edge())
	}
	return b.String()
}

func (s Spec) edge() string {
	if s.AllEdges {
		return "all"
	}
	return s.From + "->" + s.To
}

func fmtTime(t engine.Time) string { return time.Duration(t).String() }

func fmtFloat(f float64) string {
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// targetHint names the targets kind k takes, for "missing target" errors.
func targetHint(k Kind) string {
	switch k {
	case Crash:
		return "worker=N, op=NAME/I or master"
	case Partition:
		return "worker=N, op=NAME/I or workers=A,B|C,D"
	case Pause:
		return "worker=N or op=NAME/I"
	case Slow:
		return "op=NAME/I"
	case Throttle:
		return "edge=A->B"
	case SourceDown:
		return "partition=K"
	default:
		return "edge=A->B or edge=all"
	}
}

// validate checks a spec's fields (for specs built by hand and passed to
// Apply). It returns a problem description or "".
func validate(s Spec) string {
	if !known(s.Kind) {
		return fmt.Sprintf("unknown kind %q (kinds: %s)", string(s.Kind), kindList())
	}
	if s.At < 0 {
		return fmt.Sprintf("time %s is negative", fmtTime(s.At))
	}
	if s.Master && s.Kind != Crash {
		return fmt.Sprintf("%s cannot target the master node", s.Kind)
	}
	if s.Kind == Crash {
		switch {
		case s.End != 0:
			return "crash has one time, but End is set"
		case s.Master && (s.Op != "" || s.Worker >= 0):
			return "give master, worker=N or op=NAME/I, not two of them"
		case s.Master && s.Restart == 0:
			// A new leader is told apart from the job's first start by
			// starting after time 0 (checkpoint.Coordinator.Init).
			return "a master crash needs a positive restart delay"
		case s.Master:
		case s.Op != "" && s.Worker >= 0:
			return "give worker=N or op=NAME/I, not both"
		case s.Op == "" && s.Worker < 0:
			return "missing target " + targetHint(s.Kind)
		case s.Op != "" && s.Index < 0:
			return fmt.Sprintf("instance %d is negative", s.Index)
		}
		return ""
	}
	if s.End <= s.At {
		return fmt.Sprintf("window ends at or before it starts (%s <= %s)", fmtTime(s.End), fmtTime(s.At))
	}
	switch s.Kind {
	case StoreSlow:
		if !(s.Factor > 0) || math.IsInf(s.Factor, 0) {
			return fmt.Sprintf("factor %g must be positive", s.Factor)
		}
	case SourceDown:
		if s.Part < 0 {
			return fmt.Sprintf("partition %d is negative", s.Part)
		}
	case Pause, Partition:
		targets := 0
		for _, set := range []bool{s.Op != "", s.Worker >= 0, s.Sides != ""} {
			if set {
				targets++
			}
		}
		switch {
		case targets > 1:
			return "give one of " + targetHint(s.Kind)
		case targets == 0:
			return "missing target " + targetHint(s.Kind)
		case s.Op != "" && s.Index < 0:
			return fmt.Sprintf("instance %d is negative", s.Index)
		case s.Sides != "":
			if _, _, msg := parseSides(s.Sides); msg != "" {
				return msg
			}
		}
	case Slow:
		switch {
		case s.Op == "":
			return "missing target " + targetHint(s.Kind)
		case s.Index < 0:
			return fmt.Sprintf("instance %d is negative", s.Index)
		case !(s.Factor > 0) || math.IsInf(s.Factor, 0):
			return fmt.Sprintf("factor %g must be positive", s.Factor)
		}
	case Throttle:
		switch {
		case s.AllEdges:
			return "throttle needs an edge A->B, not edge=all"
		case s.From == "" || s.To == "":
			return "missing target " + targetHint(s.Kind)
		case !(s.Rate > 0) || math.IsInf(s.Rate, 0):
			return fmt.Sprintf("rate %g must be positive", s.Rate)
		}
	case Reorder:
		switch {
		case !s.AllEdges && (s.From == "" || s.To == ""):
			return "missing target " + targetHint(s.Kind)
		case !(s.P > 0 && s.P <= 1):
			return fmt.Sprintf("p %g is not in (0,1]", s.P)
		}
	}
	return ""
}
