// Package systems is the registry of fault-tolerance protocols. Each system
// compiles a workload's logical plan into a deployment of processes and
// declares the delivery guarantee it claims; the harness checks the claim.
package systems

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/workloads"
)

// Guarantees a system can claim (the same words as the observed verdict).
const (
	AtMostOnce  = "at-most-once"
	AtLeastOnce = "at-least-once"
	ExactlyOnce = "exactly-once"
	NoClaim     = "none"
)

// Claim is what a system promises: the delivery guarantee of its effect
// stream and whether a reader of its sink sees a monotonic view (see
// check.Claim, which defines both parts; the harness and the observer
// check them the same way).
type Claim = check.Claim

// Claims of the shapes the systems make.
var (
	// ExactlyOnceMonotonic: transactional or batch-atomic output (a 2PC
	// sink, lineage's micro-batches, snapshot's sink).
	ExactlyOnceMonotonic = Claim{Guarantee: ExactlyOnce, Monotonic: true}
)

// PlanClaimer is implemented by systems whose claim depends on the
// workload's plan, not only on their own options: stormack keeps a keyed
// stage that feeds the sink in its external store (monotonic) but any
// other keyed stage in a bolt's memory, which a crash resets.
type PlanClaimer interface {
	ClaimFor(variant string, opts Options, plan *workloads.Plan) Claim
}

// ClaimFor is s's claim for this variant, options and plan.
func ClaimFor(s System, variant string, opts Options, plan *workloads.Plan) Claim {
	if c, ok := s.(PlanClaimer); ok {
		return c.ClaimFor(variant, opts, plan)
	}
	return s.Claim(variant, opts)
}

// Flag is a system-specific command-line option (--checkpoint-interval,
// --ack-timeout, ...). Systems sharing a flag name must agree on its meaning
// and default: the CLI defines it once.
type Flag struct {
	Name, Default, Usage string
}

// Options holds the values of a system's flags (defaults filled in).
type Options map[string]string

// Duration parses a duration option.
func (o Options) Duration(name string) (engine.Time, error) {
	d, err := time.ParseDuration(o[name])
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--%s=%q: want a positive duration such as 500ms or 2s", name, o[name])
	}
	return engine.Time(d), nil
}

// Int parses an integer option within [lo, hi].
func (o Options) Int(name string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(o[name])
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("--%s=%q: want an integer from %d to %d", name, o[name], lo, hi)
	}
	return v, nil
}

// Either parses an option that takes one of two values: true for yes,
// false for no.
func (o Options) Either(name, yes, no string) (bool, error) {
	switch o[name] {
	case yes:
		return true, nil
	case no:
		return false, nil
	}
	return false, fmt.Errorf("--%s=%q: want %s or %s", name, o[name], yes, no)
}

// Bool parses a true/false option.
func (o Options) Bool(name string) (bool, error) { return o.Either(name, "true", "false") }

// Job is everything a system needs to compile a run.
type Job struct {
	Workload    workloads.Workload
	Log         *workloads.Log
	Parallelism int
	Workers     int
	Variant     string
	Opts        Options
	Cost        *engine.CostModel
	Seed        uint64
}

// System is one fault-tolerance protocol.
type System interface {
	Name() string
	Describe() string
	// Variants lists the variants; the first is the default.
	Variants() []string
	Flags() []Flag
	// Claim is what the system claims in this configuration: delivery
	// guarantee and reader view.
	Claim(variant string, opts Options) Claim
	Compile(job Job) (*engine.Deployment, error)
}

// MsgDescriber is implemented by systems that name their messages for a
// run's trace (bench run --trace): the harness hands the function to the
// runtime as engine.Deployment.Describe, which calls it only while
// tracing. Every system implements it; a message it leaves unnamed is
// traced by its number.
type MsgDescriber interface {
	DescribeMsg(job Job) func(m engine.Msg) engine.MsgInfo
}

// Record is how a trace names a data record of a dataflow workload.
var Record = engine.MsgInfo{Kind: "record"}

