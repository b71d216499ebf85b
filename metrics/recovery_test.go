package metrics

import (
	"slices"
	"testing"

	"ftbench/engine"
)

// lagRows builds 100 ms rows from 0 with the given lags.
func lagRows(lags ...int64) []Row {
	rows := make([]Row, len(lags))
	for i, l := range lags {
		rows[i] = Row{Start: engine.Time(i) * ms100, Lag: l}
	}
	return rows
}

// rep repeats v n times, to spell lag profiles compactly.
func rep(v int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func cat(parts ...[]int64) []int64 { return slices.Concat(parts...) }

func TestDefaultRecoveryOptions(t *testing.T) {
	o := DefaultRecoveryOptions()
	if o.PreWindow != 2*engine.Second || o.Hold != engine.Second || o.Epsilon != 0.1 || o.Slack != 0 || o.WarmUp != 0 || o.End != 0 {
		t.Errorf("DefaultRecoveryOptions() = %+v", o)
	}
}

func TestRecoveryTime(t *testing.T) {
	def := DefaultRecoveryOptions()
	with := func(f func(*RecoveryOptions)) RecoveryOptions {
		o := def
		f(&o)
		return o
	}
	sec := func(n int) engine.Time { return engine.Time(n) * engine.Second }
	sawtooth := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = []int64{100, 300, 500}[i%3]
		}
		return out
	}
	tests := []struct {
		name    string
		lags    []int64
		fault   engine.Time
		opt     RecoveryOptions
		wantRec engine.Time
		wantOK  bool
	}{
		{
			name:  "flat lag: no disruption",
			lags:  rep(100, 60),
			fault: sec(3), opt: def,
			wantRec: 0, wantOK: true,
		},
		{
			// Pre-fault peak 500 sets the level; the same sawtooth after the
			// fault never exceeds 550 and must not read as a disruption.
			name:  "sawtooth is not a disruption",
			lags:  sawtooth(90),
			fault: sec(3), opt: def,
			wantRec: 0, wantOK: true,
		},
		{
			name:  "within epsilon is not a disruption",
			lags:  cat(rep(100, 30), rep(110, 30)),
			fault: sec(3), opt: def,
			wantRec: 0, wantOK: true,
		},
		{
			// Disrupted buckets 30..34 (3.0s..3.5s); bucket 35 is the first
			// good one and stays good for the 1 s hold.
			name:  "spike then recover",
			lags:  cat(rep(100, 30), rep(1000, 5), rep(100, 20)),
			fault: sec(3), opt: def,
			wantRec: 500 * engine.Millisecond, wantOK: true,
		},
		{
			// Back at 3.5s, spikes again at 3.9s (inside the 1 s hold), so
			// the recovery is the second return at 4.2s.
			name:  "re-spike within hold is not recovered at first return",
			lags:  cat(rep(100, 30), rep(1000, 5), rep(100, 4), rep(900, 3), rep(100, 20)),
			fault: sec(3), opt: def,
			wantRec: 1200 * engine.Millisecond, wantOK: true,
		},
		{
			// A re-spike after the hold has been satisfied does not matter.
			name:  "re-spike after hold keeps first recovery",
			lags:  cat(rep(100, 30), rep(1000, 5), rep(100, 10), rep(900, 3), rep(100, 20)),
			fault: sec(3), opt: def,
			wantRec: 500 * engine.Millisecond, wantOK: true,
		},
		{
			name:  "never recovers",
			lags:  cat(rep(100, 30), rep(1000, 30)),
			fault: sec(3), opt: def,
			wantRec: 0, wantOK: false,
		},
		{
			// Lag returns at 5.0s but the rows end at 5.5s: the 1 s hold
			// cannot be confirmed.
			name:  "rows end inside hold window",
			lags:  cat(rep(100, 30), rep(1000, 20), rep(100, 5)),
			fault: sec(3), opt: def,
			wantRec: 0, wantOK: false,
		},
		{
			// Exactly the 10 buckets the hold needs: confirmed.
			name:  "rows end exactly at hold end",
			lags:  cat(rep(100, 30), rep(1000, 20), rep(100, 10)),
			fault: sec(3), opt: def,
			wantRec: 2 * engine.Second, wantOK: true,
		},
		{
			name:  "zero hold recovers at first good bucket",
			lags:  cat(rep(100, 30), rep(1000, 5), rep(100, 1), rep(1000, 5)),
			fault: sec(3), opt: with(func(o *RecoveryOptions) { o.Hold = 0 }),
			wantRec: 500 * engine.Millisecond, wantOK: true,
		},
		{
			name:  "zero pre-fault lag: any lag is a disruption without slack",
			lags:  cat(rep(0, 30), rep(5, 3), rep(0, 20)),
			fault: sec(3), opt: def,
			wantRec: 300 * engine.Millisecond, wantOK: true,
		},
		{
			name:  "slack absorbs small lag",
			lags:  cat(rep(0, 30), rep(5, 3), rep(0, 20)),
			fault: sec(3), opt: with(func(o *RecoveryOptions) { o.Slack = 10 }),
			wantRec: 0, wantOK: true,
		},
		{
			// Lag 5000 during the first second is start-up; with WarmUp 1s
			// the pre-fault level is 100, so 1000 after the fault disrupts.
			name:  "warm-up excluded from pre-fault level",
			lags:  cat(rep(5000, 10), rep(100, 10), rep(1000, 5), rep(100, 20)),
			fault: sec(2), opt: with(func(o *RecoveryOptions) { o.WarmUp = sec(1) }),
			wantRec: 500 * engine.Millisecond, wantOK: true,
		},
		{
			name:  "without warm-up the start-up lag hides the disruption",
			lags:  cat(rep(5000, 10), rep(100, 10), rep(1000, 5), rep(100, 20)),
			fault: sec(2), opt: def,
			wantRec: 0, wantOK: true,
		},
		{
			// A lag peak 3 s before the fault is outside the 2 s window.
			name:  "pre-window bounds the level",
			lags:  cat(rep(100, 5), rep(5000, 1), rep(100, 34), rep(1000, 5), rep(100, 20)),
			fault: sec(4), opt: def,
			wantRec: 500 * engine.Millisecond, wantOK: true,
		},
		{
			// Fault at 3.05s: bucket 30 (3.0..3.1s) is sampled after the
			// fault, so its spike is the disruption, not part of the level.
			name:  "mid-bucket fault: containing bucket is post-fault",
			lags:  cat(rep(100, 30), rep(1000, 2), rep(100, 20)),
			fault: 3050 * engine.Millisecond, opt: def,
			wantRec: 150 * engine.Millisecond, wantOK: true,
		},
		{
			name:  "disruption only after End is ignored",
			lags:  cat(rep(100, 40), rep(1000, 5), rep(100, 20)),
			fault: sec(3), opt: with(func(o *RecoveryOptions) { o.End = sec(4) }),
			wantRec: 0, wantOK: true,
		},
		{
			// Recovery (and its hold) only during the drain after End does
			// not count.
			name:  "recovery only after End does not count",
			lags:  cat(rep(100, 30), rep(1000, 10), rep(100, 20)),
			fault: sec(3), opt: with(func(o *RecoveryOptions) { o.End = sec(4) }),
			wantRec: 0, wantOK: false,
		},
		{
			name:  "no rows",
			lags:  nil,
			fault: sec(3), opt: def,
			wantRec: 0, wantOK: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, ok := RecoveryTime(lagRows(tt.lags...), tt.fault, tt.opt)
			if rec != tt.wantRec || ok != tt.wantOK {
				t.Errorf("RecoveryTime = %v, %v; want %v, %v", rec, ok, tt.wantRec, tt.wantOK)
			}
		})
	}
}

