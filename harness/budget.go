package harness

import (
	"fmt"
	"strconv"

	"ftbench/engine"
	"ftbench/workloads"
)

// BudgetBytes is the size budget: the largest estimated peak memory a run
// may need before bench refuses it (unless --no-budget). It is a fixed
// figure, never the host's free memory, so the same command gets the same
// answer on every machine; 3 GiB leaves room under 4 GB for the estimate's
// error. docs/limits.md.
const BudgetBytes int64 = 3 << 30

// The memory model. Each constant is what one unit of a run costs in peak
// resident memory with the current data structures, garbage-collector
// headroom included; change them with the structures they describe.
const (
	// baseBytes: the runtime, the binary, the simulator and a small
	// deployment: a 5 s barrier run peaks at 185 MB, of which 23 MB are
	// its records.
	baseBytes = 160 << 20
	// bytesPerTableRecord: a workload whose effect counts depend on its
	// state (not a workloads.EffectCounter: bank) keeps a table of counts,
	// one byte a record, doubled for slice growth. Nothing else is kept per
	// record of the log: the delivery checker's memory is its window.
	bytesPerTableRecord = 2
	// windowBytes caps the delivery checker's window of records in flight
	// (check.Delivery: 16 bytes a slot, at most 64 MiB), doubled for
	// garbage-collector headroom; a run holds fewer slots than records.
	windowBytes      = 128 << 20
	bytesPerInFlight = 32
	// bytesPerBucket: one time-series bucket holds a latency histogram
	// (57 chunk pointers, and a 1 KiB chunk per octave of latency seen),
	// its counters, its row and its staleness: about 2 KiB, doubled for
	// slice growth. In the simulator a finished bucket keeps only its
	// quantiles (metrics.Series.Seal): its counters, row and staleness,
	// bytesPerSealedBucket with the slice growth; only a live run holds a
	// histogram for every bucket.
	bytesPerBucket       = 4 << 10
	bytesPerSealedBucket = 512
	// bytesPerKey: each map holding every key of keyed state (the oracle's
	// state and visible view, the output store, the operators' state,
	// checkpoint copies), about 40 bytes a key each.
	bytesPerKey = 200
	// bytesPerMilestoneKey: the oracle pass's milestones copy keyed state
	// (workloads.Milestones), at most 8/3 slots of 16 bytes a key; they
	// copy at most workloads.MilestoneKeys keys.
	bytesPerMilestoneKey = 43
	// bytesPerRoundProcess: a periodic round (checkpoint, snapshot,
	// micro-batch, offset commit) records about 3 events per process (a
	// barrier run: 47 events per checkpoint with 17 processes), 128 bytes
	// each with the events list's growth, and 4 leaves room for the
	// round's messages.
	bytesPerRoundProcess = 4 * 128
	// channelFill: a full channel holds its credit (channel-buffers x
	// buffer-bytes) of wire bytes, which in the simulator's rings take
	// about twice as much.
	channelFill = 2
	// bytesPerQueuedRecord caps the channels' term: the channels cannot
	// hold more than every record once per hop, 80 bytes in a ring,
	// doubled for garbage-collector headroom.
	bytesPerQueuedRecord = 160
)

// TimeBudget is the time budget: the longest estimated wall time a run may
// take before bench refuses it (unless --no-budget), on the reference
// machine (a 2-core virtual machine, docs/performance.md). Like BudgetBytes
// it is a fixed figure, not a measurement of the host, so the same command
// gets the same answer everywhere. Ten minutes keeps an hour of the main
// job (about 4.5 minutes) and the P = 64 scaling runs inside it, and
// refuses inputs such as --rate 1e9 --duration 2s (about 20 minutes)
// before any work. docs/limits.md.
const TimeBudget = 10 * 60 * engine.Second

// The time model: what the simulator spends per unit of a run, on the
// reference machine, fitted to two runs (docs/performance.md, "Current
// figures"): the main job, 7.3 M record-hops in about 1.5 s, gives
// nsPerRecordHop; the P = 64 scaling run (119 M record-hops, 4 224
// channels flushing every 10 ms for 30 s, 34-45 s) gives nsPerFlush for
// what is left. A record-hop is a source record crossing one stage; a
// flush is a channel's partly filled buffer sent on its timeout.
const (
	nsPerRecordHop = 200
	nsPerFlush     = 1200
)

// keyOptions are the workload options that set how many distinct keys
// keyed state holds.
var keyOptions = []string{"vocabulary", "accounts"}

