// Package workloads defines what every system runs: a logical plan of pure
// stage functions, a replayable partitioned source log and an oracle.
//
// The record at (partition, offset) is a pure function of the seed,
// partition and offset, so any system can re-read any prefix after a failure
// and the oracle can compute the exact expected output for any prefix.
package workloads

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"ftbench/engine"
	"ftbench/number"
)

// Partitioning says how records reach a stage's instances from the previous
// stage's instances.
type Partitioning uint8

// Partitionings.
const (
	Forward   Partitioning = iota // instance i -> instance i (chained)
	Hash                          // by Msg.Key: the KeyBy, a wide dependency
	Rebalance                     // round-robin
	Broadcast                     // to every instance
)

func (p Partitioning) String() string {
	return [...]string{"forward", "hash", "rebalance", "broadcast"}[p]
}

// Stage is one operator of the logical plan. Exactly one of Fn, Update or
// Sink is set.
type Stage struct {
	Name  string
	Input Partitioning
	// Cost is the CPU one input record costs this stage.
	Cost func(c *engine.CostModel, m engine.Msg) engine.Time
	// Fn is a stateless stage (map, flatMap, filter).
	Fn func(m engine.Msg, emit func(engine.Msg))
	// Update is a keyed stage: state is the state of key m.Key (0 when new).
	//
	// Contract: the state every keyed stage of a plan holds after a set of
	// source records depends only on the set, not on the order the records
	// came in (every Update here is a cumulative sum: word counts, debits,
	// credits). What it emits may follow the order (a running count); the
	// state may not. Snapshot checks rely on it: they compare a
	// checkpoint's state with the oracle fed the checkpoint's prefix
	// partition by partition, or continued from a copy the oracle pass
	// took (Milestones), never in an order a system saw.
	// TestKeyedStateIgnoresOrder holds every registered workload to it.
	Update func(state *int64, m engine.Msg, emit func(engine.Msg))
	// Sink marks the last stage: every record reaching it is one effect,
	// making Val visible for Key.
	Sink bool
}

// Keyed reports whether the stage keeps per-key state.
func (s *Stage) Keyed() bool { return s.Update != nil }

// sinkStage is the last stage of every DAG workload: the sink, fed over a
// forward edge, whose CPU cost is the cost model's SinkCPU per record.
func sinkStage() Stage {
	return Stage{
		Name:  "sink",
		Input: Forward,
		Cost:  func(c *engine.CostModel, _ engine.Msg) engine.Time { return c.SinkCPU },
		Sink:  true,
	}
}

// Plan is a linear dataflow: the source, then stages in order.
type Plan struct {
	Source string // operator name of the source ("source")
	Stages []Stage
}

// FirstStateful returns the first keyed stage's index and name, or -1.
func (p *Plan) FirstStateful() (int, string) {
	for i := range p.Stages {
		if p.Stages[i].Keyed() {
			return i, p.Stages[i].Name
		}
	}
	return -1, ""
}

// OpNames lists the source and every stage name.
func (p *Plan) OpNames() []string {
	names := []string{p.Source}
	for _, s := range p.Stages {
		names = append(names, s.Name)
	}
	return names
}

// Workload is a plan plus its source log contents.
type Workload interface {
	Name() string
	Plan() *Plan
	// Record is the source record at (part, off): a pure function. Its ID
	// is {part, 0, off}; Born is filled in by the source.
	Record(part int32, off int64) engine.Msg
	// CostPerRecord estimates each operator's CPU per source record (for
	// the default rate and CapacityBound); the keys are operator names
	// (the source's and the stages'). CapacityBound calls it with each
	// operator's own model (c.For(op)) and reads that operator's entry.
	CostPerRecord(c *engine.CostModel) map[string]engine.Time
}

// Operators lists the operator names a per-operator cost override
// (--cost OP.NAME=VALUE) may name: the plan's, or a peer-to-peer
// workload's processes.
func Operators(w Workload) []string {
	if _, ok := w.(PeerToPeer); ok {
		return []string{ProcessOp}
	}
	return w.Plan().OpNames()
}

