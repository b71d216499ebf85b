package sim

import (
	"testing"

	"ftbench/engine"
)

// clockSender sends the current millisecond to its peer every millisecond.
type clockSender struct{ to engine.ProcID }

func (k *clockSender) Init(ctx engine.Ctx)                          { ctx.After(engine.Millisecond, 0) }
func (k *clockSender) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (k *clockSender) Timer(ctx engine.Ctx, _ int64) {
	ctx.Send(k.to, engine.Msg{Size: 8, Val: int64(ctx.Now() / engine.Millisecond)})
	ctx.After(engine.Millisecond, 0)
}

// A crash resets the crashed process's connections: what was queued for it
// and what is sent to it while it is down is lost, never delivered to its
// next incarnation; what is sent after it is back arrives.
func TestCrashResetsChannels(t *testing.T) {
	var got []int64
	dep := &engine.Deployment{Coordinator: -1}
	dep.Add(engine.ProcSpec{Name: "tick", Worker: 0, New: func() engine.Process { return &clockSender{to: 1} }})
	dep.Add(engine.ProcSpec{Name: "sink", Worker: 1, New: func() engine.Process { return &consumer{got: &got} }})
	s, err := New(dep, Config{Seed: 1, Cost: engine.DefaultCost(), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Down during [100ms, 300ms).
	if err := s.Crash(1, 100*engine.Millisecond, 200*engine.Millisecond); err != nil {
		t.Fatal(err)
	}
	s.Run(400 * engine.Millisecond)
	var before, after int
	for _, ms := range got {
		switch {
		case ms >= 100 && ms < 300:
			t.Fatalf("the sink's next incarnation received the record sent at %dms, while it was down", ms)
		case ms < 100:
			before++
		default:
			after++
		}
	}
	// The clockSender's records sent just before the crash were still buffered
	// (buffer timeout 10ms) and die with the connection.
	if before < 80 || before > 99 || after < 90 {
		t.Fatalf("received %d records sent before the crash and %d after the restart", before, after)
	}
}
