package kstreams

import (
	"slices"

	"ftbench/engine"
)

// Events of KIP-441's task movements (events.jsonl; Summarize and
// torture's coverage read them).
const (
	evWarmup   = "ks_warmup"            // a warm-up replica assigned (ID: task, Value: thread)
	evProbing  = "ks_probing_rebalance" // a probing rebalance starts (ID: the generation it will form)
	evRevoked  = "ks_task_revoked"      // a live member asked to give a task up for a move (ID: task, Value: thread)
	evPromoted = "ks_warmup_promoted"   // a task assigned to the thread that held its warm-up (ID: task, Value: thread)
	evHandover = "ks_handover"          // a task moved off a live owner is running (ID: task, Value: ns, Bytes: records restored)
)

// assign is the StreamsPartitionAssignor with KIP-441's
// HighAvailabilityTaskAssignor (Kafka 3.x; 4.x keeps it for the classic
// group protocol, while KIP-1071's streams protocol assigns on the
// broker). The balanced target
// puts partition p of every sub-topology on instance p mod instances (on
// another instance while that one has no live thread). A task goes to its
// target when the target is caught up with it: it holds no state to
// restore (stateless), or a copy of its store within
// acceptable.recovery.lag of the changelog's end (a standby or a warm-up;
// an instance with no copy is as far behind as the changelog is long).
// Otherwise it stays on a caught-up instance — its owner, a caught-up
// standby's — and its target gets a warm-up replica, at most
// max.warmup.replicas across the group, and a probing rebalance is
// scheduled (scheduleProbe) that moves it once the warm-up caught up.
// Moving a task off a live member is a cooperative revocation (KIP-429):
// the task is withheld from everyone until its owner has committed it and
// rejoined (revoking), and assigned at that follow-up rebalance; under
// eager every member revoked everything already, so it moves at once.
// Within an instance a task goes to a thread holding a copy of it, else to
// the least-loaded thread. Invariant: a task has at most one owner or
// revoking member, and a thread holds at most one copy (active, standby or
// warm-up) of a task. It returns the tasks moved, and which were handed
// over from a live owner (their new owner records their start as a
// handover, not a recovery).
func (b *broker) assign(ctx engine.Ctx) (int64, []bool) {
	c, p := b.c, b.p
	up := func(th int) bool { return th >= 0 && c.member[th] && !c.away[th] }
	var live []int
	for th := range c.member {
		if c.member[th] {
			live = append(live, th)
		}
	}
	handover := make([]bool, len(c.active))
	if len(live) == 0 {
		return 0, handover
	}
	load := make([]int, p.nThreads())
	owned := make([]bool, len(c.active)) // had an owner (a first assignment moves nothing)
	for t, th := range c.active {
		if th >= 0 && c.member[th] {
			load[th]++
		} else {
			owned[t] = th >= 0
			c.active[t] = -1
		}
		if r := c.revoking[t]; r >= 0 && !c.member[r] {
			// The revoking member is gone: its uncommitted work with it.
			c.revoking[t], c.planned[t], owned[t] = -1, false, true
		}
	}
	// least is the least-loaded up thread, on instance inst if it has
	// one (-1: any instance).
	least := func(inst int) int {
		best := -1
		for _, th := range live {
			if !up(th) || inst >= 0 && p.instanceOf(th) != inst {
				continue
			}
			if best < 0 || load[th] < load[best] {
				best = th
			}
		}
		return best
	}
	// target is the balanced assignment's instance for task t, -1 when
	// it has no up thread.
	target := func(t int) int {
		inst := p.partOf(taskID(t)) % p.instances
		if least(inst) < 0 {
			return -1
		}
		return inst
	}
	// copyOn is the up thread of instance inst (any instance: -1) holding
	// a standby or warm-up of t within acceptable.recovery.lag, the least
	// loaded; -1 when none.
	copyOn := func(t, inst int) int {
		l := c.chg[t]
		if l == nil {
			return -1
		}
		end, best := l.readable(p.eos), -1
		for i, th := range c.standby[t] {
			if up(th) && (inst < 0 || p.instanceOf(th) == inst) && end-c.standAt[t][i] <= p.recoveryLag && (best < 0 || load[th] < load[best]) {
				best = th
			}
		}
		return best
	}
	// caughtUp: instance inst could run t with little to restore.
	caughtUp := func(t, inst int) bool {
		l := c.chg[t]
		return l == nil || l.readable(p.eos) <= p.recoveryLag || copyOn(t, inst) >= 0
	}
	var moved int64
	give := func(t, th int) {
		if c.warm[t] == th {
			ctx.Record(engine.Event{Kind: evPromoted, ID: int64(t), Value: int64(th)})
			c.warm[t] = -1
		}
		dropCopy(c, t, th)
		c.active[t] = th
		load[th]++
		if owned[t] || c.planned[t] {
			moved++
		}
		handover[t] = c.planned[t]
		c.planned[t] = false
	}
	for t := range c.active {
		if c.revoking[t] >= 0 {
			continue // withheld until its owner has committed it and rejoined
		}
		owner, to := c.active[t], target(t)
		if owner >= 0 {
			if to < 0 || p.instanceOf(owner) == to || c.away[owner] || !caughtUp(t, to) {
				continue // on target, or staying while a warm-up catches up
			}
			if !p.eager && c.holds[owner] {
				// KIP-429: the owner revokes it first.
				c.revoking[t], c.planned[t], c.active[t] = owner, true, -1
				load[owner]--
				ctx.Record(engine.Event{Kind: evRevoked, ID: int64(t), Value: int64(owner)})
				continue
			}
			// Eager: every member revoked every task already. A task
			// its owner had not started running, or a fresh member's
			// (restarted: it holds none), is still being recovered: not
			// a handover.
			load[owner]--
			c.active[t], c.planned[t], owned[t] = -1, c.holds[owner] && c.ran[t], true
		}
		// A caught-up copy on the target, else anywhere, else the target
		// (its warm-up's thread first), else any thread.
		th := -1
		if to >= 0 {
			th = copyOn(t, to)
		}
		if th < 0 {
			th = copyOn(t, -1)
		}
		if th < 0 && to >= 0 {
			if w := c.warm[t]; up(w) && p.instanceOf(w) == to {
				th = w
			} else {
				th = least(to)
			}
		}
		if th < 0 {
			th = least(-1)
		}
		if th >= 0 {
			give(t, th)
		}
	}
	clear(c.ran)
	b.placeStandbys(live, load)
	b.c.pending = b.placeWarmups(ctx, target, load)
	return moved, handover
}

