package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"ftbench/harness"
)

// CurveFormat identifies curve.json.
const CurveFormat = "ftbench-curve/1"

// Curve is curve.json: per point, each metric's median and spread over
// seeds.
type Curve struct {
	Format   string        `json:"format"`
	Command  string        `json:"command,omitempty"`
	GridID   string        `json:"grid_id"`
	Scenario Scenario      `json:"scenario"`
	Params   []Param       `json:"params"`
	Seeds    []uint64      `json:"seeds"`
	Points   []*CurvePoint `json:"points"`
	// Missing names the points of the grid without any finished run (a
	// shard's points are not missing from the shard's own curve).
	Missing []string `json:"missing"`
}

// Scenario is what every point shares: the base configuration, readable.
// Regress refuses to compare curves of different scenarios.
type Scenario struct {
	Workload     string            `json:"workload"`
	WorkloadOpts map[string]string `json:"workload_options"`
	Faults       []string          `json:"faults"`
	DurationS    float64           `json:"duration_s"`
	RateRPS      float64           `json:"rate_rps"` // 0 = the workload's default
	Parallelism  int               `json:"parallelism"`
	Workers      int               `json:"workers"`
	// SystemOpts and CostOverride are the base options the sweep set for
	// every point. Regress reports a difference but still compares: a
	// deliberate change to them is exactly what it exists to catch.
	SystemOpts   map[string]string `json:"system_options"`
	CostOverride []string          `json:"cost_overrides"`
}

// CurvePoint is one point's aggregate.
type CurvePoint struct {
	ID       string            `json:"id"`
	System   string            `json:"system"`
	Variant  string            `json:"variant"`
	Params   map[string]string `json:"params"`
	Seeds    []uint64          `json:"seeds"`  // seeds with results
	Failed   []FailedSeed      `json:"failed"` // seeds whose run failed
	Claimed  string            `json:"claimed_guarantee"`
	Verdicts []string          `json:"verdicts"`   // observed verdict per seed
	Held     bool              `json:"claim_held"` // in every seed
	// Undrained counts the seeds whose run stopped with effects pending
	// while still busy (harness: Result.Undrained; exit 4).
	Undrained int `json:"undrained"`
	// NoFault marks a point whose runs had no fault: its recovery times
	// are null because there is nothing to recover from (n/a), not
	// because the runs never recovered.
	NoFault bool             `json:"no_fault,omitempty"`
	Metrics map[string]*Stat `json:"metrics"`
}

// FailedSeed is a seed whose run did not execute.
type FailedSeed struct {
	Seed  uint64 `json:"seed"`
	Error string `json:"error"`
}

// Stat summarises one metric over a point's seeds. Values holds the
// per-seed values in seed order (null where the run had none, e.g. a
// recovery time when the run never recovered); the statistics are over the
// non-null values, and are null when there are none.
type Stat struct {
	N      int        `json:"n"`
	Null   int        `json:"null"`
	Median *float64   `json:"median"`
	Min    *float64   `json:"min"`
	Max    *float64   `json:"max"`
	P25    *float64   `json:"p25"`
	P75    *float64   `json:"p75"`
	Values []*float64 `json:"values"`
}

// Core metric names (curve metric keys); system_metrics numeric keys appear
// as "system.KEY" (nested objects flattened with dots) and run counters as
// "counter.NAME".
var CoreMetrics = []string{
	"recovery_time_s", "lag_recovery_time_s", "throughput_rps", "latency_p50_ms", "latency_p99_ms",
	"duplicates", "lost", "wrong_keys",
}

// RunMetrics extracts a run's metrics by curve name; nil is null.
func RunMetrics(r *harness.Result) map[string]*float64 {
	f := func(x float64) *float64 { return &x }
	m := map[string]*float64{
		"recovery_time_s":     nil,
		"lag_recovery_time_s": nil,
		"throughput_rps":      r.ThroughputRPS, // null: no whole commit cycle to measure over
		"latency_p50_ms":      f(r.LatencyMS.P50),
		"latency_p99_ms":      f(r.LatencyMS.P99),
		"duplicates":          f(float64(r.Duplicates)),
		"lost":                f(float64(r.Lost)),
		"pending_effects":     f(float64(r.PendingEffects)),
		"wrong_keys":          f(float64(r.WrongKeys)),
	}
	if r.RecoveryTimeS != nil {
		m["recovery_time_s"] = f(*r.RecoveryTimeS)
	}
	if r.LagRecoveryTimeS != nil {
		m["lag_recovery_time_s"] = f(*r.LagRecoveryTimeS)
	}
	// Round-trip through JSON so that a fresh result (any Go numeric type)
	// and a stored one (float64) aggregate alike.
	var sm map[string]any
	if b, err := json.Marshal(r.SystemMetrics); err == nil {
		_ = json.Unmarshal(b, &sm)
	}
	flattenNumbers("system.", sm, m)
	for k, v := range r.Counters {
		m["counter."+k] = f(float64(v))
	}
	return m
}

