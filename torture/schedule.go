package torture

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
	"ftbench/systems"
	"ftbench/workloads"
)

// Props is what torture must know about a system to draw only the faults it
// is meant to survive, without reading its code.
type Props struct {
	// Reorder is true when the system does not rely on FIFO channels, so
	// reorder windows are drawn for it.
	Reorder bool
	// ReorderP2P is true when the system tolerates reorder windows on
	// peer-to-peer workloads only.
	ReorderP2P bool
	// Store is true when the system takes failed checkpoint-store writes
	// into account (engine.KindStoreFailed), so store-slow and store-down
	// windows are drawn for it.
	Store bool
	// Opts are system options torture sets unless the user set them: values
	// that make a run of a few simulated seconds meaningful. Options drawn
	// per run are in choices (options.go).
	Opts map[string]string
}

// props is keyed by "system" or "system/variant"; the variant's entry wins.
// Why each entry:
//   - none: nothing to break (at-most-once); reorder only reorders.
//   - stormack: XOR acking is order-independent (acks reach an acker from
//     many tasks in any order anyway) and Storm makes no FIFO promise. Its
//     30 s default ack timeout would outlast a short run's drain, turning
//     every crash into losses, so torture uses 1 s.
//   - barrier: a barrier separates the records before it from those after
//     it only on FIFO channels (aligned and unaligned alike).
//   - snapshot: Chandy-Lamport markers need FIFO channels, and so does the
//     naive variant's rollback; Lai-Yang's colouring does not.
//   - snapshot/cl on bank-p2p: the audit excuses exactly the snapshots whose
//     own markers a reordered transfer crossed (docs/snapshot.md), so reorder
//     windows there test that judgement; on dataflows cl still needs FIFO.
//   - lineage: listed as FIFO until its authors say otherwise (a batch-end
//     message overtaken by its batch's data would be a false alarm).
//   - kstreams: a Kafka client's requests and responses travel on one TCP
//     connection, in order (the rebalance and commit steps rely on it);
//     a failed append is retried without a path of its own yet, so no
//     store faults either (docs/kstreams.md).
//   - trident: a task finishes a batch when the counts its upstream tasks
//     reported match the tuples it received, in whatever order they came,
//     so reordering is fine; ack timeout 1 s as stormack's.
//   - store faults: drawn for every system (each declines, retries or
//     re-commits a failed checkpoint-store write).
//
// A system not listed is treated as relying on FIFO, with no options set.
var props = map[string]Props{
	"none":              {Reorder: true, Store: true},
	"stormack":          {Reorder: true, Store: true, Opts: map[string]string{"ack-timeout": "1s"}},
	"barrier":           {Store: true},
	"kstreams":          {},
	"lineage":           {Store: true},
	"snapshot":          {Store: true},
	"snapshot/cl":       {ReorderP2P: true, Store: true},
	"snapshot/lai-yang": {Reorder: true, Store: true},
	"snapshot/mattern":  {Reorder: true, Store: true},
	"trident":           {Reorder: true, Store: true, Opts: map[string]string{"ack-timeout": "1s"}},
}

// Reorders reports whether reorder windows are drawn for a system with
// these properties on a peer-to-peer workload (p2p) or a dataflow.
func (p Props) Reorders(p2p bool) bool { return p.Reorder || (p2p && p.ReorderP2P) }

// PropsOf returns the properties of a system's variant.
func PropsOf(system, variant string) Props {
	if p, ok := props[system+"/"+variant]; ok {
		return p
	}
	return props[system]
}

// ReliesOnFIFO reports whether run cfg's system (its variant, on its
// workload) relies on FIFO channels, by the props table: a reorder window
// then breaks its claim by construction, which is why torture never draws
// one for it. False when cfg names no system or variant.
func ReliesOnFIFO(cfg harness.Config) bool {
	r, _, ok := resolve(cfg)
	if !ok {
		return false
	}
	return !PropsOf(cfg.System, r.variant).Reorders(r.p2p)
}