// Log is the replayable partitioned source log: records are appended to
// each partition at Rate/Parts per second from time 0 until End.
//
// Outages are the windows during which a partition cannot be read (the
// source-down fault: its Kafka leader is down). Producers keep appending
// meanwhile, so Appended is unchanged and the records become readable when
// the window ends; a source asks Down before it fetches. The harness fills
// Outages from the fault specs before the run starts, so systems see the
// fault only through what they can read.
type Log struct {
	Parts   int
	Rate    float64 // records per second over all partitions
	End     engine.Time
	Outages []Outage
}

// EventSourceDown is the event a source records when it finds its
// partition down (Event.ID the partition, Value when it is back): it waits,
// or goes on without the partition (trident's opaque spout). Torture's
// coverage counts it.
const EventSourceDown = "source_unavailable"

// SourceDown reports whether partition part of log cannot be read now and
// until when, recording EventSourceDown at ctx when it cannot.
func SourceDown(ctx engine.Ctx, log *Log, part int32) (bool, engine.Time) {
	down, until := log.Down(part, ctx.Now())
	if down {
		ctx.Record(engine.Event{Kind: EventSourceDown, ID: int64(part), Value: int64(until)})
	}
	return down, until
}

// Outage is one source-down window: partition Part cannot be fetched from
// during [From, To).
type Outage struct {
	Part     int32
	From, To engine.Time
}

// Down reports whether partition part cannot be read at t and, if so, when
// it can be again: the end of the outage covering t, extended through any
// outage of part that starts before that end.
func (l *Log) Down(part int32, t engine.Time) (down bool, until engine.Time) {
	until = t
	for changed := true; changed; {
		changed = false
		for _, o := range l.Outages {
			if o.Part == part && o.From <= until && until < o.To {
				until, changed, down = o.To, true, true
			}
		}
	}
	return down, until
}

func (l *Log) perPart() float64 { return l.Rate / float64(l.Parts) }

// Appended is the number of records appended to a partition by time t.
func (l *Log) Appended(t engine.Time) int64 {
	if t > l.End {
		t = l.End
	}
	if t <= 0 {
		return 0
	}
	return int64(math.Floor(float64(t) * l.perPart() / 1e9))
}

// Total is the number of records each partition holds at the end.
func (l *Log) Total() int64 { return l.Appended(l.End) }

// BornAt is the time the record at offset off was appended.
func (l *Log) BornAt(off int64) engine.Time {
	return engine.Time(math.Ceil(float64(off+1) * 1e9 / l.perPart()))
}

// Factory builds a workload from its options.
type Factory struct {
	Name     string
	Describe string
	Options  []Option
	New      func(seed uint64, opts map[string]string) (Workload, error)
}

// Option is a workload-specific flag.
type Option struct{ Name, Default, Usage string }

var registry = map[string]Factory{}

// Register adds a workload factory.
func Register(f Factory) { registry[f.Name] = f }

// Names returns every workload name, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// Lookup returns a workload factory.
func Lookup(name string) (Factory, bool) {
	f, ok := registry[name]
	return f, ok
}

// New builds workload name with options opts (missing options take defaults).
func New(name string, seed uint64, opts map[string]string) (Workload, error) {
	f, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown workload %q (have %s)", name, strings.Join(Names(), ", "))
	}
	full := map[string]string{}
	for _, o := range f.Options {
		full[o.Name] = o.Default
	}
	for k, v := range opts {
		full[k] = v
	}
	return f.New(seed, full)
}

// intOption parses a positive integer option.
func intOption(opts map[string]string, name string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(opts[name])
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("--%s=%q: want an integer from %d to %d", name, opts[name], lo, hi)
	}
	return v, nil
}

func floatOption(opts map[string]string, name string, lo, hi float64) (float64, error) {
	v, err := number.Float(opts[name])
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("--%s=%q: want a number from %g to %g", name, opts[name], lo, hi)
	}
	return v, nil
}

// DefaultRate is the source rate (records/s) that loads the cluster to half
// its capacity bound under cost model c (CapacityBound), so a run has
// headroom for catch-up after a fault.
func DefaultRate(w Workload, c *engine.CostModel, par, workers int) float64 {
	bound := CapacityBound(w, c, par, workers)
	if bound <= 0 || math.IsInf(bound, 1) {
		return 1000
	}
	return math.Round(bound / 2)
}