// flattenNumbers adds the numeric leaves of v under prefix.
func flattenNumbers(prefix string, v map[string]any, into map[string]*float64) {
	for k, x := range v {
		switch x := x.(type) {
		case float64:
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				into[prefix+k] = &x
			}
		case map[string]any:
			flattenNumbers(prefix+k+".", x, into)
		}
	}
}

// ScenarioOf describes a manifest's base configuration.
func ScenarioOf(base harness.Config) Scenario {
	s := Scenario{
		Workload: base.Workload, WorkloadOpts: base.WorkloadOpts, Faults: base.Faults,
		DurationS: time.Duration(base.Duration).Seconds(), RateRPS: base.Rate,
		Parallelism: base.Parallelism, Workers: base.Workers,
		SystemOpts: base.SystemOpts, CostOverride: base.CostOverride,
	}
	if s.WorkloadOpts == nil {
		s.WorkloadOpts = map[string]string{}
	}
	if s.SystemOpts == nil {
		s.SystemOpts = map[string]string{}
	}
	if s.Faults == nil {
		s.Faults = []string{}
	}
	if s.CostOverride == nil {
		s.CostOverride = []string{}
	}
	return s
}

// Aggregate builds the curve of the shard's points from their runs.
func Aggregate(m *Manifest, g *Grid, shard Shard, runs []*RunOutcome) *Curve {
	c := &Curve{
		Format: CurveFormat, Command: m.Command, GridID: m.GridID(), Scenario: ScenarioOf(m.Base),
		Params: m.Params, Seeds: m.Seeds, Missing: []string{},
	}
	if c.Params == nil {
		c.Params = []Param{}
	}
	byPoint := map[*Point][]*RunOutcome{}
	for _, ro := range runs {
		byPoint[ro.Run.Point] = append(byPoint[ro.Run.Point], ro)
	}
	for _, p := range g.Points {
		if !shard.Has(p.Index) {
			continue
		}
		cp := aggregatePoint(p, byPoint[p])
		if len(cp.Seeds) == 0 {
			c.Missing = append(c.Missing, p.ID())
		}
		c.Points = append(c.Points, cp)
	}
	return c
}

func aggregatePoint(p *Point, runs []*RunOutcome) *CurvePoint {
	cp := &CurvePoint{
		ID: p.ID(), System: p.Target.System, Variant: p.Target.Variant, Params: map[string]string{},
		Seeds: []uint64{}, Failed: []FailedSeed{}, Verdicts: []string{}, Held: true, Metrics: map[string]*Stat{},
	}
	for _, kv := range p.Params {
		cp.Params[kv.Name] = kv.Value
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Run.Seed < runs[j].Run.Seed })
	var per []map[string]*float64
	for _, ro := range runs {
		switch {
		case ro.Result != nil:
			cp.Seeds = append(cp.Seeds, ro.Run.Seed)
			cp.Claimed = ro.Result.ClaimedGuarantee
			cp.Verdicts = append(cp.Verdicts, ro.Result.Verdict)
			cp.Held = cp.Held && ro.Result.ClaimHeld
			if ro.Result.Undrained() {
				cp.Undrained++
			}
			per = append(per, RunMetrics(ro.Result))
		case ro.Failed != nil:
			cp.Failed = append(cp.Failed, FailedSeed{ro.Run.Seed, firstLine(ro.Failed.Error)})
		}
	}
	if len(cp.Seeds) == 0 {
		cp.Held = false
	}
	cp.NoFault = len(cp.Seeds) > 0
	for _, ro := range runs {
		if ro.Result != nil && len(ro.Result.Faults) > 0 {
			cp.NoFault = false
		}
	}
	names := map[string]bool{}
	for _, m := range per {
		for k := range m {
			names[k] = true
		}
	}
	for name := range names {
		st := &Stat{Values: make([]*float64, len(per))}
		var xs []float64
		for i, m := range per {
			if v, ok := m[name]; ok && v != nil {
				st.Values[i] = v
				xs = append(xs, *v)
			} else {
				st.Null++
			}
		}
		st.N = len(xs)
		if st.N > 0 {
			sort.Float64s(xs)
			st.Min, st.Max = ptr(xs[0]), ptr(xs[len(xs)-1])
			st.Median, st.P25, st.P75 = ptr(quantile(xs, 0.5)), ptr(quantile(xs, 0.25)), ptr(quantile(xs, 0.75))
		}
		cp.Metrics[name] = st
	}
	return cp
}

