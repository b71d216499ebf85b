package reports

import (
	"testing"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
	"ftbench/sweep"
)

// A pause or a partition is shaded over its window; the detection line is
// drawn only for one that outlasts the detection delay (the worker, or the
// far side, declared failed).
func TestPauseBands(t *testing.T) {
	for _, tc := range []struct {
		spec          string
		end, detected float64
		label         string
	}{
		{"pause@2s-2.5s:worker=1", 2.5, 0, "pause worker=1 (stopped 0.5s)"},
		{"pause@2s-3.5s:worker=1", 3.5, 3, "pause worker=1 (stopped 1.5s)"},
		{"partition@2s-2.5s:worker=1", 2.5, 0, "partition worker=1 (cut 0.5s)"},
		{"partition@2s-4s:workers=0|1,2", 4, 3, "partition workers=0|1,2 (cut 2s)"},
	} {
		detect := 1.0
		res := &harness.Result{DetectionDelayS: &detect}
		res.Config.DurationS = 5
		sp := mustSpec(t, tc.spec)
		r := &sweep.StoredRun{Result: res, Events: []engine.Event{
			{Time: sp.At, Kind: "fault_start", Note: tc.spec},
			{Time: sp.At, Kind: "worker_pause", ID: 1, Value: int64(sp.End - sp.At)},
			{Time: sp.End, Kind: "fault_end", Note: tc.spec},
		}}
		bands := faultBands([]*sweep.StoredRun{r})
		if len(bands) != 1 {
			t.Fatalf("%s: %d bands", tc.spec, len(bands))
		}
		b := bands[0]
		if b.Kind != string(sp.Kind) || b.Start != 2 || b.End != tc.end || b.Detected != tc.detected || b.Label != tc.label {
			t.Errorf("%s: band %+v, want end %g detected %g label %q", tc.spec, b, tc.end, tc.detected, tc.label)
		}
		// Without events, the band comes from run.json's faults alike.
		res.Faults = []string{tc.spec}
		r.Events = nil
		if nb := faultBands([]*sweep.StoredRun{r}); len(nb) != 1 || nb[0] != b {
			t.Errorf("%s: from run.json %+v, want %+v", tc.spec, nb, b)
		}
	}
}

func mustSpec(t *testing.T, spec string) faults.Spec {
	t.Helper()
	sp, err := faults.Parse(spec, faults.Defaults{})
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// A crash band spans the downtime; a worker crash gets the detection line,
// a master crash none (a new leader takes over when the master is back).
func TestCrashBands(t *testing.T) {
	for _, tc := range []struct {
		spec          string
		worker        int64
		end, detected float64
		label         string
	}{
		{"crash@2s:worker=1,restart=500ms", 1, 2.5, 3, "crash worker=1,restart=500ms (down 0.5s)"},
		{"crash@2s:master,restart=1500ms", engine.MasterNode, 3.5, 0, "crash master,restart=1.5s (down 1.5s)"},
	} {
		detect := 1.0
		res := &harness.Result{DetectionDelayS: &detect}
		res.Config.DurationS = 5
		sp := mustSpec(t, tc.spec)
		r := &sweep.StoredRun{Result: res, Events: []engine.Event{
			{Time: sp.At, Kind: "fault_start", Note: sp.String()},
			{Time: sp.At, Kind: "worker_crash", ID: tc.worker, Value: int64(sp.Restart)},
		}}
		bands := faultBands([]*sweep.StoredRun{r})
		if len(bands) != 1 {
			t.Fatalf("%s: %d bands", tc.spec, len(bands))
		}
		if b := bands[0]; b.Kind != "crash" || b.Start != 2 || b.End != tc.end || b.Detected != tc.detected || b.Label != tc.label {
			t.Errorf("%s: band %+v, want end %g detected %g label %q", tc.spec, b, tc.end, tc.detected, tc.label)
		}
	}
}
