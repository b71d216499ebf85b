package snapshot

import (
	"fmt"
	"slices"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/stream"
	"ftbench/workloads"
)

// p2pConfig is what every bank-p2p process shares (read-only).
type p2pConfig struct {
	variant string
	n       int
	w       workloads.PeerToPeer
	top     *workloads.Topology // the channels: transfers, markers and done messages use only these
	log     *workloads.Log
	times   []engine.Time // snapshot j starts at times[j-1]
	spread  engine.Time   // naive: process records snapshot j within [t_j, t_j+spread)
}

// initiator is the process that starts snapshot j and collects it. Ids run
// 1, 2, 3, ... and rotate over the processes, so j encodes the textbook's
// (initiator, sequence) pair: j-1 = seq*N + initiator.
func (c *p2pConfig) initiator(j int64) int { return int((j - 1) % int64(c.n)) }

func compileP2P(job systems.Job, w workloads.PeerToPeer) (*engine.Deployment, error) {
	n := w.Processes()
	if job.Log.Parts != n {
		return nil, fmt.Errorf("bank-p2p has %d processes but the log has %d partitions", n, job.Log.Parts)
	}
	times, spread, err := schedule(job.Opts, job.Log.End)
	if err != nil {
		return nil, err
	}
	cfg := &p2pConfig{variant: job.Variant, n: n, w: w, top: w.Topology(), log: job.Log, times: times, spread: spread}
	dep := &engine.Deployment{Coordinator: -1}
	for p := 0; p < n; p++ {
		dep.Add(engine.ProcSpec{
			Name: fmt.Sprintf("%s/%d", workloads.ProcessOp, p), Op: workloads.ProcessOp, CostOp: workloads.ProcessOp, Index: p, Worker: p % job.Workers,
			New: func() engine.Process { return newProcess(cfg, p) },
		})
	}
	return dep, nil
}

// Timer ids of a process.
const (
	timerPoll     = 0
	timerSnapBase = 1 // + snapshot number
	// timerRewriteBase + snapshot number: write a collected snapshot whose
	// write the store failed again.
	timerRewriteBase = 1 << 40
)

// Transfers carry their per-channel number (for the audit and FIFO
// detection) and, for Lai-Yang, the sender's colour: the last snapshot it
// recorded. Both fit in Key; no allocation per message.
const seqBits = 40

func packKey(seq, colour int64) uint64 { return uint64(seq) | uint64(colour)<<seqBits }

func unpackKey(k uint64) (seq, colour int64) {
	return int64(k & (1<<seqBits - 1)), int64(k >> seqBits)
}

const transferBytes = 24

// process is one bank-p2p process: it owns account self, sends the
// transfers of source partition self and takes part in snapshots.
type process struct {
	cfg    *p2pConfig
	self   int
	ctx    engine.Ctx
	reader stream.SourceReader

	outflow, inflow int64
	// sent[q] is the number of transfers sent to q, recv[q] what arrived
	// from q. They are ground truth for the audit and FIFO detection; the
	// algorithms do not use them (except Lai-Yang's counts, which are sent).
	sent []int64
	recv []check.Received

	cuts    cuts      // cl: snapshots in progress here
	ly      []*lyCut  // lai-yang: snapshots in progress here
	colour  int64     // lai-yang: the last snapshot this process recorded
	gathers []*gather // snapshots this process initiated and collects

	// mattern (mattern.go)
	vc       []int64  // this process's vector clock
	mt       []*mtCut // snapshots announced here and not finished
	frozen   int64    // the snapshot this initiator freezes for (0: none)
	acks     int      // acknowledgements of the frozen snapshot's announcement
	held     []held   // transfers and forces that arrived while frozen
	pollHeld bool     // the source poll came due while frozen
	mtQueued []int64  // snapshots due here while frozen

	// unwritten holds the collected snapshots whose store write failed
	// (store-down) until a rewrite is durable, by snapshot number.
	unwritten map[int64]*GlobalSnapshot
}

// held is a message a frozen Mattern initiator handles when it thaws.
type held struct {
	from engine.ProcID
	m    engine.Msg
}

func newProcess(cfg *p2pConfig, self int) *process {
	return &process{
		cfg: cfg, self: self,
		reader: stream.SourceReader{W: cfg.w, Log: cfg.log, Part: int32(self)},
		sent:   make([]int64, cfg.n),
		recv:   make([]check.Received, cfg.n),
		vc:     make([]int64, cfg.n),
	}
}

func (p *process) Init(ctx engine.Ctx) {
	ctx.After(0, timerPoll)
	for j := int64(1); j <= int64(len(p.cfg.times)); j++ {
		at := p.cfg.times[j-1]
		switch {
		case p.cfg.variant == Naive:
			// Every process records at its own random time (12.2.3).
			at += engine.Time(ctx.Rand().Int64N(int64(max(p.cfg.spread, 1))))
		case p.cfg.initiator(j) != p.self:
			continue
		}
		ctx.After(at-ctx.Now(), timerSnapBase+j)
	}
}