// Fixed says which workload parameters the user set; the others are drawn.
type Fixed struct{ Duration, Rate, Parallelism, Workers bool }

// Ranges of the drawn parameters: runs of a few simulated seconds at rates
// every system sustains, so that a run takes well under a second of wall
// time and a campaign of hundreds of runs takes a minute or two.
const (
	minDuration   = 3 * engine.Second
	durationSteps = 7 // 3s, 3.5s, ... 6s
	minRate       = 1000.0
	maxRate       = 15000.0
	maxPar        = 4
	maxWorkers    = 4
	maxFaults     = 4
	minThrottle   = 1000.0 // records/s per channel
	// checkpointSkew is how far after a checkpoint trigger a crash aimed at
	// the checkpoint may land: within the barrier propagation and the
	// snapshot writes (store latency 5 ms plus the state).
	checkpointSkew = 30 * engine.Millisecond
)

// intervalFlags name the options whose value is the period of a system's
// checkpoints (or of the batches it commits): crashes are aimed just after
// their multiples.
var intervalFlags = []string{"checkpoint-interval", "snapshot-interval", "batch-interval"}

// draw returns run cfg's random workload parameters and fault schedule.
func draw(base harness.Config, fixed Fixed, seed uint64) (harness.Config, error) {
	rng := engine.NewRand(engine.ChildSeed(seed, "torture/schedule"))
	cfg := base
	cfg.Seed = seed
	cfg.Faults = nil
	cfg.SystemOpts = clone(base.SystemOpts)
	cfg.WorkloadOpts = clone(base.WorkloadOpts)
	if !fixed.Duration {
		cfg.Duration = minDuration + engine.Time(rng.IntN(durationSteps))*500*engine.Millisecond
	}
	if !fixed.Rate {
		r := minRate * math.Pow(maxRate/minRate, rng.Float64())
		cfg.Rate = math.Round(r/100) * 100
	}
	if !fixed.Parallelism {
		cfg.Parallelism = 1 + rng.IntN(maxPar)
	}
	if !fixed.Workers {
		cfg.Workers = 1 + rng.IntN(maxWorkers)
	}
	sys, err := systems.Lookup(cfg.System)
	if err != nil {
		return cfg, &harness.InputError{Err: err}
	}
	if _, err := systems.ResolveVariant(sys, cfg.Variant); err != nil {
		return cfg, &harness.InputError{Err: err}
	}
	declared := map[string]string{}
	for _, f := range sys.Flags() {
		declared[f.Name] = f.Default
	}
	// Workload options come from a stream of their own too.
	drawWorkloadOptions(engine.NewRand(engine.ChildSeed(seed, "torture/workload-options")), cfg.Workload, cfg.WorkloadOpts)
	w, err := workloads.New(cfg.Workload, engine.ChildSeed(cfg.Seed, "workload"), cfg.WorkloadOpts)
	if err != nil {
		return cfg, &harness.InputError{Err: err}
	}
	// Peer-to-peer workloads model a failure-free system: no crashes.
	_, p2p := w.(workloads.PeerToPeer)
	// The variant, unless the user gave one, comes from a stream of its
	// own as well, and is written into the run's configuration so that
	// its replay line names it.
	cfg.Variant = drawVariant(engine.NewRand(engine.ChildSeed(seed, "torture/variant")), cfg.System, cfg.Variant, p2p)
	variant, err := systems.ResolveVariant(sys, cfg.Variant)
	if err != nil {
		return cfg, &harness.InputError{Err: err}
	}
	p := PropsOf(cfg.System, variant)
	// Options come from their own stream, so that drawing them leaves the
	// schedule's draws as they were for the same parameters. Drawn options
	// win over the props table's; the user's win over both.
	drawOptions(engine.NewRand(engine.ChildSeed(seed, "torture/options")), cfg.System, variant, p2p, cfg.SystemOpts, declared)
	for k, v := range p.Opts {
		if _, set := cfg.SystemOpts[k]; !set {
			if _, ok := declared[k]; ok {
				cfg.SystemOpts[k] = v
			}
		}
	}
	interval := checkpointPeriod(cfg.SystemOpts, declared)
	if !fixed.Duration && interval > 0 {
		cfg.Duration = max(cfg.Duration, minDurationFor(interval))
	}
	dep, err := harness.Deployment(cfg)
	if err != nil {
		return cfg, err
	}
	drawSlots(engine.NewRand(engine.ChildSeed(seed, "torture/slots")), &cfg, dep)
	reorder := p.Reorders(p2p)
	g := &drawer{rng: rng, cfg: &cfg, dep: dep, reorder: reorder, store: p.Store, mayCrash: !p2p, interval: interval, planOps: w.Plan().OpNames()}
	if cfg.Runtime == harness.RuntimeLive {
		// The live runtime has no simulated links (no throttle or
		// reorder), no pause or checkpoint-store faults yet, and with
		// --work none no Work for slow to multiply.
		g.reorder, g.noLinks, g.noSlow = false, true, cfg.Work == "none"
		g.store, g.noPause = false, true
		g.noMaster = true
	}
	cfg.Faults = g.faults(1 + rng.IntN(maxFaults))
	if sp, ok := g.partition(engine.NewRand(engine.ChildSeed(seed, "torture/partition"))); ok && g.compatible(cfg.Faults, sp) {
		cfg.Faults = insertByTime(cfg.Faults, sp, cfg.Duration)
	}
	if sp, ok := g.sourceDown(engine.NewRand(engine.ChildSeed(seed, "torture/source-down"))); ok && g.compatible(cfg.Faults, sp) {
		cfg.Faults = insertByTime(cfg.Faults, sp, cfg.Duration)
	}
	if !fixed.Duration {
		cfg.Duration += recoveryTail(cfg.SystemOpts)
	}
	return cfg, nil
}

