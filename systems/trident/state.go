package trident

import (
	"slices"
	"sort"
	"strconv"

	"ftbench/engine"
	"ftbench/systems/internal/storm"
	"ftbench/systems/internal/stream"
)

// entry is one key of persistentAggregate's state in the external store.
// Which fields mean something depends on the state's kind (--state):
//
//   - transactional (TransactionalMap, TransactionalValue): val and the
//     txid of the batch that last updated it; a batch whose txid the entry
//     already has was applied and is skipped;
//   - opaque (OpaqueMap, OpaqueValue): val, prev (the value before the
//     batch of txid) and txid; a batch of the stored txid is applied again
//     to prev, so a replay with other tuples replaces the failed attempt's
//     update instead of adding to it;
//   - non-transactional (NonTransactionalMap): val alone, every batch is
//     applied.
//
// attempt and done are ftbench's bookkeeping, not Trident's: attempt lets
// the store refuse an opaque write of an older attempt of the stored txid
// (see apply), done lists the outputs of txid already committed to the
// effect stream for this key, so a reapplied batch commits only the others
// (a Trident reader just sees the value); shown is the value the effect
// stream last showed for the key: when a reapplication with other tuples
// (a non-transactional spout's replay) leaves the key at another value,
// its last output is committed again, so the stream ends at the stored
// value (a duplicate, which those pairings' at-least-once allows).
type entry struct {
	val, prev int64
	txid      int64
	attempt   int32
	done      []engine.EffectID
	shown     int64 // the value of the key's last committed output
}

// entryBytes is the stored size of an entry (key, value, previous value,
// txid), what a multi-get reads and a multi-put writes per key.
const entryBytes = 32

// table is one partition of the external store: it is created at compile
// time, not by the task, because it lives off the workers and survives a
// crash of the task that writes it.
type table map[uint64]*entry

// write is a committer's multi-put for one batch: the batch's records in
// apply order. The store applies it when it is durable (apply), so what
// it does is decided against the state as it then is.
type write struct {
	tx   txAttempt
	recs []engine.Msg
	in   storm.Input // the commit tuple, acked once applied
}

// persist is a partition of persistentAggregate (the last stage: the
// plan's keyed stage fused with the sink, or a plain sink whose records
// are put by key). It buffers each batch's tuples, newest attempt only,
// and applies a batch only when the commit tuple of its attempt arrives,
// so state updates are ordered by txid (TridentBoltExecutor holds a
// committer's finishBatch until the commit). It acks its count tuples once
// it has the whole batch, so the batch tree completes when every partition
// has its part.
type persist struct {
	t      *topo
	part   int
	tab    table
	col    storm.Collector
	trk    tracker
	bufs   map[int64]*buffer
	writes map[int64]*write // by store token
	token  int64
	outs   []engine.Msg // the outputs of the key being applied
}

// buffer holds one txid's tuples of one attempt.
type buffer struct {
	attempt int32
	recs    []engine.Msg
}

func newPersist(t *topo, stage, part int, tab table) *persist {
	return &persist{t: t, part: part, tab: tab, col: storm.Collector{Ackers: t.ackers},
		trk: newTracker(t.upstream(stage), 0), bufs: map[int64]*buffer{}, writes: map[int64]*write{}}
}

func (p *persist) Init(engine.Ctx)         {}
func (p *persist) Timer(engine.Ctx, int64) {}

func (p *persist) Handle(ctx engine.Ctx, _ engine.ProcID, m engine.Msg) {
	switch m.Kind {
	case storm.KindTuple:
		rec, tx := untag(m)
		b := p.bufs[tx.txid]
		if b != nil && b.attempt > tx.attempt {
			// A late tuple of an older attempt, after this partition had
			// the whole newer attempt (the tracker forgets a finished
			// batch, so it cannot tell): never in the newer attempt's
			// buffer, whose commit would apply it a second time.
			return
		}
		tb := p.trk.get(tx)
		if tb == nil {
			return // an older attempt's tuple
		}
		tb.received++
		if b == nil || b.attempt < tx.attempt {
			b = &buffer{attempt: tx.attempt}
			p.bufs[tx.txid] = b
		}
		b.recs = append(b.recs, rec)
		p.finish(ctx, tb)
	case kindCount:
		p.finish(ctx, p.trk.count(m.Body.(*countMsg)))
	case kindCommit:
		p.commit(ctx, m.Body.(*txMsg))
	case engine.KindStoreDone:
		if w := p.writes[m.Val]; w != nil {
			delete(p.writes, m.Val)
			p.apply(ctx, w)
			p.col.Ack(ctx, &w.in)
		}
	case engine.KindStoreFailed:
		if w := p.writes[m.Val]; w != nil {
			// The multi-put failed (the store is down): the commit
			// fails and the batch is replayed.
			delete(p.writes, m.Val)
			p.col.Fail(ctx, &w.in)
		}
	}
}

// finish acks b's count tuples once this partition has all of the batch.
func (p *persist) finish(ctx engine.Ctx, b *tracked) {
	if p.trk.finished(b) {
		p.trk.finish(ctx, &p.col, b, nil)
	}
}

