package capacity

import (
	"fmt"
	"runtime"
	"time"

	"ftbench/engine"
	"ftbench/harness"
)

// Live probes share the machine with whatever else runs on it, and one
// probe starved for a few seconds fails the 1% lag criterion: on a shared
// machine live searches settled at 0.29-0.75 of the simulator's capacity
// while a run offered the simulator's capacity sustained 0.85-0.87 of it on
// about 85% of the CPU. So a live search records the CPU each probe
// received, flags failed probes that received much less than the cores
// they assume, confirms every failed probe by running it once more (a live
// probe fails only if both attempts fail), and reports capacity per core
// second received. The simulator gives every probe its modelled cores by
// construction: none of this applies there, and its probes are unchanged.

// LowCPUShare is the CPU share (of the cores a run assumes) below which a
// failed live probe is flagged: it may have failed for want of CPU rather
// than of capacity. Only failed probes are flagged, since a sustained one
// needs only the CPU its rate needs.
const LowCPUShare = 0.8

// CPUUse is the CPU a live probe's process received.
type CPUUse struct {
	// Seconds is the process's CPU time (user and system, as getrusage
	// counts it: what the OS gave, not what Go asked for) over WindowS,
	// WallS the wall time between the same two instants.
	Seconds float64 `json:"cpu_s"`
	WallS   float64 `json:"wall_s"`
	// WindowS is the span of run time measured: the lag trend's steady
	// window, on which the verdict rests, as marked by the first commits
	// in it and before its end; null when commits did not mark it, and
	// then the whole probe is measured (building the run and checking it
	// included, which lowers the share).
	WindowS []float64 `json:"window_s"`
	// Cores is what the run assumes: --workers x --cores, the hardware the
	// simulator would give it (the master node's processes aside).
	Cores int `json:"cores_assumed"`
	// Share is Seconds / (WallS x Cores).
	Share float64 `json:"share"`
}

// Low reports whether a failed probe got too little CPU to believe.
func (c *CPUUse) Low() bool { return c != nil && c.Share < LowCPUShare }

func (c *CPUUse) String() string {
	return fmt.Sprintf("cpu %.2f of %d cores", c.Share, c.Cores)
}

type cpuSample struct {
	at   engine.Time // run time of the commit that took it
	wall time.Time
	cpu  time.Duration
}

// cpuMeter samples the process's CPU time against the run's clock from
// harness.Config.OnCommit, at the first commit of every bucket: a live run
// (no commit pipe there) commits one by one anyway, so the hook costs a
// comparison a commit. The live runtime calls observers under one lock,
// and Execute returns after its goroutines end, so no lock is needed.
type cpuMeter struct {
	slot    engine.Time
	next    engine.Time
	samples []cpuSample
}

func (m *cpuMeter) onCommit(at engine.Time, _ engine.Commit) {
	if at < m.next {
		return
	}
	cpu, ok := processCPU()
	if !ok {
		return
	}
	m.samples = append(m.samples, cpuSample{at: at, wall: time.Now(), cpu: cpu})
	m.next = (at/m.slot + 1) * m.slot
}

// use is the CPU received over [from, to] of run time: from the first
// sample at or after from to the last at or before to. ok is false when
// fewer than two samples fall in it.
func (m *cpuMeter) use(from, to engine.Time) (cpu time.Duration, wall time.Duration, ok bool) {
	var first, last *cpuSample
	for i := range m.samples {
		s := &m.samples[i]
		if s.at >= from && s.at <= to {
			if first == nil {
				first = s
			}
			last = s
		}
	}
	if first == nil || last == first || !last.wall.After(first.wall) {
		return 0, 0, false
	}
	return last.cpu - first.cpu, last.wall.Sub(first.wall), true
}

// measuredRun runs cfg (a live probe) with a cpuMeter and returns the
// outcome with the CPU it received: over the lag trend's window when the
// commits marked it, else over the whole run.
func measuredRun(cfg harness.Config) (*harness.Outcome, *CPUUse, error) {
	bucket := cfg.Bucket
	if bucket == 0 {
		bucket = harness.DefaultBucket
	}
	m := &cpuMeter{slot: bucket}
	cfg.OnCommit = m.onCommit
	cpu0, cpuOK := processCPU()
	wall0 := time.Now()
	out, err := harness.Execute(cfg)
	if err != nil || !cpuOK {
		return out, nil, err
	}
	cpu1, _ := processCPU()
	r := out.Result
	use := &CPUUse{Cores: r.Config.Workers * r.Config.Cores, Seconds: (cpu1 - cpu0).Seconds(), WallS: time.Since(wall0).Seconds()}
	from, to := engine.Time(r.LagTrend.FromS*float64(engine.Second)), engine.Time(r.LagTrend.ToS*float64(engine.Second))
	if cpu, wall, ok := m.use(from, to); ok && to > from {
		use.Seconds, use.WallS, use.WindowS = cpu.Seconds(), wall.Seconds(), []float64{r.LagTrend.FromS, r.LagTrend.ToS}
	}
	if use.WallS > 0 && use.Cores > 0 {
		use.Share = use.Seconds / (use.WallS * float64(use.Cores))
	}
	return out, use, nil
}

