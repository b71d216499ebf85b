package lineage

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
)

// modelRun is the D-Streams recovery experiment (lecture 21.3.2): N executors
// at node load λ = 0.8 lose one of them 20 batches after the last
// checkpoint, and the recovery time is measured in units of the time the
// lost work originally took (lost_span_s = 20 s). The words are uniform
// over a large vocabulary so every executor carries the same load, the
// detection and restart delays are short so that recovery starts at the
// failure as the model assumes, and there are N shuffle partitions per
// executor so a lost executor's state can be shared by all N.
//
// The rate gives λ = 0.8: a record costs 1.5225 ms of executor CPU (source
// 100us, split 213.5us, three words of 402us each), and every executor also
// spends (1+N) task launches × 2 ms per batch.
type modelRun struct {
	variant string
	n       int
	dur     engine.Time
}

func (m modelRun) rate() float64 {
	perExec := (0.8 - float64(1+m.n)*0.002) / 0.0015225
	return math.Round(perExec * float64(m.n))
}

func (m modelRun) config() harness.Config {
	cfg := harness.DefaultConfig()
	cfg.System, cfg.Variant, cfg.Workload = "lineage", m.variant, "wordcount"
	// N single-core nodes: one executor each, as in the paper's model.
	cfg.Workers, cfg.Parallelism, cfg.Cores = m.n, m.n, 1
	cfg.Rate, cfg.Duration, cfg.Drain = m.rate(), m.dur, 5*engine.Second
	cfg.WorkloadOpts = map[string]string{"zipf-s": "0", "vocabulary": "65536"}
	cfg.SystemOpts = map[string]string{optShuffle: strconv.Itoa(m.n * m.n), optCkpt: "21"}
	cfg.CostOverride = []string{"source-record=100us", "record-cpu=200us", "state-cpu=400us", "scan-per-byte=500ns", "detect-delay=10ms"}
	// Batches 0..19 are done at 20.95 s; batch 20 is the first checkpoint.
	cfg.Faults = []string{"crash@20.95s:worker=0,restart=10ms"}
	return cfg
}

// The D-Streams model: the lost work (λ·T of CPU, T the time since the
// checkpoint) is redone while new input keeps arriving at λ. Upstream
// backup redoes it on one node: t_up = λ/(1-λ) = 4.0 (units of T). Parallel
// recovery shares it among N nodes: t_par ≈ λ/(N(1-λ)) = 0.80/0.40/0.20.
func TestRecoveryMatchesDStreamsModel(t *testing.T) {
	const lambda, tol = 0.8, 0.15
	for _, m := range []modelRun{
		{variantParallel, 5, 42 * engine.Second},
		{variantParallel, 10, 33 * engine.Second},
		{variantParallel, 20, 28 * engine.Second},
		{variantUpstream, 5, 106 * engine.Second},
	} {
		t.Run(fmt.Sprintf("%s/N=%d", m.variant, m.n), func(t *testing.T) {
			t.Parallel()
			r := execute(t, m.config())
			if r.Verdict != "exactly-once" || !r.ClaimHeld {
				t.Fatalf("verdict %s", r.Verdict)
			}
			load := r.SystemMetrics["executor_load"].(float64)
			if math.Abs(load-lambda) > 0.01 {
				t.Fatalf("node load %.3f, want %.2f", load, lambda)
			}
			rec := r.SystemMetrics["recoveries"].([]map[string]any)[0]
			if rec["lost_span_s"] != 20.0 {
				t.Fatalf("lost %v s of work since the checkpoint, want 20", rec["lost_span_s"])
			}
			want := lambda / (1 - lambda)
			if m.variant == variantParallel {
				want /= float64(m.n)
			}
			got, ok := rec["recovery_units"].(float64)
			if !ok {
				t.Fatalf("not recovered: %v", rec)
			}
			t.Logf("recovery %.3f s = %.3f units (model %.2f); lost work %v cpu-s, recomputed in %v s; units by lost cpu %v",
				rec["recovery_s"], got, want, rec["lost_work_cpu_s"], rec["recomputed_s"], rec["recovery_units_work"])
			if math.Abs(got-want) > tol*want {
				t.Errorf("recovery %.3f units, model %.3f: off by more than %.0f%%", got, want, 100*tol)
			}
		})
	}
}
