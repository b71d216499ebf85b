package snapshot

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/workloads"
)

// script is a hand-driven bank-p2p network for step-by-step protocol
// tests: processes get exactly the messages the test delivers, in the
// order it chooses (index 0 is FIFO; a larger index lets a later message
// overtake), and every step is written to a trace.
type script struct {
	t      *testing.T
	n      int
	cost   engine.CostModel
	procs  []*process
	ctxs   []*scriptCtx
	queues [][]engine.Msg // [from*n+to]
	store  map[string]any
	counts map[string]int64
	trace  strings.Builder
	now    engine.Time
	active map[[2]int64]bool // (process, snapshot) in progress at the last state line
}

func newScript(t *testing.T, variant string, n int) *script {
	t.Helper()
	return newScriptOn(t, variant, n, "full")
}

// newScriptOn is newScript on a topology (--topology spec).
func newScriptOn(t *testing.T, variant string, n int, topology string) *script {
	t.Helper()
	w, err := workloads.New("bank-p2p", 1, map[string]string{"processes": fmt.Sprint(n), "topology": topology})
	if err != nil {
		t.Fatal(err)
	}
	pw := w.(workloads.PeerToPeer)
	cfg := &p2pConfig{variant: variant, n: n, w: pw, top: pw.Topology(), log: &workloads.Log{Parts: n, Rate: 1, End: 1}}
	s := &script{t: t, n: n, cost: engine.DefaultCost(), queues: make([][]engine.Msg, n*n), store: map[string]any{}, counts: map[string]int64{}, active: map[[2]int64]bool{}}
	for p := 0; p < n; p++ {
		s.procs = append(s.procs, newProcess(cfg, p))
		s.ctxs = append(s.ctxs, &scriptCtx{s: s, self: p, rng: engine.NewRand(uint64(p))})
	}
	return s
}

func (s *script) logf(format string, args ...any) { fmt.Fprintf(&s.trace, format+"\n", args...) }

// send makes process from send amount to process to.
func (s *script) send(from, to int, amount int64) {
	s.now += engine.Millisecond
	p := s.procs[from]
	if p.frozen != 0 {
		s.t.Fatalf("P%d sends while frozen for snapshot %d: a frozen initiator sends nothing", from, p.frozen)
	}
	s.logf("P%d sends $%d to P%d (message %d on C%d%d)", from, amount, to, p.sent[to], from, to)
	p.transfer(s.ctxs[from], to, amount, p.sent[to], s.now)
}

// initiate starts snapshot j at its initiator.
func (s *script) initiate(j int64) {
	s.now += engine.Millisecond
	p := s.procs[(j-1)%int64(s.n)]
	s.logf("P%d initiates snapshot %d", p.self, j)
	p.Timer(s.ctxs[p.self], timerSnapBase+j)
	s.state()
}

// deliver hands the i-th queued message of channel from->to to its receiver.
func (s *script) deliver(from, to, i int) {
	s.t.Helper()
	q := &s.queues[from*s.n+to]
	if i >= len(*q) {
		s.t.Fatalf("deliver C%d%d[%d]: only %d queued", from, to, i, len(*q))
	}
	m := (*q)[i]
	*q = slices.Delete(*q, i, i+1)
	s.now += engine.Millisecond
	order := ""
	if i > 0 {
		order = fmt.Sprintf(" (overtaking %d earlier)", i)
	}
	s.logf("deliver C%d%d: %s%s", from, to, describe(m), order)
	s.procs[to].Handle(s.ctxs[to], engine.ProcID(from), m)
	if m.Kind != kindReport {
		s.state()
	}
}

// drain delivers everything left, FIFO, lowest channel first.
func (s *script) drain() {
	for {
		moved := false
		for c := range s.queues {
			if len(s.queues[c]) > 0 {
				s.deliver(c/s.n, c%s.n, 0)
				moved = true
			}
		}
		if !moved {
			return
		}
	}
}

func describe(m engine.Msg) string {
	switch m.Kind {
	case kindTransfer:
		seq, colour := unpackKey(m.Key)
		if vc, ok := m.Body.([]int64); ok {
			return fmt.Sprintf("$%d (message %d, clock %v)", m.Val, seq, vc)
		}
		return fmt.Sprintf("$%d (message %d, colour %d)", m.Val, seq, colour)
	case kindMarker:
		return fmt.Sprintf("marker(%d)", m.Key)
	case kindDone:
		return fmt.Sprintf("done(%d, %d white)", m.Key, m.Val)
	case kindReport:
		return fmt.Sprintf("report(%d) from P%d", m.Key, m.Body.(*Report).Proc)
	case kindAnnounce:
		return fmt.Sprintf("announce(%d, cut %v)", m.Key, m.Body)
	case kindAck:
		return fmt.Sprintf("ack(%d)", m.Key)
	case kindForce:
		return fmt.Sprintf("force(%d, clock %v)", m.Key, m.Body)
	}
	return fmt.Sprintf("kind %#x", m.Kind)
}

