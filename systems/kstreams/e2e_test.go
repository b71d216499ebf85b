package kstreams

import (
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/systems"
)

// End-to-end runs through the harness, at 10k records/s for 6 s so that
// `go test -race` stays quick.

const e2eRate = 10000

func e2eConfig(workload string, opts map[string]string, faults ...string) harness.Config {
	cfg := harness.DefaultConfig()
	cfg.System = "kstreams"
	cfg.Workload = workload
	cfg.Rate = e2eRate
	cfg.Duration = 6 * engine.Second
	cfg.Faults = faults
	cfg.SystemOpts = opts
	return cfg
}

func execute(t *testing.T, cfg harness.Config) *harness.Result {
	t.Helper()
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out.Result
}

func metric[T any](t *testing.T, r *harness.Result, key string) T {
	t.Helper()
	v, ok := r.SystemMetrics[key].(T)
	if !ok {
		t.Fatalf("system_metrics[%q] = %#v, want a %T", key, r.SystemMetrics[key], v)
	}
	return v
}

// exactlyOnce asserts the crash acceptance line: no duplicate, no loss,
// no wrong key, the claim held, a recovery time.
func exactlyOnce(t *testing.T, r *harness.Result) {
	t.Helper()
	if r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 || r.Verdict != "exactly-once" || !r.ClaimHeld || r.ExitCode != 0 {
		t.Errorf("dup=%d lost=%d wrong=%d verdict=%s held=%v exit=%d problems=%v\nreplay: %s",
			r.Duplicates, r.Lost, r.WrongKeys, r.Verdict, r.ClaimHeld, r.ExitCode, r.Problems, r.Replay)
	}
	if r.RecoveryTimeS == nil {
		t.Errorf("no recovery time")
	}
}

// A crash under exactly-once v2, on every DAG workload: the crashed
// instance's tasks move, stateful ones restore from their changelog, the
// crashed thread's open transaction is aborted, and nothing is lost or
// duplicated.
func TestCrashExactlyOnce(t *testing.T) {
	for _, w := range []string{"wordcount", "grep", "bank"} {
		t.Run(w, func(t *testing.T) {
			r := execute(t, e2eConfig(w, nil, "crash@3s:worker=0"))
			exactlyOnce(t, r)
			if n := metric[int64](t, r, "transactions_committed"); n < 20 {
				t.Errorf("%d transactions committed, want one per thread per 100 ms", n)
			}
			if n := metric[int64](t, r, "rebalance_tasks_moved"); n < 1 {
				t.Errorf("no task moved after the crash")
			}
			restored := metric[int64](t, r, "changelog_records_restored")
			if w == "grep" {
				if restored != 0 || r.Recoveries[0].Phases.RestoredS == nil {
					t.Errorf("grep is stateless: %d changelog records restored (want 0), restored phase %v (want its tasks running)", restored, r.Recoveries[0].Phases.RestoredS)
				}
			} else if restored == 0 || r.Recoveries[0].Phases.RestoredS == nil {
				t.Errorf("changelog_records_restored=%d, restored phase %v: a stateful task moved and must restore", restored, r.Recoveries[0].Phases.RestoredS)
			}
		})
	}
}

// With a 2 s commit interval a thread's transaction is open most of the
// time: the crashed thread's is aborted when its restart calls
// InitProducerId, and its records are never read (read_committed).
func TestCrashAbortsTheOpenTransaction(t *testing.T) {
	r := execute(t, e2eConfig("wordcount", map[string]string{"commit-interval": "2s"}, "crash@3s:worker=0"))
	exactlyOnce(t, r)
	by := metric[map[string]int64](t, r, "transactions_aborted_by_reason")
	if by["epoch bumped by a new producer"] < 1 {
		t.Errorf("aborted transactions by reason %v: the restarted threads' InitProducerId should abort their open ones", by)
	}
}

// At-least-once: offsets are committed every 30 s, so the crash replays
// from the start of the crashed instance's partitions: duplicates, and
// the surviving count tasks count the replayed words again.
func TestCrashAtLeastOnce(t *testing.T) {
	r := execute(t, e2eConfig("wordcount", map[string]string{"guarantee": AtLeastOnce}, "crash@3s:worker=0"))
	if r.ClaimedGuarantee != "at-least-once" || !r.ClaimHeld || r.Lost != 0 {
		t.Fatalf("claimed %s held=%v lost=%d problems %v", r.ClaimedGuarantee, r.ClaimHeld, r.Lost, r.Problems)
	}
	if r.Duplicates == 0 && r.AheadFinalKeys == 0 {
		t.Errorf("no duplicate and no double-counted key after a crash under at-least-once")
	}
	if n := metric[int64](t, r, "transactions_committed"); n != 0 {
		t.Errorf("%d transactions under at-least-once", n)
	}
}

// Bad flags are one clear line each, before anything runs.
func TestBadOptions(t *testing.T) {
	for _, tc := range []struct{ flag, val, want string }{
		{"guarantee", "exactly_once", "--guarantee"},
		{"commit-interval", "soon", "--commit-interval"},
		{"threads", "0", "--threads"},
		{"rebalance", "sticky", "--rebalance"},
		{"standby-replicas", "-1", "--standby-replicas"},
		{"session-timeout", "-1s", "--session-timeout"},
		{"cache-max-bytes", "lots", "--cache-max-bytes"},
		{"max-warmup-replicas", "0", "--max-warmup-replicas"}, // Kafka: atLeast(1)
		{"max-warmup-replicas", "two", "--max-warmup-replicas"},
		{"probing-rebalance-interval", "59s", "want at least 60s"}, // Kafka: atLeast(60000)
		{"probing-rebalance-interval", "-1m", "--probing-rebalance-interval"},
	} {
		_, err := harness.Execute(e2eConfig("wordcount", map[string]string{tc.flag: tc.val}))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--%s=%s: error %v, want one line containing %q", tc.flag, tc.val, err, tc.want)
		}
	}
}

// No backpressure crosses a repartition topic: at 200 000 records/s the
// source is still read at the offered rate while the count tasks fall
// behind (about 161 000 records/s committed), so the source lag alone
// stays flat (its slope was 1 163 records/s, under 1% of the rate) and
// only the repartition topics' consumer lag, which the sampled lag adds
// (systems.InternalLag), shows the overload. At 100 000 records/s the
// same lag stays flat. Both runs drain, and the counter then ends at 0.
func TestRepartitionBacklogIsOverload(t *testing.T) {
	for _, tc := range []struct {
		rate       float64
		duration   engine.Time
		overloaded bool
	}{
		{200_000, 5 * engine.Second, true},
		{100_000, 4 * engine.Second, false},
	} {
		cfg := harness.DefaultConfig()
		cfg.System, cfg.Rate, cfg.Duration = "kstreams", tc.rate, tc.duration
		r := execute(t, cfg)
		if r.Overloaded == nil || *r.Overloaded != tc.overloaded {
			t.Errorf("rate %.0f: overloaded %v (lag slope %v records/s), want %v",
				tc.rate, r.Overloaded, r.LagSlopeRPS, tc.overloaded)
		}
		if !r.Drained || r.Counters[systems.InternalLag] != 0 {
			t.Errorf("rate %.0f: drained %v, internal lag at the end %d, want drained and 0",
				tc.rate, r.Drained, r.Counters[systems.InternalLag])
		}
	}
}