// recoveryTail is how much longer than drawn a run's input goes on, after
// its faults (drawn within the first 70% of the drawn length), so that a
// timer its recovery arms fires within the run: kstreams' probing
// rebalance, probing-rebalance-interval after the assignment that placed
// warm-ups (a returning instance's, at most a restart and a session
// timeout after the last fault), plus 3 s. 0 for the other runs. Such a
// run takes a few seconds of wall time where the others take well under
// one (a fifth of kstreams' runs: docs/kstreams.md, "Torture").
func recoveryTail(opts map[string]string) engine.Time {
	d, err := time.ParseDuration(opts["probing-rebalance-interval"])
	if err != nil || d > 5*time.Minute {
		return 0 // Kafka's 10 min default: no probing within a run
	}
	return engine.Time(d) + 3*engine.Second
}

// sourceDown draws, in a third of the runs (from its own stream, so the
// other draws stay as they were), a source-down window: a random source
// partition cannot be read for 100 ms-3 s, starting in 10-70% of the input
// and ending before 80% of it, so the run shows the system catching up.
// Every system on the simulator, peer-to-peer workloads too (an outage of
// the input is no failure); not on the live runtime, whose torture draws
// no windowed fault of the run's environment yet.
func (g *drawer) sourceDown(rng *rand.Rand) (faults.Spec, bool) {
	if g.cfg.Runtime == harness.RuntimeLive || rng.IntN(3) != 0 {
		return faults.Spec{}, false
	}
	d := g.cfg.Duration
	ms := func(t engine.Time) engine.Time { return t / engine.Millisecond * engine.Millisecond }
	lo := d / 10
	longest := min(3*engine.Second, d*8/10-lo) // back before 80% of the input
	if longest <= 100*engine.Millisecond {
		return faults.Spec{}, false // too short a run for a window
	}
	length := ms(100*engine.Millisecond + engine.Time(rng.Int64N(int64(longest-100*engine.Millisecond))))
	hi := min(d*7/10, d*8/10-length)
	at := ms(lo)
	if hi > lo {
		at = ms(lo + engine.Time(rng.Int64N(int64(hi-lo))))
	}
	return faults.Spec{Kind: faults.SourceDown, At: at, End: at + length, Worker: -1, Restart: -1, Part: rng.IntN(g.cfg.Parallelism)}, true
}

