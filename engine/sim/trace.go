package sim

import (
	"slices"
	"strconv"

	"ftbench/engine"
	"ftbench/trace"
)

// The trace recorder (bench run --trace): inside a window of simulated
// time it records every protocol message with its send and receive times,
// samples the per-record traffic (data, and per-record control messages
// such as Storm's acks) and counts it per channel and bucket, and records
// every event, the runtime's deliveries (failure notices, storage
// completions) and its process events (crash, restart). The format is
// package trace's. Tracing is off unless Config.Trace is set: the hot
// paths then pay one nil check.
//
// What is sampled is decided per channel, message kind and bucket: the
// first bucket of a kind on a channel takes its first Sample messages; a
// later one takes every stride-th from a seed-derived offset, the stride
// being the previous bucket's count over Sample, so the samples spread over
// the bucket. A sampled control message of a followed unit (followEvery)
// is recorded whatever the sample, so whole ack trees show. Everything
// depends on the seed and the run alone, so a seed gives the same trace
// byte for byte.

// TraceConfig turns the recorder on.
type TraceConfig struct {
	// From and To bound the window: messages sent and events recorded at
	// T in [From, To) are traced (a message's receipt may come later).
	From, To engine.Time
	// Bucket is the length of a count bucket; Sample the messages of a
	// sampled kind recorded per channel per bucket.
	Bucket engine.Time
	Sample int
	// MaxRecords bounds the trace: at that many records the recorder
	// stops and the trace is truncated.
	MaxRecords int
}

type tracer struct {
	cfg      TraceConfig
	to       engine.Time // cfg.To, or cfg.From once truncated
	seed     uint64
	describe func(engine.Msg) engine.MsgInfo
	recs     []trace.Record
	// truncated: MaxRecords was reached.
	truncated bool
	// classes caches how each (kind, ctrl) is traced.
	classes map[uint32]kindClass
	chans   []*channel // the channels with a chanTrace, in creation order
	// killKind names the process event kill records: "crash" while a
	// worker or the master crashes, "stop" otherwise.
	killKind string
}

// kindClass is how messages of one kind are traced.
type kindClass struct {
	name    string
	sampled bool
}

// chanTrace is a channel's part of the trace.
type chanTrace struct {
	kinds   []kindCount
	pending []pendingMsg // recorded messages not received yet
}

// kindCount is one kind of message on one channel: how it is traced and,
// for a sampled kind, its count and sample in the current bucket.
type kindCount struct {
	kind    uint16
	ctrl    bool
	sampled bool
	name    string
	bucket  int64 // the bucket being counted; -1 before the first
	n       int64 // messages in it so far
	taken   int   // sampled in it so far
	next    int64 // the index in the bucket of the next one to sample
	stride  int64
}

// pendingMsg is a recorded message on its way: its channel position (seq;
// prio for an overtaking message, which shares the seq of the next in-band
// one) and its record.
type pendingMsg struct {
	seq  uint64
	prio bool
	rec  int
}

func newTracer(cfg TraceConfig, seed uint64, describe func(engine.Msg) engine.MsgInfo) *tracer {
	if cfg.Bucket <= 0 {
		cfg.Bucket = cfg.To - cfg.From
	}
	return &tracer{
		cfg: cfg, to: cfg.To, seed: engine.ChildSeed(seed, "trace"), describe: describe,
		classes: map[uint32]kindClass{}, killKind: "stop",
	}
}

// in reports whether t lies in the window (and the trace still has room).
func (r *tracer) in(t engine.Time) bool { return t >= r.cfg.From && t < r.to }

// add appends a record, or truncates the trace when it is full.
func (r *tracer) add(rec trace.Record) bool {
	if len(r.recs) >= r.cfg.MaxRecords {
		r.truncated = true
		r.to = r.cfg.From // nothing more is in the window
		return false
	}
	r.recs = append(r.recs, rec)
	return true
}

func (r *tracer) info(m *engine.Msg) engine.MsgInfo {
	var info engine.MsgInfo
	if r.describe != nil {
		info = r.describe(*m)
	}
	if info.Kind == "" {
		if info.Kind = engine.RuntimeKindName(m.Kind); info.Kind == "" {
			info.Kind = "kind-" + strconv.Itoa(int(m.Kind))
		}
	}
	return info
}

