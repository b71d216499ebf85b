package kstreams

import (
	"fmt"
	"slices"

	"ftbench/engine"
	"ftbench/systems"
)

// written: a store write is durable, so what it carried takes effect.
func (b *broker) written(ctx engine.Ctx, tok int64) {
	w, ok := b.wr[tok]
	if !ok {
		return
	}
	delete(b.wr, tok)
	ctx.Store().Delete(w.key) // the records live in the cluster's logs
	switch w.kind {
	case pProduce:
		b.append(ctx, w.prod)
	case pCommit:
		// PREPARE_COMMIT is durable: the commit is decided. The
		// coordinator writes a COMMIT marker to every partition of the
		// transaction; until they are written the records stay beyond
		// the LSO, and the producer's next transaction waits
		// (CONCURRENT_TRANSACTIONS).
		w.txn.state = txnPrepared
		b.put(ctx, fmt.Sprintf("ks/markers/%d/%d", w.txn.thread, w.txn.epoch), int64(len(w.txn.parts)+1)*requestBytes,
			&pending{kind: pMarkers, txn: w.txn})
		b.wr[b.c.nextTok].began = w.began
	case pMarkers:
		b.complete(ctx, w.txn, txnCommitted, "")
		ctx.Record(engine.Event{Kind: evTxnCommitted, ID: int64(w.txn.thread), Value: int64(ctx.Now() - w.began)})
		b.send(ctx, w.txn.thread, kEndTxnAck, requestBytes, txnReply{ends: b.ends(w.txn.thread)})
	case pOffsets:
		for _, o := range w.oc.offsets {
			b.commitOffset(o)
		}
		b.send(ctx, w.oc.thread, kOffsetCommitAck, requestBytes, txnReply{ends: b.ends(w.oc.thread)})
	}
}

// ---- producers and transactions (KIP-98, KIP-447) ----

// initPid is InitProducerId for a thread's transactional id: an open
// transaction of an older epoch is aborted (one being committed completes)
// and the epoch goes up, fencing every older producer with that id.
func (b *broker) initPid(ctx engine.Ctx, th int) {
	if t := b.c.open[th]; t != nil && t.state == txnOpen {
		b.complete(ctx, t, txnAborted, "epoch bumped by a new producer")
	}
	b.c.epoch[th]++
	b.c.lastSeq[th] = 0 // a new producer's sequences start again
	b.send(ctx, th, kPid, requestBytes, b.c.epoch[th])
}

// txnOf is thread th's open transaction, begun now if none is (the first
// AddPartitionsToTxn of a transaction begins it).
func (b *broker) txnOf(ctx engine.Ctx, th int) *txn {
	t := b.c.open[th]
	if t == nil {
		t = &txn{thread: th, epoch: b.c.epoch[th], began: ctx.Now(), id: int32(len(b.c.byID) + 1)}
		b.c.byID = append(b.c.byID, t)
		b.c.open[th] = t
		b.c.txns = append(b.c.txns, t)
	}
	return t
}

func (b *broker) produce(ctx engine.Ctx, pr *produce) {
	if b.p.eos && (pr.epoch != b.c.epoch[pr.thread] || (b.c.open[pr.thread] != nil && b.c.open[pr.thread].state != txnOpen)) {
		ctx.Record(engine.Event{Kind: evFenced, ID: int64(pr.thread), Note: "produce: epoch"})
		b.send(ctx, pr.thread, kProduceAck, requestBytes, produceAck{seq: pr.seq, fenced: true})
		return
	}
	if pr.epoch != b.c.epoch[pr.thread] {
		// At-least-once: an older producer of this thread; its batch is
		// appended (nothing fences a non-transactional producer).
	} else if pr.seq <= b.c.lastSeq[pr.thread] {
		// A retry of a batch already appended (its ack died with a broker).
		b.send(ctx, pr.thread, kProduceAck, requestBytes, produceAck{seq: pr.seq})
		return
	} else if w := b.writing[pr.thread]; w[0] == pr.epoch && w[1] >= pr.seq {
		return // a retry of a batch being written: its write's ack answers both
	}
	b.writing[pr.thread] = [2]int64{pr.epoch, pr.seq}
	b.put(ctx, fmt.Sprintf("ks/produce/%d/%d/%d", pr.thread, pr.epoch, pr.seq), pr.bytes, &pending{kind: pProduce, prod: pr})
}

