package reports

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/metrics"
	"ftbench/sweep"
)

// The fixtures under testdata are hand-made results, generated once by
// TestWriteFixtures (go test ./reports -run TestWriteFixtures -write-fixtures)
// and committed; the report tests read them as stored results.
var writeFixtures = flag.Bool("write-fixtures", false, "regenerate reports/testdata/{compare,sweep}")

// fixtureRun describes one synthetic run of 2 s of input at 10000
// records/s (3 effects per record) with a crash at 0.8 s that takes worker
// 0 down for 1 s.
type fixtureRun struct {
	system, variant, claim, verdict string
	dup, lost, wrong                int64
	// The system commits nothing in [0.8, resume) and then catches up at
	// catchUp x the rate until the backlog is gone (or skips it: none).
	resume, catchUp float64
	detect          *float64
	sm              map[string]any
}

// dist is a distribution object as the systems' Summarize write them.
func dist(mean float64) map[string]any {
	return map[string]any{"n": 3.0, "p50": mean, "p99": mean * 1.5, "max": mean * 1.6, "mean": mean}
}

func fixtureRuns() []fixtureRun {
	one := 1.0
	return []fixtureRun{
		{system: "none", variant: "default", claim: "at-most-once", verdict: "at-most-once", lost: 30000, wrong: 420, resume: 1.8},
		{system: "stormack", variant: "default", claim: "at-least-once", verdict: "at-least-once", dup: 2400, resume: 1.9, catchUp: 2,
			sm: map[string]any{"ack_messages": 120000.0, "replayed_tuples": 800.0}},
		{system: "lineage", variant: "parallel", claim: "exactly-once", verdict: "exactly-once", resume: 2.0, catchUp: 3, detect: &one,
			sm: map[string]any{"partitions_recomputed": 4.0, "checkpoint_bytes": 96000.0, "checkpoints": 2.0}},
		// barrier/aligned reports distributions as barrier's Summarize does.
		{system: "barrier", variant: "aligned", claim: "exactly-once", verdict: "exactly-once", resume: 2.2, catchUp: 2, detect: &one,
			sm: map[string]any{"checkpoint_state_bytes": dist(52000), "checkpoint_channel_state_bytes": dist(0), "alignment_ms": dist(12.5),
				"alignment_buffered_records": map[string]any{"total": 30.0, "max": 12.0}}},
		{system: "barrier", variant: "unaligned", claim: "exactly-once", verdict: "exactly-once", resume: 2.2, catchUp: 2, detect: &one,
			sm: map[string]any{"checkpoint_state_bytes": 52000.0, "channel_state_bytes": 18000.0, "alignment_time_ms": 0.8, "backpressure_ms": 55.0}},
		{system: "snapshot", variant: "cl", claim: "exactly-once", verdict: "exactly-once", resume: 2.3, catchUp: 2, detect: &one,
			sm: map[string]any{"snapshot": map[string]any{"state_bytes": 50000.0, "channel_state_bytes": 9000.0}}},
	}
}

const (
	fxRate     = 10000.0
	fxEffects  = 3
	fxBucket   = 0.1
	fxDuration = 2.0
	fxCrash    = 0.8
)

// series synthesises the run's buckets until 3 s.
func (f fixtureRun) series() []metrics.Row {
	perBucket := fxRate * fxEffects * fxBucket
	var rows []metrics.Row
	backlog := 0.0
	for i := 0; i < 30; i++ {
		t := float64(i) * fxBucket
		in := perBucket
		if t >= fxDuration {
			in = 0
		}
		var out float64
		switch {
		case t >= fxCrash && t < f.resume:
			backlog += in
		case f.catchUp == 0: // none skips what it missed
			out = in
		default:
			backlog += in
			out = math.Min(backlog, perBucket*f.catchUp)
			backlog -= out
		}
		lat := 20 * engine.Millisecond
		if t >= f.resume && backlog > 0 || (t >= f.resume && t < f.resume+0.3) {
			lat = engine.Time((200 + 700*math.Exp(-(t-f.resume)*3)) * float64(engine.Millisecond))
		}
		row := metrics.Row{Start: engine.Time(math.Round(t * 1e9)), Committed: int64(out), Lag: int64(backlog/fxEffects) + 50}
		row.CommittedPerSec = float64(row.Committed) / fxBucket
		if out > 0 {
			row.P50, row.P99 = lat, lat*3/2
		}
		rows = append(rows, row)
	}
	return rows
}

