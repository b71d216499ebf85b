package storm

import (
	"ftbench/engine"
)

// Storm's acker keeps its entries in a RotatingMap rotated by a tick every
// message timeout (2 or 3 buckets depending on the version; 3 here), so an
// entry nobody touches is dropped two to three timeouts after its last
// update: the spout has timed the tree out by then, and a late ack could
// only recreate an entry that never completes.
const AckerBuckets = 3

// entry is the acker's whole state for one tree: the XOR checksum of the
// ids of the tuples created but not yet acked (invariant (I) of the lecture's
// algorithm 21.3.1), the spout task that owns the root (known once the init
// arrives) and whether some bolt failed the tree.
type entry struct {
	val    uint64
	spout  engine.ProcID
	inited bool
	failed bool
}

// ledger is the acker's rotating map of entries keyed by root id. Lookups
// never iterate, so its behaviour does not depend on map order.
type ledger struct {
	buckets [AckerBuckets]map[uint64]entry
	n       int
}

func newLedger() *ledger {
	l := &ledger{}
	for i := range l.buckets {
		l.buckets[i] = map[uint64]entry{}
	}
	return l
}

// take removes and returns root's entry (zero if none).
func (l *ledger) take(root uint64) entry {
	for _, b := range l.buckets {
		if e, ok := b[root]; ok {
			delete(b, root)
			l.n--
			return e
		}
	}
	return entry{}
}

// put stores e in the newest bucket (a touched entry starts its expiry over).
func (l *ledger) put(root uint64, e entry) {
	l.buckets[0][root] = e
	l.n++
}

// rotate drops the oldest bucket and returns how many entries expired.
func (l *ledger) rotate() int {
	last := l.buckets[AckerBuckets-1]
	expired := len(last)
	copy(l.buckets[1:], l.buckets[:AckerBuckets-1])
	l.buckets[0] = map[uint64]entry{}
	l.n -= expired
	return expired
}

// outcome is what an acker update decided about a tree.
type outcome uint8

const (
	pending outcome = iota
	completed
	failed
)

// update applies one ack-stream message to root's entry, exactly as Storm's
// Acker.execute: init and ack XOR their value into the checksum (so arrival
// order does not matter), fail marks the tree; once the init has told the
// acker which spout owns the tree, a zero checksum completes it and a fail
// fails it, and either way the entry is forgotten.
func (l *ledger) update(kind uint16, root, val uint64, from engine.ProcID) (entry, outcome) {
	e := l.take(root)
	switch kind {
	case KindInit:
		e.val ^= val
		e.spout = from
		e.inited = true
	case KindAck:
		e.val ^= val
	case KindFail:
		e.failed = true
	}
	if e.inited {
		if e.val == 0 || mutantEarlyAck { // the mutant: complete before the XOR is zero
			return e, completed
		}
		if e.failed {
			return e, failed
		}
	}
	l.put(root, e)
	return e, pending
}

// acker is one acker task. Its state is volatile: a crash forgets every
// checksum it held, so those trees can only time out at their spouts and be
// replayed (the lecture's "acker crash => spout tuple treated as failed").
type acker struct {
	timeout engine.Time
	l       *ledger
	peak    int // highest entry count recorded as an event so far
}

const tickRotate = 1

func NewAcker(timeout engine.Time) *acker { return &acker{timeout: timeout, l: newLedger()} }

func (a *acker) Init(ctx engine.Ctx) { ctx.After(a.timeout, tickRotate) }

func (a *acker) Timer(ctx engine.Ctx, _ int64) {
	if n := a.l.rotate(); n > 0 {
		ctx.Count(CAckerExpired, int64(n))
	}
	ctx.After(a.timeout, tickRotate)
}

func (a *acker) Handle(ctx engine.Ctx, from engine.ProcID, m engine.Msg) {
	if m.Kind != KindInit && m.Kind != KindAck && m.Kind != KindFail {
		return
	}
	// One keyed read-modify-write of the checksum map per message: the same
	// work as a keyed operator's state update, so it costs StateCPU.
	ctx.Work(ctx.Cost().StateCPU)
	ctx.Count(CAckerUpdates, 1)
	e, out := a.l.update(m.Kind, m.Key, uint64(m.Val), from)
	switch out {
	case completed:
		SendAckStream(ctx, e.spout, engine.Msg{Kind: KindDone, Key: m.Key, Size: ReplyBytes})
	case failed:
		SendAckStream(ctx, e.spout, engine.Msg{Kind: KindFailed, Key: m.Key, Size: ReplyBytes})
	default:
		a.notePeak(ctx)
	}
}

// notePeak records the acker's state size when it grows past its last
// recorded peak by 1/16 (at least 32 entries), so the peak is known within
// about 6% from a few dozen events instead of one event per update.
func (a *acker) notePeak(ctx engine.Ctx) {
	n := a.l.n
	if n < a.peak+max(32, a.peak/16) {
		return
	}
	a.peak = n
	ctx.Record(engine.Event{Kind: EvAckerPeak, Value: int64(n), Bytes: int64(n) * EntryBytes})
}

// EvAckerPeak: an acker's entry count passed its last recorded peak by
// 1/16 (Value: entries, Bytes: their state).
const EvAckerPeak = "acker_state_peak"
