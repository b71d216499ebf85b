package harness

import (
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/workloads"
)

// Hard limits on a configuration (docs/limits.md). They are ranges
// outside which a value is nonsense or overflows the simulator's
// arithmetic, whatever the budget (budget.go): the size budget is about how
// much a sensible run costs, these are about whether a run makes sense.
const (
	// MaxRate is the highest --rate: a billion records per second is well
	// beyond any single source, and rate x duration must fit an int64.
	MaxRate = 1e9
	// MaxDuration bounds --duration and --drain (and system options that
	// are durations): 10 000 simulated hours, so that sums of them and
	// rate x duration stay far from int64 overflow.
	MaxDuration = 10000 * 3600 * engine.Second
	// MinBucket is the shortest time-series bucket: finer than a
	// millisecond is below the cost model's own resolution (quantum,
	// poll interval).
	MinBucket = engine.Millisecond
	// MinPeriod is the shortest period of a periodic protocol action
	// (checkpoints, snapshots, micro-batches, offset commits): a period
	// below a millisecond would make the protocol's own overhead the
	// whole run (Flink, Spark and Storm all treat tens of milliseconds as
	// aggressive).
	MinPeriod = engine.Millisecond
)

// PeriodOptions name the system options that set the period of a protocol
// action repeated over the whole run; they must be at least MinPeriod, and
// the budget counts the rounds they cause.
var PeriodOptions = []string{"checkpoint-interval", "snapshot-interval", "batch-interval", "offset-commit-interval"}

// checkLimits range-checks the numeric fields (NaN and Inf included) that
// validate does not.
func (c *Config) checkLimits() error {
	switch {
	case math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return inputErr("--rate must be a finite number of records per second, got %g", c.Rate)
	case c.Rate > MaxRate:
		return inputErr("--rate must be at most %g records/s, got %g", float64(MaxRate), c.Rate)
	case c.Duration > MaxDuration:
		return inputErr("--duration must be at most %v, got %v", fmtDur(MaxDuration), fmtDur(c.Duration))
	case c.Drain > MaxDuration:
		return inputErr("--drain must be at most %v, got %v", fmtDur(MaxDuration), fmtDur(c.Drain))
	case c.Bucket > 0 && c.Bucket < MinBucket:
		return inputErr("--bucket must be at least %v, got %v", fmtDur(MinBucket), fmtDur(c.Bucket))
	case c.Bucket > c.Duration:
		return inputErr("--duration %s is shorter than one time-series bucket (--bucket %s): the series would have no resolution",
			fmtDur(c.Duration), fmtDur(c.Bucket))
	}
	return nil
}

// checkOptions range-checks the system options that are durations: every
// one within MaxDuration, periods at least MinPeriod. Options a system
// parses itself (integers, names) are checked when it compiles.
func (r *runner) checkOptions() error {
	for _, name := range slices.Sorted(maps.Keys(r.opts)) {
		v := r.opts[name]
		d, err := time.ParseDuration(v)
		if err != nil {
			continue // not a duration; the system parses it
		}
		switch {
		case d <= 0:
			// The system's own parser says how (Options.Duration).
		case engine.Time(d) > MaxDuration:
			return inputErr("--%s must be at most %s, got %s", name, fmtDur(MaxDuration), v)
		case slices.Contains(PeriodOptions, name) && engine.Time(d) < MinPeriod:
			return inputErr("--%s must be at least %s, got %s", name, fmtDur(MinPeriod), v)
		}
	}
	return nil
}

// checkWorkloadOptions refuses options of another workload (for example
// --record-size with wordcount): they would be silently ignored.
func (c *Config) checkWorkloadOptions() error {
	fac, ok := workloads.Lookup(c.Workload)
	if !ok {
		return nil // workloads.New names the unknown workload
	}
	for _, k := range slices.Sorted(maps.Keys(c.WorkloadOpts)) {
		if !slices.ContainsFunc(fac.Options, func(o workloads.Option) bool { return o.Name == k }) {
			return inputErr("--%s is not an option of workload %s (its options: %s)", k, c.Workload, optionNames(fac.Options))
		}
	}
	return nil
}

