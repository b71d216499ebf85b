package kstreams

import (
	"slices"

	"ftbench/engine"
)

// ---- the group coordinator: membership, rebalances, assignment ----

// failed: the runtime's failure detector reports a worker's processes
// silent (heartbeats stopped). Each of its threads is removed from the
// group once its session timeout has passed since the failure; a static
// member back before then keeps its tasks (KIP-345).
func (b *broker) failed(ctx engine.Ctx, f engine.Failure) {
	ctx.Record(engine.Event{Kind: evDetected, ID: int64(f.Worker), Note: "failure notice"})
	for _, id := range f.Procs {
		th := b.threadOf(id)
		if th < 0 || !b.c.member[th] || b.c.joinedAt[th] > f.FailedAt {
			// Not a member, or back and joined again already.
			continue
		}
		b.c.away[th] = true
		at := f.FailedAt + b.p.sessionTimeout - ctx.Now()
		ctx.After(max(at, 0), tRemove+int64(th)<<8)
	}
	b.maybeAssign(ctx) // a rebalance in progress no longer waits for them
}

// heartbeat: a member is alive. Its session expires sessionTimeout after
// its last heartbeat.
func (b *broker) heartbeat(ctx engine.Ctx, th int) { b.beat[th] = ctx.Now() }

// sessionCheck removes a member whose session expired: no heartbeat for
// session.timeout.ms. A member paused (a long GC) that long is removed
// although its process lives: when it wakes it is a zombie, which the
// generation fences (KIP-447).
func (b *broker) sessionCheck(ctx engine.Ctx, th int) {
	if !b.c.member[th] || b.c.away[th] || ctx.Now()-b.beat[th] < b.p.sessionTimeout {
		return
	}
	ctx.Record(engine.Event{Kind: evDetected, ID: int64(b.p.instanceOf(th) % b.p.workers), Note: "session expired"})
	b.c.away[th] = true
	b.remove(ctx, th)
}

func (b *broker) threadOf(id engine.ProcID) int {
	return slices.Index(b.p.thread, id)
}

// remove drops a member whose session expired, unless it came back.
func (b *broker) remove(ctx engine.Ctx, th int) {
	if !b.c.away[th] {
		return
	}
	b.c.member[th], b.c.away[th] = false, false
	delete(b.fetches, th)
	b.startRebalance(ctx)
}

// join: a thread (new, or restarted) joins the group.
func (b *broker) join(ctx engine.Ctx, j join) {
	th := j.thread
	b.c.joinedAt[th] = ctx.Now()
	// A JoinGroup comes from a thread that gave up what it was revoking;
	// a fresh member's (generation 0: started, or fenced and closed
	// dirty) from one holding no task at all, as its subscription's
	// owned partitions would say.
	b.forgetRevoking(th, j.ran)
	if j.gen == 0 {
		b.c.holds[th] = false
		b.forgetCopies(th)
	}
	b.heartbeat(ctx, th)
	if b.p.static && b.c.member[th] && b.c.away[th] && !b.rebal {
		// KIP-345: the same group.instance.id back within the session
		// timeout gets its assignment back; nobody else rebalances.
		b.c.away[th] = false
		ctx.Record(engine.Event{Kind: evStaticRejoin, ID: int64(th)})
		b.c.holds[th] = true
		b.send(ctx, th, kAssign, requestBytes, b.assignmentOf(th, true, nil))
		return
	}
	b.c.member[th], b.c.away[th] = true, false
	if b.rebal {
		// A restarted member joins the rebalance in progress: its
		// JoinGroup is its answer (the old incarnation got the request).
		delete(b.joining, th)
	}
	b.startRebalance(ctx)
}

// startRebalance begins a rebalance: every live member is asked to
// rejoin. Under eager rebalancing each first revokes every task (commits
// and stops); under cooperative (KIP-429) each goes on processing.
func (b *broker) startRebalance(ctx engine.Ctx) {
	if b.rebal {
		b.again = true
		b.maybeAssign(ctx) // a member it waited for may have gone
		return
	}
	b.rebal, b.rebStart = true, ctx.Now()
	clear(b.joining)
	ctx.Record(engine.Event{Kind: evRebalance, ID: b.c.gen + 1})
	for th := range b.c.member {
		if b.c.member[th] && !b.c.away[th] {
			b.joining[th] = true
			b.send(ctx, th, kRebalance, requestBytes, b.c.gen)
		}
	}
	b.maybeAssign(ctx)
}

func (b *broker) joined(ctx engine.Ctx, j join) {
	if !b.c.member[j.thread] || b.c.away[j.thread] && !b.p.static {
		// A removed member (a zombie that never heard): it must rejoin.
		b.send(ctx, j.thread, kRejoin, requestBytes, nil)
		return
	}
	if !b.rebal || j.gen != b.c.gen {
		return
	}
	for _, t := range j.ran { // eager: what it revoked running
		b.c.ran[t] = b.c.active[t] == j.thread
	}
	if !b.p.eager {
		b.releasedBy(j.thread, j.owned)
	}
	delete(b.joining, j.thread)
	b.maybeAssign(ctx)
}

func (b *broker) maybeAssign(ctx engine.Ctx) {
	if !b.rebal {
		return
	}
	for th := range b.joining { // any one still expected: the order is irrelevant
		if b.c.member[th] && !b.c.away[th] {
			return
		}
	}
	b.c.gen++
	moved, handover := b.assign(ctx)
	b.rebal = false
	ctx.Record(engine.Event{Kind: evAssigned, ID: b.c.gen, Value: moved, Note: engine.Time(ctx.Now() - b.rebStart).String()})
	ctx.Record(engine.Event{Kind: evDeploy, ID: b.c.gen})
	for th := range b.c.member {
		if b.c.member[th] && !b.c.away[th] {
			b.c.holds[th] = true
			b.send(ctx, th, kAssign, requestBytes, b.assignmentOf(th, false, handover))
		}
	}
	b.scheduleProbe(ctx)
	b.wakeStable(ctx)
	if b.again {
		b.again = false
		b.startRebalance(ctx)
	}
}

// assignmentOf is thread th's share of the assignment: its active tasks
// (those in handover came from a live owner, a planned move), its
// standby and warm-up tasks.
func (b *broker) assignmentOf(th int, rejoined bool, handover []bool) assignment {
	a := assignment{gen: b.c.gen, rejoined: rejoined}
	for t := range b.c.active {
		if b.c.active[t] == th {
			a.active = append(a.active, taskID(t))
			if handover != nil && handover[t] {
				a.handover = append(a.handover, taskID(t))
			}
		}
		if slices.Contains(b.c.standby[t], th) {
			a.standby = append(a.standby, taskID(t))
		}
	}
	return a
}
