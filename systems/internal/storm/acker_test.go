package storm

import (
	"testing"

	"ftbench/engine"
)

const (
	spoutID engine.ProcID = 1
	boltID  engine.ProcID = 2
	ackerID engine.ProcID = 9
)

// deliver hands every ack-stream message in out to the acker, as if the
// network delivered them, and returns the acker's replies.
func deliver(t *testing.T, a *acker, actx *fakeCtx, from engine.ProcID, out []sent) []sent {
	t.Helper()
	for _, s := range out {
		if s.to != ackerID {
			t.Fatalf("ack-stream message to %d, want the acker %d", s.to, ackerID)
		}
		if !s.m.Ctrl {
			t.Fatalf("ack-stream message kind %d is not a control message", s.m.Kind)
		}
		a.Handle(actx, from, s.m)
	}
	return actx.take()
}

func TestAckerCompletesTreeAndChargesWork(t *testing.T) {
	a, actx := NewAcker(engine.Second), newFakeCtx(ackerID)
	a.Init(actx)
	root := uint64(77)
	a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Ctrl: true, Key: root, Val: 5, Size: InitBytes})
	if got := actx.take(); len(got) != 0 {
		t.Fatalf("pending tree got replies %v", got)
	}
	a.Handle(actx, boltID, engine.Msg{Kind: KindAck, Ctrl: true, Key: root, Val: 5, Size: AckBytes})
	got := actx.take()
	if len(got) != 1 || got[0].to != spoutID || got[0].m.Kind != KindDone || got[0].m.Key != root || !got[0].m.Ctrl {
		t.Fatalf("want one done reply to the spout, got %+v", got)
	}
	c := actx.cost
	want := 2*c.StateCPU + c.SendCost(ReplyBytes)
	if actx.work != want {
		t.Fatalf("acker charged %v, want two state updates and one send = %v", actx.work, want)
	}
	if actx.counters[CAckMessages] != 1 || actx.counters[CAckBytes] != int64(c.WireBytes(ReplyBytes)) {
		t.Fatalf("counters %v", actx.counters)
	}
}

func TestAckerAckBeforeInit(t *testing.T) {
	a, actx := NewAcker(engine.Second), newFakeCtx(ackerID)
	a.Handle(actx, boltID, engine.Msg{Kind: KindAck, Key: 1, Val: 9})
	a.Handle(actx, boltID, engine.Msg{Kind: KindAck, Key: 1, Val: 9}) // XOR back to 0, but no init yet
	if got := actx.take(); len(got) != 0 {
		t.Fatalf("a tree must not complete before its init tells the acker the spout: %v", got)
	}
	a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Key: 1, Val: 0})
	if got := actx.take(); len(got) != 1 || got[0].m.Kind != KindDone || got[0].to != spoutID {
		t.Fatalf("want done after the init, got %+v", got)
	}
}

func TestAckerFail(t *testing.T) {
	for _, failFirst := range []bool{false, true} {
		a, actx := NewAcker(engine.Second), newFakeCtx(ackerID)
		if failFirst {
			a.Handle(actx, boltID, engine.Msg{Kind: KindFail, Key: 4})
			if got := actx.take(); len(got) != 0 {
				t.Fatalf("fail before init cannot reach a spout yet: %v", got)
			}
		}
		a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Key: 4, Val: 3})
		if !failFirst {
			a.Handle(actx, boltID, engine.Msg{Kind: KindFail, Key: 4})
		}
		got := actx.take()
		if len(got) != 1 || got[0].m.Kind != KindFailed || got[0].to != spoutID {
			t.Fatalf("failFirst=%v: want one failed reply, got %+v", failFirst, got)
		}
		if a.l.n != 0 {
			t.Fatalf("a failed tree must be forgotten")
		}
	}
}

// An entry nobody touches is dropped after the third rotation (Storm's
// RotatingMap), so a tree that can never complete does not leak memory.
func TestAckerExpiresStaleEntries(t *testing.T) {
	a, actx := NewAcker(engine.Second), newFakeCtx(ackerID)
	a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Key: 8, Val: 1})
	for i := 0; i < AckerBuckets-1; i++ {
		a.Timer(actx, tickRotate)
		if a.l.n != 1 {
			t.Fatalf("entry dropped after %d rotations", i+1)
		}
	}
	a.Handle(actx, boltID, engine.Msg{Kind: KindAck, Key: 8, Val: 2}) // touched: starts over
	for i := 0; i < AckerBuckets-1; i++ {
		a.Timer(actx, tickRotate)
	}
	if a.l.n != 1 {
		t.Fatalf("a touched entry must survive %d more rotations", AckerBuckets-1)
	}
	a.Timer(actx, tickRotate)
	if a.l.n != 0 || actx.counters[CAckerExpired] != 1 {
		t.Fatalf("entries=%d expired=%d, want the entry gone", a.l.n, actx.counters[CAckerExpired])
	}
}

