package sim

import (
	"testing"

	"ftbench/engine"
)

// producer sends one record per tick for as long as it is not backpressured.
type producer struct {
	to   engine.ProcID
	sent *int64
	size int32
}

func (p *producer) Init(ctx engine.Ctx) { ctx.After(0, 0) }
func (p *producer) Handle(engine.Ctx, engine.ProcID, engine.Msg) {
}
func (p *producer) Timer(ctx engine.Ctx, _ int64) {
	for i := 0; i < 8; i++ {
		ctx.Send(p.to, engine.Msg{Size: p.size, Val: *p.sent})
		*p.sent++
	}
	ctx.After(10*engine.Microsecond, 0)
}

// consumer charges cost per record and remembers what it saw.
type consumer struct {
	cost engine.Time
	got  *[]int64
}

func (c *consumer) Init(engine.Ctx)         {}
func (c *consumer) Timer(engine.Ctx, int64) {}
func (c *consumer) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	ctx.Work(c.cost)
	if c.got != nil {
		*c.got = append(*c.got, m.Val)
	}
}

func pipeline(consumerCost engine.Time, sent *int64, got *[]int64) *engine.Deployment {
	dep := &engine.Deployment{Coordinator: -1}
	dep.Add(engine.ProcSpec{Name: "p", Worker: 0, New: func() engine.Process { return &producer{to: 1, sent: sent, size: 100} }})
	dep.Add(engine.ProcSpec{Name: "c", Worker: 1, New: func() engine.Process { return &consumer{cost: consumerCost, got: got} }})
	return dep
}

func newSim(t testing.TB, dep *engine.Deployment) *Sim {
	t.Helper()
	s, err := New(dep, Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A slow consumer must stall its producer: the channel never holds more
// than its credit, and the producer sends only as fast as the consumer eats.
func TestBackpressureBoundsQueue(t *testing.T) {
	var sent int64
	dep := pipeline(100*engine.Microsecond, &sent, nil) // consumer: 10k records/s
	s := newSim(t, dep)
	capBytes := s.Capacity()
	c := engine.DefaultCost()
	wire := c.WireBytes(100)
	maxQueued := 0
	for step := engine.Time(0); step < 2*engine.Second; step += 10 * engine.Millisecond {
		s.Run(step)
		_, bytes := s.Queued(0, 1)
		maxQueued = max(maxQueued, bytes)
	}
	// The producer may overshoot the credit by one poll batch (8 records).
	if limit := capBytes + 8*wire; maxQueued > limit {
		t.Fatalf("channel held %d bytes, credit is %d", maxQueued, capBytes)
	}
	// Producer unthrottled would send 8 records per 10µs = 800k/s; with
	// backpressure it must track the consumer's 10k/s.
	if rate := float64(sent) / 2; rate > 12000 || rate < 8000 {
		t.Fatalf("producer sent %.0f records/s, want about the consumer's 10000/s", rate)
	}
}

func TestFIFOAndDeterminism(t *testing.T) {
	run := func() ([]int64, uint64) {
		var sent int64
		var got []int64
		s := newSim(t, pipeline(engine.Microsecond, &sent, &got))
		s.Run(100 * engine.Millisecond)
		return got, s.Events()
	}
	a, ea := run()
	b, eb := run()
	if len(a) == 0 || len(a) != len(b) || ea != eb {
		t.Fatalf("runs differ: %d/%d records, %d/%d events", len(a), len(b), ea, eb)
	}
	for i := range a {
		if a[i] != int64(i) || b[i] != a[i] {
			t.Fatalf("record %d: got %d and %d, want %d in FIFO order", i, a[i], b[i], i)
		}
	}
}

// A crash loses the consumer's queued input and the channel contents; data
// sent while it is down waits (using credit) and arrives after the restart.
func TestCrashLosesInFlightAndRestarts(t *testing.T) {
	var sent int64
	var got []int64
	s := newSim(t, pipeline(engine.Microsecond, &sent, &got))
	if err := s.Crash(1, 50*engine.Millisecond, 100*engine.Millisecond); err != nil {
		t.Fatal(err)
	}
	s.Run(300 * engine.Millisecond)
	gaps := 0
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			gaps++
		}
	}
	if gaps != 1 {
		t.Fatalf("want exactly one gap (records lost in the crash), got %d", gaps)
	}
}

// overtaker sends data, then an overtaking control message.
type overtaker struct{ to engine.ProcID }

func (o *overtaker) Init(ctx engine.Ctx) {
	for i := int64(0); i < 5; i++ {
		ctx.Send(o.to, engine.Msg{Val: i, Size: 10})
	}
	ctx.SendOvertaking(o.to, engine.Msg{Kind: 7})
	ctx.Send(o.to, engine.Msg{Val: 99, Size: 10})
}
func (o *overtaker) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (o *overtaker) Timer(engine.Ctx, int64)                      {}

type recorder struct {
	seen      *[]int64
	overtaken *[]int64
}

func (r *recorder) Init(engine.Ctx)         {}
func (r *recorder) Timer(engine.Ctx, int64) {}
func (r *recorder) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	if m.Kind == 7 {
		*r.seen = append(*r.seen, -1)
		for _, o := range ctx.Overtaken() {
			*r.overtaken = append(*r.overtaken, o.Val)
		}
		return
	}
	*r.seen = append(*r.seen, m.Val)
}

