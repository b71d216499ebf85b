package harness

import (
	"bytes"
	"testing"

	"ftbench/engine"
	_ "ftbench/systems/none"
)

func runCfg(t *testing.T, cfg Config) *Result {
	t.Helper()
	out, err := Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out.Result
}

func short(system string, faults ...string) Config {
	cfg := DefaultConfig()
	cfg.System = system
	cfg.Duration = 5 * engine.Second
	cfg.Rate = 30_000 // a fifth of the default: keeps the race-enabled suite fast
	cfg.Faults = faults
	return cfg
}

func TestNoFaultIsExact(t *testing.T) {
	for _, wl := range []string{"wordcount", "grep"} {
		cfg := short("none")
		cfg.Workload = wl
		r := runCfg(t, cfg)
		if r.Lost != 0 || r.Duplicates != 0 || r.WrongKeys != 0 || r.Verdict != "exactly-once" || !r.ClaimHeld {
			t.Errorf("%s: lost=%d dup=%d wrong=%d verdict=%s held=%v", wl, r.Lost, r.Duplicates, r.WrongKeys, r.Verdict, r.ClaimHeld)
		}
		if !r.Drained || r.ExitCode != 0 {
			t.Errorf("%s: drained=%v exit=%d problems=%v", wl, r.Drained, r.ExitCode, r.Problems)
		}
		if r.ThroughputRPS == nil || *r.ThroughputRPS < 0.9*r.Config.RateRPS {
			t.Errorf("%s: steady throughput %s below the offered %.0f", wl, FormatRPS(r.ThroughputRPS, "null"), r.Config.RateRPS)
		}
	}
}

func TestNoneCrashLosesRecords(t *testing.T) {
	r := runCfg(t, short("none", "crash"))
	if r.Lost == 0 || r.Duplicates != 0 || r.Verdict != "at-most-once" || !r.ClaimHeld {
		t.Fatalf("lost=%d dup=%d verdict=%s held=%v", r.Lost, r.Duplicates, r.Verdict, r.ClaimHeld)
	}
	// What none sends to the crashed worker is lost, not late: readers
	// never wait for it, so output staleness does not rise (recovery 0 s),
	// while the source lag shows the outage.
	if r.RecoveryTimeS == nil || *r.RecoveryTimeS != 0 {
		t.Fatalf("want recovery time 0 (nothing late, only lost), got %v", deref(r.RecoveryTimeS))
	}
	if r.LagRecoveryTimeS == nil || *r.LagRecoveryTimeS <= 0 {
		t.Fatalf("want a positive lag recovery time, got %v", deref(r.LagRecoveryTimeS))
	}
}

// deref shows a nullable metric in a failure message.
func deref(v *float64) any {
	if v == nil {
		return "null"
	}
	return *v
}

// Same config and seed: byte-identical run.json apart from the host block.
func TestDeterministic(t *testing.T) {
	cfg := short("none", "crash", "slow@1s-2s:op=split/1")
	enc := func() []byte {
		out, err := Execute(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out.Result.Host = Host{}
		b, err := MarshalResult(out.Result)
		if err != nil {
			t.Fatal(err)
		}
		var csv bytes.Buffer
		if err := out.Series.WriteCSV(&csv); err != nil {
			t.Fatal(err)
		}
		return append(b, csv.Bytes()...)
	}
	a, b := enc(), enc()
	if !bytes.Equal(a, b) {
		t.Fatalf("two runs with the same seed differ")
	}
	cfg.Seed = 2
	if c := enc(); bytes.Equal(a, c) {
		t.Fatalf("a different seed gave the same results")
	}
}

// A slow consumer stalls its producers: source lag rises during the slow
// window while no channel holds more than its credit (plus one batch).
func TestSlowConsumerRaisesLagNotQueues(t *testing.T) {
	cfg := short("none", "slow@1s-3s:op=split/0,factor=100")
	out, err := Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	lagAt := func(at engine.Time) int64 {
		for _, row := range out.Rows {
			if row.Start == at {
				return row.Lag
			}
		}
		t.Fatalf("no row at %v", at)
		return 0
	}
	before, during := lagAt(900*engine.Millisecond), lagAt(2900*engine.Millisecond)
	// split/0 now eats 1 in 3 of the lines of its partition: without
	// backpressure the lag would not move; with it, source/0 stalls.
	if during < 5*before || during < int64(r.Config.RateRPS/8) {
		t.Fatalf("source lag %d before the slow window, %d at its end: backpressure must reach the sources", before, during)
	}
	if limit := r.ChannelCapBytes + r.ChannelCapBytes/8; r.PeakChannelBytes > limit {
		t.Fatalf("a channel held %d bytes, credit is %d", r.PeakChannelBytes, r.ChannelCapBytes)
	}
	if r.Lost != 0 || r.Duplicates != 0 {
		t.Fatalf("a slow operator must not lose or duplicate: lost=%d dup=%d", r.Lost, r.Duplicates)
	}
	if r.RecoveryTimeS == nil {
		t.Fatalf("the backlog must drain within the run")
	}
}