// assumedCores is the cores a run of cfg assumes: --workers x the cores
// per worker, as the run resolves them (--cores, else --cost cores=N, else
// the cost model's default).
func assumedCores(cfg harness.Config) int {
	cost := engine.DefaultCost()
	for _, o := range cfg.CostOverride {
		_ = cost.Set(o) // a bad override is refused before any search
	}
	if cfg.Cores > 0 {
		cost.Cores = cfg.Cores
	}
	return cfg.Workers * cost.Cores
}

// coresNote says, for a live search, when the run assumes more cores than
// the process may use: every probe then gets at most the machine's share,
// and capacity is no longer comparable with the simulator's.
func coresNote(cfg harness.Config) string {
	avail, assumed := runtime.GOMAXPROCS(0), assumedCores(cfg)
	if assumed <= avail {
		return ""
	}
	return fmt.Sprintf("the run assumes %d cores (--workers x --cores) but this process may use %d (GOMAXPROCS): every probe gets at most %.2f of them; give --workers and --cores this machine's (scripts/simlive.sh) to compare with the simulator",
		assumed, avail, float64(avail)/float64(assumed))
}

// perCore is the capacity over the cores its probe received (nil without
// a capacity or a CPU figure).
func perCore(b Bracket) *float64 {
	for _, p := range b.Probes {
		if b.Sustained > 0 && p.RateRPS == b.Sustained && p.CPU != nil && p.CPU.Seconds > 0 {
			x := b.Sustained / (p.CPU.Seconds / p.CPU.WallS)
			return &x
		}
	}
	return nil
}

// SimComparison sets a live search beside the simulator's search of the
// same configuration.
type SimComparison struct {
	File        string  `json:"file"`
	CapacityRPS float64 `json:"capacity_rps"`
	// PerCoreS is the simulator's capacity over the cores it assumes: the
	// simulator gives a probe every one of them for the whole probe.
	PerCoreS float64 `json:"capacity_per_core_s"`
	// LiveOverSim is the live capacity over the simulator's, and
	// LiveOverSimPerCore the same per core-second received (null without
	// a live CPU figure): the second is what the machine's other load
	// does not move.
	LiveOverSim        float64  `json:"live_over_sim"`
	LiveOverSimPerCore *float64 `json:"live_over_sim_per_core"`
}

// CheckSimPeer refuses, as the simulator's side of this plan's live
// search, a capacity.json that is not the simulator's search of the same
// system, variant, workload and hardware, or that found no capacity. It
// picks the matching search from a bench compare --capacity file.
func (p *Plan) CheckSimPeer(path string) (*Result, error) {
	bad := func(format string, args ...any) error {
		return &harness.InputError{Err: fmt.Errorf("--sim-capacity %s: "+format, append([]any{path}, args...)...)}
	}
	if !p.live() {
		return nil, bad("only a live search (--runtime live) is set beside the simulator's")
	}
	cmp, err := ReadFile(path)
	if err != nil {
		return nil, &harness.InputError{Err: err}
	}
	cfg := p.Config
	for _, r := range cmp.Systems {
		if r.System != cfg.System || r.Variant != p.Variant || r.Workload != cfg.Workload {
			continue
		}
		switch {
		case r.Runtime != "":
			return nil, bad("is a %s search, not the simulator's", r.Runtime)
		case r.CapacityRPS == nil:
			return nil, bad("the simulator found no capacity to compare with")
		case r.Config.Workers*r.Config.Cores != assumedCores(cfg) || r.Config.Parallelism != cfg.Parallelism:
			return nil, bad("its hardware is %d workers x %d cores, parallelism %d; this run's is %d cores, parallelism %d",
				r.Config.Workers, r.Config.Cores, r.Config.Parallelism, assumedCores(cfg), cfg.Parallelism)
		}
		return r, nil
	}
	return nil, bad("holds no search of %s/%s on %s", cfg.System, p.Variant, cfg.Workload)
}

// SetSim sets the simulator's search sim (read from file) beside r.
func (r *Result) SetSim(file string, sim *Result) {
	if r.CapacityRPS == nil || sim.CapacityRPS == nil {
		return
	}
	cores := sim.Config.Workers * sim.Config.Cores
	c := &SimComparison{File: file, CapacityRPS: *sim.CapacityRPS, PerCoreS: *sim.CapacityRPS / float64(cores),
		LiveOverSim: *r.CapacityRPS / *sim.CapacityRPS}
	if r.CapacityPerCoreS != nil {
		x := *r.CapacityPerCoreS / c.PerCoreS
		c.LiveOverSimPerCore = &x
	}
	r.Sim = c
}
