package sim

import (
	"testing"

	"ftbench/engine"
)

// sendOnce sends one control message (flushed at once) at Init.
type sendOnce struct{ to engine.ProcID }

func (o *sendOnce) Init(ctx engine.Ctx) {
	ctx.Send(o.to, engine.Msg{Kind: 1, Ctrl: true, Size: 100})
}
func (*sendOnce) Handle(engine.Ctx, engine.ProcID, engine.Msg) {}
func (*sendOnce) Timer(engine.Ctx, int64)                      {}

// arrival records when its first message arrived.
type arrival struct{ at *engine.Time }

func (a *arrival) Init(engine.Ctx) {}
func (a *arrival) Handle(ctx engine.Ctx, _ engine.ProcID, _ engine.Msg) {
	if *a.at < 0 {
		*a.at = ctx.Now()
	}
}
func (*arrival) Timer(engine.Ctx, int64) {}

// With Deployment.LocalTransfer (stormack: Storm's executor transfer), a
// message to a process on the same worker is handed over unserialized and
// arrives at once; to another worker, and without the flag, it pays
// serialization, wire time and latency.
func TestLocalTransferSkipsSerializationAndNetwork(t *testing.T) {
	cost := engine.DefaultCost()
	wire := engine.Time(float64(cost.WireBytes(100)) / cost.NetBandwidth * 1e9)
	remote := cost.SendCost(100) + wire + cost.NetLatency
	for _, tc := range []struct {
		name       string
		local      bool
		fromWorker int
		want       engine.Time
	}{
		{"same worker, local transfer", true, 1, cost.SendCPU},
		{"other worker, local transfer", true, 0, remote},
		{"same worker, no local transfer (Flink)", false, 1, remote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := engine.Time(-1)
			dep := &engine.Deployment{Coordinator: -1, LocalTransfer: tc.local}
			recv := dep.Add(engine.ProcSpec{Name: "r", Op: "r", Worker: 1, New: func() engine.Process { return &arrival{at: &at} }})
			dep.Add(engine.ProcSpec{Name: "s", Op: "s", Worker: tc.fromWorker, New: func() engine.Process { return &sendOnce{to: recv} }})
			s, err := New(dep, Config{Seed: 1, Cost: cost, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			s.Run(engine.Second)
			if at != tc.want {
				t.Errorf("arrived at %v, want %v", at, tc.want)
			}
		})
	}
}
