package harness

import (
	"strings"
	"testing"

	"ftbench/engine"
)

// The memory model on inputs where every term is known.
func TestEstimateSizeArithmetic(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      sizeInputs
		buckets int64
		rounds  int64
		bytes   int64
	}{
		{"nothing but the base", sizeInputs{}, 0, 0, baseBytes},
		{"records in flight", sizeInputs{records: 1_000_000}, 0, 0, baseBytes + 32_000_000},
		{"the window is capped", sizeInputs{records: 100_000_000}, 0, 0, baseBytes + 128<<20},
		{"a table of effect counts", sizeInputs{records: 100_000_000, table: true}, 0, 0, baseBytes + 128<<20 + 200_000_000},
		{"buckets round up", sizeInputs{simTime: 30*engine.Second + 1, bucket: 100 * engine.Millisecond}, 301, 0, baseBytes + 301*4096},
		{"in the simulator, sealed buckets and the commit pipe's queue", sizeInputs{simTime: 30*engine.Second + 1, bucket: 100 * engine.Millisecond, sim: true}, 301, 0, baseBytes + 301*512 + 64<<20},
		{"the queue holds a second of input's commits", sizeInputs{sim: true, recordsPerSecond: 1_000_000}, 0, 0, baseBytes + 1_000_000*4*64},
		{"up to 512 MB", sizeInputs{sim: true, recordsPerSecond: 4_000_000}, 0, 0, baseBytes + 512<<20},
		{"rounds round down", sizeInputs{simTime: 30*engine.Second + 1, period: engine.Second, processes: 17}, 0, 30, baseBytes + 30*17*512},
		{"keys, and the milestones' copies up to their bound", sizeInputs{keys: 10_000_000}, 0, 0, baseBytes + 2_000_000_000 + 43<<19},
		{"keys, and 32 milestones", sizeInputs{keys: 1000}, 0, 0, baseBytes + 200_000 + 43*32_000},
		{"channels at twice their credit", sizeInputs{records: 1e6, hops: 3, channels: 16, creditBytes: 4 * 32768}, 0, 0, baseBytes + 32e6 + 16*4*32768*2},
		{"channels hold at most every record once a hop", sizeInputs{records: 1000, hops: 3, channels: 16, creditBytes: 1 << 30}, 0, 0, baseBytes + 32000 + 1000*3*160},
	} {
		e := estimateSize(tc.in)
		if e.Buckets != tc.buckets || e.Rounds != tc.rounds || e.Bytes != tc.bytes {
			t.Errorf("%s: buckets %d rounds %d bytes %d, want %d %d %d", tc.name, e.Buckets, e.Rounds, e.Bytes, tc.buckets, tc.rounds, tc.bytes)
		}
	}
	// An absurd configuration saturates instead of overflowing.
	if e := estimateSize(sizeInputs{records: 1 << 62, keys: 1 << 62}); e.Bytes <= BudgetBytes {
		t.Errorf("a huge run must be over the budget, got %d bytes", e.Bytes)
	}
}