func optionNames(opts []workloads.Option) string {
	if len(opts) == 0 {
		return "none"
	}
	s := ""
	for i, o := range opts {
		if i > 0 {
			s += ", "
		}
		s += "--" + o.Name
	}
	return s
}

// checkFaultEdges refuses throttle and reorder windows on an edge the
// dataflow does not have (count->split, sink->source): the operators exist
// (faults.Apply checks that), but no channel joins them, so the fault
// would silently do nothing. An edge is two operators of the deployment
// that are consecutive in the plan among the deployed ones (a system may
// fuse stages). An edge inside a chained task (barrier's source->split)
// has no channel either: it is refused, naming --chaining=false.
// Peer-to-peer workloads connect every process to every other, so any
// edge between existing processes is real.
func (r *runner) checkFaultEdges() error {
	if _, p2p := r.w.(workloads.PeerToPeer); p2p {
		return nil
	}
	deployed := map[string]bool{}
	for _, p := range r.dep.Procs {
		for _, o := range p.Ops() {
			deployed[o] = true
		}
	}
	network, chained := faults.Edges(r.dep, r.w.Plan().OpNames())
	var names []string
	for _, e := range network {
		names = append(names, e[0]+"->"+e[1])
	}
	for _, s := range r.specs {
		if (s.Kind != faults.Throttle && s.Kind != faults.Reorder) || s.AllEdges {
			continue
		}
		if !deployed[s.From] || !deployed[s.To] {
			continue // faults.Apply names the missing operator
		}
		e := [2]string{s.From, s.To}
		if slices.Contains(chained, e) {
			return inputErr("fault %q: %s and %s are chained into one task (%s), with no channel between them; run with --chaining=false to give the edge its own channel, or name a network edge (%s)",
				s.String(), s.From, s.To, chainOf(r.dep, s.From), listOr(names))
		}
		if !slices.Contains(network, e) {
			also := ""
			for i, c := range chained {
				if i == 0 {
					also = "; chained, without a channel: "
				} else {
					also += ", "
				}
				also += c[0] + "->" + c[1]
			}
			return inputErr("fault %q: no edge %s->%s in the %s dataflow (edges: %s%s)", s.String(), s.From, s.To, r.cfg.Workload, listOr(names), also)
		}
	}
	return nil
}