// dropCopy removes thread th's standby or warm-up of task t.
func dropCopy(c *cluster, t, th int) {
	for i := 0; i < len(c.standby[t]); i++ {
		if c.standby[t][i] == th {
			c.standby[t] = append(c.standby[t][:i:i], c.standby[t][i+1:]...)
			c.standAt[t] = append(c.standAt[t][:i:i], c.standAt[t][i+1:]...)
			i--
		}
	}
	if c.warm[t] == th {
		c.warm[t] = -1
	}
}

// placeStandbys keeps each stateful task's standby replicas on live
// members of another instance than its owner's, then adds up to
// num.standby.replicas, on the least-loaded threads. Warm-ups are left
// to placeWarmups.
func (b *broker) placeStandbys(live, load []int) {
	c, p := b.c, b.p
	for t := range c.standby {
		if c.chg[t] == nil || p.standbys == 0 {
			continue
		}
		owner := c.active[t]
		if owner < 0 {
			owner = c.revoking[t]
		}
		var keep []int
		var at []int64
		used := make([]bool, p.instances)
		if owner >= 0 {
			used[p.instanceOf(owner)] = true
		}
		for i, th := range c.standby[t] {
			inst := p.instanceOf(th)
			if th == c.warm[t] {
				continue
			}
			if c.member[th] && !used[inst] && len(keep) < p.standbys {
				keep = append(keep, th)
				at = append(at, c.standAt[t][i])
				used[inst] = true
			}
		}
		for len(keep) < p.standbys {
			best := -1
			for _, th := range live {
				if !c.away[th] && !used[p.instanceOf(th)] && th != c.warm[t] && (best < 0 || load[th] < load[best]) {
					best = th
				}
			}
			if best < 0 {
				break
			}
			keep = append(keep, best)
			at = append(at, 0)
			used[p.instanceOf(best)] = true
		}
		if w := c.warm[t]; w >= 0 {
			i := indexOf(c.standby[t], w)
			keep, at = append(keep, w), append(at, c.standAt[t][i])
		}
		c.standby[t], c.standAt[t] = keep, at
	}
}

