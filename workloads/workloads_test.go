package workloads

import (
	"math"
	"slices"
	"testing"

	"ftbench/engine"
)

func mustNew(t *testing.T, name string, opts map[string]string) Workload {
	t.Helper()
	w, err := New(name, 7, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// Records are pure functions of (seed, partition, offset).
func TestRecordsArePure(t *testing.T) {
	for _, name := range []string{"wordcount", "grep"} {
		a, b := mustNew(t, name, nil), mustNew(t, name, nil)
		other, _ := New(name, 8, nil)
		differs := false
		for off := int64(0); off < 200; off++ {
			if a.Record(1, off) != b.Record(1, off) {
				t.Fatalf("%s: record (1,%d) differs between instances", name, off)
			}
			oa, ob := NewOracle(a), NewOracle(other)
			if oa.Feed(1, off) != ob.Feed(1, off) {
				differs = true
			}
		}
		if name == "grep" && !differs {
			t.Errorf("%s: another seed gave the same matches", name)
		}
	}
}

func TestWordcountOracle(t *testing.T) {
	w := mustNew(t, "wordcount", map[string]string{"vocabulary": "50"})
	effects, total, final := Expected(w, []int64{100, 100})
	var sumEffects, sumCounts int64
	for _, part := range effects {
		for _, e := range part {
			if e < 1 || e > maxWords {
				t.Fatalf("a line has %d words, want 1..%d", e, maxWords)
			}
			sumEffects += int64(e)
		}
	}
	for word, c := range final {
		if word >= 50 {
			t.Fatalf("word %d outside the vocabulary", word)
		}
		sumCounts += c
	}
	if sumEffects != total || sumCounts != total {
		t.Fatalf("effects %d, total %d, sum of final counts %d: every word occurrence is one effect and one count", sumEffects, total, sumCounts)
	}
	// Zipf: the most frequent word is rank 0 and clearly more frequent than rank 10.
	if final[0] <= final[10] {
		t.Fatalf("rank 0 count %d not above rank 10 count %d", final[0], final[10])
	}
}

func TestGrepRecordSizesAndSelectivity(t *testing.T) {
	for _, size := range []string{"100", "1000"} {
		w := mustNew(t, "grep", map[string]string{"record-size": size})
		if got := w.Record(0, 3).Size; got != int32(map[string]int{"100": 100, "1000": 1000}[size]) {
			t.Fatalf("record size %d, want %s", got, size)
		}
		_, total, final := Expected(w, []int64{10000})
		if total < 800 || total > 1200 {
			t.Fatalf("%d of 10000 records match, want about one in 10", total)
		}
		if int64(len(final)) != total {
			t.Fatalf("each match is its own key: %d keys for %d matches", len(final), total)
		}
	}
}

func TestLogTiming(t *testing.T) {
	l := &Log{Parts: 4, Rate: 4000, End: 2 * engine.Second} // 1000/s per partition
	if got := l.Appended(engine.Second); got != 1000 {
		t.Fatalf("appended by 1s: %d, want 1000", got)
	}
	if got := l.Total(); got != 2000 {
		t.Fatalf("total %d, want 2000", got)
	}
	if got := l.Appended(5 * engine.Second); got != 2000 {
		t.Fatalf("appending must stop at End, got %d", got)
	}
	for _, off := range []int64{0, 1, 999, 1500} {
		born := l.BornAt(off)
		if l.Appended(born) <= off || l.Appended(born-1) > off {
			t.Fatalf("record %d born at %v is not the moment it became appended", off, born)
		}
	}
}

func TestBadOptions(t *testing.T) {
	cases := []struct {
		name string
		opts map[string]string
	}{
		{"grep", map[string]string{"record-size": "0"}},
		{"grep", map[string]string{"match-every": "x"}},
		{"wordcount", map[string]string{"vocabulary": "10000001"}},
		{"wordcount", map[string]string{"active-keys": "0"}},
		{"wordcount", map[string]string{"active-keys": "1.5"}},
		{"wordcount", map[string]string{"active-keys": "0.99", "vocabulary": "10"}},
		{"wordcount", map[string]string{"active-period": "0"}},
		{"wordcount", map[string]string{"active-warmup": "-1"}},
		{"wordcount", map[string]string{"zipf-s": "-1"}},
		{"nope", nil},
	}
	for _, c := range cases {
		if _, err := New(c.name, 1, c.opts); err == nil {
			t.Errorf("%s %v: want an error", c.name, c.opts)
		}
	}
}

// The default rate loads the busiest operator instance — the one the hash
// partitioning gives the most of the Zipf-skewed words — or the busiest
// worker's cores to exactly half.
func TestDefaultRateIsHalfTheBusiestCapacity(t *testing.T) {
	w := mustNew(t, "wordcount", nil)
	c := engine.DefaultCost()
	for _, pw := range [][2]int{{4, 4}, {16, 16}, {64, 64}, {64, 4}} {
		par, workers := pw[0], pw[1]
		rate := DefaultRate(w, &c, par, workers)
		shares := InstanceShares(w, &c, par)
		var instance float64
		worker := make([]float64, workers)
		for op, cost := range w.CostPerRecord(&c) {
			for i, s := range shares[op] {
				l := rate * s * float64(cost) / 1e9
				instance = max(instance, l)
				worker[i%workers] += l
			}
		}
		load := max(instance, slices.Max(worker)/float64(c.Cores))
		if load < 0.4999 || load > 0.5001 {
			t.Fatalf("par %d on %d workers: default rate %.0f loads the busiest instance to %.3f and worker to %.3f, want 0.5 at most and once",
				par, workers, rate, instance, slices.Max(worker)/float64(c.Cores))
		}
	}
}

// The capacity bound is the instances' limit while the workers' cores have
// room, and the cores' limit once more instances share them: a worker's
// cores carry ceil(par/workers) instances of every operator.
func TestCapacityBoundSharesCores(t *testing.T) {
	w := mustNew(t, "grep", nil)
	c := engine.DefaultCost()
	var busiest, sum engine.Time
	for _, v := range w.CostPerRecord(&c) {
		busiest = max(busiest, v)
		sum += v
	}
	instances := func(par int) float64 { return float64(par) * 1e9 / float64(busiest) }
	coresOf := func(workers int) float64 { return float64(workers*c.Cores) * 1e9 / float64(sum) }
	for _, tc := range []struct {
		par, workers int
		want         float64
	}{
		{1, 4, instances(1)},                  // one pipeline: its busiest instance limits
		{4, 4, min(instances(4), coresOf(4))}, // one instance of each operator per worker
		{64, 4, coresOf(4)},                   // 16 of each per worker: cores limit
		{6, 4, min(instances(6), float64(c.Cores)*1e9*6/(2*float64(sum)))}, // uneven: the busiest worker has 2 of each
	} {
		got := CapacityBound(w, &c, tc.par, tc.workers)
		if math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("par %d on %d workers: bound %.0f, want %.0f", tc.par, tc.workers, got, tc.want)
		}
	}
	if got, want := CapacityBound(w, &c, 64, 4), CapacityBound(w, &c, 128, 4); got != want {
		t.Errorf("cores full at par 64 (%.0f) but par 128 gives %.0f: the bound must stop growing", got, want)
	}
	if DefaultRate(w, &c, 64, 4) != math.Round(CapacityBound(w, &c, 64, 4)/2) {
		t.Error("the default rate is not half the capacity bound")
	}
}

// Every workload that counts its effects without the oracle agrees with
// the oracle on every record, fed in the harness's order.
func TestEffectCounterMatchesOracle(t *testing.T) {
	for _, name := range Names() {
		w, err := New(name, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := w.(EffectCounter)
		if !ok {
			continue
		}
		o := NewOracle(w)
		for off := int64(0); off < 3000; off++ {
			for p := int32(0); p < 3; p++ {
				if got, want := c.Effects(p, off), o.Feed(p, off); got != want {
					t.Fatalf("%s: Effects(%d, %d) = %d, oracle %d", name, p, off, got, want)
				}
			}
		}
	}
}

// The oracle's keyed update allocates nothing per record once the keys are
// in its state.
func TestOracleFeedDoesNotAllocate(t *testing.T) {
	w, err := New("wordcount", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := NewOracle(w)
	for off := int64(0); off < 20000; off++ {
		o.Feed(0, off)
	}
	off := int64(0)
	if a := testing.AllocsPerRun(1000, func() { o.Feed(0, off%20000); off++ }); a != 0 {
		t.Errorf("Feed allocates %v times per record", a)
	}
}

// BenchmarkOracleFeed is the oracle's per-record cost (wordcount; run with
// -benchmem: 0 allocs/op).
func BenchmarkOracleFeed(b *testing.B) {
	w, err := New("wordcount", 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	o := NewOracle(w)
	b.ReportAllocs()
	off := int64(0)
	for b.Loop() {
		o.Feed(int32(off&3), off>>2)
		off++
	}
}

// Down is what a source asks before it fetches: a partition is down during
// each of its outages [From, To), and the time it is back is the end of the
// outage, or of a chain of outages of that partition overlapping or
// touching it. Other partitions are never down.
func TestLogDown(t *testing.T) {
	s := engine.Second
	l := &Log{Parts: 4, Rate: 100, End: 20 * s, Outages: []Outage{
		{Part: 1, From: 5 * s, To: 9 * s},
		{Part: 1, From: 9 * s, To: 10 * s},  // touches the first: back at 10 s
		{Part: 1, From: 12 * s, To: 14 * s}, // a separate outage
		{Part: 2, From: 8 * s, To: 15 * s},
		{Part: 2, From: 6 * s, To: 9 * s}, // overlaps the one listed before it
	}}
	tests := []struct {
		part  int32
		at    engine.Time
		down  bool
		until engine.Time
	}{
		{1, 0, false, 0},
		{1, 5*s - 1, false, 5*s - 1},
		{1, 5 * s, true, 10 * s},
		{1, 9*s + 1, true, 10 * s},
		{1, 10 * s, false, 10 * s},
		{1, 11 * s, false, 11 * s},
		{1, 13 * s, true, 14 * s},
		{2, 7 * s, true, 15 * s},
		{2, 15 * s, false, 15 * s},
		{0, 7 * s, false, 7 * s},
		{3, 13 * s, false, 13 * s},
	}
	for _, tt := range tests {
		down, until := l.Down(tt.part, tt.at)
		if down != tt.down || until != tt.until {
			t.Errorf("Down(%d, %s) = %v, %s; want %v, %s", tt.part, tt.at, down, until, tt.down, tt.until)
		}
	}
	// Producers go on appending during an outage.
	if l.Appended(7*s) != (&Log{Parts: 4, Rate: 100, End: 20 * s}).Appended(7*s) {
		t.Error("an outage changed what was appended")
	}
}
