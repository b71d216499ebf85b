package capacity

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"ftbench/engine"
	"ftbench/harness"
)

// A failed live probe is run once more and failed only if both attempts
// fail; a simulated one, or a sustained or erring one, runs once.
func TestConfirmed(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		live      bool
		attempts  []bool // verdicts in order
		err       error  // of the first attempt
		calls     int
		sustained bool
		retried   bool
	}{
		{"sim failed", false, []bool{false, true}, nil, 1, false, false},
		{"sim sustained", false, []bool{true}, nil, 1, true, false},
		{"live sustained", true, []bool{true}, nil, 1, true, false},
		{"live failed then sustained", true, []bool{false, true}, nil, 2, true, true},
		{"live failed twice", true, []bool{false, false}, nil, 2, false, true},
		{"live error", true, []bool{false}, boom, 1, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			p, _, err := confirmed(tc.live, func() (Probe, *harness.Result, error) {
				ok := tc.attempts[calls]
				calls++
				if tc.err != nil {
					return Probe{}, nil, tc.err
				}
				return Probe{Sustained: ok, Reason: map[bool]string{false: "attempt failed"}[ok], P99MS: float64(calls)}, nil, nil
			})
			if !errors.Is(err, tc.err) || calls != tc.calls || p.Sustained != tc.sustained || (p.FirstAttempt != nil) != tc.retried {
				t.Fatalf("err %v, %d calls, sustained %v, first attempt %+v", err, calls, p.Sustained, p.FirstAttempt)
			}
			if tc.retried && (p.FirstAttempt.Sustained || p.FirstAttempt.P99MS != 1 || p.P99MS != 2) {
				t.Fatalf("the probe's figures are not the second attempt's, beside the failed first: %+v", p)
			}
		})
	}
}

// The CPU meter measures between the first and the last sample inside the
// window, and gives up with fewer than two.
func TestCPUMeterWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := &cpuMeter{}
	for i, at := range []engine.Time{500, 1000, 2000, 3000, 4000, 9000} {
		m.samples = append(m.samples, cpuSample{at: at * engine.Millisecond, wall: t0.Add(time.Duration(at) * time.Millisecond),
			cpu: time.Duration(i) * 300 * time.Millisecond})
	}
	for _, tc := range []struct {
		from, to  engine.Time // ms
		cpu, wall time.Duration
		ok        bool
	}{
		{1000, 4000, 900 * time.Millisecond, 3 * time.Second, true},
		{900, 4500, 900 * time.Millisecond, 3 * time.Second, true},
		{0, 10000, 1500 * time.Millisecond, 8500 * time.Millisecond, true},
		{4000, 8000, 0, 0, false}, // one sample
		{5000, 8000, 0, 0, false}, // none
	} {
		cpu, wall, ok := m.use(tc.from*engine.Millisecond, tc.to*engine.Millisecond)
		if cpu != tc.cpu || wall != tc.wall || ok != tc.ok {
			t.Errorf("[%d, %d] ms: cpu %v wall %v ok %v; want %v %v %v", tc.from, tc.to, cpu, wall, ok, tc.cpu, tc.wall, tc.ok)
		}
	}
	for _, tc := range []struct {
		share float64
		low   bool
	}{{0.79, true}, {0.8, false}, {1.1, false}} {
		if got := (&CPUUse{Share: tc.share}).Low(); got != tc.low {
			t.Errorf("share %g: low %v", tc.share, got)
		}
	}
}

// A simulated search's capacity.json carries none of the live figures: its
// bytes are what they were before live searches recorded CPU.
func TestSimSearchHasNoLiveKeys(t *testing.T) {
	cfg := small("none", nil)
	cfg.Rate = 0
	cfg.CostOverride = []string{"record-cpu=500us"}
	res, err := Find(Options{Base: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	for _, key := range []string{`"cpu"`, `"first_attempt"`, `"runtime"`, `"cores_assumed"`, `"cores_available"`, `"capacity_per_core_s"`, `"sim"`} {
		if strings.Contains(string(b), key) {
			t.Fatalf("a simulated search's capacity.json has %s:\n%s", key, b)
		}
	}
}

// A live probe records the CPU its process received over the lag trend's
// window, as a share of the cores the run assumes.
func TestLiveProbeRecordsCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("a live probe takes seconds of wall time")
	}
	cfg := small("none", nil)
	cfg.Runtime, cfg.Workers, cfg.Cores, cfg.Parallelism, cfg.Drain, cfg.Rate = harness.RuntimeLive, 1, 1, 1, engine.Second, 2000
	p, err := NewPlan(Options{Base: cfg})
	if err != nil {
		t.Fatal(err)
	}
	pr, r, err := p.Probe(2000, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := pr.CPU
	if c == nil || c.Cores != 1 || len(c.WindowS) != 2 || c.WindowS[0] != r.LagTrend.FromS || c.WindowS[1] != r.LagTrend.ToS ||
		!(c.Seconds > 0 && c.WallS > 0 && c.Share > 0 && c.Share <= float64(runtime.GOMAXPROCS(0))/float64(c.Cores)*1.05) {
		t.Fatalf("cpu %+v, lag trend window [%g, %g]", c, r.LagTrend.FromS, r.LagTrend.ToS)
	}
	cfg.Runtime = harness.RuntimeSim
	sp, err := NewPlan(Options{Base: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if sim, _, err := sp.Probe(2000, 0); err != nil || sim.CPU != nil {
		t.Fatalf("a simulated probe: cpu %+v, %v", sim.CPU, err)
	}
}

// The cores a run assumes are the ones it resolves: --cores, else
// --cost cores=N, else the cost model's default, times the workers.
func TestAssumedCoresFollowsTheRun(t *testing.T) {
	def := engine.DefaultCost().Cores
	for _, tc := range []struct {
		name     string
		cores    int
		override []string
		want     int
	}{
		{"default", 0, nil, 3 * def},
		{"--cores", 2, nil, 6},
		{"--cost cores=N", 0, []string{"cores=8"}, 24},
		{"--cores and an equal override", 8, []string{"cores=8"}, 24},
		{"another override", 0, []string{"net-latency=1ms"}, 3 * def},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := harness.DefaultConfig()
			cfg.Workers, cfg.Cores, cfg.CostOverride = 3, tc.cores, tc.override
			if got := assumedCores(cfg); got != tc.want {
				t.Errorf("assumedCores = %d, want %d", got, tc.want)
			}
		})
	}
}