func indexOf(xs []int, x int) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

// placeWarmups gives each stateful task kept off its target instance a
// warm-up replica there (KIP-441), in task order, at most
// max.warmup.replicas across the group (a warm-up kept from the last
// assignment counts too), unless a standby of the task already lives on
// that instance. A warm-up is a standby to the thread holding it: it
// follows the changelog. It returns the movements still pending: tasks
// off their target, warmed up or not.
func (b *broker) placeWarmups(ctx engine.Ctx, target func(int) int, load []int) int {
	c, p := b.c, b.p
	budget, pending := p.warmups, 0
	for t := range c.active {
		owner, to := c.active[t], -1
		if owner >= 0 && c.chg[t] != nil {
			to = target(t)
		}
		if owner < 0 || to < 0 || p.instanceOf(owner) == to {
			if w := c.warm[t]; w >= 0 && c.revoking[t] < 0 {
				dropCopy(c, t, w) // no longer needed (or its task is unowned)
			}
			continue
		}
		pending++
		standbyThere := false
		for _, th := range c.standby[t] {
			if th != c.warm[t] && p.instanceOf(th) == to && c.member[th] {
				standbyThere = true
			}
		}
		w := c.warm[t]
		keep := w >= 0 && c.member[w] && !c.away[w] && p.instanceOf(w) == to && !standbyThere && budget > 0
		if w >= 0 && !keep {
			dropCopy(c, t, w)
		}
		if standbyThere || budget == 0 {
			continue
		}
		budget--
		if keep {
			continue
		}
		best := -1
		for th := range c.member {
			if c.member[th] && !c.away[th] && p.instanceOf(th) == to && (best < 0 || load[th] < load[best]) {
				best = th
			}
		}
		if best < 0 {
			budget++
			continue
		}
		c.warm[t] = best
		c.standby[t] = append(c.standby[t], best)
		c.standAt[t] = append(c.standAt[t], 0)
		ctx.Record(engine.Event{Kind: evWarmup, ID: int64(t), Value: int64(best)})
	}
	return pending
}

// scheduleProbe arms the probing rebalance after an assignment that left
// movements pending (KIP-441: probing.rebalance.interval.ms after it), and
// cancels the one armed before: every assignment reschedules it.
func (b *broker) scheduleProbe(ctx engine.Ctx) {
	b.c.probeSeq++
	b.c.probing = false
	if b.c.pending > 0 {
		ctx.After(b.p.probing, tProbe+b.c.probeSeq<<8)
	}
}

// probe: the probing rebalance is due. A rebalance in progress reassesses
// the movements anyway.
func (b *broker) probe(ctx engine.Ctx, seq int64) {
	if seq != b.c.probeSeq || b.rebal {
		return
	}
	b.c.probing = true
	ctx.Record(engine.Event{Kind: evProbing, ID: b.c.gen + 1})
	b.startRebalance(ctx)
}

// forgetCopies: a fresh member holds no standby or warm-up state either;
// its copies start again from the changelog's start.
func (b *broker) forgetCopies(th int) {
	for t := range b.c.standby {
		for i, s := range b.c.standby[t] {
			if s == th {
				b.c.standAt[t][i] = 0
			}
		}
	}
}

// releasedBy: a cooperative member's subscription (owned) no longer
// names a task it was revoking: it gave it up, and the rejoin that said
// so was lost (it died with a broker). Not known to have run and been
// committed, its move counts as a recovery.
func (b *broker) releasedBy(th int, owned []taskID) {
	for t, r := range b.c.revoking {
		if r == th && !slices.Contains(owned, taskID(t)) {
			b.c.revoking[t], b.c.planned[t] = -1, false
		}
	}
}

// forgetRevoking: thread th joins again holding none of the tasks it was
// revoking (restarted, fenced and closed dirty, or done revoking): they
// are free for the next assignment. Those it ran and committed (ran) move
// as a handover; the others are still being recovered.
func (b *broker) forgetRevoking(th int, ran []taskID) {
	for t, r := range b.c.revoking {
		if r == th {
			b.c.revoking[t] = -1
			b.c.planned[t] = slices.Contains(ran, taskID(t))
		}
	}
}