// partition draws, in half the runs where crashes are drawn (from its own
// stream, so the other draws stay as they were), a network partition: the
// worker of the sink's instance 0 most of the time, another worker, or (an
// eighth of the time, with two workers or more) two sides. Three times in
// four it starts just after a checkpoint trigger, when a small
// checkpoint's last acknowledgements are in and its metadata is being
// written: a commit notice sent then is caught in the cut. It lasts shorter
// than the detection delay, longer (the far side declared failed, its tasks
// re-placed if slots allow, zombies until it heals: two of the four
// lengths), or past the connection timeout; it heals before 80% of the
// input.
func (g *drawer) partition(rng *rand.Rand) (faults.Spec, bool) {
	if !g.mayCrash || g.noPause || rng.IntN(2) != 0 {
		return faults.Spec{}, false
	}
	d := g.cfg.Duration
	lo, hi := d/10, d*7/10
	uniform := func(a, b engine.Time) engine.Time {
		if b <= a {
			return a / engine.Millisecond * engine.Millisecond
		}
		return (a + engine.Time(rng.Int64N(int64(b-a)))) / engine.Millisecond * engine.Millisecond
	}
	s := faults.Spec{Kind: faults.Partition, Worker: rng.IntN(g.cfg.Workers), Restart: -1}
	switch {
	case g.cfg.Workers >= 2 && rng.IntN(8) == 0:
		ws := rng.Perm(g.cfg.Workers)
		k := 1 + rng.IntN(g.cfg.Workers-1)
		near, far := slices.Clone(ws[:k]), slices.Clone(ws[k:])
		slices.Sort(near)
		slices.Sort(far)
		s.Worker, s.Sides = -1, joinInts(near)+"|"+joinInts(far)
	case rng.IntN(4) != 0 && len(g.planOps) > 0:
		sink := g.planOps[len(g.planOps)-1]
		for _, p := range g.dep.Procs {
			if p.Runs(sink) && p.Index == 0 && p.Worker >= 0 {
				s.Worker = p.Worker
			}
		}
	}
	s.At = uniform(lo, hi)
	if g.interval > 0 && g.interval < hi && rng.IntN(4) != 0 {
		k := engine.Time(1 + rng.Int64N(int64(hi/g.interval)))
		s.At = k*g.interval + uniform(partitionSkewMin, partitionSkewMax)
	}
	cost := engine.DefaultCost()
	var lengths []engine.Time
	for _, l := range []engine.Time{cost.DetectDelay / 2, cost.DetectDelay + cost.TaskRestart + 300*engine.Millisecond,
		2*cost.DetectDelay + cost.TaskRestart, cost.ConnTimeout + engine.Second} { // shorter than, longer than (twice), past the conn timeout
		if s.At+l <= d*8/10 {
			lengths = append(lengths, l)
		}
	}
	if len(lengths) == 0 {
		return faults.Spec{}, false
	}
	s.End = s.At + lengths[rng.IntN(len(lengths))]
	return s, true
}

// An aimed partition starts partitionSkewMin to partitionSkewMax after a
// checkpoint trigger: a small checkpoint's acknowledgements are in after
// about 5-7 ms and its metadata durable about 5 ms later (the store
// latency), when the commit notices go out. A cut in between leaves a sink
// with a pre-committed transaction whose notice waits for the heal — the
// zombie a fence must stop.
const (
	partitionSkewMin = 5 * engine.Millisecond
	partitionSkewMax = 12 * engine.Millisecond
)

func joinInts(ws []int) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = strconv.Itoa(w)
	}
	return strings.Join(s, ",")
}

