package storm

import (
	"fmt"

	"ftbench/engine"
	"ftbench/systems"
)

// Message kinds. Data tuples carry the plan's record in the typed Msg
// fields and their message id ([]Edge) in Body; the ack stream (init, ack,
// fail to the acker; done and failed to the spout) carries the root id in
// Key and the XOR value in Val, so it allocates nothing.
const (
	KindTuple  uint16 = iota + 1
	KindInit          // spout -> acker: a tree was created; Val = XOR of the root tuples' ids
	KindAck           // bolt -> acker: Val = input id XOR the ids of the children anchored on it
	KindFail          // bolt -> acker: fail the tree now
	KindDone          // acker -> spout: the tree's checksum reached 0
	KindFailed        // acker -> spout: the tree was failed explicitly
)

// Wire sizes of the ack stream, as Storm serialises its system streams:
// [root, value] longs for init and ack (init adds the spout task), [root]
// for fail, and [root, time] for the acker's reply to the spout.
const (
	InitBytes   = 20
	AckBytes    = 16
	FailBytes   = 8
	ReplyBytes  = 16
	EntryBytes  = 24 // acker state per tree: root, checksum, spout task, failed flag (padded)
	idMapHeader = 4  // a tuple's MessageId: entry count, then 16 bytes per (root, id)
)

// Edge is a tuple's id in one tree: Storm's MessageId maps every root the
// tuple is anchored to onto the tuple's 64-bit id in that tree.
type Edge struct{ Root, ID uint64 }

// IDBytes is the wire size of a message id with n entries; it is added to
// the tuple's payload so anchoring costs its bytes like in Storm.
func IDBytes(n int) int32 { return idMapHeader + 16*int32(n) }

// NonZero draws a 64-bit id; 0 is reserved for "complete".
func NonZero(ctx engine.Ctx) uint64 {
	for {
		if v := ctx.Rand().Uint64(); v != 0 {
			return v
		}
	}
}

// Input is a tuple being processed by a bolt, with the XOR of the ids of
// the children anchored on it so far (Storm's TupleImpl.ackVal).
type Input struct {
	Edges  []Edge
	AckVal uint64
	done   bool
}

// Collector is a bolt's OutputCollector: anchored emit, ack and fail. It
// sends the ack stream itself, so the runtime charges every ack message.
type Collector struct {
	Ackers []engine.ProcID
}

func (c *Collector) ackerOf(root uint64) engine.ProcID {
	return c.Ackers[root%uint64(len(c.Ackers))]
}

// anchor gives a new child tuple its message id: for every anchor a fresh
// random Edge id is XORed into the anchor's AckVal and into the child's id
// for each of the anchor's roots, so the child belongs to the union of the
// anchors' trees (multi-anchoring). This is Storm's BoltOutputCollectorImpl:
// the child's "create" rides on its anchor's ack instead of a message of
// its own.
func (c *Collector) Anchor(ctx engine.Ctx, anchors ...*Input) []Edge {
	var out []Edge
	for _, a := range anchors {
		if len(a.Edges) == 0 {
			continue
		}
		e := NonZero(ctx)
		a.AckVal ^= e
	next:
		for _, in := range a.Edges {
			for i := range out {
				if out[i].Root == in.Root {
					out[i].ID ^= e
					continue next
				}
			}
			out = append(out, Edge{Root: in.Root, ID: e})
		}
	}
	return out
}

// ack tells every tree of t that t is processed and its children exist:
// one message per root carrying id XOR AckVal.
func (c *Collector) Ack(ctx engine.Ctx, t *Input) {
	c.settle(t, "ack")
	for _, e := range t.Edges {
		SendAckStream(ctx, c.ackerOf(e.Root), engine.Msg{Kind: KindAck, Ctrl: true, Key: e.Root, Val: int64(e.ID ^ t.AckVal), Size: AckBytes})
	}
}

// fail fails every tree of t at once (Storm's Collector.fail).
func (c *Collector) Fail(ctx engine.Ctx, t *Input) {
	c.settle(t, "fail")
	for _, e := range t.Edges {
		SendAckStream(ctx, c.ackerOf(e.Root), engine.Msg{Kind: KindFail, Ctrl: true, Key: e.Root, Size: FailBytes})
	}
}

// settle enforces "ack or fail every tuple exactly once": a second ack
// would XOR the id out twice and leave the tree pending forever (or, with
// probability 2^-64, complete it early), so it is a bug, not a case.
func (c *Collector) settle(t *Input, what string) {
	if t.done {
		panic(fmt.Sprintf("stormack: %s of a tuple that was already acked or failed", what))
	}
	t.done = true
}

// SendAckStream sends one ack-stream message and accounts for it. The ack
// stream is control traffic: Storm's system streams bypass backpressure, so
// max-spout-pending, not channel credit, is what bounds it.
func SendAckStream(ctx engine.Ctx, to engine.ProcID, m engine.Msg) {
	// Batched in network buffers like tuples (Storm's transfer queues
	// batch the ack stream too), not flushed one message at a time.
	m.Ctrl, m.Lazy = true, true
	ctx.Send(to, m)
	ctx.Count(CAckMessages, 1)
	ctx.Count(CAckBytes, int64(ctx.Cost().WireBytes(m.Size)))
}

// Counter names of the ack stream and the ackers (counters in run.json).
const (
	CAckMessages  = "ack_messages"
	CAckBytes     = "ack_bytes"
	CAckerUpdates = "acker_updates"
	CAckerExpired = "acker_entries_expired"
)

// WithID attaches a message id to a data tuple and adds its bytes.
func WithID(m engine.Msg, ids []Edge) engine.Msg {
	m.Kind = KindTuple
	m.Body = ids
	m.Size += IDBytes(len(ids))
	return m
}

// Payload strips the message id from a received data tuple, so stage
// functions and their costs see the plan's record as it was emitted.
func Payload(m engine.Msg) (engine.Msg, []Edge) {
	ids, _ := m.Body.([]Edge)
	m.Body = nil
	m.Kind = 0
	m.Size -= IDBytes(len(ids))
	return m, ids
}

// DescribeMsg names a data tuple and the ack stream for a run's trace,
// each with its tree (the root id, cut to the trace's 53 bits); ok is
// false for other kinds. The ack stream is per tuple (an init per tree, an
// ack per tuple, a done per tree), so a trace samples it like data when
// sampleAcks is set (stormack), except explicit fails; Trident's trees
// are its batches' coordination tuples, few enough to record every one.
func DescribeMsg(m engine.Msg, sampleAcks bool) (info engine.MsgInfo, ok bool) {
	info.ID = systems.TraceID(m.Key)
	switch m.Kind {
	case KindTuple:
		return engine.MsgInfo{Kind: "tuple"}, true
	case KindInit:
		info.Kind, info.Sampled = "init", sampleAcks
	case KindAck:
		info.Kind, info.Sampled = "ack", sampleAcks
	case KindDone:
		info.Kind, info.Sampled = "tree_done", sampleAcks
	case KindFail:
		info.Kind = "fail"
	case KindFailed:
		info.Kind = "tree_failed"
	default:
		return info, false
	}
	return info, true
}