func ptr(x float64) *float64 { return &x }

// quantile interpolates linearly between order statistics (R's type 7), so
// the median of an even count is the mean of the middle two.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	h := q * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return round9(sorted[i] + (h-lo)*(sorted[i+1]-sorted[i]))
}

// round9 drops float noise below 1e-9 relative, so curves print stably.
func round9(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	s := strconv.FormatFloat(x, 'g', 12, 64)
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

// WriteCurve writes dir/curve.json and dir/curve.csv atomically.
func WriteCurve(dir string, c *Curve) error {
	if err := WriteFileAtomic(filepath.Join(dir, CurveJSON), marshal(c)); err != nil {
		return fmt.Errorf("writing %s: %w", CurveJSON, err)
	}
	b, err := CurveCSVBytes(c)
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, CurveCSV), b); err != nil {
		return fmt.Errorf("writing %s: %w", CurveCSV, err)
	}
	return nil
}

// CurveCSVBytes renders a curve in the long CSV form: one line per point and
// metric, columns system, variant, one per parameter, metric, n, null,
// median, min, max, p25, p75 (empty cells are null).
func CurveCSVBytes(c *Curve) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	header := []string{"system", "variant"}
	for _, p := range c.Params {
		header = append(header, p.Name)
	}
	header = append(header, "metric", "n", "null", "median", "min", "max", "p25", "p75")
	_ = w.Write(header)
	num := func(x *float64) string {
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'g', -1, 64)
	}
	for _, p := range c.Points {
		for _, name := range MetricNames(p) {
			s := p.Metrics[name]
			rec := []string{p.System, p.Variant}
			for _, q := range c.Params {
				rec = append(rec, p.Params[q.Name])
			}
			rec = append(rec, name, strconv.Itoa(s.N), strconv.Itoa(s.Null),
				num(s.Median), num(s.Min), num(s.Max), num(s.P25), num(s.P75))
			_ = w.Write(rec)
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// MetricNames lists a point's metrics: the core ones first, then the rest
// sorted.
func MetricNames(p *CurvePoint) []string {
	var names []string
	core := map[string]bool{}
	for _, n := range CoreMetrics {
		core[n] = true
		if _, ok := p.Metrics[n]; ok {
			names = append(names, n)
		}
	}
	for _, n := range sortedKeys(p.Metrics) {
		if !core[n] {
			names = append(names, n)
		}
	}
	return names
}

// ReadCurve reads a curve.json file.
func ReadCurve(path string) (*Curve, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return DecodeCurve(path, b)
}

// DecodeCurve parses and checks a curve; errors name path.
func DecodeCurve(path string, b []byte) (*Curve, error) {
	var c Curve
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: not a curve file: %v", path, err)
	}
	if c.Format != CurveFormat {
		return nil, fmt.Errorf("%s: not a curve file (format %q, want %q)", path, c.Format, CurveFormat)
	}
	return &c, c.check(path)
}

func (c *Curve) check(path string) error {
	seen := map[string]bool{}
	for i, p := range c.Points {
		if p == nil || p.System == "" {
			return fmt.Errorf("%s: point %d has no system", path, i)
		}
		if p.ID == "" {
			p.ID = pointID(p, c.Params)
		}
		if seen[p.ID] {
			return fmt.Errorf("%s: point %s appears twice", path, p.ID)
		}
		seen[p.ID] = true
		for _, q := range c.Params {
			if _, ok := p.Params[q.Name]; !ok {
				return fmt.Errorf("%s: point %s has no value for parameter %s", path, p.ID, q.Name)
			}
		}
		for name, s := range p.Metrics {
			if s == nil {
				return fmt.Errorf("%s: point %s: metric %s is null", path, p.ID, name)
			}
		}
	}
	return nil
}

func pointID(p *CurvePoint, params []Param) string {
	pt := Point{Target: Target{System: p.System, Variant: p.Variant}}
	for _, q := range params {
		pt.Params = append(pt.Params, KV{q.Name, p.Params[q.Name]})
	}
	return pt.ID()
}
