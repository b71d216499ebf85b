package sim

import (
	"math"
	"testing"

	"ftbench/engine"
)

// pacedSender sends n records of 100 bytes to every process in to per
// millisecond, skipping the ticks it is backpressured through (a source
// polling a log would catch up; this one does not, so what it sends says
// nothing about how long it was blocked).
type pacedSender struct {
	to []engine.ProcID
	n  int
}

func (t *pacedSender) Init(ctx engine.Ctx)                          { ctx.After(0, 0) }
func (t *pacedSender) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (t *pacedSender) Timer(ctx engine.Ctx, _ int64) {
	for _, to := range t.to {
		for i := 0; i < t.n; i++ {
			ctx.Send(to, engine.Msg{Size: 100})
		}
	}
	ctx.After(engine.Millisecond, 0)
}

// TestBackpressuredTime checks the backpressure counters against cases
// whose answer is known: an edge throttled far below its sender's rate
// blocks the sender for the throttle window less the moment it takes to
// use up the channel's credit; a consumer well above its producer's rate
// blocks it never; only the input counts; a crash ends the span and the
// restarted sender fills the channel again; the mean and the max tell two
// instances apart.
func TestBackpressuredTime(t *testing.T) {
	const end = engine.Second
	ms := engine.Millisecond
	cost := engine.DefaultCost()
	// The sender uses up the credit at 100 records/ms less what the
	// throttled link lets through, 1000/s.
	fill := engine.Time(float64(cost.ChannelBuffers*cost.BufferBytes) / float64(cost.WireBytes(100)) / 99 * float64(ms))
	share := func(d engine.Time) int64 { return int64(math.Round(float64(d) / float64(end) * 1000)) }
	for _, tc := range []struct {
		name      string
		senders   int
		perTick   int
		throttle  [2]engine.Time // window on sender 0's edge; none if empty
		crashAt   engine.Time    // sender 0's worker, down for 100 ms; 0: none
		mean, max int64          // ms per second of input
	}{
		{"below capacity", 1, 10, [2]engine.Time{}, 0, 0, 0},
		{"throttled window", 1, 100, [2]engine.Time{200 * ms, 600 * ms}, 0, share(400*ms - fill), share(400*ms - fill)},
		{"window past the input's end", 1, 100, [2]engine.Time{800 * ms, 1400 * ms}, 0, share(200*ms - fill), share(200*ms - fill)},
		{"crash inside the window", 1, 100, [2]engine.Time{200 * ms, 600 * ms}, 400 * ms,
			share(200*ms - fill + 100*ms - fill), share(200*ms - fill + 100*ms - fill)},
		{"one of two instances throttled", 2, 100, [2]engine.Time{200 * ms, 600 * ms}, 0,
			share((400*ms - fill) / 2), share(400*ms - fill)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dep := &engine.Deployment{Coordinator: -1}
			cons := dep.Add(engine.ProcSpec{Name: "c/0", Op: "c", Worker: 2, New: func() engine.Process { return &consumer{cost: engine.Microsecond} }})
			for i := 0; i < tc.senders; i++ {
				dep.Add(engine.ProcSpec{Name: "p", Op: "p", Index: i, Worker: i,
					New: func() engine.Process { return &pacedSender{to: []engine.ProcID{cons}, n: tc.perTick} }})
			}
			obs := &counts{}
			s, err := New(dep, Config{Seed: 1, Cost: cost, Workers: 3, SampleEvery: 100 * ms, Observer: obs, InputEnd: end})
			if err != nil {
				t.Fatal(err)
			}
			if w := tc.throttle; w[1] > 0 {
				s.Throttle(w[0], w[1], 1000, func(from, to engine.ProcID) bool { return from == 1 && to == cons })
			}
			if tc.crashAt > 0 {
				if err := s.Crash(0, tc.crashAt, 100*ms); err != nil {
					t.Fatal(err)
				}
			}
			s.Run(1500 * ms)
			// The slack: the link's last buffer of the window, and the
			// credit a slice's sends overshoot by.
			const slack = 5
			if got := obs.n[engine.BackpressuredCounter+"p"]; math.Abs(float64(got-tc.mean)) > slack {
				t.Errorf("mean %d ms/s, want %d±%d", got, tc.mean, slack)
			}
			if got := obs.n[engine.BackpressuredMaxCounter+"p"]; math.Abs(float64(got-tc.max)) > slack {
				t.Errorf("max %d ms/s, want %d±%d", got, tc.max, slack)
			}
			// A consumer has no data outputs; counted once, at the input's end.
			if got, ok := obs.n[engine.BackpressuredCounter+"c"]; got != 0 || !ok {
				t.Errorf("consumer: %d ms/s (reported: %v), want 0", got, ok)
			}
		})
	}
}

// Without an input end nothing is measured or reported, and a run that
// ends before it reports nothing either.
func TestBackpressuredTimeUnmeasured(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inputEnd engine.Time
		until    engine.Time
	}{
		{"no input end", 0, engine.Second},
		{"run stopped before the input's end", engine.Second, 500 * engine.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent int64
			obs := &counts{}
			s, err := New(pipeline(100*engine.Microsecond, &sent, nil), Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 2,
				SampleEvery: 100 * engine.Millisecond, Observer: obs, InputEnd: tc.inputEnd})
			if err != nil {
				t.Fatal(err)
			}
			s.Run(tc.until)
			if len(obs.n) != 0 {
				t.Errorf("counters %v, want none", obs.n)
			}
		})
	}
}