// A hold window that runs past the rows: unconfirmed, unless the level is
// known to be settled (the run drained) by the end of the rows. The same
// rule works on any level, here staleness in ns.
func TestRecoveryTimeSettledAndOtherLevels(t *testing.T) {
	// 2 s quiet, a fault at 2 s, bad for 0.5 s, then 0.3 s of good rows.
	lags := cat(rep(0, 20), rep(500, 5), rep(0, 3))
	rows := lagRows(lags...)
	for i := range rows {
		rows[i].Staleness = engine.Time(rows[i].Lag) * engine.Millisecond
	}
	opt := DefaultRecoveryOptions()
	if _, ok := RecoveryTime(rows, 2*engine.Second, opt); ok {
		t.Errorf("a 1 s hold confirmed by 0.3 s of rows")
	}
	opt.Settled = 2600 * engine.Millisecond
	if rec, ok := RecoveryTime(rows, 2*engine.Second, opt); !ok || rec != 500*engine.Millisecond {
		t.Errorf("settled at 2.6 s: got %v, %v; want 500ms, true", rec, ok)
	}
	opt.Settled = 2900 * engine.Millisecond // after the rows end
	if _, ok := RecoveryTime(rows, 2*engine.Second, opt); ok {
		t.Errorf("settled after the rows end, yet the hold was confirmed")
	}
	opt.Settled = 2600 * engine.Millisecond
	stale := func(r Row) int64 { return int64(r.Staleness) }
	if rec, ok := RecoveryTimeOf(rows, stale, 2*engine.Second, opt); !ok || rec != 500*engine.Millisecond {
		t.Errorf("staleness: got %v, %v; want 500ms, true", rec, ok)
	}
}
