package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// BaselineFormat identifies a baseline file.
const BaselineFormat = "ftbench-baseline/1"

// Baseline is a committed curve plus what to compare and how tightly.
type Baseline struct {
	Format string `json:"format"`
	// Note says how the baseline was produced (the sweep command).
	Note string `json:"note,omitempty"`
	// Metrics are the curve metrics compared, point by point, and the
	// point outcomes MetricVerdict and MetricClaimHeld, which are compared
	// exactly (and always, listed or not: a baseline cannot opt out of
	// them).
	Metrics []string `json:"metrics"`
	// Tolerance per metric; "default" applies to metrics not listed. A
	// value is within tolerance when |current - baseline| <= abs +
	// rel*|baseline|. ExactMetrics of a point claiming exactly-once are
	// compared with zero tolerance whatever this says.
	Tolerance map[string]Tolerance `json:"tolerance"`
	Curve     *Curve               `json:"curve"`
}

// Tolerance is an allowed difference: absolute (in the metric's unit) plus
// relative (a fraction of the baseline value).
type Tolerance struct {
	Rel float64 `json:"rel"`
	Abs float64 `json:"abs"`
}

// Point outcomes a baseline compares exactly: the observed verdict of
// every seed (with how many seeds stopped undrained), and whether the
// claim held in every seed.
const (
	MetricVerdict   = "verdict"
	MetricClaimHeld = "claim_held"
)

// ExactMetrics are compared with zero tolerance at a point whose system
// claims exactly-once: one duplicate or loss there is a broken promise,
// not noise (the simulator is deterministic).
var ExactMetrics = []string{"duplicates", "lost", "wrong_keys"}

// DefaultMetrics are compared by a new baseline unless told otherwise.
var DefaultMetrics = []string{MetricVerdict, MetricClaimHeld, "recovery_time_s", "duplicates", "lost"}

// isOutcome reports whether m is a point outcome rather than a curve metric.
func isOutcome(m string) bool { return m == MetricVerdict || m == MetricClaimHeld }

// DefaultTolerance is a new baseline's tolerance. The simulator is
// deterministic, so it is tight; recovery time is measured in time-series
// buckets (100 ms), so it gets one bucket of slack.
func DefaultTolerance() map[string]Tolerance {
	return map[string]Tolerance{
		"default":         {Rel: 0.02, Abs: 0},
		"recovery_time_s": {Rel: 0.05, Abs: 0.1},
		"duplicates":      {Rel: 0.02, Abs: 10},
		"lost":            {Rel: 0.02, Abs: 10},
	}
}

// ReadBaseline reads and checks a baseline file; errors name the file and
// the problem.
func ReadBaseline(path string) (*Baseline, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var bl Baseline
	if err := json.Unmarshal(b, &bl); err != nil {
		return nil, fmt.Errorf("%s: not a baseline file: %v", path, err)
	}
	if bl.Format != BaselineFormat {
		return nil, fmt.Errorf("%s: not a baseline file (format %q, want %q)", path, bl.Format, BaselineFormat)
	}
	if len(bl.Metrics) == 0 {
		return nil, fmt.Errorf("%s: baseline lists no metrics to compare", path)
	}
	for name, t := range bl.Tolerance {
		if t.Rel < 0 || t.Abs < 0 || math.IsNaN(t.Rel) || math.IsNaN(t.Abs) {
			return nil, fmt.Errorf("%s: tolerance of %s must be non-negative", path, name)
		}
	}
	if bl.Curve == nil {
		return nil, fmt.Errorf("%s: baseline has no curve", path)
	}
	if bl.Curve.Format != CurveFormat {
		return nil, fmt.Errorf("%s: baseline curve has format %q, want %q", path, bl.Curve.Format, CurveFormat)
	}
	if err := bl.Curve.check(path); err != nil {
		return nil, err
	}
	for _, p := range bl.Curve.Points {
		for _, m := range bl.Metrics {
			if _, ok := p.Metrics[m]; !ok && !isOutcome(m) {
				return nil, fmt.Errorf("%s: baseline point %s lacks metric %s", path, p.ID, m)
			}
		}
	}
	return &bl, nil
}

// NewBaseline makes a baseline of curve c comparing metrics (DefaultMetrics
// if empty) with the default tolerance.
func NewBaseline(c *Curve, metrics []string) (*Baseline, error) {
	if len(metrics) == 0 {
		metrics = DefaultMetrics
	}
	for _, p := range c.Points {
		for _, m := range metrics {
			if _, ok := p.Metrics[m]; !ok && !isOutcome(m) {
				return nil, fmt.Errorf("current point %s lacks metric %s", p.ID, m)
			}
		}
	}
	return &Baseline{Format: BaselineFormat, Note: c.Command, Metrics: metrics, Tolerance: DefaultTolerance(), Curve: c}, nil
}

