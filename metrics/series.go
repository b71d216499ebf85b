package metrics

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"ftbench/engine"
)

// DefaultBucket is the time-series resolution (docs/metrics.md, "Time series").
const DefaultBucket = 100 * engine.Millisecond

// CSVHeader is the header line of timeseries.csv; its column names are part
// of the results format, so they live in one place.
const CSVHeader = "t_s,committed,committed_per_s,source_lag,latency_p50_ms,latency_p99_ms,checkpoints_completed,checkpoint_duration_max_ms,staleness_ms"

// Row is one bucket [Start, Start+bucket) of the time series.
type Row struct {
	Start           engine.Time
	Committed       int64   // effects made visible in the bucket
	CommittedPerSec float64 // Committed / bucket length in seconds
	// Lag is the source lag (appended but not yet committed) sampled at the
	// END of the bucket; a bucket without a sample repeats the previous
	// bucket's lag, because lag is a level, not a per-bucket quantity.
	Lag int64
	// P50 and P99 are end-to-end latencies of the effects committed in the
	// bucket; 0 when there were none.
	P50, P99 engine.Time
	// Checkpoints is the number of checkpoints completed in the bucket and
	// CheckpointMax the longest of their durations (trigger to complete);
	// both 0 for systems that do not checkpoint.
	Checkpoints   int64
	CheckpointMax engine.Time
	// Staleness is the output staleness at the END of the bucket: the age
	// of the oldest appended record with an expected effect committed
	// later (Staleness in staleness.go); 0 until SetStaleness is called.
	Staleness engine.Time
}

type seriesBucket struct {
	committed int64
	lag       int64
	lagSet    bool
	// lat holds the bucket's commit latencies until the bucket is sealed
	// (nil before its first commit and after sealing); p50 and p99 are its
	// quantiles once sealed.
	lat           *Histogram
	p50, p99      engine.Time
	checkpoints   int64
	checkpointMax engine.Time
}

// Series accumulates the per-bucket time series of a run.
//
// A bucket's latency histogram (a few KiB) is needed only until no commit
// can land in the bucket any more: Seal then keeps its two quantiles and
// reuses the histogram, so an hour of 100 ms buckets holds 36 000 small
// rows instead of 36 000 histograms (about 150 MB).
type Series struct {
	bucket    engine.Time
	buckets   []seriesBucket
	staleness []engine.Time
	sealed    int          // buckets [0, sealed) are sealed
	spare     []*Histogram // histograms of sealed buckets, for reuse
}

// NewSeries returns an empty series with buckets of the given length
// (DefaultBucket if bucket <= 0).
func NewSeries(bucket engine.Time) *Series {
	if bucket <= 0 {
		bucket = DefaultBucket
	}
	return &Series{bucket: bucket}
}

// Len returns the number of buckets so far.
func (s *Series) Len() int { return len(s.buckets) }

// Bucket returns the bucket length.
func (s *Series) Bucket() engine.Time { return s.bucket }

// at returns bucket i, extending the series with empty buckets as needed.
func (s *Series) at(i int) *seriesBucket {
	for len(s.buckets) <= i {
		s.buckets = append(s.buckets, seriesBucket{})
	}
	return &s.buckets[i]
}

// Commit records one effect made visible at time at (negative times count
// as 0) with the given end-to-end latency.
func (s *Series) Commit(at, latency engine.Time) {
	if at < 0 {
		at = 0
	}
	i := int(at / s.bucket)
	if i < s.sealed {
		panic(fmt.Sprintf("metrics: a commit at %v lands in bucket %d, sealed up to %v", at, i, engine.Time(s.sealed)*s.bucket))
	}
	b := s.at(i)
	b.committed++
	if b.lat == nil {
		if n := len(s.spare); n > 0 {
			b.lat, s.spare = s.spare[n-1], s.spare[:n-1]
		} else {
			b.lat = NewHistogram()
		}
	}
	b.lat.Add(latency)
}

