package stormack

import (
	"fmt"

	"ftbench/engine"
)

// Message kinds. Data tuples carry the plan's record in the typed Msg
// fields and their message id ([]edge) in Body; the ack stream (init, ack,
// fail to the acker; done and failed to the spout) carries the root id in
// Key and the XOR value in Val, so it allocates nothing.
const (
	kindTuple  uint16 = iota + 1
	kindInit          // spout -> acker: a tree was created; Val = XOR of the root tuples' ids
	kindAck           // bolt -> acker: Val = input id XOR the ids of the children anchored on it
	kindFail          // bolt -> acker: fail the tree now
	kindDone          // acker -> spout: the tree's checksum reached 0
	kindFailed        // acker -> spout: the tree was failed explicitly
)

// Wire sizes of the ack stream, as Storm serialises its system streams:
// [root, value] longs for init and ack (init adds the spout task), [root]
// for fail, and [root, time] for the acker's reply to the spout.
const (
	initBytes   = 20
	ackBytes    = 16
	failBytes   = 8
	replyBytes  = 16
	entryBytes  = 24 // acker state per tree: root, checksum, spout task, failed flag (padded)
	idMapHeader = 4  // a tuple's MessageId: entry count, then 16 bytes per (root, id)
)

// edge is a tuple's id in one tree: Storm's MessageId maps every root the
// tuple is anchored to onto the tuple's 64-bit id in that tree.
type edge struct{ root, id uint64 }

// idBytes is the wire size of a message id with n entries; it is added to
// the tuple's payload so anchoring costs its bytes like in Storm.
func idBytes(n int) int32 { return idMapHeader + 16*int32(n) }

// nonZero draws a 64-bit id; 0 is reserved for "complete".
func nonZero(ctx engine.Ctx) uint64 {
	for {
		if v := ctx.Rand().Uint64(); v != 0 {
			return v
		}
	}
}

// input is a tuple being processed by a bolt, with the XOR of the ids of
// the children anchored on it so far (Storm's TupleImpl.ackVal).
type input struct {
	edges  []edge
	ackVal uint64
	done   bool
}

// collector is a bolt's OutputCollector: anchored emit, ack and fail. It
// sends the ack stream itself, so the runtime charges every ack message.
type collector struct {
	ackers []engine.ProcID
}

func (c *collector) ackerOf(root uint64) engine.ProcID {
	return c.ackers[root%uint64(len(c.ackers))]
}

// anchor gives a new child tuple its message id: for every anchor a fresh
// random edge id is XORed into the anchor's ackVal and into the child's id
// for each of the anchor's roots, so the child belongs to the union of the
// anchors' trees (multi-anchoring). This is Storm's BoltOutputCollectorImpl:
// the child's "create" rides on its anchor's ack instead of a message of
// its own.
func (c *collector) anchor(ctx engine.Ctx, anchors ...*input) []edge {
	var out []edge
	for _, a := range anchors {
		if len(a.edges) == 0 {
			continue
		}
		e := nonZero(ctx)
		a.ackVal ^= e
	next:
		for _, in := range a.edges {
			for i := range out {
				if out[i].root == in.root {
					out[i].id ^= e
					continue next
				}
			}
			out = append(out, edge{root: in.root, id: e})
		}
	}
	return out
}

// ack tells every tree of t that t is processed and its children exist:
// one message per root carrying id XOR ackVal.
func (c *collector) ack(ctx engine.Ctx, t *input) {
	c.settle(t, "ack")
	for _, e := range t.edges {
		sendAckStream(ctx, c.ackerOf(e.root), engine.Msg{Kind: kindAck, Ctrl: true, Key: e.root, Val: int64(e.id ^ t.ackVal), Size: ackBytes})
	}
}

// fail fails every tree of t at once (Storm's collector.fail).
func (c *collector) fail(ctx engine.Ctx, t *input) {
	c.settle(t, "fail")
	for _, e := range t.edges {
		sendAckStream(ctx, c.ackerOf(e.root), engine.Msg{Kind: kindFail, Ctrl: true, Key: e.root, Size: failBytes})
	}
}

// settle enforces "ack or fail every tuple exactly once": a second ack
// would XOR the id out twice and leave the tree pending forever (or, with
// probability 2^-64, complete it early), so it is a bug, not a case.
func (c *collector) settle(t *input, what string) {
	if t.done {
		panic(fmt.Sprintf("stormack: %s of a tuple that was already acked or failed", what))
	}
	t.done = true
}

// sendAckStream sends one ack-stream message and accounts for it. The ack
// stream is control traffic: Storm's system streams bypass backpressure, so
// max-spout-pending, not channel credit, is what bounds it.
func sendAckStream(ctx engine.Ctx, to engine.ProcID, m engine.Msg) {
	// Batched in network buffers like tuples (Storm's transfer queues
	// batch the ack stream too), not flushed one message at a time.
	m.Ctrl, m.Lazy = true, true
	ctx.Send(to, m)
	ctx.Count(cAckMessages, 1)
	ctx.Count(cAckBytes, int64(ctx.Cost().WireBytes(m.Size)))
}

// Counter names (counters in run.json; Summarize derives system_metrics).
const (
	cAckMessages     = "ack_messages"
	cAckBytes        = "ack_bytes"
	cTreesCompleted  = "trees_completed"
	cFailedTimeout   = "trees_failed_timeout"
	cFailedExplicit  = "trees_failed_explicit"
	cReplayed        = "tuples_replayed"
	cSpurious        = "spurious_replays"
	cUnknownReplies  = "replies_for_unknown_roots"
	cAckerUpdates    = "acker_updates"
	cAckerExpired    = "acker_entries_expired"
	cTuplesEmitted   = "tuples_emitted"
	cSpoutRestarts   = "spout_restarts"
	cCompleteLatency = "tree_complete_latency_ns_sum"
	cOffsetCommits   = "offset_commits" // acking off: one synchronous commit per polled batch
)

// withID attaches a message id to a data tuple and adds its bytes.
func withID(m engine.Msg, ids []edge) engine.Msg {
	m.Kind = kindTuple
	m.Body = ids
	m.Size += idBytes(len(ids))
	return m
}

// payload strips the message id from a received data tuple, so stage
// functions and their costs see the plan's record as it was emitted.
func payload(m engine.Msg) (engine.Msg, []edge) {
	ids, _ := m.Body.([]edge)
	m.Body = nil
	m.Kind = 0
	m.Size -= idBytes(len(ids))
	return m, ids
}