// The estimate's counts are the run's own: the records it appends exactly,
// and at least the simulated time and buckets it uses.
func TestEstimateMatchesRun(t *testing.T) {
	for _, system := range []string{"none", "barrier", "lineage"} {
		cfg := DefaultConfig()
		cfg.System, cfg.Duration, cfg.Rate = system, 2*engine.Second, 3001
		cfg.Faults = []string{"crash"}
		e, err := EstimateRun(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Execute(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := out.Result
		if e.Records != r.AppendedRecords {
			t.Errorf("%s: estimated %d records, the run appended %d", system, e.Records, r.AppendedRecords)
		}
		if e.SimTime.Seconds() < r.SimTimeS || e.Buckets < int64(len(out.Rows)) {
			t.Errorf("%s: estimated %gs and %d buckets, the run took %gs and %d", system, e.SimTime.Seconds(), e.Buckets, r.SimTimeS, len(out.Rows))
		}
		if system != "none" && e.Rounds == 0 {
			t.Errorf("%s checkpoints or batches periodically, but no rounds were estimated", system)
		}
	}
}

// The default budget admits the acceptance runs the model can size today
// and refuses runs far beyond them, naming the estimate and the flag.
func TestBudget(t *testing.T) {
	cfg := func(mod func(*Config)) Config {
		c := DefaultConfig()
		mod(&c)
		return c
	}
	admitted := map[string]Config{
		"the main job": cfg(func(c *Config) { c.System, c.Faults = "barrier", []string{"crash"} }),
		"parallelism 64 on 64 workers": cfg(func(c *Config) {
			c.System, c.Parallelism, c.Workers, c.WorkloadOpts = "barrier", 64, 64, map[string]string{"zipf-s": "0"}
		}),
		"10 minutes of barrier": cfg(func(c *Config) { c.System, c.Duration = "barrier", 600*engine.Second }),
		"1 hour of barrier with a crash": cfg(func(c *Config) {
			c.System, c.Duration, c.Faults = "barrier", 3600*engine.Second, []string{"crash"}
		}),
		"10^7 words": cfg(func(c *Config) {
			c.System, c.WorkloadOpts = "barrier", map[string]string{"vocabulary": "10000000", "zipf-s": "0"}
		}),
		"lineage at 1 ms batches": cfg(func(c *Config) {
			c.System, c.SystemOpts = "lineage", map[string]string{"batch-interval": "1ms"}
		}),
		"a minute of wordcount at 100 k records/s": cfg(func(c *Config) { c.System, c.Duration, c.Rate = "barrier", 60*engine.Second, 100_000 }),
		"two hours of barrier":                     cfg(func(c *Config) { c.System, c.Duration = "barrier", 7200*engine.Second }),
		"a 5 s live run": cfg(func(c *Config) {
			c.System, c.Runtime, c.Duration, c.Rate = "barrier", RuntimeLive, 5*engine.Second, 5000
		}),
	}
	for name, c := range admitted {
		e, err := Validate(c)
		if err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
		t.Logf("%s: %s", name, e)
	}
	refused := map[string]Config{
		"100 hours at the default rate": cfg(func(c *Config) { c.System, c.Duration = "barrier", 360_000*engine.Second }),
		"bank for 10 hours (a table of effect counts)": cfg(func(c *Config) {
			c.System, c.Workload, c.Duration = "barrier", "bank", 36_000*engine.Second
		}),
		"1 ms buckets over 1000 hours": cfg(func(c *Config) {
			c.Duration, c.Rate, c.Bucket = 3600_000*engine.Second, 1, engine.Millisecond
		}),
		"1 ms checkpoints over 100 hours": cfg(func(c *Config) {
			c.System, c.Duration, c.Rate, c.SystemOpts = "barrier", 360_000*engine.Second, 1, map[string]string{"checkpoint-interval": "1ms"}
		}),
		// Small in memory (the checker's window and the queues are
		// capped), long in time: the time budget's cases.
		"a billion records a second for 2 s": cfg(func(c *Config) { c.System, c.Duration, c.Rate = "barrier", 2*engine.Second, 1e9 }),
		"three hours of barrier":             cfg(func(c *Config) { c.System, c.Duration = "barrier", 3*3600*engine.Second }),
		"an hour live": cfg(func(c *Config) {
			c.System, c.Runtime, c.Duration, c.Rate = "barrier", RuntimeLive, 3600*engine.Second, 5000
		}),
	}
	for name, c := range refused {
		_, err := Validate(c)
		if err == nil || !IsInputError(err) || !strings.Contains(err.Error(), "--no-budget") || !strings.Contains(err.Error(), "estimated") {
			t.Errorf("%s: want a refusal naming the estimate and --no-budget, got %v", name, err)
			continue
		}
		c.NoBudget = true
		if _, err := Validate(c); err != nil {
			t.Errorf("%s with NoBudget: %v", name, err)
		}
		if !strings.Contains(c.ReplayCommand(), "--no-budget") {
			t.Errorf("%s: the replay line must keep --no-budget: %s", name, c.ReplayCommand())
		}
	}
}

func TestFmtDur(t *testing.T) {
	for in, want := range map[engine.Time]string{
		MaxDuration: "10000h", 90 * engine.Second: "1m30s", 120 * engine.Second: "2m", engine.Millisecond: "1ms",
		10 * engine.Second: "10s", 1: "1ns", 5400 * engine.Second: "1h30m",
	} {
		if got := fmtDur(in); got != want {
			t.Errorf("fmtDur(%d) = %q, want %q", in, got, want)
		}
	}
}

// A run whose memory in use passes the memory ceiling stops with an input
// error that names the ceiling and --no-budget; --no-budget lifts it. The
// ceiling is lowered to a byte here: every run's heap passes it.
func TestMemoryCeilingStopsTheRun(t *testing.T) {
	saved := MemoryCeiling
	MemoryCeiling = 1
	defer func() { MemoryCeiling = saved }()
	c := DefaultConfig()
	c.System, c.Duration = "kstreams", 2*engine.Second
	out, err := Execute(c)
	if out != nil || !IsInputError(err) || !strings.Contains(err.Error(), "memory ceiling") || !strings.Contains(err.Error(), "--no-budget") {
		t.Fatalf("want an input error naming the memory ceiling and --no-budget, got %v", err)
	}
	c.NoBudget = true
	if _, err := Execute(c); err != nil {
		t.Fatalf("with NoBudget: %v", err)
	}
}