// append adds a durable batch to its partitions.
func (b *broker) append(ctx engine.Ctx, pr *produce) {
	var t *txn
	if b.p.eos {
		if pr.epoch != b.c.epoch[pr.thread] || (b.c.open[pr.thread] != nil && b.c.open[pr.thread].state != txnOpen) {
			// Fenced while the write was in flight: the batch belongs to an
			// aborted transaction.
			b.send(ctx, pr.thread, kProduceAck, requestBytes, produceAck{seq: pr.seq, fenced: true})
			return
		}
		t = b.txnOf(ctx, pr.thread)
	}
	if pr.epoch == b.c.epoch[pr.thread] {
		b.c.lastSeq[pr.thread] = pr.seq
	}
	for _, pb := range pr.batches {
		l := b.logOf(pb)
		l.push(pb.recs, pb.kvs, t)
		if !pb.changelog {
			ctx.Count(systems.InternalLag, int64(len(pb.recs))) // [pos, next) grew
		}
		if t != nil && !slices.Contains(t.parts, l) {
			t.parts = append(t.parts, l)
		}
		if t == nil {
			l.advance()
		}
	}
	if t != nil {
		t.output = append(t.output, pr.out...)
	} else {
		// At-least-once: visible when written. A batch is appended once
		// (a retry is acknowledged without), so its pieces go back.
		for _, out := range pr.out {
			engine.CommitOwned(ctx, out)
		}
	}
	b.send(ctx, pr.thread, kProduceAck, requestBytes, b.spares(pr))
	b.wake(ctx)
}

func (b *broker) logOf(r prodBatch) *plog {
	if r.changelog {
		return b.c.chg[b.p.task(r.sub, r.part)]
	}
	return b.c.rep[r.sub][r.part]
}

// fencedMember is KIP-447's check on a transactional (or plain) offset
// commit: the member must be in the group, at its current generation, and
// own the tasks it commits for.
func (b *broker) fencedMember(th int, gen int64, offs []offset) string {
	if mutantNoFencing {
		return ""
	}
	switch {
	case !b.c.member[th] || b.c.away[th] && !b.p.static:
		return "unknown member"
	case gen != b.c.gen:
		return fmt.Sprintf("generation %d, the group's is %d", gen, b.c.gen)
	}
	for _, o := range offs {
		if b.c.active[o.task] != th && b.c.revoking[o.task] != th {
			return "task " + b.p.taskName(o.task) + " not owned"
		}
	}
	return ""
}

func (b *broker) txnOffsets(ctx engine.Ctx, r txnOffsets) {
	reason := b.fencedMember(r.thread, r.gen, r.offsets)
	if reason == "" && r.epoch != b.c.epoch[r.thread] {
		reason = "epoch"
	}
	if reason == "" && b.c.open[r.thread] != nil && b.c.open[r.thread].state != txnOpen {
		reason = "transaction no longer open"
	}
	if reason != "" {
		ctx.Record(engine.Event{Kind: evFenced, ID: int64(r.thread), Note: "txn offsets: " + reason})
		b.send(ctx, r.thread, kTxnOffsetsAck, requestBytes, txnReply{fenced: true, reason: reason})
		return
	}
	t := b.txnOf(ctx, r.thread)
	t.offsets = r.offsets
	if mutantOffsetsOutsideTxn {
		for _, o := range r.offsets {
			b.commitOffset(o)
		}
	}
	b.send(ctx, r.thread, kTxnOffsetsAck, requestBytes, txnReply{})
}