func (r *tracer) class(m *engine.Msg) kindClass {
	key := uint32(m.Kind) << 1
	if m.Ctrl {
		key |= 1
	}
	c, ok := r.classes[key]
	if !ok {
		info := r.info(m)
		c = kindClass{name: info.Kind, sampled: !info.Always && (info.Sampled || !m.Ctrl)}
		r.classes[key] = c
	}
	return c
}

func (r *tracer) chanOf(ch *channel) *chanTrace {
	if ch.tr == nil {
		ch.tr = &chanTrace{}
		r.chans = append(r.chans, ch)
	}
	return ch.tr
}

// send sees m sent by p to q at p's clock, on ch at position seq (ch is
// nil, or its receiver down, when the message is lost at once).
func (r *tracer) send(p, q *proc, ch *channel, m *engine.Msg, seq uint64, prio bool) {
	t := p.clock
	if !r.in(t) {
		return
	}
	if ch == nil {
		if r.class(m).sampled {
			return
		}
	} else if k := r.kindOn(ch, m); k.sampled && !r.sample(ch, k, t) && !r.followed(m) {
		return
	}
	info := r.info(m)
	if !r.add(trace.Record{Type: trace.TypeMsg, T: int64(t), From: p.spec.Name, To: q.spec.Name,
		Ctrl: m.Ctrl, Kind: info.Kind, ID: info.ID, Bytes: int64(m.Size)}) {
		return
	}
	if ch != nil && ch.to.up {
		ct := ch.tr
		ct.pending = append(ct.pending, pendingMsg{seq: seq, prio: prio, rec: len(r.recs) - 1})
	}
}

// followEvery: one unit in followEvery (a tree, by the id its sampled
// control messages carry) is followed: every one of its messages is
// recorded, beside the per-bucket sample. Storm's ack stream is sampled
// message by message, which leaves one message of most trees; a followed
// tree shows whole, from its init through every ack to its done.
const followEvery = 256

// followed reports whether m is a sampled control message of a followed
// unit (chosen from the seed and the id alone, so the same on every run).
func (r *tracer) followed(m *engine.Msg) bool {
	if !m.Ctrl {
		return false
	}
	id := r.info(m).ID
	return id != 0 && engine.Mix64(r.seed^0x666f6c6c6f77^uint64(id))%followEvery == 0
}

// kindOn is the state of m's kind on ch.
func (r *tracer) kindOn(ch *channel, m *engine.Msg) *kindCount {
	ct := r.chanOf(ch)
	for i := range ct.kinds {
		if k := &ct.kinds[i]; k.kind == m.Kind && k.ctrl == m.Ctrl {
			return k
		}
	}
	c := r.class(m)
	ct.kinds = append(ct.kinds, kindCount{kind: m.Kind, ctrl: m.Ctrl, name: c.name, sampled: c.sampled, bucket: -1})
	return &ct.kinds[len(ct.kinds)-1]
}

// sample counts a message of sampled kind k sent on ch at t and says
// whether to record it.
func (r *tracer) sample(ch *channel, k *kindCount, t engine.Time) bool {
	b := int64((t - r.cfg.From) / r.cfg.Bucket)
	if b != k.bucket {
		var prev int64
		if b == k.bucket+1 {
			prev = k.n
		}
		r.flushCount(ch, k)
		k.bucket, k.n, k.taken = b, 0, 0
		k.stride = max(1, prev/int64(max(r.cfg.Sample, 1)))
		k.next = int64(engine.Mix64(r.seed^uint64(ch.idx)<<32^uint64(b)<<8^uint64(k.kind)) % uint64(k.stride))
	}
	i := k.n
	k.n++
	if k.taken >= r.cfg.Sample || i != k.next {
		return false
	}
	k.taken++
	k.next += k.stride
	return true
}

