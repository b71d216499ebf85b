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
	b.heartbeat(ctx, th)
	if b.p.static && b.c.member[th] && b.c.away[th] && !b.rebal {
		// KIP-345: the same group.instance.id back within the session
		// timeout gets its assignment back; nobody else rebalances.
		b.c.away[th] = false
		ctx.Record(engine.Event{Kind: evStaticRejoin, ID: int64(th)})
		b.send(ctx, th, kAssign, requestBytes, b.assignmentOf(th, true))
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
	delete(b.joining, j.thread)
	b.maybeAssign(ctx)
}

func (b *broker) maybeAssign(ctx engine.Ctx) {
	if !b.rebal {
		return
	}
	for th := range b.joining {
		if b.c.member[th] && !b.c.away[th] {
			return
		}
	}
	moved := b.assign()
	b.c.gen++
	b.rebal = false
	ctx.Record(engine.Event{Kind: evAssigned, ID: b.c.gen, Value: moved, Note: engine.Time(ctx.Now() - b.rebStart).String()})
	ctx.Record(engine.Event{Kind: evDeploy, ID: b.c.gen})
	for th := range b.c.member {
		if b.c.member[th] && !b.c.away[th] {
			b.send(ctx, th, kAssign, requestBytes, b.assignmentOf(th, false))
		}
	}
	b.wakeStable(ctx)
	if b.again {
		b.again = false
		b.startRebalance(ctx)
	}
}

func (b *broker) assignmentOf(th int, rejoined bool) assignment {
	a := assignment{gen: b.c.gen, rejoined: rejoined}
	for t := range b.c.active {
		if b.c.active[t] == th {
			a.active = append(a.active, taskID(t))
		}
		if slices.Contains(b.c.standby[t], th) {
			a.standby = append(a.standby, taskID(t))
		}
	}
	return a
}

// assign is the StreamsPartitionAssignor, sticky as KIP-441's
// HighAvailabilityTaskAssignor: a task stays with its owner while the
// owner is a member (a static member away within its session timeout
// included); an orphaned task goes to a thread holding a standby of it
// that is caught up (within acceptable.recovery.lag of the changelog's
// end), else to the least-loaded thread. Then every stateful task gets
// its standby replicas on other instances. It returns the tasks moved.
func (b *broker) assign() int64 {
	var live []int
	for th := range b.c.member {
		if b.c.member[th] {
			live = append(live, th)
		}
	}
	if len(live) == 0 {
		return 0
	}
	load := make([]int, b.p.nThreads())
	owned := make([]bool, len(b.c.active)) // had an owner (a first assignment moves nothing)
	for t, th := range b.c.active {
		if th >= 0 && b.c.member[th] {
			load[th]++
		} else {
			owned[t] = th >= 0
			b.c.active[t] = -1
		}
	}
	// least is the least-loaded live thread, on instance inst if it has
	// one (-1: any instance).
	least := func(inst int) int {
		best := -1
		for _, th := range live {
			if b.c.away[th] || inst >= 0 && b.p.instanceOf(th) != inst {
				continue
			}
			if best < 0 || load[th] < load[best] {
				best = th
			}
		}
		return best
	}
	var moved int64
	for t := range b.c.active {
		if b.c.active[t] >= 0 {
			continue
		}
		owner := -1
		if l := b.c.chg[t]; l != nil {
			end := l.readable(b.p.eos)
			for i, th := range b.c.standby[t] {
				if b.c.member[th] && !b.c.away[th] && end-b.c.standAt[t][i] <= b.p.recoveryLag && (owner < 0 || load[th] < load[owner]) {
					owner = th
				}
			}
		}
		if owner < 0 {
			// Partition p of every sub-topology on instance p mod
			// instances, as the assignor spreads a sub-topology's tasks
			// over the clients; elsewhere when that one is gone.
			owner = least(b.p.partOf(taskID(t)) % b.p.instances)
		}
		if owner < 0 {
			owner = least(-1)
		}
		if owner < 0 {
			continue
		}
		b.c.active[t] = owner
		load[owner]++
		if owned[t] {
			moved++
		}
	}
	// Standby replicas: keep those on live members of another instance
	// than the active task's, then add up to num.standby.replicas.
	for t := range b.c.standby {
		if b.c.chg[t] == nil || b.p.standbys == 0 {
			continue
		}
		owner := b.c.active[t]
		var keep []int
		var at []int64
		used := map[int]bool{}
		if owner >= 0 {
			used[b.p.instanceOf(owner)] = true
		}
		for i, th := range b.c.standby[t] {
			inst := b.p.instanceOf(th)
			if b.c.member[th] && !used[inst] && len(keep) < b.p.standbys {
				keep = append(keep, th)
				at = append(at, b.c.standAt[t][i])
				used[inst] = true
			}
		}
		for len(keep) < b.p.standbys {
			best := -1
			for _, th := range live {
				if !b.c.away[th] && !used[b.p.instanceOf(th)] && (best < 0 || load[th] < load[best]) {
					best = th
				}
			}
			if best < 0 {
				break
			}
			keep = append(keep, best)
			at = append(at, 0)
			used[b.p.instanceOf(best)] = true
		}
		b.c.standby[t], b.c.standAt[t] = keep, at
	}
	return moved
}
