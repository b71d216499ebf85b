package storm

import (
	"math/rand/v2"

	"ftbench/engine"
)

// sent is one message a process under test sent.
type sent struct {
	to engine.ProcID
	m  engine.Msg
}

// fakeCtx drives one process by hand: it records what the process sends,
// the CPU it charges and its counters, and nothing happens unless the test
// delivers it (etcd/raft-style protocol tests, no runtime).
type fakeCtx struct {
	self     engine.ProcID
	now      engine.Time
	work     engine.Time
	sends    []sent
	timers   []int64
	counters map[string]int64
	events   []engine.Event
	commits  []engine.Commit
	rng      *rand.Rand
	cost     engine.CostModel
}

func newFakeCtx(self engine.ProcID) *fakeCtx {
	return &fakeCtx{self: self, counters: map[string]int64{}, rng: engine.NewRand(42), cost: engine.DefaultCost()}
}

func (c *fakeCtx) Self() engine.ProcID { return c.self }
func (c *fakeCtx) Now() engine.Time    { return c.now + c.work }
func (c *fakeCtx) Send(to engine.ProcID, m engine.Msg) {
	c.work += c.cost.SendCost(m.Size)
	c.sends = append(c.sends, sent{to, m})
}
func (c *fakeCtx) SendOvertaking(to engine.ProcID, m engine.Msg) { c.Send(to, m) }
func (c *fakeCtx) Overtaken() []engine.Msg                       { return nil }
func (c *fakeCtx) After(_ engine.Time, id int64)                 { c.timers = append(c.timers, id) }
func (c *fakeCtx) Work(d engine.Time)                            { c.work += d }
func (c *fakeCtx) Rand() *rand.Rand                              { return c.rng }
func (c *fakeCtx) Store() engine.Store                           { return nil }
func (c *fakeCtx) Record(e engine.Event)                         { c.events = append(c.events, e) }
func (c *fakeCtx) Count(name string, d int64)                    { c.counters[name] += d }
func (c *fakeCtx) Commit(cm engine.Commit)                       { c.commits = append(c.commits, cm) }
func (c *fakeCtx) Pause(engine.ProcID)                           {}
func (c *fakeCtx) Resume(engine.ProcID)                          {}
func (c *fakeCtx) Restart(engine.ProcID)                         {}
func (c *fakeCtx) Cost() *engine.CostModel                       { return &c.cost }

// take returns and clears what was sent.
func (c *fakeCtx) take() []sent {
	s := c.sends
	c.sends = nil
	return s
}