func (b *broker) endTxn(ctx engine.Ctx, r endTxn) {
	t := b.c.open[r.thread]
	if r.epoch != b.c.epoch[r.thread] || (t != nil && t.epoch != r.epoch) {
		ctx.Record(engine.Event{Kind: evFenced, ID: int64(r.thread), Note: "end txn: epoch"})
		b.send(ctx, r.thread, kEndTxnAck, requestBytes, txnReply{fenced: true, reason: "epoch"})
		return
	}
	switch {
	case t == nil:
		b.send(ctx, r.thread, kEndTxnAck, requestBytes, txnReply{})
	case t.state == txnPreparing || t.state == txnPrepared:
		// A retry after a broker failover: the prepare or the markers
		// are being written; their completion answers.
	case !r.commit:
		b.complete(ctx, t, txnAborted, "aborted by its producer")
		b.send(ctx, r.thread, kEndTxnAck, requestBytes, txnReply{})
	default:
		// PREPARE_COMMIT in the transaction log; once durable the commit
		// is decided and the markers are written.
		t.state = txnPreparing
		b.put(ctx, fmt.Sprintf("ks/txnlog/%d/%d", r.thread, r.epoch), requestBytes, &pending{kind: pCommit, txn: t})
	}
}

// complete decides a transaction: its records become readable (committed)
// or skipped (aborted) by read_committed consumers, and a committed one's
// offsets and output become visible, in one step.
func (b *broker) complete(ctx engine.Ctx, t *txn, st txnState, why string) {
	t.state = st
	if b.c.open[t.thread] == t {
		b.c.open[t.thread] = nil
	}
	b.c.txns = slices.DeleteFunc(b.c.txns, func(x *txn) bool { return x == t })
	for _, l := range t.parts {
		l.advance()
	}
	if st == txnCommitted {
		b.c.commits++
		for _, o := range t.offsets {
			b.commitOffset(o)
		}
		for _, out := range t.output {
			engine.CommitOwned(ctx, out) // no one reads them again
		}
	} else {
		b.c.aborted++
		ctx.Record(engine.Event{Kind: evTxnAborted, ID: int64(t.thread), Note: why})
	}
	t.output = nil
	b.wake(ctx)
	b.wakeStable(ctx)
}

// ends lists the changelog end of each stateful task thread th owns.
func (b *broker) ends(th int) []offset {
	var out []offset
	for t, owner := range b.c.active {
		if (owner == th || b.c.revoking[t] == th) && b.c.chg[t] != nil {
			out = append(out, offset{task: taskID(t), off: b.c.chg[t].readable(b.p.eos)})
		}
	}
	return out
}

func (b *broker) commitOffset(o offset) {
	b.c.committed[o.task] = max(b.c.committed[o.task], o.off)
	if sub := b.p.subOf(o.task); sub > 0 {
		l := b.c.rep[sub][b.p.partOf(o.task)]
		l.purge(b.c.committed[o.task])
		b.reuse(l)
	}
}

// expireTxns aborts transactions open longer than transaction.timeout.ms
// and bumps their producer's epoch, as the transaction coordinator does.
func (b *broker) expireTxns(ctx engine.Ctx) {
	for th, t := range b.c.open {
		if t != nil && t.state == txnOpen && ctx.Now()-t.began > txnTimeout {
			b.complete(ctx, t, txnAborted, "transaction timeout")
			b.c.epoch[th]++
		}
	}
}

// clean is the log cleaner's pass over the changelogs, every
// log.cleaner.backoff.ms.
func (b *broker) clean(ctx engine.Ctx) {
	if ctx.Now()-b.c.cleaned < cleanerBackoff {
		return
	}
	b.c.cleaned = ctx.Now()
	var n int64
	for _, l := range b.c.chg {
		if l != nil {
			n += l.compact()
			b.reuse(l)
		}
	}
	if n > 0 {
		ctx.Record(engine.Event{Kind: evCompacted, Value: n})
	}
}

func (b *broker) offsetCommit(ctx engine.Ctx, r *offsetCommit) {
	if reason := b.fencedMember(r.thread, r.gen, r.offsets); reason != "" {
		ctx.Record(engine.Event{Kind: evFenced, ID: int64(r.thread), Note: "offset commit: " + reason})
		b.send(ctx, r.thread, kOffsetCommitAck, requestBytes, txnReply{fenced: true, reason: reason})
		return
	}
	b.put(ctx, fmt.Sprintf("ks/offsets/%d", r.thread), requestBytes, &pending{kind: pOffsets, oc: r})
}