// WriteBaseline writes a baseline atomically.
func WriteBaseline(path string, b *Baseline) error {
	return WriteFileAtomic(path, marshal(b))
}

// Comparison is the point-by-point result of a regression check.
type Comparison struct {
	Rows  []Row
	Notes []string // differences that do not prevent comparing
}

// Row is one metric at one point.
type Row struct {
	Point, Metric string
	Base, Cur     *float64 // medians; nil when no seed had a value
	// BaseText and CurText are a point outcome's values (MetricVerdict,
	// MetricClaimHeld), compared exactly; empty for a curve metric.
	BaseText, CurText string
	BaseN, CurN       int // seeds with a value
	Tol               Tolerance
	Within            bool
	Reason            string // why outside, when it is not the value
}

// Outside lists the rows outside tolerance.
func (c *Comparison) Outside() []Row {
	var out []Row
	for _, r := range c.Rows {
		if !r.Within {
			out = append(out, r)
		}
	}
	return out
}

// Compare checks the current curve against the baseline. An error means
// the curves cannot be compared (a different grid, scenario or seeds, or a
// missing metric) and says which.
func Compare(b *Baseline, cur *Curve) (*Comparison, error) {
	bc := b.Curve
	if bn, cn := paramNames(bc.Params), paramNames(cur.Params); bn != cn {
		return nil, fmt.Errorf("different grid: the baseline sweeps [%s], the current curve [%s]", bn, cn)
	}
	for i, p := range bc.Params {
		if !reflect.DeepEqual(p.Values, cur.Params[i].Values) {
			return nil, fmt.Errorf("different grid: %s takes %s in the baseline, %s in the current curve",
				p.Name, strings.Join(p.Values, ","), strings.Join(cur.Params[i].Values, ","))
		}
	}
	if !reflect.DeepEqual(bc.Seeds, cur.Seeds) {
		return nil, fmt.Errorf("different seeds: the baseline has %s, the current curve %s", FormatSeeds(bc.Seeds), FormatSeeds(cur.Seeds))
	}
	if d := scenarioDiff(bc.Scenario, cur.Scenario, false); d != "" {
		return nil, fmt.Errorf("different scenario: %s", d)
	}
	cmp := &Comparison{}
	if d := scenarioDiff(bc.Scenario, cur.Scenario, true); d != "" {
		cmp.Notes = append(cmp.Notes, "base options differ: "+d)
	}
	curBy := map[string]*CurvePoint{}
	for _, p := range cur.Points {
		curBy[p.ID] = p
	}
	baseBy := map[string]bool{}
	var lacking, extra []string
	for _, p := range bc.Points {
		baseBy[p.ID] = true
		if _, ok := curBy[p.ID]; !ok {
			lacking = append(lacking, p.ID)
		}
	}
	for _, p := range cur.Points {
		if !baseBy[p.ID] {
			extra = append(extra, p.ID)
		}
	}
	if len(lacking) > 0 {
		return nil, fmt.Errorf("different grid: the current curve lacks point %s", nameSome(lacking))
	}
	if len(extra) > 0 {
		return nil, fmt.Errorf("different grid: the current curve has point %s, which the baseline lacks", nameSome(extra))
	}
	for _, bp := range bc.Points {
		cp := curBy[bp.ID]
		cmp.Rows = append(cmp.Rows, compareText(bp.ID, MetricVerdict, verdictText(bp), verdictText(cp)),
			compareText(bp.ID, MetricClaimHeld, heldText(bp), heldText(cp)))
		for _, m := range b.Metrics {
			if isOutcome(m) {
				continue
			}
			bs, ok := bp.Metrics[m]
			if !ok {
				return nil, fmt.Errorf("baseline point %s lacks metric %s", bp.ID, m)
			}
			cs, ok := cp.Metrics[m]
			if !ok {
				return nil, fmt.Errorf("missing metric: current point %s lacks %s", cp.ID, m)
			}
			tol := b.tolerance(m)
			if bp.Claimed == ExactlyOnce || cp.Claimed == ExactlyOnce {
				if slices.Contains(ExactMetrics, m) {
					tol = Tolerance{}
				}
			}
			cmp.Rows = append(cmp.Rows, compareStat(bp.ID, m, bs, cs, tol))
		}
	}
	return cmp, nil
}

// ExactlyOnce is the claim whose ExactMetrics are compared exactly.
const ExactlyOnce = "exactly-once"