func (p *process) Timer(ctx engine.Ctx, id int64) {
	p.ctx = ctx
	if id == timerPoll {
		if p.frozen != 0 {
			p.pollHeld = true // a frozen Mattern initiator sends nothing
			return
		}
		again, done := p.reader.Poll(ctx, p.send)
		if !done {
			ctx.After(again, timerPoll)
		}
		return
	}
	if id >= timerRewriteBase {
		p.rewrite(ctx, id-timerRewriteBase)
		return
	}
	j := id - timerSnapBase
	switch p.cfg.variant {
	case CL:
		p.clMarker(ctx, -1, j, 0)
	case LaiYang:
		p.lyRecord(ctx, j)
	case Mattern:
		p.mtStart(ctx, j)
	case Naive:
		r := p.local(ctx, j)
		r.DoneAt = ctx.Now()
		p.report(ctx, j, r)
	}
}

// send is the application sending one transfer of its log.
func (p *process) send(m engine.Msg) {
	t := p.cfg.w.Transfer(m.ID.Part, m.ID.Off)
	p.transfer(p.ctx, t.Payee, t.Amount, m.ID.Off, m.Born)
}

// transfer debits amount at once (the debit effect is visible when the
// money leaves), then sends it to payee as this process's off-th transfer.
func (p *process) transfer(ctx engine.Ctx, payee int, amount, off int64, born engine.Time) {
	if p.cfg.variant == Mattern {
		p.mtTick(ctx, nil) // the send event: may record first
	}
	c := ctx.Cost()
	ctx.Work(c.StateCPU + c.SinkCPU)
	p.outflow += amount
	ctx.Commit(engine.Commit{
		ID:  engine.EffectID{Part: int32(p.self), Sub: workloads.SubDebit, Off: off},
		Key: workloads.DebitKey(p.self), Value: p.outflow, Born: born,
	})
	seq := p.sent[payee]
	p.sent[payee]++
	m := engine.Msg{
		Kind: kindTransfer, Key: packKey(seq, p.colour), Val: amount,
		ID: engine.EffectID{Part: int32(p.self), Sub: workloads.SubCredit, Off: off}, Born: born, Size: transferBytes,
	}
	switch p.cfg.variant {
	case LaiYang:
		m.Size += colourBytes
		ctx.Count(cntPiggyback, colourBytes)
	case Mattern:
		m.Body = slices.Clone(p.vc)
		m.Size += p.cfg.vectorBytes()
		ctx.Count(cntPiggyback, int64(p.cfg.vectorBytes()))
	}
	ctx.Send(engine.ProcID(payee), m)
	ctx.Count(cntData, 1)
}

// colourBytes is Lai-Yang's colour on a transfer: the number of the last
// snapshot its sender recorded. One bit would do for one snapshot at a
// time; repeated and concurrent snapshots need the number.
const colourBytes = 8

func (p *process) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	p.ctx = ctx
	q := int(from)
	if p.frozen != 0 && (m.Kind == kindTransfer || m.Kind == kindForce) {
		// A frozen Mattern initiator takes part in no event until it thaws.
		p.held = append(p.held, held{from, m})
		return
	}
	switch m.Kind {
	case kindTransfer:
		p.receive(ctx, q, m)
	case kindMarker:
		p.fifoCheck(ctx, q, m.Val)
		p.clMarker(ctx, q, int64(m.Key), m.Val)
	case kindDone:
		p.fifoCheck(ctx, q, m.Val)
		if p.cfg.variant == Mattern {
			p.mtDone(ctx, q, int64(m.Key), m.Val)
		} else {
			p.lyDone(ctx, q, int64(m.Key), m.Val)
		}
	case kindAnnounce:
		p.mtAnnounce(ctx, q, int64(m.Key), m.Body.([]int64))
	case kindAck:
		p.mtAck(ctx, int64(m.Key))
	case kindForce:
		p.mtTick(ctx, m.Body.([]int64))
	case kindReport:
		p.collect(ctx, int64(m.Key), m.Body.(*Report))
	case engine.KindStoreDone:
		// A collected snapshot is durable; nothing waits for it.
		delete(p.unwritten, m.Val)
	case engine.KindStoreFailed:
		// The store failed the snapshot's write (store-down): the
		// recorder writes it again until it is durable, as a snapshot's
		// initiator must for the snapshot to be usable.
		ctx.Record(engine.Event{Kind: "snapshot_write_failed", ID: m.Val})
		ctx.After(snapshotRetryDelay, timerRewriteBase+m.Val)
	}
}

// snapshotRetryDelay is how long a collector waits before writing a
// failed snapshot again.
const snapshotRetryDelay = 100 * engine.Millisecond