// commit applies the buffered batch of b's attempt: one multi-get of its
// keys (a store round trip), then one multi-put, which the store applies
// when durable.
func (p *persist) commit(ctx engine.Ctx, b *txMsg) {
	var recs []engine.Msg
	if buf := p.bufs[b.tx.txid]; buf != nil && buf.attempt == b.tx.attempt {
		recs = buf.recs
	}
	for tx := range p.bufs { // earlier txids are committed or superseded
		if tx <= b.tx.txid {
			delete(p.bufs, tx)
		}
	}
	// The apply order is the records' append order, so that a replay that
	// extends a failed attempt applies the same records first.
	sort.Slice(recs, func(i, j int) bool { return before(&recs[i], &recs[j]) })
	keys := distinctKeys(recs)
	c := ctx.Cost()
	ctx.Work(c.StoreLatency + engine.Time(float64(keys*entryBytes)/c.StoreReadBytes*1e9))
	ctx.Count(cStoreRoundTrips, 2)
	ctx.Count(cStateGets, int64(keys))
	ctx.Count(cStatePuts, int64(keys))
	p.token++
	p.writes[p.token] = &write{tx: b.tx, recs: recs, in: storm.Input{Edges: b.edges}}
	ctx.Store().Put(p.storeKey(), nil, int64(keys*entryBytes), p.token)
}

// storeKey names the partition's multi-puts in the store (their contents
// are applied to the table; the store carries their cost and durability).
func (p *persist) storeKey() string { return "trident/state/" + strconv.Itoa(p.part) }

// before orders records by append time, then partition and offset.
func before(a, b *engine.Msg) bool {
	if a.Born != b.Born {
		return a.Born < b.Born
	}
	if a.ID.Part != b.ID.Part {
		return a.ID.Part < b.ID.Part
	}
	return a.ID.Off < b.ID.Off
}

func distinctKeys(recs []engine.Msg) int {
	seen := make(map[uint64]struct{}, len(recs))
	for i := range recs {
		seen[recs[i].Key] = struct{}{}
	}
	return len(seen)
}

// apply is the multi-put becoming durable: every key's update under the
// state's rule, decided against the entry as it is now. The txid check is
// also Trident's fence: a write of a txid older than the stored one (a
// zombie committer's, cut off while a new attempt went on) changes nothing.
// Outputs reach the effect stream here, once their write is durable.
func (p *persist) apply(ctx engine.Ctx, w *write) {
	skipped, reapplied, fenced := 0, 0, 0
	// Group the batch's records by key, keys in first-appearance order.
	order := make([]uint64, 0)
	byKey := map[uint64][]int{}
	for i := range w.recs {
		k := w.recs[i].Key
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	for _, k := range order {
		e := p.tab[k]
		if e == nil {
			e = &entry{}
			p.tab[k] = e
		}
		base, done := e.val, []engine.EffectID(nil)
		switch p.t.state {
		case stateTransactional:
			if e.txid >= w.tx.txid && !mutantNoTxidCheck {
				if e.txid > w.tx.txid {
					fenced++
				} else {
					skipped++
				}
				continue
			}
		case stateOpaque:
			if e.txid > w.tx.txid || e.txid == w.tx.txid && e.attempt > w.tx.attempt {
				fenced++
				continue
			}
			if e.txid == w.tx.txid && !mutantOpaqueNoPrev {
				base, done = e.prev, e.done
				reapplied++
			}
		}
		v := base
		p.outs = p.outs[:0]
		for _, i := range doneFirst(w.recs, byKey[k], done) {
			rec := w.recs[i]
			if f := p.t.fused; f != nil {
				ctx.Work(f.Cost(ctx.Cost(), rec))
				f.Update(&v, rec, p.collect)
			} else {
				v = rec.Val
				p.collect(rec)
			}
		}
		committed := done
		for _, out := range p.outs {
			if slices.Contains(done, out.ID) {
				continue // committed by the attempt this one replaces
			}
			p.commitOut(ctx, e, out)
			if p.t.state == stateOpaque {
				committed = append(committed, out.ID)
			}
		}
		if n := len(p.outs); n > 0 && e.shown != p.outs[n-1].Val {
			p.commitOut(ctx, e, p.outs[n-1])
		}
		if e.txid != w.tx.txid {
			e.prev = e.val
		}
		e.val, e.txid, e.attempt, e.done = v, w.tx.txid, w.tx.attempt, committed
	}
	if skipped > 0 {
		ctx.Count(cSkippedTxid, int64(skipped))
		ctx.Record(engine.Event{Kind: evTxidSkip, ID: w.tx.txid, Value: int64(skipped)})
	}
	if fenced > 0 {
		ctx.Count(cFencedWrites, int64(fenced))
		ctx.Record(engine.Event{Kind: evFenced, ID: w.tx.txid, Value: int64(fenced)})
	}
	if reapplied > 0 {
		ctx.Count(cReappliedOpaque, int64(reapplied))
		ctx.Record(engine.Event{Kind: evOpaqueReapply, ID: w.tx.txid, Value: int64(reapplied)})
	}
	ctx.Record(engine.Event{Kind: evStateWritten, ID: w.tx.txid, Value: int64(len(order))})
}

// doneFirst orders the indexes idx of a key's records for applying: the
// records whose outputs the replaced attempt committed (done) first, then
// the others, each in append order. A replay usually extends its failed
// attempt with records appended later, so this is append order; but an
// opaque replay can also bring records appended earlier, of a partition
// the failed attempt went on without (source-down). Applied first, the
// records already committed show the values they showed then, and only the
// new ones are committed; a batch's tuples have no order in Trident.
func doneFirst(recs []engine.Msg, idx []int, done []engine.EffectID) []int {
	if len(done) == 0 {
		return idx
	}
	out := make([]int, 0, len(idx))
	for _, first := range []bool{true, false} {
		for _, i := range idx {
			if slices.Contains(done, recs[i].ID) == first {
				out = append(out, i)
			}
		}
	}
	return out
}

func (p *persist) collect(out engine.Msg) { p.outs = append(p.outs, out) }

// commitOut makes one output visible.
func (p *persist) commitOut(ctx engine.Ctx, e *entry, out engine.Msg) {
	ctx.Work(p.t.sink.Cost(p.t.sinkCost, out))
	ctx.Commit(stream.CommitOf(out))
	e.shown = out.Val
}
