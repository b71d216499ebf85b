package metrics

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"ftbench/engine"
)

const ms100 = 100 * engine.Millisecond

func TestNewSeriesDefaultBucket(t *testing.T) {
	for _, b := range []engine.Time{0, -1} {
		if got := NewSeries(b).Bucket(); got != DefaultBucket {
			t.Errorf("NewSeries(%d).Bucket() = %d, want %d", b, got, DefaultBucket)
		}
	}
	if got := NewSeries(engine.Second).Bucket(); got != engine.Second {
		t.Errorf("NewSeries(1s).Bucket() = %d", got)
	}
}

// TestSeriesBucketing checks which bucket each call lands in: commits by
// their instant, lag samples by the bucket they END.
func TestSeriesBucketing(t *testing.T) {
	type op struct {
		lag      bool
		at       engine.Time
		v        int64 // latency for commits, lag for samples
		wantRows int
	}
	tests := []struct {
		name string
		ops  []op
		// committed and lag per row after all ops
		committed []int64
		lags      []int64
	}{
		{"commit at 0", []op{{false, 0, 1, 1}}, []int64{1}, []int64{0}},
		{"commit at end of bucket 0", []op{{false, ms100 - 1, 1, 1}}, []int64{1}, []int64{0}},
		{"commit at boundary goes to next bucket", []op{{false, ms100, 1, 2}}, []int64{0, 1}, []int64{0, 0}},
		{"negative commit time counts as 0", []op{{false, -5, 1, 1}}, []int64{1}, []int64{0}},
		{"lag at boundary ends previous bucket", []op{{true, ms100, 7, 1}}, []int64{0}, []int64{7}},
		{"lag just after boundary is next bucket", []op{{true, ms100 + 1, 7, 2}}, []int64{0, 0}, []int64{0, 7}},
		{"lag at 0 dropped", []op{{true, 0, 7, 0}}, nil, nil},
		{"last lag sample in bucket wins", []op{{true, 50 * engine.Millisecond, 3, 1}, {true, ms100, 9, 1}}, []int64{0}, []int64{9}},
		{
			"carry forward lag through unsampled buckets",
			[]op{{true, ms100, 5, 1}, {false, 350 * engine.Millisecond, 1, 4}, {true, 5 * ms100, 2, 5}},
			[]int64{0, 0, 0, 1, 0},
			[]int64{5, 5, 5, 5, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSeries(ms100)
			for i, o := range tt.ops {
				if o.lag {
					s.Lag(o.at, o.v)
				} else {
					s.Commit(o.at, engine.Time(o.v))
				}
				if n := len(s.Rows()); n != o.wantRows {
					t.Fatalf("after op %d: %d rows, want %d", i, n, o.wantRows)
				}
			}
			rows := s.Rows()
			for i, r := range rows {
				if r.Start != engine.Time(i)*ms100 {
					t.Errorf("row %d start %d", i, r.Start)
				}
				if r.Committed != tt.committed[i] || r.Lag != tt.lags[i] {
					t.Errorf("row %d: committed %d lag %d, want %d %d", i, r.Committed, r.Lag, tt.committed[i], tt.lags[i])
				}
			}
		})
	}
}

func TestSeriesRowsLatencyAndRate(t *testing.T) {
	s := NewSeries(ms100)
	// Bucket 0: latencies 1..100 ms; bucket 1 empty; bucket 2: one commit.
	for i := 1; i <= 100; i++ {
		s.Commit(engine.Time(i)*engine.Microsecond, engine.Time(i)*engine.Millisecond)
	}
	s.Commit(250*engine.Millisecond, 3*engine.Millisecond)
	rows := s.Rows()
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	within1pct := func(got, want engine.Time) bool {
		return got >= want && float64(got-want) <= 0.01*float64(want)
	}
	if r := rows[0]; r.Committed != 100 || r.CommittedPerSec != 1000 ||
		!within1pct(r.P50, 50*engine.Millisecond) || !within1pct(r.P99, 99*engine.Millisecond) {
		t.Errorf("row 0 = %+v", r)
	}
	if r := rows[1]; r.Committed != 0 || r.CommittedPerSec != 0 || r.P50 != 0 || r.P99 != 0 {
		t.Errorf("empty row 1 = %+v", r)
	}
	if r := rows[2]; r.Committed != 1 || r.CommittedPerSec != 10 || r.P50 != 3*engine.Millisecond || r.P99 != 3*engine.Millisecond {
		t.Errorf("row 2 = %+v", r)
	}
}