func TestSendOvertaking(t *testing.T) {
	var seen, over []int64
	dep := &engine.Deployment{Coordinator: -1}
	dep.Add(engine.ProcSpec{Name: "a", Worker: 0, New: func() engine.Process { return &overtaker{to: 1} }})
	dep.Add(engine.ProcSpec{Name: "b", Worker: 1, New: func() engine.Process { return &recorder{seen: &seen, overtaken: &over} }})
	s := newSim(t, dep)
	s.Run(engine.Second)
	want := []int64{-1, 0, 1, 2, 3, 4, 99}
	if len(seen) != len(want) {
		t.Fatalf("seen %v, want %v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("seen %v, want %v", seen, want)
		}
	}
	if len(over) != 5 || over[0] != 0 || over[4] != 4 {
		t.Fatalf("overtaken %v, want [0 1 2 3 4]", over)
	}
}

// writer stores a value and records when the completion arrives.
type writer struct{ doneAt *engine.Time }

func (w *writer) Init(ctx engine.Ctx) { ctx.Store().Put("k", 42, 1_000_000, 9) }
func (w *writer) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	if from == engine.Runtime && m.Kind == engine.KindStoreDone && m.Val == 9 {
		*w.doneAt = ctx.Now()
	}
}
func (w *writer) Timer(engine.Ctx, int64) {}

func TestStoreWriteCostAndCrash(t *testing.T) {
	var done engine.Time = -1
	dep := &engine.Deployment{Coordinator: -1}
	dep.Add(engine.ProcSpec{Name: "w", Worker: 0, New: func() engine.Process { return &writer{doneAt: &done} }})
	s := newSim(t, dep)
	s.Run(engine.Second)
	c := engine.DefaultCost()
	want := c.StoreLatency + engine.Time(1e6/c.StoreWriteBytes*1e9)
	if done != want {
		t.Fatalf("write completed at %v, want %v (latency + size/bandwidth)", done, want)
	}
	if v, ok := s.StoreValue("k"); !ok || v.(int) != 42 {
		t.Fatalf("store holds %v %v", v, ok)
	}

	// A crash during the write loses it.
	done = -1
	s = newSim(t, dep)
	if err := s.Crash(0, engine.Millisecond, 3600*engine.Second); err != nil {
		t.Fatal(err)
	}
	s.Run(engine.Second)
	if _, ok := s.StoreValue("k"); ok || done != -1 {
		t.Fatalf("a write interrupted by a crash must be lost")
	}
}

// A throttle limits the link to its rate during its window and not a moment
// longer: buffers admitted near the end of the window finish at full speed.
func TestThrottleWindow(t *testing.T) {
	var sent int64
	var got []int64
	s := newSim(t, pipeline(engine.Microsecond, &sent, &got))
	s.Throttle(0, 200*engine.Millisecond, 1000, func(from, to engine.ProcID) bool { return from == 0 && to == 1 })
	s.Run(200 * engine.Millisecond)
	during := len(got)
	if during > 260 { // 1000/s for 200ms, plus at most one buffer's worth of slack
		t.Fatalf("%d records crossed a 1000/s link in 200ms", during)
	}
	s.Run(300 * engine.Millisecond)
	if after := len(got) - during; after < 10*during {
		t.Fatalf("only %d records in the 100ms after the window (vs %d during it): the throttle outlived its window", after, during)
	}
}

// bigOvertaker sends an overtaking message larger than the data that
// follows it: the data must still arrive after it.
type bigOvertaker struct{ to engine.ProcID }

func (o *bigOvertaker) Init(ctx engine.Ctx) {
	ctx.SendOvertaking(o.to, engine.Msg{Kind: 7, Size: 200})
	ctx.Send(o.to, engine.Msg{Val: 1, Size: 10, Ctrl: true})
}
func (o *bigOvertaker) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (o *bigOvertaker) Timer(engine.Ctx, int64)                      {}

func TestNothingOvertakesAnOvertakingMessage(t *testing.T) {
	var seen, over []int64
	dep := &engine.Deployment{Coordinator: -1}
	dep.Add(engine.ProcSpec{Name: "a", Worker: 0, New: func() engine.Process { return &bigOvertaker{to: 1} }})
	dep.Add(engine.ProcSpec{Name: "b", Worker: 1, New: func() engine.Process { return &recorder{seen: &seen, overtaken: &over} }})
	c := engine.DefaultCost()
	c.NetBandwidth = 1e5 // 200 bytes take 2ms on the wire, 10 bytes 0.1ms
	s, err := New(dep, Config{Seed: 1, Cost: c, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(engine.Second)
	if len(seen) != 2 || seen[0] != -1 || seen[1] != 1 {
		t.Fatalf("seen %v, want the overtaking message first", seen)
	}
}

// busy keeps its CPU for 50ms in Init, so messages wait for it.
type busy struct{ recorder }

func (b *busy) Init(ctx engine.Ctx) { ctx.Work(50 * engine.Millisecond) }

// An overtaking message delivered but not yet handled dies with its channel
// when the sender crashes, like the data it jumped.
func TestResetDropsDeliveredOvertakingMessage(t *testing.T) {
	var seen, over []int64
	dep := &engine.Deployment{Coordinator: -1}
	dep.Add(engine.ProcSpec{Name: "a", Worker: 0, New: func() engine.Process { return &overtaker{to: 1} }})
	dep.Add(engine.ProcSpec{Name: "b", Worker: 1, New: func() engine.Process {
		return &busy{recorder{seen: &seen, overtaken: &over}}
	}})
	s := newSim(t, dep)
	if err := s.Crash(0, 5*engine.Millisecond, 10*engine.Second); err != nil {
		t.Fatal(err)
	}
	s.Run(engine.Second)
	for _, v := range seen {
		if v == -1 {
			t.Fatalf("the receiver handled an overtaking message from a crashed sender's reset channel: %v", seen)
		}
	}
}