// offsetFetch answers with the task's committed offset. With
// require_stable (EOS) it waits while a transaction that will commit an
// offset for the task is undecided (KIP-447).
func (b *broker) offsetFetch(ctx engine.Ctx, r offsetFetch) {
	if b.p.eos && !mutantNoRequireStable && b.unstable(r.task) {
		ctx.Record(engine.Event{Kind: evStableWait, ID: int64(r.task)})
		b.stables = append(b.stables, r)
		return
	}
	b.send(ctx, r.thread, kOffset, requestBytes, offset{task: r.task, off: b.c.committed[r.task]})
}

func (b *broker) unstable(task taskID) bool {
	for _, t := range b.c.txns {
		for _, o := range t.offsets {
			if o.task == task {
				return true
			}
		}
	}
	return false
}

func (b *broker) wakeStable(ctx engine.Ctx) {
	waiting := b.stables
	b.stables = nil
	for _, r := range waiting {
		b.offsetFetch(ctx, r)
	}
}

// ---- fetches ----

// serve answers a fetch if any record is readable, up to max.poll.records.
func (b *broker) serve(ctx engine.Ctx, f *fetch) bool {
	var out []fetched
	var bytes int64
	buf := f.buf[:0]
	budget := maxPollRecords
	cost := ctx.Cost()
	for _, r := range f.reqs {
		l := b.c.rep[b.p.subOf(r.task)][b.p.partOf(r.task)]
		b.consumedTo(ctx, l, r.from)
		from := max(r.from, l.start)
		upto := l.readable(b.p.eos)
		if from >= upto || budget == 0 {
			continue
		}
		fe := fetched{task: r.task, from: r.from}
		n0 := len(buf)
		fe.next = l.scan(from, upto, budget, func(run []entry) {
			buf = append(buf, run...)
			for i := range run {
				bytes += int64(cost.WireBytes(run[i].size))
			}
			budget -= len(run)
		})
		fe.recs = buf[n0:len(buf):len(buf)]
		out = append(out, fe)
		b.consumedTo(ctx, l, fe.next)
	}
	if len(out) == 0 {
		return false
	}
	b.send(ctx, f.thread, kRecords, bytes+requestBytes, records{seq: f.seq, recs: out, buf: buf})
	return true
}

// consumedTo moves a repartition partition's consumer position, as the
// broker sees it, to off: the records a fetch asks for from (a new owner
// asks from the committed offset, so the lag grows back) or hands out. The
// run's internal lag follows: Kafka's consumer lag over the repartition
// topics, which the harness adds to the source lag, so that a backlog
// growing here reads as overload (no backpressure crosses the topic).
func (b *broker) consumedTo(ctx engine.Ctx, l *plog, off int64) {
	if off != l.pos {
		ctx.Count(systems.InternalLag, l.pos-off)
		l.pos = off
	}
}

// wake answers the parked fetches that now have records, by thread.
func (b *broker) wake(ctx engine.Ctx) {
	for th := 0; th < b.p.nThreads(); th++ {
		if f, ok := b.fetches[th]; ok && b.serve(ctx, f) {
			delete(b.fetches, th)
		}
	}
}

// restore answers a restore or standby fetch of a changelog with up to
// max.poll.records records.
func (b *broker) restore(ctx engine.Ctx, r restoreReq) {
	l := b.c.chg[r.task]
	upto := l.readable(b.p.eos)
	kvs, next := l.readChangelog(r.from, upto, maxPollRecords)
	if r.standby {
		for i, th := range b.c.standby[r.task] {
			if th == r.thread {
				b.c.standAt[r.task][i] = next
			}
		}
	}
	size := int64(len(kvs))*int64(ctx.Cost().WireBytes(16)) + requestBytes
	b.send(ctx, r.thread, kRestoreChunk, size, restoreChunk{task: r.task, kvs: kvs, next: next, done: next >= upto, standby: r.standby})
}