// rewrite writes collected snapshot id again after a failed write.
func (p *process) rewrite(ctx engine.Ctx, id int64) {
	gs, ok := p.unwritten[id]
	if !ok {
		return
	}
	ctx.Store().Put(snapshotKey(id), gs, gs.bytes(), id)
}

// receive is a transfer arriving from q: classify it for the snapshots in
// progress, then credit it.
func (p *process) receive(ctx engine.Ctx, q int, m engine.Msg) {
	seq, colour := unpackKey(m.Key)
	if p.cfg.variant == LaiYang && colour > p.colour {
		// A red message at a white process: record before it is applied.
		p.lyRecord(ctx, colour)
	}
	if p.cfg.variant == Mattern {
		p.mtTick(ctx, m.Body.([]int64)) // the receive event: may record first
	}
	if !p.recv[q].Add(seq) {
		ctx.Count(cntFIFO, 1)
	}
	switch p.cfg.variant {
	case CL:
		for _, c := range p.cuts {
			c.record(q, m)
		}
	case LaiYang:
		p.lyWhite(ctx, q, colour, m)
	case Mattern:
		p.mtReceive(ctx, q, m.Body.([]int64), m)
	}
	c := ctx.Cost()
	ctx.Work(c.StateCPU + c.SinkCPU)
	p.inflow += m.Val
	ctx.Commit(engine.Commit{ID: m.ID, Key: workloads.CreditKey(p.self), Value: p.inflow, Born: m.Born})
}

// fifoCheck compares a control message that was sent after sent data
// messages with what has arrived: on a FIFO channel exactly messages
// 0..sent-1 precede it.
func (p *process) fifoCheck(ctx engine.Ctx, q int, sent int64) {
	if a, b := p.recv[q].Crossing(sent); a+b > 0 {
		ctx.Count(cntFIFO, 1)
	}
}

// local records this process's state for snapshot id (lecture 12.3.1
// record_local_state): its balance, and for the audit how far it had sent
// and received on every channel.
func (p *process) local(ctx engine.Ctx, id int64) *Report {
	ctx.Work(ctx.Cost().StateCPU)
	r := &Report{
		Proc: p.self, RecordedAt: ctx.Now(),
		Balance:    workloads.InitialBalance + p.inflow - p.outflow,
		Offset:     p.reader.Next,
		StateBytes: 16, // balance and log offset
		Sent:       append([]int64(nil), p.sent...),
		Recv:       make([]check.Received, p.cfg.n),
	}
	if p.cfg.variant == CL {
		r.Crossings = make([]Crossing, p.cfg.n)
	}
	for q := range p.recv {
		r.Recv[q] = p.recv[q].Clone()
	}
	return r
}

// outputs are the processes this one has a channel to.
func (p *process) outputs() []engine.ProcID {
	out := make([]engine.ProcID, 0, len(p.cfg.top.Out[p.self]))
	for _, q := range p.cfg.top.Out[p.self] {
		out = append(out, engine.ProcID(q))
	}
	return out
}

// newCut opens a cut whose recording channels are this process's inputs
// but first (the channel whose marker triggered the recording; -1 for
// none): every other slot (itself, processes without a channel to it)
// starts closed.
func (p *process) newCut(ctx engine.Ctx, id int64, first int) *cut {
	c := newCut(id, ctx.Now(), p.cfg.n, first, p.self)
	for q := 0; q < p.cfg.n; q++ {
		if q != p.self && !p.cfg.top.Has(q, p.self) {
			c.close(q)
		}
	}
	return c
}

// clRecord is the first marker of snapshot id (from q; -1 when initiating):
// record the state, mark q's channel empty, record every other input, and
// send a marker on every output before any other message (12.3.1 step 2a).
func (p *process) clRecord(ctx engine.Ctx, id int64, q int) *cut {
	c := p.newCut(ctx, id, q)
	c.local = p.local(ctx, id)
	p.cuts = append(p.cuts, c)
	sendMarkers(ctx, p.outputs(), uint64(id), func(o engine.ProcID) int64 { return p.sent[o] })
	return c
}

// clMarker is a marker of snapshot id arriving from q after q had sent
// sent transfers on the channel (q = -1: the initiator's own start).
func (p *process) clMarker(ctx engine.Ctx, q int, id, sent int64) {
	if p.cfg.variant != CL {
		return
	}
	c := p.cuts.find(id)
	if c == nil {
		c = p.clRecord(ctx, id, q)
	} else {
		c.close(q) // 12.3.1 step 2b: q's channel state is complete
	}
	if q >= 0 {
		// For the audit, not the algorithm: which transfers crossed this
		// snapshot's marker on q's channel, from the channel's ground truth.
		overtook, overtaken := p.recv[q].Crossing(sent)
		c.local.Crossings[q] = Crossing{Overtook: overtook, Overtaken: overtaken}
	}
	if c.open == 0 {
		p.cuts.remove(c)
		p.finish(ctx, c)
	}
}