// TestAnchoringThroughCollector runs a tree through the real Collector:
// spout tuple -> bolt emits two children -> sink acks both. The checksum
// reaches 0 exactly when the last tuple is acked.
func TestAnchoringThroughCollector(t *testing.T) {
	a, actx := NewAcker(engine.Second), newFakeCtx(ackerID)
	col := &Collector{Ackers: []engine.ProcID{ackerID}}
	bctx := newFakeCtx(boltID)
	root, id := uint64(1234), uint64(0xABCDEF)
	a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Key: root, Val: int64(id)})

	in := &Input{Edges: []Edge{{root, id}}}
	c1, c2 := col.Anchor(bctx, in), col.Anchor(bctx, in)
	col.Ack(bctx, in)
	if got := deliver(t, a, actx, boltID, bctx.take()); len(got) != 0 {
		t.Fatalf("tree completed while its children are unacked: %+v", got)
	}
	sink1, sink2 := &Input{Edges: c1}, &Input{Edges: c2}
	col.Ack(bctx, sink1)
	if got := deliver(t, a, actx, boltID, bctx.take()); len(got) != 0 {
		t.Fatalf("tree completed with one child unacked: %+v", got)
	}
	col.Ack(bctx, sink2)
	got := deliver(t, a, actx, boltID, bctx.take())
	if len(got) != 1 || got[0].m.Kind != KindDone || got[0].m.Key != root {
		t.Fatalf("want the tree complete after the last ack, got %+v", got)
	}
}

// TestMultiAnchoring: a tuple anchored on inputs of two trees belongs to
// both; neither tree completes until it is acked, then both do.
func TestMultiAnchoring(t *testing.T) {
	a, actx := NewAcker(engine.Second), newFakeCtx(ackerID)
	col := &Collector{Ackers: []engine.ProcID{ackerID}}
	bctx := newFakeCtx(boltID)
	rootA, rootB := uint64(10), uint64(20)
	a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Key: rootA, Val: 111})
	a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Key: rootB, Val: 222})
	inA := &Input{Edges: []Edge{{rootA, 111}}}
	inB := &Input{Edges: []Edge{{rootB, 222}}}
	joined := col.Anchor(bctx, inA, inB) // a join's output
	if len(joined) != 2 {
		t.Fatalf("joined tuple has ids in %d trees, want 2", len(joined))
	}
	col.Ack(bctx, inA)
	col.Ack(bctx, inB)
	if got := deliver(t, a, actx, boltID, bctx.take()); len(got) != 0 {
		t.Fatalf("trees completed before the joined tuple was acked: %+v", got)
	}
	col.Ack(bctx, &Input{Edges: joined})
	got := deliver(t, a, actx, boltID, bctx.take())
	if len(got) != 2 || got[0].m.Key != rootA || got[1].m.Key != rootB {
		t.Fatalf("want both trees complete, got %+v", got)
	}
	// Failing a multi-anchored tuple fails every tree it belongs to.
	a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Key: rootA, Val: 5})
	a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Key: rootB, Val: 6})
	col.Fail(bctx, &Input{Edges: []Edge{{rootA, 5}, {rootB, 6}}})
	got = deliver(t, a, actx, boltID, bctx.take())
	if len(got) != 2 || got[0].m.Kind != KindFailed || got[1].m.Kind != KindFailed {
		t.Fatalf("want both trees failed, got %+v", got)
	}
}

func TestAckTwicePanics(t *testing.T) {
	col := &Collector{Ackers: []engine.ProcID{ackerID}}
	ctx := newFakeCtx(boltID)
	in := &Input{Edges: []Edge{{1, 2}}}
	col.Ack(ctx, in)
	defer func() {
		if recover() == nil {
			t.Fatalf("a second ack must panic")
		}
	}()
	col.Fail(ctx, in)
}

// An acker that restarts has lost its checksums: late acks for the old
// trees create entries without an init that never complete and expire.
func TestRestartedAckerForgetsTrees(t *testing.T) {
	a, actx := NewAcker(engine.Second), newFakeCtx(ackerID)
	a.Handle(actx, spoutID, engine.Msg{Kind: KindInit, Key: 3, Val: 7})
	a = NewAcker(engine.Second) // crash and restart: a fresh incarnation
	a.Handle(actx, boltID, engine.Msg{Kind: KindAck, Key: 3, Val: 7})
	if got := actx.take(); len(got) != 0 {
		t.Fatalf("a restarted acker completed a tree it never saw the init of: %+v", got)
	}
	for i := 0; i < AckerBuckets; i++ {
		a.Timer(actx, tickRotate)
	}
	if a.l.n != 0 {
		t.Fatalf("orphan entry not expired")
	}
}
