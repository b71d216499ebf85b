package snapshot

import (
	"fmt"
	"slices"

	"ftbench/check"
	"ftbench/engine"
)

// Report is one process's part of a global snapshot (lecture 12.3.3,
// mechanism A): its recorded state and its recorded input channels, sent to
// the initiator once every input channel is closed. Sent, Recv and
// Crossings are the audit's ground truth about the process's cut, not part
// of the algorithm: no process reads them, and the recorded state and
// channel states (Balance, Chans) are the only part the algorithm produces.
type Report struct {
	Proc       int
	RecordedAt engine.Time // the local state was recorded
	DoneAt     engine.Time // every input channel was closed
	Balance    int64
	Offset     int64 // transfers of its log sent before the cut
	StateBytes int64
	Sent       []int64          // per peer: transfers sent before the cut
	Recv       []check.Received // per peer: transfers received before the cut
	Chans      [][]check.Recorded
	// Crossings (cl only), per peer: the transfers that crossed this
	// snapshot's marker on the channel from that peer.
	Crossings []Crossing
}

// Crossing is what crossed one snapshot's marker on one channel, measured
// by the receiver when the marker arrived (check.Received.Crossing): the
// marker carries how many transfers its sender had sent before it, and the
// receiver knows which numbers it had received. This is the one way a
// non-FIFO channel can break Chandy-Lamport: if no transfer crosses any of
// a snapshot's markers, every channel behaves as FIFO for that snapshot
// and the lecture's proof (Theorem 12.1) holds for it.
type Crossing struct {
	Overtook  int64 // sent after the marker, received before it
	Overtaken int64 // sent before the marker, received after it
}

// crossed reports whether anything crossed the marker.
func (c Crossing) crossed() bool { return c.Overtook+c.Overtaken > 0 }

func (r *Report) channelBytes() int64 {
	n := 0
	for _, ch := range r.Chans {
		n += len(ch)
	}
	return int64(n) * transferBytes
}

// GlobalSnapshot is a collected snapshot as the initiator persists it
// (12.3.2 persist_or_deliver) under snapshotKey(ID).
type GlobalSnapshot struct {
	ID          int64
	Initiator   int
	CompletedAt engine.Time
	Reports     []*Report // by process
}

func snapshotKey(id int64) string { return fmt.Sprintf("snapshot/%d", id) }

// Started is when the first process recorded its state.
func (g *GlobalSnapshot) Started() engine.Time {
	t := g.Reports[0].RecordedAt
	for _, r := range g.Reports[1:] {
		t = min(t, r.RecordedAt)
	}
	return t
}

// Check builds the checker's view of g: balances and, for every ordered
// pair, what the sender had sent, what the receiver had received and what
// was recorded.
func (g *GlobalSnapshot) Check(total int64) *check.GlobalSnapshot {
	n := len(g.Reports)
	cs := &check.GlobalSnapshot{Balances: make([]int64, n), Total: total}
	for p, r := range g.Reports {
		cs.Balances[p] = r.Balance
	}
	for to, r := range g.Reports {
		for from := 0; from < n; from++ {
			if from == to {
				continue
			}
			var rec []check.Recorded
			if r.Chans != nil {
				rec = r.Chans[from]
			}
			cs.Channels = append(cs.Channels, check.ChannelCut{
				From: from, To: to, Sent: g.Reports[from].Sent[to], Received: r.Recv[from], Recorded: rec,
			})
		}
	}
	return cs
}

// gather is a snapshot being collected by its initiator.
type gather struct {
	id      int64
	reports []*Report
	got     int
}

// finish completes this process's part of a marker or colour snapshot.
func (p *process) finish(ctx engine.Ctx, c *cut) {
	if mutantCLDropChannelState && p.cfg.variant == CL && c.id%5 == 0 {
		c.chans = make([][]engine.Msg, len(c.chans)) // the mutant's bug: channel state lost
	}
	r := c.local
	r.DoneAt = ctx.Now()
	r.Chans = make([][]check.Recorded, p.cfg.n)
	for q, ch := range c.chans {
		for _, m := range ch {
			seq, _ := unpackKey(m.Key)
			r.Chans[q] = append(r.Chans[q], check.Recorded{Seq: seq, Amount: m.Val})
		}
	}
	p.report(ctx, c.id, r)
}

// report hands a local snapshot to the snapshot's initiator.
func (p *process) report(ctx engine.Ctx, id int64, r *Report) {
	to := p.cfg.initiator(id)
	if to == p.self {
		p.collect(ctx, id, r)
		return
	}
	size := r.StateBytes + r.channelBytes()
	ctx.Send(engine.ProcID(to), engine.Msg{Kind: kindReport, Ctrl: true, Key: uint64(id), Body: r, Size: int32(min(size, 1<<30))})
	ctx.Count(cntReports, 1)
	ctx.Count(cntReportBytes, int64(ctx.Cost().WireBytes(int32(min(size, 1<<30)))))
}

// collect is the initiator receiving a local snapshot; with all N it
// assembles and persists the global snapshot.
func (p *process) collect(ctx engine.Ctx, id int64, r *Report) {
	i := slices.IndexFunc(p.gathers, func(g *gather) bool { return g.id == id })
	if i < 0 {
		p.gathers = append(p.gathers, &gather{id: id, reports: make([]*Report, p.cfg.n)})
		i = len(p.gathers) - 1
	}
	g := p.gathers[i]
	if g.reports[r.Proc] != nil {
		return // reported once per process (12.3.3 reported_i)
	}
	g.reports[r.Proc] = r
	g.got++
	if g.got < p.cfg.n {
		return
	}
	p.gathers = slices.Delete(p.gathers, i, i+1)
	gs := &GlobalSnapshot{ID: id, Initiator: p.self, CompletedAt: ctx.Now(), Reports: g.reports}
	if p.unwritten == nil {
		p.unwritten = map[int64]*GlobalSnapshot{}
	}
	p.unwritten[id] = gs
	ctx.Store().Put(snapshotKey(id), gs, gs.bytes(), id)
	ctx.Record(engine.Event{Kind: "snapshot_completed", ID: id, Value: int64(gs.CompletedAt - gs.Started()), Bytes: gs.bytes()})
}

// bytes is what the snapshot takes in the store: every process's state
// and recorded channel state.
func (gs *GlobalSnapshot) bytes() int64 {
	var n int64
	for _, r := range gs.Reports {
		n += r.StateBytes + r.channelBytes()
	}
	return n
}