// insertByTime adds sp to the canonical, time-sorted specs.
func insertByTime(specs []string, sp faults.Spec, d engine.Time) []string {
	str := sp.String()
	if slices.Contains(specs, str) {
		return specs
	}
	i := 0
	for i < len(specs) {
		o, err := faults.Parse(specs[i], faults.Defaults{Duration: d})
		if err == nil && o.At > sp.At {
			break
		}
		i++
	}
	return slices.Insert(specs, i, str)
}

// drawSlots gives half the runs spare slots (unless the user set --slots):
// twice what the placement puts on the busiest worker, so a failed worker's
// processes are re-placed on the others (engine/sim's slots.go) when it is
// still down at detection. Its own stream leaves every other draw as it was.
func drawSlots(rng *rand.Rand, cfg *harness.Config, dep *engine.Deployment) {
	spare := rng.IntN(2) == 0
	if cfg.Slots > 0 || !spare || cfg.Runtime == harness.RuntimeLive {
		return
	}
	placed := make([]int, cfg.Workers)
	for _, p := range dep.Procs {
		if p.Worker >= 0 && p.Worker < cfg.Workers {
			placed[p.Worker]++
		}
	}
	if most := slices.Max(placed); most > 0 {
		cfg.Slots = 2 * most
	}
}