// TraceID fits a 64-bit id (a Storm tree's root) into the 53 bits a
// trace's ids keep, so that a browser reads it exactly.
func TraceID(id uint64) int64 { return int64(id & (1<<53 - 1)) }

// InternalLag names the run counter (engine.Ctx.Count) in which a system
// whose pipeline holds records in durable internal queues without
// backpressure (Kafka Streams' repartition topics) keeps how many records
// in them its consumers have not read yet. The harness adds it to the
// source lag it samples, so that for such a system the lag is the consumer
// lag over every topic the application reads, as Kafka reports it, and a
// backlog building up inside the pipeline is overload as one at the source
// is (docs/metrics.md, "Source lag").
const InternalLag = "internal_lag_records"

// Summarizer is implemented by systems that derive their own metrics (for
// run.json's "system_metrics") from the run's protocol events and counters.
type Summarizer interface {
	Summarize(r RunInfo) map[string]any
}

// RunInfo is what a Summarizer may read after a run.
type RunInfo struct {
	Events   []engine.Event
	Counters map[string]int64
	Store    func(key string) (any, bool)
	Workload workloads.Workload
	Log      *workloads.Log
	Job      Job
	// Milestones are the oracle pass's copies of the oracle's keyed state
	// along the log (nil: none), for snapshot checks
	// (check.CheckSnapshotsFrom) that would otherwise replay the log.
	Milestones *workloads.Milestones
}

var registry = map[string]System{}

// Register adds a system; called from each system package's init.
func Register(s System) { registry[s.Name()] = s }

// Lookup finds a system by name.
func Lookup(name string) (System, error) {
	s, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown system %q (have %s)", name, strings.Join(Names(), ", "))
	}
	return s, nil
}

// Names lists registered systems, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// AllFlags returns every system's flags, deduplicated by name, sorted.
func AllFlags() []Flag {
	seen := map[string]Flag{}
	for _, n := range Names() {
		for _, f := range registry[n].Flags() {
			if _, ok := seen[f.Name]; !ok {
				seen[f.Name] = f
			}
		}
	}
	flags := make([]Flag, 0, len(seen))
	for _, f := range seen {
		flags = append(flags, f)
	}
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	return flags
}

// ResolveVariant returns the variant to use ("" means the default) or an error.
func ResolveVariant(s System, variant string) (string, error) {
	vs := s.Variants()
	if variant == "" {
		return vs[0], nil
	}
	for _, v := range vs {
		if v == variant {
			return v, nil
		}
	}
	return "", fmt.Errorf("system %s has no variant %q (have %s)", s.Name(), variant, strings.Join(vs, ", "))
}

// CommitCycler is implemented by systems whose sink makes output visible in
// bursts: a two-phase-commit sink at each completed checkpoint, a
// micro-batch system at each batch. CommitCycle is the period of those
// bursts (0: output is continuous). Measurements that must not alias with
// the bursts — throughput, the lag trend of the overload and capacity
// criterion, recovery's pre-fault and hold windows — span whole cycles.
type CommitCycler interface {
	CommitCycle(variant string, opts Options) engine.Time
}

// CommitCycle is s's commit cycle in this configuration (0 when s does not
// say, or when its options do not parse: Compile reports those).
func CommitCycle(s System, variant string, opts Options) engine.Time {
	if c, ok := s.(CommitCycler); ok {
		return c.CommitCycle(variant, opts)
	}
	return 0
}

// Milestoner is implemented by systems that name their protocol
// milestones: the event kinds (engine.Event.Kind, recorded with ctx.Record)
// after which a few milliseconds of protocol work decide whether a fault
// is survived — a checkpoint's last acknowledgement (its metadata write
// begins), the metadata durable (commit notices go out), a 2PC sink's
// commit, a micro-batch's cut, an offset commit. Torture aims some of its
// crashes, pauses and partitions a few milliseconds after these events
// (torture/aim.go), where a bug in that window lives.
type Milestoner interface {
	Milestones(variant string) []string
}

// Milestones is s's milestone event kinds for this variant (nil when s
// names none).
func Milestones(s System, variant string) []string {
	if m, ok := s.(Milestoner); ok {
		return m.Milestones(variant)
	}
	return nil
}
