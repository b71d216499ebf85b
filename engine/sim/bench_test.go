package sim

import (
	"testing"

	"ftbench/engine"
)

// ticker re-arms a timer forever and does nothing else: the bare event loop.
type ticker struct{ period engine.Time }

func (t *ticker) Init(ctx engine.Ctx)                          { ctx.After(t.period, 0) }
func (t *ticker) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (t *ticker) Timer(ctx engine.Ctx, id int64)               { ctx.After(t.period, id) }

// BenchmarkEventLoop measures simulated events per wall second with 64
// processes keeping the heap populated.
func BenchmarkEventLoop(b *testing.B) {
	dep := &engine.Deployment{Coordinator: -1}
	for i := 0; i < 64; i++ {
		period := engine.Time(1000 + 7*i)
		dep.Add(engine.ProcSpec{Name: "t", Worker: 0, New: func() engine.Process { return &ticker{period: period} }})
	}
	s, err := New(dep, Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	target := uint64(b.N)
	for until := engine.Millisecond; s.Events() < target; until += engine.Millisecond {
		s.Run(until)
	}
	b.ReportMetric(float64(s.Events())/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRecords measures simulated records per wall second through a
// two-process pipeline (network buffers, credit, one CPU each).
func BenchmarkRecords(b *testing.B) {
	var sent int64
	s, err := New(pipeline(200*engine.Nanosecond, &sent, nil), Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for until := engine.Millisecond; sent < int64(b.N); until += engine.Millisecond {
		s.Run(until)
	}
	b.ReportMetric(float64(sent)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(s.Events())/b.Elapsed().Seconds(), "events/s")
}