// flushCount records k's count for its bucket, if any.
func (r *tracer) flushCount(ch *channel, k *kindCount) {
	if k.n == 0 || k.bucket < 0 {
		return
	}
	r.add(trace.Record{Type: trace.TypeCount, T: int64(r.cfg.From + engine.Time(k.bucket)*r.cfg.Bucket),
		From: ch.from.spec.Name, To: ch.to.spec.Name, Ctrl: k.ctrl, Kind: k.name, Data: k.n})
	k.n = 0
}

// received sees the head of ch, at position seq, handled at t.
func (r *tracer) received(ct *chanTrace, seq uint64, prio bool, t engine.Time) {
	for i, pm := range ct.pending {
		if pm.seq == seq && pm.prio == prio {
			// Within a CPU slice a sender's clock runs ahead of the
			// event loop (by up to a quantum), and a buffer flushed on
			// its timeout carries what the slice sent after the timeout
			// fired, so a receiver may handle a message at a clock before
			// its sender's: the trace has it received when it was sent.
			r.recs[pm.rec].Recv = max(int64(t), r.recs[pm.rec].T)
			ct.pending = slices.Delete(ct.pending, i, i+1)
			return
		}
	}
}

// reset forgets what ch had on its way: it is lost (Recv stays 0).
func (r *tracer) reset(ch *channel) {
	if ch.tr != nil {
		ch.tr.pending = ch.tr.pending[:0]
	}
}

// event records e if it lies in the window.
func (r *tracer) event(e engine.Event) {
	if !r.in(e.Time) {
		return
	}
	r.add(trace.Record{Type: trace.TypeEvent, T: int64(e.Time), Proc: e.Proc, Kind: e.Kind, ID: e.ID, Value: e.Value, Bytes: e.Bytes, Note: e.Note})
}

// procEvent records a runtime event of process p (crash, restart).
func (r *tracer) procEvent(t engine.Time, p *proc, kind string, id int64) {
	if !r.in(t) {
		return
	}
	r.add(trace.Record{Type: trace.TypeEvent, T: int64(t), Proc: p.spec.Name, Kind: kind, ID: id})
}

// runtimeMsg records a runtime delivery (failure notice, storage
// completion) handled by p at t as an event of p.
func (r *tracer) runtimeMsg(p *proc, m *engine.Msg, t engine.Time) {
	if !r.in(t) {
		return
	}
	note, _ := m.Body.(string)
	r.add(trace.Record{Type: trace.TypeEvent, T: int64(t), Proc: p.spec.Name, Kind: engine.RuntimeKindName(m.Kind), ID: m.Val, Note: note})
}

// finish flushes the counts and returns the records in time order (ties in
// the order they were recorded), one count per channel, kind and bucket.
func (r *tracer) finish() []trace.Record {
	for _, ch := range r.chans {
		for i := range ch.tr.kinds {
			r.flushCount(ch, &ch.tr.kinds[i])
		}
	}
	// A channel's sender may go back in time across incarnations (a new
	// one starts where the runtime is, behind the old one's clock), so a
	// bucket can be counted twice: merge.
	type countKey struct {
		t        int64
		from, to string
		kind     string
		ctrl     bool
	}
	first := map[countKey]int{}
	out := r.recs[:0]
	for _, rec := range r.recs {
		if rec.Type == trace.TypeCount {
			k := countKey{rec.T, rec.From, rec.To, rec.Kind, rec.Ctrl}
			if i, ok := first[k]; ok {
				out[i].Data += rec.Data
				continue
			}
			first[k] = len(out)
		}
		out = append(out, rec)
	}
	r.recs = out
	slices.SortStableFunc(r.recs, func(a, b trace.Record) int {
		switch {
		case a.T < b.T:
			return -1
		case a.T > b.T:
			return 1
		}
		return 0
	})
	return r.recs
}

// killing sets the process event a kill records (trace only).
func (s *Sim) killing(kind string) {
	if s.tr != nil {
		s.tr.killKind = kind
	}
}

// Trace ends the trace and returns its records in time order, and whether
// it was truncated; nil without Config.Trace.
func (s *Sim) Trace() (recs []trace.Record, truncated bool) {
	if s.tr == nil {
		return nil, false
	}
	return s.tr.finish(), s.tr.truncated
}