// Estimate is the size of a run, computed from its configuration before
// anything is allocated.
type Estimate struct {
	Records   int64       // source records appended, all partitions
	SimTime   engine.Time // longest simulated time: input, drain and settle window
	Buckets   int64       // time-series buckets over SimTime
	Rounds    int64       // periodic protocol rounds (checkpoints, batches, ...) over SimTime
	Processes int         // processes deployed
	Channels  int64       // data channels of the dataflow
	Hops      int64       // stages a record passes through
	Keys      int64       // distinct keys of keyed state
	// TraceRecords bounds the run's trace (--trace), 0 without one.
	TraceRecords int64
	Bytes        int64 // estimated peak memory
	// Wall is the estimated wall time on the reference machine: the
	// simulator's work (record-hops and buffer flushes, the time model),
	// or the simulated time itself for a live run, which runs in real
	// time.
	Wall engine.Time
}

// sizeInputs is what the memory model reads from a prepared run.
type sizeInputs struct {
	records int64
	table   bool // the workload's effect counts are a table, a byte a record
	simTime engine.Time
	bucket  engine.Time
	// sim: the simulator, where finished buckets keep only their quantiles
	// and the commit pipe queues up to pipeQueueBytes (commits.go) of
	// recordsPerSecond.
	sim              bool
	recordsPerSecond float64
	period           engine.Time // shortest periodic option, 0 if none
	processes        int
	channels         int64
	creditBytes      int64
	hops             int64 // stages a record passes through
	keys             int64
	bufferTimeout    engine.Time
	traceRecords     int64 // the trace's bound (--trace), 0 without one
}

// estimateSize applies the memory model.
func estimateSize(in sizeInputs) Estimate {
	e := Estimate{Records: in.records, SimTime: in.simTime, Processes: in.processes, Channels: in.channels, Hops: in.hops, Keys: in.keys, TraceRecords: in.traceRecords}
	if in.bucket > 0 {
		e.Buckets = int64((in.simTime + in.bucket - 1) / in.bucket)
	}
	if in.period > 0 {
		e.Rounds = int64(in.simTime / in.period)
	}
	// In float64: an absurd configuration must give a huge estimate, not
	// an overflowed one.
	b := float64(baseBytes) +
		perRecord(in) +
		min(float64(e.Records)*bytesPerInFlight, windowBytes) +
		float64(e.Buckets)*bucketBytes(in.sim) +
		pipeBytes(in) +
		float64(e.Keys)*bytesPerKey +
		float64(workloads.MilestoneKeys(e.Keys))*bytesPerMilestoneKey +
		float64(e.Rounds)*float64(e.Processes)*bytesPerRoundProcess +
		min(float64(e.Channels)*float64(in.creditBytes)*channelFill, float64(e.Records)*float64(in.hops)*bytesPerQueuedRecord) +
		float64(e.TraceRecords)*bytesPerTraceRecord
	e.Bytes = int64(min(b, 1<<62))
	e.Wall = estimateWall(in)
	return e
}

// estimateWall applies the time model: the simulator's work, or for a live
// run the simulated time it runs in real time (at least).
func estimateWall(in sizeInputs) engine.Time {
	if !in.sim {
		return in.simTime
	}
	ns := float64(in.records) * float64(in.hops) * nsPerRecordHop
	if in.bufferTimeout > 0 {
		ns += float64(in.channels) * float64(in.simTime/in.bufferTimeout) * nsPerFlush
	}
	return engine.Time(min(ns, 1<<62))
}

func bucketBytes(sim bool) float64 {
	if sim {
		return bytesPerSealedBucket
	}
	return bytesPerBucket
}

func pipeBytes(in sizeInputs) float64 {
	if in.sim {
		return float64(pipeQueueBytes(in.recordsPerSecond))
	}
	return 0
}

// perRecord is what the log costs record by record: a table of effect
// counts, or nothing.
func perRecord(in sizeInputs) float64 {
	if !in.table {
		return 0
	}
	return float64(in.records) * bytesPerTableRecord
}

// recordsPerSecond is the source records appended per simulated second,
// all partitions together.
func (r *runner) recordsPerSecond() float64 {
	if r.cfg.Duration <= 0 {
		return 0
	}
	return float64(r.log.Total()*int64(r.cfg.Parallelism)) / r.cfg.Duration.Seconds()
}