// verdictText is a point's observed verdicts, one per seed, and how many
// seeds stopped undrained: a change in any seed is a regression.
func verdictText(p *CurvePoint) string {
	s := strings.Join(p.Verdicts, ",")
	if s == "" {
		s = "none observed"
	}
	if p.Undrained > 0 {
		s += fmt.Sprintf(" (%d undrained)", p.Undrained)
	}
	return s
}

// heldText is the point's claim and whether it held in every seed.
func heldText(p *CurvePoint) string {
	if p.Held {
		return p.Claimed + " held"
	}
	return p.Claimed + " BROKEN"
}

func compareText(point, metric, base, cur string) Row {
	return Row{Point: point, Metric: metric, BaseText: base, CurText: cur, Within: base == cur}
}

func (b *Baseline) tolerance(metric string) Tolerance {
	if t, ok := b.Tolerance[metric]; ok {
		return t
	}
	return b.Tolerance["default"]
}

func compareStat(point, metric string, b, c *Stat, tol Tolerance) Row {
	r := Row{Point: point, Metric: metric, Base: b.Median, Cur: c.Median, BaseN: b.N, CurN: c.N, Tol: tol}
	switch {
	case b.N != c.N:
		r.Reason = fmt.Sprintf("a value in %d of %d seeds, baseline %d of %d", c.N, c.N+c.Null, b.N, b.N+b.Null)
	case b.Median == nil && c.Median == nil:
		r.Within = true
	case b.Median == nil || c.Median == nil:
		r.Reason = "null on one side"
	default:
		r.Within = math.Abs(*c.Median-*b.Median) <= tol.Abs+tol.Rel*math.Abs(*b.Median)+1e-12
	}
	return r
}

func paramNames(ps []Param) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func nameSome(ids []string) string {
	if len(ids) <= 3 {
		return strings.Join(ids, "; ")
	}
	return strings.Join(ids[:3], "; ") + fmt.Sprintf(" and %d more", len(ids)-3)
}

// scenarioDiff describes how two scenarios differ: in what the points share
// (options=false), or in the base system options and cost overrides
// (options=true).
func scenarioDiff(a, b Scenario, options bool) string {
	var d []string
	add := func(name string, x, y any) {
		if !reflect.DeepEqual(x, y) {
			d = append(d, fmt.Sprintf("%s %v in the baseline, %v now", name, show(x), show(y)))
		}
	}
	if options {
		add("system options", a.SystemOpts, b.SystemOpts)
		add("cost overrides", a.CostOverride, b.CostOverride)
	} else {
		add("workload", a.Workload, b.Workload)
		add("workload options", a.WorkloadOpts, b.WorkloadOpts)
		add("faults", a.Faults, b.Faults)
		add("duration_s", a.DurationS, b.DurationS)
		add("rate_rps", a.RateRPS, b.RateRPS)
		add("parallelism", a.Parallelism, b.Parallelism)
		add("workers", a.Workers, b.Workers)
	}
	return strings.Join(d, "; ")
}

func show(x any) string {
	switch x := x.(type) {
	case map[string]string:
		if len(x) == 0 {
			return "{}"
		}
		keys := sortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + x[k]
		}
		return "{" + strings.Join(parts, " ") + "}"
	case []string:
		if len(x) == 0 {
			return "[]"
		}
		return "[" + strings.Join(x, " ") + "]"
	}
	return fmt.Sprint(x)
}

// FormatValue prints a metric value compactly.
func FormatValue(x *float64) string {
	if x == nil {
		return "null"
	}
	return strconv.FormatFloat(*x, 'g', 6, 64)
}

// Values are the row's baseline and current values as printed.
func (r Row) Values() (base, cur string) {
	if r.BaseText != "" || r.CurText != "" {
		return r.BaseText, r.CurText
	}
	return FormatValue(r.Base), FormatValue(r.Cur)
}

// Exact reports whether the row allows no difference at all.
func (r Row) Exact() bool { return r.Tol == Tolerance{} }

// Change describes the difference of a row: "+1 (+66.7%)".
func (r Row) Change() string {
	if r.BaseText != "" || r.CurText != "" {
		if r.BaseText == r.CurText {
			return "0"
		}
		return "changed"
	}
	if r.Base == nil || r.Cur == nil {
		if r.Base == nil && r.Cur == nil {
			return "0"
		}
		return "n/a"
	}
	d := *r.Cur - *r.Base
	s := strconv.FormatFloat(d, 'g', 4, 64)
	if math.Abs(d) >= 1000 || d == math.Trunc(d) {
		s = strconv.FormatFloat(d, 'f', 0, 64)
	}
	if d >= 0 {
		s = "+" + s
	}
	if *r.Base != 0 {
		s += fmt.Sprintf(" (%+.1f%%)", 100*d/math.Abs(*r.Base))
	}
	return s
}