func clone(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

type drawer struct {
	rng      *rand.Rand
	cfg      *harness.Config
	dep      *engine.Deployment
	reorder  bool
	store    bool
	mayCrash bool
	interval engine.Time
	crashes  []engine.Time
	planOps  []string
	// noLinks and noSlow leave out fault kinds the runtime cannot apply.
	noLinks, noSlow bool
	// noPause leaves out pauses (the live runtime has none yet).
	noPause bool
	// noMaster leaves out master crashes (the live runtime has none yet).
	noMaster bool
}

// uniform returns a time in [lo, hi), rounded to the millisecond so that
// specs stay readable.
func (g *drawer) uniform(lo, hi engine.Time) engine.Time {
	t := lo + engine.Time(g.rng.Int64N(int64(max(hi-lo, 1))))
	return t / engine.Millisecond * engine.Millisecond
}

// faults draws n faults, sorted by time, in canonical form.
func (g *drawer) faults(n int) []string {
	var specs []faults.Spec
	for range n {
		if s, ok := g.fault(); ok {
			specs = append(specs, s)
		}
	}
	slices.SortStableFunc(specs, func(a, b faults.Spec) int { return cmp.Compare(a.At, b.At) })
	var out []string
	var kept []faults.Spec
	for _, s := range specs {
		// A fault the runtime cannot run beside those already drawn (a
		// second crash of a worker that is still down, overlapping
		// partitions) would be refused by the run: leave it out.
		if faults.Check(append(kept, s), g.dep, g.bounds()) != nil {
			continue
		}
		kept = append(kept, s)
		out = append(out, s.String())
	}
	return out
}

// bounds is what faults.Check needs to know of the run being drawn.
func (g *drawer) bounds() faults.Bounds { return runBounds(*g.cfg) }

// runBounds is what faults.Check needs to know of run cfg.
func runBounds(cfg harness.Config) faults.Bounds {
	cost := engine.DefaultCost()
	for _, o := range cfg.CostOverride {
		_ = cost.Set(o) // a bad override fails the run itself, with its own message
	}
	drain := cfg.Drain
	if drain == 0 {
		drain = harness.DefaultDrain
	}
	return faults.Bounds{Workers: cfg.Workers, InputEnd: cfg.Duration, HardEnd: cfg.Duration + drain, RestartDelay: cost.RestartDelay,
		Parts: cfg.Parallelism}
}

// compatible reports whether sp can run beside the drawn specs.
func (g *drawer) compatible(specs []string, sp faults.Spec) bool {
	all := make([]faults.Spec, 0, len(specs)+1)
	for _, str := range specs {
		o, err := faults.Parse(str, faults.Defaults{Duration: g.cfg.Duration})
		if err != nil {
			return false
		}
		all = append(all, o)
	}
	return faults.Check(append(all, sp), g.dep, g.bounds()) == nil
}

func (g *drawer) fault() (faults.Spec, bool) {
	d := g.cfg.Duration
	// Faults start within the first 70% of the input, so that the run
	// shows recovery before the input ends (the drain follows).
	lo, hi := d/10, d*7/10
	var ops []engine.ProcSpec
	for _, p := range g.dep.Procs {
		if p.Op != "" {
			ops = append(ops, p)
		}
	}
	edges := g.edges()
	w := []int{0, 0, 0, 0, 0, 0, 0} // crash, slow, throttle, reorder, pause, store-slow, store-down
	if g.mayCrash {
		// A pause past the detection delay is a failure too, so it is
		// drawn where crashes are.
		w[0], w[4] = 5, 2
		if g.noPause {
			w[4] = 0
		}
	}
	if len(ops) > 0 && !g.noSlow {
		w[1] = 2
	}
	if len(edges) > 0 && !g.noLinks {
		w[2] = 2
	}
	if g.reorder {
		w[3] = 2
	}
	if g.store {
		w[5], w[6] = 1, 1
	}
	if w[0]+w[1]+w[2]+w[3]+w[4]+w[5]+w[6] == 0 {
		return faults.Spec{}, false
	}
	switch pick(g.rng, w) {
	case 0:
		return g.crash(lo, hi), true
	case 4:
		return g.pause(lo, hi), true
	case 5:
		at := g.uniform(lo, hi)
		return faults.Spec{Kind: faults.StoreSlow, At: at, End: at + g.uniform(100*engine.Millisecond, 1500*engine.Millisecond),
			Worker: -1, Restart: -1, Factor: []float64{2, 5, 10, 20}[g.rng.IntN(4)]}, true
	case 6:
		// Up to three checkpoint intervals of the default 1 s, ending
		// before 80% of the input like a crash's restart.
		d := g.uniform(100*engine.Millisecond, 3*engine.Second)
		at := g.uniform(lo, hi)
		if late := g.cfg.Duration*8/10 - d; at > late {
			at = max(lo, late/engine.Millisecond*engine.Millisecond)
		}
		return faults.Spec{Kind: faults.StoreDown, At: at, End: at + d, Worker: -1, Restart: -1}, true
	case 1:
		p := ops[g.rng.IntN(len(ops))]
		at := g.uniform(lo, hi)
		return faults.Spec{Kind: faults.Slow, At: at, End: at + g.uniform(100*engine.Millisecond, 1500*engine.Millisecond),
			Worker: -1, Restart: -1, Op: p.Op, Index: p.Index, Factor: []float64{2, 4, 8, 20}[g.rng.IntN(4)]}, true
	case 2:
		e := edges[g.rng.IntN(len(edges))]
		at := g.uniform(lo, hi)
		// At least minThrottle: the simulator charges a whole network
		// buffer at the throttled rate when it is sent, so a buffer of
		// 1000 small records at 100/s would hold the link for 10 s after
		// the window closed (see docs/torture.md).
		perChan := g.cfg.Rate / float64(g.cfg.Parallelism) * (0.2 + 0.8*g.rng.Float64())
		return faults.Spec{Kind: faults.Throttle, At: at, End: at + g.uniform(100*engine.Millisecond, 1500*engine.Millisecond),
			Worker: -1, Restart: -1, From: e[0], To: e[1], Rate: max(minThrottle, math.Round(perChan))}, true
	default:
		at := g.uniform(lo, hi)
		s := faults.Spec{Kind: faults.Reorder, At: at, End: at + g.uniform(100*engine.Millisecond, 1500*engine.Millisecond),
			Worker: -1, Restart: -1, AllEdges: true, P: []float64{0.05, 0.2, 0.5}[g.rng.IntN(3)]}
		if len(edges) > 0 && g.rng.IntN(3) == 0 {
			e := edges[g.rng.IntN(len(edges))]
			s.AllEdges, s.From, s.To = false, e[0], e[1]
		}
		return s, true
	}
}

// crash draws a crash of a random worker — or one time in four of the
// master node (the coordinator, the driver) — at a random time, just after
// a checkpoint trigger, or while an earlier crash is being recovered from.
func (g *drawer) crash(lo, hi engine.Time) faults.Spec {
	s := faults.Spec{Kind: faults.Crash, Worker: g.rng.IntN(g.cfg.Workers), Restart: -1}
	if g.rng.IntN(4) == 0 && !g.noMaster {
		s.Worker, s.Master = -1, true
	}
	cost := engine.DefaultCost()
	mode := g.rng.IntN(3)
	if s.Master && g.rng.IntN(2) == 0 {
		// Half the master crashes land just after a trigger, where a
		// checkpoint completes and its sinks' transactions wait for the
		// commit notice.
		mode = 1
	}
	switch {
	case mode == 1 && g.interval > 0 && g.interval < hi:
		k := engine.Time(1 + g.rng.Int64N(int64(hi/g.interval)))
		s.At = k*g.interval + g.uniform(0, checkpointSkew)
	case mode == 2 && len(g.crashes) > 0:
		prev := g.crashes[g.rng.IntN(len(g.crashes))]
		// Detection, restart and restore of the earlier crash.
		s.At = prev + g.uniform(engine.Millisecond, cost.DetectDelay+cost.RestartDelay+500*engine.Millisecond)
	default:
		s.At = g.uniform(lo, hi)
	}
	// The worker is back before 80% of the input, so recovery can be seen
	// within the run (none's sources resume at the end of the log, so one
	// that restarts after the input ended never brings its lag back, which
	// would read as a liveness failure). The default restart delay is used
	// half the time, when it fits.
	fits := g.cfg.Duration*8/10 - lo
	restart := cost.RestartDelay
	if g.rng.IntN(2) == 0 || restart > fits {
		var opts []engine.Time
		for _, d := range []engine.Time{100 * engine.Millisecond, 300 * engine.Millisecond, engine.Second, 2 * engine.Second} {
			if d <= fits {
				opts = append(opts, d)
			}
		}
		if len(opts) == 0 { // a run shorter than a second
			opts = []engine.Time{max(fits, engine.Millisecond)}
		}
		s.Restart = opts[g.rng.IntN(len(opts))]
		restart = s.Restart
	}
	if late := g.cfg.Duration*8/10 - restart; s.At > late {
		s.At = max(lo, late/engine.Millisecond*engine.Millisecond)
	}
	g.crashes = append(g.crashes, s.At)
	return s
}

// pause draws a pause of a random worker: half the time shorter than the
// detection delay (the worker resumes as if nothing happened, unless an ack
// timeout fires meanwhile), half the time longer (it is declared failed and
// recovered from as a crash, and its paused tasks never run again). Like a
// crash's restart, it ends before 80% of the input.
func (g *drawer) pause(lo, hi engine.Time) faults.Spec {
	detect := engine.DefaultCost().DetectDelay
	s := faults.Spec{Kind: faults.Pause, Worker: g.rng.IntN(g.cfg.Workers), Restart: -1}
	s.At = g.uniform(lo, hi)
	d := g.uniform(50*engine.Millisecond, detect)
	if g.rng.IntN(2) == 0 {
		d = detect + g.uniform(engine.Millisecond, 1500*engine.Millisecond)
	}
	d = max(d, engine.Millisecond)
	if late := g.cfg.Duration*8/10 - d; s.At > late {
		s.At = max(lo, late/engine.Millisecond*engine.Millisecond)
	}
	s.End = s.At + d
	return s
}

// edges are the plan's consecutive operator pairs that both exist in the
// deployment (a system may fuse stages) and are joined by channels: an
// edge inside a chained task has none to throttle or reorder.
func (g *drawer) edges() [][2]string {
	network, _ := faults.Edges(g.dep, g.planOps)
	return network
}

func pick(rng *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := rng.IntN(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	panic(fmt.Sprint("pick: bad weights ", weights))
}