func TestWriteCSV(t *testing.T) {
	s := NewSeries(ms100)
	s.Commit(10*engine.Millisecond, 1500*engine.Microsecond)
	s.Commit(20*engine.Millisecond, 1500*engine.Microsecond)
	s.Lag(ms100, 12)
	s.Commit(250*engine.Millisecond, 2*engine.Millisecond)
	s.Lag(3*ms100, 4)
	s.Checkpoint(220*engine.Millisecond, 30*engine.Millisecond)
	s.Checkpoint(280*engine.Millisecond, 45*engine.Millisecond)
	s.SetStaleness([]engine.Time{0, 150 * engine.Millisecond}) // the last bucket's is unset: 0
	var buf bytes.Buffer
	if err := s.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	want := CSVHeader + "\n" +
		"0,2,20,12,1.5,1.5,0,0,0\n" +
		"0.1,0,0,12,0,0,0,0,150\n" +
		"0.2,1,10,4,2,2,2,45,0\n"
	if got := buf.String(); got != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, want)
	}
	// Same calls, same bytes.
	var again bytes.Buffer
	s.WriteCSV(&again)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("WriteCSV is not repeatable")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteCSVReportsError(t *testing.T) {
	s := NewSeries(ms100)
	s.Commit(0, 1)
	if err := s.WriteCSV(failWriter{}); err == nil {
		t.Error("WriteCSV to a failing writer returned nil")
	}
}

func TestSteadyThroughput(t *testing.T) {
	rows := []Row{
		{Start: 0, CommittedPerSec: 100},
		{Start: ms100, CommittedPerSec: 200},
		{Start: 2 * ms100, CommittedPerSec: 400},
		{Start: 3 * ms100, CommittedPerSec: 1000},
	}
	tests := []struct {
		name     string
		from, to engine.Time
		want     float64
	}{
		{"all", 0, engine.Second, 425},
		{"from inclusive, to exclusive", ms100, 3 * ms100, 300},
		{"mid-bucket from skips the bucket it starts in", ms100 + 1, 3 * ms100, 400},
		{"none", 5 * ms100, engine.Second, 0},
		{"empty range", ms100, ms100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SteadyThroughput(rows, tt.from, tt.to); got != tt.want {
				t.Errorf("SteadyThroughput = %v, want %v", got, tt.want)
			}
		})
	}
}

// A sink that commits 1000 effects in one bucket every 4 buckets (a 400 ms
// cycle at 2,500 effects/s): over whole cycles the rate is exact wherever
// the range starts; a window cut at the range's edges would alias.
func TestCycleThroughput(t *testing.T) {
	var rows []Row
	for i := 0; i < 40; i++ {
		r := Row{Start: engine.Time(i) * ms100}
		if i%4 == 1 {
			r.Committed = 1000
		}
		rows = append(rows, r)
	}
	cycle := 4 * ms100
	tests := []struct {
		name     string
		from, to engine.Time
		cycle    engine.Time
		want     float64
		win      Window
		ok       bool
	}{
		{"aligned", 0, 4 * engine.Second, cycle, 2500, Window{0, 40 * ms100, 10}, true},
		{"burst at the range start", ms100, 37 * ms100, cycle, 2500, Window{2 * ms100, 34 * ms100, 8}, true},
		{"one cycle", 5 * ms100, 9 * ms100, cycle, 2500, Window{5 * ms100, 9 * ms100, 1}, true},
		{"less than a cycle", 5 * ms100, 8 * ms100, cycle, 0, Window{}, false},
		// The same range without the cycle: 2 bursts in 0.5 s.
		{"continuous aliases", ms100, 6 * ms100, 0, 4000, Window{ms100, 6 * ms100, 0}, true},
		// A cycle that is not a whole number of buckets: lcm(250ms, 100ms).
		{"lcm period", 0, 4 * engine.Second, 250 * engine.Millisecond, 2500, Window{0, 40 * ms100, 16}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, win, ok := CycleThroughput(rows, tt.from, tt.to, tt.cycle)
			if got != tt.want || win != tt.win || ok != tt.ok {
				t.Errorf("CycleThroughput = %v, %+v, %v; want %v, %+v, %v", got, win, ok, tt.want, tt.win, tt.ok)
			}
		})
	}
}

// Sealing keeps each finished bucket's quantiles exactly as an unsealed
// series reports them, step by step as the run goes on, holds histograms
// only for the buckets still open, and refuses a commit into a sealed
// bucket.
func TestSeriesSealKeepsQuantiles(t *testing.T) {
	const bucket = 100 * engine.Millisecond
	plain, sealed := NewSeries(bucket), NewSeries(bucket)
	r := rand.New(rand.NewPCG(7, 7))
	for now := engine.Time(0); now < 3*engine.Second; now += engine.Millisecond {
		sealed.Seal(now - bucket)
		for k := 0; k < 20; k++ {
			at := now + engine.Time(r.Int64N(int64(engine.Millisecond)))
			lat := engine.Time(r.Int64N(int64(2 * engine.Second)))
			plain.Commit(at, lat)
			sealed.Commit(at, lat)
		}
	}
	if sealed.sealed < 25 {
		t.Fatalf("only %d of 30 buckets sealed", sealed.sealed)
	}
	held := 0
	for i := range sealed.buckets {
		if sealed.buckets[i].lat != nil {
			held++
		}
	}
	if held > 3 {
		t.Errorf("%d buckets still hold a histogram, want at most the last 3", held)
	}
	want, got := plain.Rows(), sealed.Rows()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	defer func() {
		if recover() == nil {
			t.Errorf("a commit into a sealed bucket was taken")
		}
	}()
	sealed.Commit(engine.Millisecond, 1)
}