// Seal declares that no commit will land before instant t any more: every
// bucket that ends by t keeps only its latency quantiles. A commit at an
// earlier time afterwards is a caller's bug (Commit panics).
func (s *Series) Seal(t engine.Time) {
	for s.sealed < len(s.buckets) && engine.Time(s.sealed+1)*s.bucket <= t {
		b := &s.buckets[s.sealed]
		if b.lat != nil {
			if b.lat.Count() > 0 {
				b.p50, b.p99 = b.lat.Quantile(0.50), b.lat.Quantile(0.99)
			}
			b.lat.Reset()
			if len(s.spare) < 8 {
				s.spare = append(s.spare, b.lat)
			}
			b.lat = nil
		}
		s.sealed++
	}
}

// Lag records the source lag sampled at instant at. The sample describes
// the END of the bucket (at-bucket, at], so a sample taken exactly at a
// boundary k*bucket belongs to bucket k-1: it is the level the system
// reached during that bucket. Samples at at <= 0 describe no bucket and are
// dropped (the lag before the first sample is 0). If a bucket is sampled
// more than once the last sample wins, as it is the one nearest its end.
func (s *Series) Lag(at engine.Time, lag int64) {
	if at <= 0 {
		return
	}
	b := s.at(int((at - 1) / s.bucket))
	b.lag = lag
	b.lagSet = true
}

// Rows returns one row per bucket from time 0 through the last bucket that
// received a commit or a lag sample.
func (s *Series) Rows() []Row {
	rows := make([]Row, len(s.buckets))
	var lag int64
	for i := range s.buckets {
		b := &s.buckets[i]
		if b.lagSet {
			lag = b.lag
		}
		r := Row{
			Start:           engine.Time(i) * s.bucket,
			Committed:       b.committed,
			CommittedPerSec: perSec(b.committed, s.bucket),
			Lag:             lag,
		}
		r.Checkpoints, r.CheckpointMax = b.checkpoints, b.checkpointMax
		if i < len(s.staleness) {
			r.Staleness = s.staleness[i]
		}
		switch {
		case i < s.sealed:
			r.P50, r.P99 = b.p50, b.p99
		case b.lat != nil && b.lat.Count() > 0:
			r.P50 = b.lat.Quantile(0.50)
			r.P99 = b.lat.Quantile(0.99)
		}
		rows[i] = r
	}
	return rows
}

// SetStaleness sets the output staleness at the end of each bucket (one
// entry per bucket from 0). Staleness is known only after the run, when
// every record's last first commit is; see Staleness.
func (s *Series) SetStaleness(st []engine.Time) { s.staleness = st }

// Checkpoint records a checkpoint that completed at time at after taking
// duration from trigger to completion.
func (s *Series) Checkpoint(at, duration engine.Time) {
	if at < 0 {
		return
	}
	b := s.at(int(at / s.bucket))
	b.checkpoints++
	b.checkpointMax = max(b.checkpointMax, duration)
}

// WriteCSV writes the rows as timeseries.csv (CSVHeader, then one line per
// bucket). Numbers use strconv's shortest round-trip form, which is exact
// and identical on every platform.
func (s *Series) WriteCSV(w io.Writer) error {
	return WriteRowsCSV(w, s.Rows())
}

// WriteRowsCSV writes rows in the timeseries.csv format; it is separate from
// Series so reports can rewrite stored or filtered rows.
func WriteRowsCSV(w io.Writer, rows []Row) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(CSVHeader)
	bw.WriteByte('\n')
	var buf []byte
	for _, r := range rows {
		buf = buf[:0]
		buf = strconv.AppendFloat(buf, r.Start.Seconds(), 'f', -1, 64)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Committed, 10)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, r.CommittedPerSec, 'f', -1, 64)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Lag, 10)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, ms(r.P50), 'f', -1, 64)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, ms(r.P99), 'f', -1, 64)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, r.Checkpoints, 10)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, ms(r.CheckpointMax), 'f', -1, 64)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, ms(r.Staleness), 'f', -1, 64)
		buf = append(buf, '\n')
		bw.Write(buf) // bufio keeps the first error; Flush reports it
	}
	return bw.Flush()
}