// estimate sizes a prepared run.
func (r *runner) estimate() Estimate {
	in := sizeInputs{
		records: r.log.Total() * int64(r.cfg.Parallelism),
		// A drained run stops a settle window after draining, at the
		// latest Duration+drainMax+settle; an undrained one at
		// Duration+drainMax.
		simTime:       r.cfg.Duration + r.drainMax + r.settle,
		bucket:        r.cfg.Bucket,
		sim:           r.cfg.runtime() != RuntimeLive,
		processes:     len(r.dep.Procs),
		table:         !isEffectCounter(r.w),
		creditBytes:   int64(r.cost.ChannelBuffers) * int64(r.cost.BufferBytes),
		bufferTimeout: r.cost.BufferTimeout,
	}
	if r.cfg.Trace {
		in.traceRecords = int64(r.traceMax())
	}
	in.recordsPerSecond = r.recordsPerSecond()
	for _, name := range PeriodOptions {
		if _, ok := r.opts[name]; !ok {
			continue
		}
		if d, err := r.opts.Duration(name); err == nil && (in.period == 0 || d < in.period) {
			in.period = d
		}
	}
	p := int64(r.cfg.Parallelism)
	in.hops = int64(max(len(r.w.Plan().Stages), 1))
	if _, p2p := r.w.(workloads.PeerToPeer); p2p {
		in.channels = p * (p - 1)
	} else {
		for _, s := range r.w.Plan().Stages {
			if s.Input == workloads.Forward {
				in.channels += p
			} else {
				in.channels += p * p
			}
		}
	}
	opts := r.workloadOpts()
	for _, k := range keyOptions {
		if n, err := strconv.ParseInt(opts[k], 10, 64); err == nil && n > 0 {
			in.keys += n
		}
	}
	return estimateSize(in)
}

func isEffectCounter(w workloads.Workload) bool {
	_, ok := w.(workloads.EffectCounter)
	return ok
}

// checkBudget refuses a run whose estimate exceeds BudgetBytes or
// TimeBudget, unless the configuration lifts the budgets.
func (r *runner) checkBudget() error {
	if r.cfg.NoBudget {
		return nil
	}
	e := r.estimate()
	if e.Bytes > BudgetBytes {
		return inputErr("run too large for the size budget: %s, over the budget of %s; make it smaller (--duration, --rate, --bucket, ...) or pass --no-budget to run it anyway",
			e, FormatBytes(BudgetBytes))
	}
	if e.Wall > TimeBudget {
		return inputErr("run too long for the time budget: %s, over the budget of %s; make it smaller (--duration, --rate, --parallelism, ...) or pass --no-budget to run it anyway",
			e.WallString(), formatWall(TimeBudget))
	}
	return nil
}

// WallString is the time estimate in one line.
func (e Estimate) WallString() string {
	return fmt.Sprintf("estimated %s of wall time on a 2-core machine (%s records x %d stages, %s channels over %gs simulated)",
		formatWall(e.Wall), formatCount(e.Records), e.Hops, formatCount(e.Channels), e.SimTime.Seconds())
}

// formatWall prints a wall time to the second, or in minutes or hours.
func formatWall(t engine.Time) string {
	switch s := t.Seconds(); {
	case s < 120:
		return fmt.Sprintf("%.0f s", s)
	case s < 7200:
		return fmt.Sprintf("%.0f min", s/60)
	default:
		return fmt.Sprintf("%.3g h", s/3600)
	}
}

// String is the estimate in one line.
func (e Estimate) String() string {
	s := fmt.Sprintf("estimated %s peak memory (%s records, %s buckets of the time series over %gs simulated",
		FormatBytes(e.Bytes), formatCount(e.Records), formatCount(e.Buckets), e.SimTime.Seconds())
	if e.Rounds > 0 {
		s += fmt.Sprintf(", %s checkpoint/batch rounds x %d processes", formatCount(e.Rounds), e.Processes)
	}
	if e.Keys > 0 {
		s += fmt.Sprintf(", %s keys", formatCount(e.Keys))
	}
	if e.TraceRecords > 0 {
		s += fmt.Sprintf(", a trace of at most %s records", formatCount(e.TraceRecords))
	}
	return s + fmt.Sprintf(", %s channels)", formatCount(e.Channels))
}

// FormatBytes prints a size in decimal units (MB, GB, ...).
func FormatBytes(b int64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	v := float64(b)
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.3g %s", v, units[i])
}

// formatCount prints a count with a k/M/G suffix.
func formatCount(n int64) string {
	v := float64(n)
	for _, u := range []string{"", " k", " M", " G", " T", " P"} {
		if v < 1000 {
			if u == "" {
				return strconv.FormatInt(n, 10)
			}
			return fmt.Sprintf("%.3g%s", v, u)
		}
		v /= 1000
	}
	return fmt.Sprintf("%.3g E", v)
}

// EstimateRun sizes cfg without running it; bad input is an *InputError.
func EstimateRun(cfg Config) (Estimate, error) {
	r, err := prepare(cfg)
	if err != nil {
		return Estimate{}, err
	}
	return r.estimate(), nil
}

// Validate checks cfg as Execute would before any work: every input
// check, and the size budget unless cfg.NoBudget. Commands that run many
// configurations (sweep, compare, torture) call it for each before the
// first run.
func Validate(cfg Config) (Estimate, error) {
	r, err := prepare(cfg)
	if err != nil {
		return Estimate{}, err
	}
	if err := r.checkBudget(); err != nil {
		return Estimate{}, err
	}
	return r.estimate(), nil
}