// state writes each process's balance and, per snapshot in progress, which
// input channels it is still recording and what they hold.
func (s *script) state() {
	for _, p := range s.procs {
		line := fmt.Sprintf("  P%d balance $%d", p.self, workloads.InitialBalance+p.inflow-p.outflow)
		if p.cfg.variant == Mattern {
			line += fmt.Sprintf(" clock %v", p.vc)
			if p.frozen != 0 {
				line += fmt.Sprintf(" (frozen for snapshot %d, holding %d)", p.frozen, len(p.held))
			}
		}
		var cs []*cut
		cs = append(cs, p.cuts...)
		for _, c := range p.ly {
			cs = append(cs, &c.cut)
		}
		for _, c := range p.mt {
			if c.recorded {
				cs = append(cs, &c.cut)
			}
		}
		now := map[[2]int64]bool{}
		for _, c := range cs {
			now[[2]int64{int64(p.self), c.id}] = true
		}
		for j := int64(1); j <= 4; j++ {
			if k := [2]int64{int64(p.self), j}; s.active[k] && !now[k] {
				line += fmt.Sprintf("; snapshot %d done, reported", j)
				delete(s.active, k)
			}
		}
		for _, c := range cs {
			s.active[[2]int64{int64(p.self), c.id}] = true
			line += fmt.Sprintf("; snapshot %d recorded $%d", c.id, c.local.Balance)
			for q := 0; q < s.n; q++ {
				if q == p.self || !p.cfg.top.Has(q, p.self) {
					continue
				}
				var amounts []string
				for _, m := range c.chans[q] {
					amounts = append(amounts, fmt.Sprint(m.Val))
				}
				st := "closed"
				if !c.closed[q] {
					st = "recording"
				}
				line += fmt.Sprintf(", C%d%d %s <%s>", q, p.self, st, strings.Join(amounts, ","))
			}
		}
		s.logf("%s", line)
	}
}

// audit reads the collected snapshot j and checks it.
func (s *script) audit(j int64) check.Audit {
	s.t.Helper()
	v, ok := s.store[snapshotKey(j)]
	if !ok {
		s.t.Fatalf("snapshot %d was not collected", j)
	}
	a := check.AuditSnapshot(v.(*GlobalSnapshot).Check(int64(s.n) * workloads.InitialBalance))
	s.logf("audit snapshot %d: consistent=%v imbalance=%+d orphans=%d late=%d missing=%d channel money $%d",
		j, a.Consistent, a.Imbalance, a.Orphans, a.LateRecorded, a.Missing, a.ChannelMoney)
	return a
}

// scriptCtx is one process's engine.Ctx in a script.
type scriptCtx struct {
	s    *script
	self int
	rng  *rand.Rand
}

func (c *scriptCtx) Self() engine.ProcID { return engine.ProcID(c.self) }
func (c *scriptCtx) Now() engine.Time    { return c.s.now }
func (c *scriptCtx) Send(to engine.ProcID, m engine.Msg) {
	i := c.self*c.s.n + int(to)
	c.s.queues[i] = append(c.s.queues[i], m)
}
func (c *scriptCtx) SendOvertaking(to engine.ProcID, m engine.Msg) { c.Send(to, m) }
func (c *scriptCtx) Overtaken() []engine.Msg                       { return nil }
func (c *scriptCtx) After(engine.Time, int64)                      {}
func (c *scriptCtx) Work(engine.Time)                              {}
func (c *scriptCtx) Rand() *rand.Rand                              { return c.rng }
func (c *scriptCtx) Store() engine.Store                           { return c }
func (c *scriptCtx) Record(e engine.Event) {
	c.s.logf("  event P%d %s id=%d", c.self, e.Kind, e.ID)
}
func (c *scriptCtx) Count(name string, d int64) { c.s.counts[name] += d }
func (c *scriptCtx) Commit(engine.Commit)       {}
func (c *scriptCtx) Pause(engine.ProcID)        {}
func (c *scriptCtx) Resume(engine.ProcID)       {}
func (c *scriptCtx) Restart(engine.ProcID)      {}
func (c *scriptCtx) Cost() *engine.CostModel    { return &c.s.cost }

// Store: writes are durable at once (the tests do not need the latency).
func (c *scriptCtx) Put(key string, val any, _ int64, _ int64) { c.s.store[key] = val }
func (c *scriptCtx) Get(key string) (any, bool)                { v, ok := c.s.store[key]; return v, ok }
func (c *scriptCtx) Delete(key string)                         { delete(c.s.store, key) }