// listOr joins names with commas, or says none.
func listOr(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// chainOf names the chained task that runs op, as the run summary does.
func chainOf(dep *engine.Deployment, op string) string {
	for _, p := range dep.Procs {
		if p.Runs(op) {
			return "[" + strings.Join(p.Ops(), "→") + "]"
		}
	}
	return op
}

// checkLogSize refuses a run whose log holds no record (--duration 1ns):
// it would check nothing and report its claim held.
func (r *runner) checkLogSize() error {
	if r.log.Total() >= 1 {
		return nil
	}
	return inputErr("--duration %v at %g records/s over %d partitions appends no record to a partition: the run would check nothing (make --duration or --rate larger)",
		time.Duration(r.cfg.Duration), r.log.Rate, r.log.Parts)
}

// fmtDur prints a duration without trailing zero units (10000h, not
// 10000h0m0s).
func fmtDur(t engine.Time) string {
	s := time.Duration(t).String()
	for _, z := range []string{"0s", "0m"} {
		if len(s) > len(z) && strings.HasSuffix(s, z) && !strings.HasSuffix(s, "ms") && (s[len(s)-len(z)-1] < '0' || s[len(s)-len(z)-1] > '9') {
			s = strings.TrimSuffix(s, z)
		}
	}
	return s
}

// Limits on cost-model parameters beyond engine.CostModel.Set's own
// (positive numbers): finite bandwidths of at least a byte per second,
// durations within MaxDuration, and the simulator's tick-like periods
// (quantum, poll interval, buffer timeout) at least MinTick, below which
// an idle source or a partly filled buffer costs an event per nanosecond.
const (
	MinTick          = 10 * engine.Microsecond
	maxBandwidth     = 1e15 // bytes/s
	maxBufferBytes   = 1 << 30
	maxChannelBuffer = 1 << 20
	maxMsgHeader     = 1 << 20
)

func checkCost(c *engine.CostModel) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"net-bandwidth", c.NetBandwidth}, {"store-write-bw", c.StoreWriteBytes}, {"store-read-bw", c.StoreReadBytes}} {
		if math.IsNaN(f.v) || f.v < 1 || f.v > maxBandwidth {
			return inputErr("cost %s must be from 1 to %g bytes/s, got %g", f.name, float64(maxBandwidth), f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    engine.Time
		tick bool
	}{
		{"source-record", c.SourceRecord, false}, {"record-cpu", c.RecordCPU, false}, {"state-cpu", c.StateCPU, false},
		{"sink-cpu", c.SinkCPU, false}, {"scan-per-byte", c.ScanPerByte, false}, {"send-cpu", c.SendCPU, false},
		{"serde-per-byte", c.SerdePerByte, false}, {"net-latency", c.NetLatency, false}, {"buffer-timeout", c.BufferTimeout, true},
		{"poll-interval", c.PollInterval, true}, {"quantum", c.Quantum, true}, {"detect-delay", c.DetectDelay, false},
		{"restart-delay", c.RestartDelay, false}, {"task-restart", c.TaskRestart, false}, {"store-latency", c.StoreLatency, false},
		{"conn-timeout", c.ConnTimeout, false},
	} {
		switch {
		case f.v > MaxDuration:
			return inputErr("cost %s must be at most %s, got %s", f.name, fmtDur(MaxDuration), fmtDur(f.v))
		case f.tick && f.v < MinTick:
			return inputErr("cost %s must be at least %s, got %s", f.name, fmtDur(MinTick), fmtDur(f.v))
		}
	}
	switch {
	case c.BufferBytes > maxBufferBytes:
		return inputErr("cost buffer-bytes must be at most %d, got %d", maxBufferBytes, c.BufferBytes)
	case c.ChannelBuffers > maxChannelBuffer:
		return inputErr("cost channel-buffers must be at most %d, got %d", maxChannelBuffer, c.ChannelBuffers)
	case c.MsgHeader > maxMsgHeader:
		return inputErr("cost msg-header must be at most %d, got %d", maxMsgHeader, c.MsgHeader)
	case c.Cores > 1024:
		return inputErr("cost cores must be from 1 to 1024, got %d", c.Cores)
	}
	return nil
}

// Limits on fault parameters beyond the parser's: a slow or store-slow
// factor up to a million (a microsecond of CPU becomes a second; a 1 ms
// store write takes 17 minutes), and a throttle of at
// least one record per thousand seconds (a record's transfer time must fit
// the simulator's clock).
const (
	maxSlowFactor   = 1e6
	minThrottleRate = 1e-3
)

func (r *runner) checkFaultLimits() error {
	for _, s := range r.specs {
		switch {
		case (s.Kind == faults.Slow || s.Kind == faults.StoreSlow) && s.Factor > maxSlowFactor:
			return inputErr("fault %q: factor must be at most %g", s.String(), float64(maxSlowFactor))
		case s.Kind == faults.Throttle && s.Rate < minThrottleRate:
			return inputErr("fault %q: rate must be at least %g records/s", s.String(), minThrottleRate)
		}
	}
	return nil
}

// checkSlots refuses a slot count smaller than what the deployment places
// on some worker: the placement would not fit.
func checkSlots(slots int, dep *engine.Deployment, workers int) error {
	if slots == 0 {
		return nil
	}
	placed := make([]int, workers)
	for _, p := range dep.Procs {
		if p.Worker >= 0 && p.Worker < workers {
			placed[p.Worker]++
		}
	}
	for w, n := range placed {
		if n > slots {
			return inputErr("--slots %d: worker %d hosts %d processes of this deployment; give at least %d", slots, w, n, slices.Max(placed))
		}
	}
	return nil
}
