package kstreams

import "slices"

// A cooperative handover (KIP-429, KIP-441) on the thread's side: a
// running task missing from a new assignment is revoked for a move. The
// thread keeps processing it until its next commit, which commits its
// offsets (and, under exactly-once, its output and changelog writes in
// the same transaction), then closes it cleanly (its store stays in the
// state directory) and sends a JoinGroup so that the group coordinator
// assigns it to its new owner at a follow-up rebalance.

// keepRevoked: task t, running, is missing from the new assignment under
// cooperative rebalancing: it is kept until the next commit. A task not
// running yet has nothing to commit: it is dropped, and the thread
// rejoins at once (the coordinator may be withholding it).
func (th *thread) keepRevoked(t *task) bool {
	if th.p.eager {
		return false
	}
	if t.state != tsRunning {
		th.dropped = true
		return false
	}
	if slices.Contains(th.revoking, t.id) {
		return true
	}
	th.revoking = append(th.revoking, t.id)
	th.commitReq = true // commit it at once (resume starts it)
	return true
}

// markHandover notes which newly assigned tasks are planned moves, and
// drops from the revoking list the tasks assigned to this thread again.
func (th *thread) markHandover(a assignment) {
	for id, t := range th.tasks {
		if t == nil {
			th.handover[id] = false // a flag of a task dropped before it started
		}
	}
	for _, id := range a.handover {
		if th.tasks[id] == nil {
			th.handover[id] = true
		}
	}
	th.revoking = slices.DeleteFunc(th.revoking, func(id taskID) bool { return slices.Contains(a.active, id) })
}

// rejoinAfterDrops: tasks were dropped from the assignment before they
// ran, and none is left to commit: the thread rejoins now (KIP-429: a
// member that gave partitions up rejoins).
func (th *thread) rejoinAfterDrops() {
	if th.dropped && len(th.revoking) == 0 {
		th.send(kJoin, requestBytes, join{thread: th.idx, gen: th.gen})
	}
	th.dropped = false
}

// releaseRevoked closes the revoked tasks after a successful commit (their
// offsets are committed) and rejoins the group.
func (th *thread) releaseRevoked() {
	if len(th.revoking) == 0 {
		return
	}
	for _, id := range th.revoking {
		if t := th.tasks[id]; t != nil {
			if t.store != nil && t.state == tsRunning {
				th.local[id] = t // closed clean: consistent with its changelog position
			}
			th.tasks[id] = nil
		}
	}
	// A member's rejoin (generation > 0): it holds its other tasks.
	th.send(kJoin, requestBytes, join{thread: th.idx, gen: th.gen, ran: th.revoking})
	th.revoking = nil
}

// startKind is the event a task's start (restored, running) is recorded
// as: a handover for a planned move, else a restore, which the recovery
// phases count.
func (th *thread) startKind(id taskID) string {
	if th.handover[id] {
		th.handover[id] = false
		return evHandover
	}
	return evRestored
}

// owned lists the active tasks the thread holds (its subscription's
// owned partitions, under cooperative rebalancing).
func (th *thread) owned() []taskID {
	var ids []taskID
	for id, t := range th.tasks {
		if t != nil {
			ids = append(ids, taskID(id))
		}
	}
	return ids
}