func (f fixtureRun) outcome() *harness.Outcome {
	rt := f.resume - fxCrash + 0.3
	appended := int64(fxRate * fxDuration)
	res := &harness.Result{
		System: f.system, Variant: f.variant, Workload: "wordcount", Seed: 1, Faults: []string{"crash@800ms:op=count/0"},
		Config: harness.RunConfig{DurationS: fxDuration, RateRPS: fxRate, Parallelism: 4, Workers: 4, DrainS: 10, BucketS: fxBucket, WarmUpS: 0.5,
			SystemOpts: map[string]string{}, WorkloadOpts: map[string]string{"vocabulary": "10000", "zipf-s": "1.0"},
			Cost: map[string]string{"restart-delay": "1s", "detect-delay": "1s"}},
		ClaimedGuarantee: f.claim, Verdict: f.verdict, ClaimHeld: true, ThroughputRPS: ptr(fxRate), ThroughputEffects: ptr(fxRate * fxEffects),
		LatencyMS: harness.Latency{P50: 20, P99: 850, P999: 900, Max: 910}, RecoveryTimeS: &rt,
		Recoveries:      []harness.Recovery{{Fault: "crash@800ms:op=count/0", AtS: fxCrash, RecoveryTimeS: &rt}},
		DetectionDelayS: f.detect, Duplicates: f.dup, Lost: f.lost, WrongKeys: f.wrong,
		ExpectedEffects: appended * fxEffects, CommittedEffects: appended*fxEffects - f.lost, AppendedRecords: appended,
		Drained: f.lost == 0, SimTimeS: 3, Counters: map[string]int64{}, SystemMetrics: f.sm, Problems: []string{},
		Replay: "bench run --system " + f.system + " --variant " + f.variant + " --fault crash",
	}
	if res.SystemMetrics == nil {
		res.SystemMetrics = map[string]any{}
	}
	s := metrics.NewSeries(100 * engine.Millisecond)
	for _, r := range f.series() {
		for i := range r.Committed {
			lat := r.P50
			if i%50 == 0 {
				lat = r.P99 // 2% slow commits make p99 differ from p50
			}
			s.Commit(r.Start, lat)
		}
		s.Lag(r.Start+100*engine.Millisecond, r.Lag)
	}
	evs := []engine.Event{
		{Time: 800 * engine.Millisecond, Kind: "worker_crash", Value: int64(engine.Second)},
		{Time: 800 * engine.Millisecond, Kind: "fault_start", Note: "crash@800ms:op=count/0"},
		{Time: 1800 * engine.Millisecond, Kind: "worker_up"},
	}
	return &harness.Outcome{Result: res, Series: s, Events: evs}
}

func TestWriteFixtures(t *testing.T) {
	if !*writeFixtures {
		t.Skip("run with -write-fixtures to regenerate testdata")
	}
	dir := filepath.Join("testdata", "compare")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for i, f := range fixtureRuns() {
		id := fmt.Sprintf("20260101T000000.%06d-%s-%s-wordcount-s1", i, f.system, f.variant)
		if _, err := harness.Write(dir, id, f.outcome()); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(dir, "latest"))

	// A sweep's curve (no run folders): recovery time vs checkpoint
	// interval for two systems over three seeds; lineage never recovers
	// at 10s in one seed, and barrier never at 10s in any.
	sdir := filepath.Join("testdata", "sweep")
	if err := os.RemoveAll(sdir); err != nil {
		t.Fatal(err)
	}
	p := func(x float64) *float64 { return &x }
	stat := func(vals ...*float64) *sweep.Stat {
		s := &sweep.Stat{Values: vals}
		var xs []float64
		for _, v := range vals {
			if v == nil {
				s.Null++
			} else {
				xs = append(xs, *v)
			}
		}
		s.N = len(xs)
		if s.N > 0 {
			lo, hi, sum := xs[0], xs[0], 0.0
			for _, x := range xs {
				lo, hi, sum = math.Min(lo, x), math.Max(hi, x), sum+x
			}
			s.Min, s.Max, s.Median, s.P25, s.P75 = p(lo), p(hi), p(xs[len(xs)/2]), p(lo), p(hi)
		}
		return s
	}
	intervals := []string{"1s", "2s", "5s", "10s"}
	c := &sweep.Curve{
		Format: sweep.CurveFormat, Command: "bench sweep --system lineage,barrier --param checkpoint-interval=1s,2s,5s,10s --seeds 1-3 --fault crash",
		Scenario: sweep.Scenario{Workload: "wordcount", Faults: []string{"crash"}, DurationS: 30, Parallelism: 4, Workers: 4,
			WorkloadOpts: map[string]string{}, SystemOpts: map[string]string{}, CostOverride: []string{}},
		Params: []sweep.Param{{Name: "checkpoint-interval", Values: intervals}}, Seeds: []uint64{1, 2, 3}, Missing: []string{},
	}
	for _, sys := range []struct {
		name, variant string
		base          float64
	}{{"lineage", "parallel", 0.2}, {"barrier", "aligned", 0.5}} {
		for i, iv := range intervals {
			x := []float64{1, 2, 5, 10}[i]
			r := []*float64{p(sys.base + x*0.35), p(sys.base + x*0.4), p(sys.base + x*0.45)}
			if x == 10 && sys.name == "lineage" {
				r[2] = nil
			}
			if x == 10 && sys.name == "barrier" {
				r = []*float64{nil, nil, nil}
			}
			c.Points = append(c.Points, &sweep.CurvePoint{
				ID: sys.name + "/" + sys.variant + " checkpoint-interval=" + iv, System: sys.name, Variant: sys.variant,
				Params: map[string]string{"checkpoint-interval": iv}, Seeds: []uint64{1, 2, 3}, Failed: []sweep.FailedSeed{},
				Claimed: "exactly-once", Verdicts: []string{"exactly-once", "exactly-once", "exactly-once"}, Held: true,
				Metrics: map[string]*sweep.Stat{
					"recovery_time_s": stat(r...),
					"throughput_rps":  stat(p(10000-100*(10/x)), p(10000-90*(10/x)), p(10000-110*(10/x))),
					"latency_p99_ms":  stat(p(40+x), p(41+x), p(42+x)),
					"duplicates":      stat(p(0), p(0), p(0)),
				},
			})
		}
	}
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sweep.WriteCurve(sdir, c); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s and %s", dir, sdir)
}

// copyTree copies a fixture folder, so tests can damage the copy.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasPrefix(info.Name(), ".") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func storedOf(r *harness.Result) *sweep.StoredRun { return &sweep.StoredRun{Result: r} }

func ptr(x float64) *float64 { return &x }
