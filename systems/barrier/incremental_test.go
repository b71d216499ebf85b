package barrier

import (
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/systems/internal/stream"
)

// incrementalConfig: 20,000 words, uniform, of which a block of 1% (200
// words) is drawn from in each second of input after a 1 s warm-up that
// draws from all of them (e2eRate/4 records per partition a second, the
// checkpoint interval).
func incrementalConfig(variant string, incremental bool, faults ...string) harness.Config {
	cfg := e2eConfig(variant, faults...)
	cfg.Duration = 8 * engine.Second
	cfg.WorkloadOpts = map[string]string{"vocabulary": "20000", "zipf-s": "0",
		"active-keys": "0.01", "active-period": "2500", "active-warmup": "2500"}
	if incremental {
		cfg.SystemOpts["incremental"] = "true"
		cfg.SystemOpts["full-checkpoint-every"] = "4"
	}
	return cfg
}

// Crashes with incremental checkpoints: restores read chains, and the run
// is still exactly-once with every retained checkpoint's chain consistent.
func TestIncrementalCrashExactlyOnce(t *testing.T) {
	for _, v := range []string{Aligned, Unaligned} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			out := execute(t, incrementalConfig(v, true, "crash@3.5s:op=count/0", "crash@6.3s:op=count/2"))
			exactlyOnce(t, out.Result)
			var chains int
			for _, e := range out.Events {
				if e.Kind == "restore" && e.Proc == "count→sink/1" && e.Bytes > 0 {
					chains++
				}
			}
			if chains < 2 {
				t.Errorf("count→sink/1 restored state %d times, want 2", chains)
			}
		})
	}
}

// With 1% of the words changing per checkpoint interval, a typical
// incremental checkpoint writes the changed words' state: between 1x and 2x
// 1% of the whole vocabulary's state (a checkpoint may straddle two blocks),
// against the whole touched state for a full checkpoint; a restore reads at
// most twice the state (space amplification 2).
func TestIncrementalCheckpointBytes(t *testing.T) {
	t.Parallel()
	inc := execute(t, incrementalConfig(Aligned, true)).Result
	full := execute(t, incrementalConfig(Aligned, false)).Result
	one := float64(stream.StateBytes(200)) // 1% of the 20,000 words
	got := metric[map[string]float64](t, inc, "checkpoint_state_bytes")["p50"]
	if got < one || got > 2*one {
		t.Errorf("incremental checkpoint p50 %.0f bytes, want 1-2x %.0f (1%% of the words)", got, one)
	}
	whole := metric[map[string]float64](t, full, "checkpoint_state_bytes")["p50"]
	if whole < 20*got {
		t.Errorf("full checkpoint p50 %.0f bytes, incremental %.0f: want the full one at least 20x larger", whole, got)
	}
	restore := metric[map[string]float64](t, inc, "checkpoint_restore_size_bytes")["max"]
	fullMax := metric[map[string]float64](t, full, "checkpoint_state_bytes")["max"]
	t.Logf("checkpoint bytes p50: incremental %.0f, full %.0f; restore size max %.0f", got, whole, restore)
	if restore > 2*fullMax+1000 {
		t.Errorf("a restore would read %.0f bytes, the whole state is %.0f: want at most twice", restore, fullMax)
	}
	// A full snapshot's restore reads what it wrote; an incremental one's
	// reads its chain, at least what it wrote.
	for _, c := range full.SystemMetrics["checkpoints"].([]checkpointRow) {
		if c.Status == "completed" && c.RestoreSizeBytes != c.StateBytes {
			t.Errorf("full checkpoint %d: restore size %d, state %d", c.ID, c.RestoreSizeBytes, c.StateBytes)
		}
	}
	for _, c := range inc.SystemMetrics["checkpoints"].([]checkpointRow) {
		if c.Status == "completed" && c.RestoreSizeBytes < c.StateBytes {
			t.Errorf("incremental checkpoint %d: restore size %d below the %d bytes it wrote", c.ID, c.RestoreSizeBytes, c.StateBytes)
		}
	}
	for _, r := range []*harness.Result{inc, full} {
		consistent(t, r)
		if r.Duplicates != 0 || r.Lost != 0 || r.WrongKeys != 0 {
			t.Errorf("dup=%d lost=%d wrong=%d", r.Duplicates, r.Lost, r.WrongKeys)
		}
	}
}

// Restore time on a known case: a full snapshot is one store read, so each
// task's restore takes the store latency plus its bytes at the read
// bandwidth; an incremental one restored at 7.5 s reads a chain of pieces
// (a full snapshot every 4th checkpoint: 5, 6 and 7), one read each.
func TestRestoreTime(t *testing.T) {
	t.Parallel()
	c := engine.DefaultCost()
	for _, inc := range []bool{false, true} {
		out := execute(t, incrementalConfig(Aligned, inc, "crash@7.5s:op=count/0"))
		exactlyOnce(t, out.Result)
		var counts int
		for _, e := range out.Events {
			if e.Kind != "restore" || e.Proc[:5] != "count" {
				continue
			}
			counts++
			one := c.StoreLatency + engine.Time(float64(e.Bytes+16)/c.StoreReadBytes*1e9)
			got := engine.Time(e.Value)
			switch {
			case !inc && (got < one-engine.Microsecond || got > one+engine.Microsecond):
				t.Errorf("%s read %d bytes in %v, want %v", e.Proc, e.Bytes, got, one)
			case inc && got < one+c.StoreLatency:
				t.Errorf("%s read a chain of %d bytes in %v: want at least two reads (%v + %v)", e.Proc, e.Bytes, got, one, c.StoreLatency)
			}
		}
		if counts != 4 {
			t.Errorf("incremental=%v: %d count tasks restored, want 4", inc, counts)
		}
	}
}