// perSec divides exact integers (count·1e9 / bucket ns), which float64 rounds
// correctly, rather than by a bucket length in seconds that float64 cannot
// represent exactly (0.1): round rates then print as round numbers.
func perSec(n int64, bucket engine.Time) float64 {
	return float64(n) * float64(engine.Second) / float64(bucket)
}

func ms(t engine.Time) float64 { return float64(t) / float64(engine.Millisecond) }

// SteadyThroughput is the mean committed records/s over the buckets whose
// start lies in [from, to): the harness passes warm-up end .. first fault
// (or end of input), so neither warm-up nor recovery dilutes it. It returns
// 0 when no bucket qualifies.
func SteadyThroughput(rows []Row, from, to engine.Time) float64 {
	var sum float64
	n := 0
	for _, r := range rows {
		if r.Start >= from && r.Start < to {
			sum += r.CommittedPerSec
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Window is a throughput measurement window [From, To) of whole buckets.
type Window struct {
	From, To engine.Time
	// Cycles is how many whole commit cycles it spans (0 for a continuous
	// sink, whose window is every bucket in range).
	Cycles int
}

// CycleThroughput is the mean committed effects/s over a window of whole
// commit cycles inside [from, to): the buckets whose start lies there.
//
// A sink that commits in bursts once per cycle (a 2PC sink at each
// checkpoint, a micro-batch at each batch) makes any window that is not a
// whole number of cycles alias with the bursts: it holds one burst more or
// less than its length is worth. So for cycle > 0 the window is n whole
// periods of P buckets, P = lcm(cycle, bucket)/bucket, with n as large as
// fits; and its edges are placed in the quietest phase of the period (the
// bucket position, modulo P, with the fewest commits over the range, the
// earliest on a tie), so that a burst whose timing jitters a little cannot
// cross an edge. ok is false when no whole period fits (or, for cycle 0,
// no bucket): there is no steady-state figure to report.
func CycleThroughput(rows []Row, from, to, cycle engine.Time) (perSec float64, w Window, ok bool) {
	if len(rows) == 0 {
		return 0, Window{}, false
	}
	width := DefaultBucket
	if len(rows) >= 2 {
		width = rows[1].Start - rows[0].Start
	}
	// Buckets whose start lies in [from, to), clipped to the rows.
	first := int((from + width - 1) / width)
	if from <= 0 {
		first = 0
	}
	end := int((to + width - 1) / width)
	end = min(end, len(rows))
	if first >= end {
		return 0, Window{}, false
	}
	if cycle <= 0 {
		var sum int64
		for _, r := range rows[first:end] {
			sum += r.Committed
		}
		span := engine.Time(end-first) * width
		return float64(sum) * float64(engine.Second) / float64(span),
			Window{From: rows[first].Start, To: rows[first].Start + span}, true
	}
	period := int(lcm(int64(cycle), int64(width)) / int64(width))
	if period > end-first {
		return 0, Window{}, false
	}
	byPhase := make([]int64, period)
	for i := first; i < end; i++ {
		byPhase[i%period] += rows[i].Committed
	}
	start := first
	for i := first; i < first+period; i++ {
		if byPhase[i%period] < byPhase[start%period] {
			start = i
		}
	}
	n := (end - start) / period
	if n == 0 {
		// The quietest phase starts too late for a whole period; the
		// earliest start always fits one (period <= end-first).
		start, n = first, (end-first)/period
	}
	var sum int64
	for _, r := range rows[start : start+n*period] {
		sum += r.Committed
	}
	span := engine.Time(n*period) * width
	return float64(sum) * float64(engine.Second) / float64(span),
		Window{From: rows[start].Start, To: rows[start].Start + span, Cycles: int(span / cycle)}, true
}

func lcm(a, b int64) int64 {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
