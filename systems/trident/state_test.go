package trident

import (
	"testing"

	"ftbench/engine"
	"ftbench/workloads"
)

// applyCtx is the part of engine.Ctx that persist.apply uses: it records
// commits and counters; any other call panics (the embedded nil Ctx).
type applyCtx struct {
	engine.Ctx
	cost     engine.CostModel
	commits  []engine.Commit
	counters map[string]int64
}

func (c *applyCtx) Work(engine.Time)           {}
func (c *applyCtx) Cost() *engine.CostModel    { return &c.cost }
func (c *applyCtx) Record(engine.Event)        {}
func (c *applyCtx) Count(name string, d int64) { c.counters[name] += d }
func (c *applyCtx) Commit(cm engine.Commit)    { c.commits = append(c.commits, cm) }
func (c *applyCtx) last() int64                { return c.commits[len(c.commits)-1].Value }
func newApplyCtx() *applyCtx {
	return &applyCtx{cost: engine.DefaultCost(), counters: map[string]int64{}}
}

// batch is a multi-put of records at offsets offs, all for key 7.
func batch(txid int64, attempt int32, offs ...int64) *write {
	w := &write{tx: txAttempt{txid: txid, attempt: attempt}}
	for _, o := range offs {
		w.recs = append(w.recs, engine.Msg{Key: 7, Val: 1, ID: engine.EffectID{Off: o}, Born: engine.Time(o)})
	}
	return w
}

// counting is a persistentAggregate(Count) over key 7: the fused keyed
// stage adds one per record and emits the running count.
func counting(state string) *persist {
	count := &workloads.Stage{Name: "count", Update: func(v *int64, m engine.Msg, emit func(engine.Msg)) {
		*v++
		m.Val = *v
		emit(m)
	}, Cost: func(*engine.CostModel, engine.Msg) engine.Time { return 0 }}
	sink := &workloads.Stage{Name: "sink", Sink: true, Cost: func(*engine.CostModel, engine.Msg) engine.Time { return 0 }}
	t := &topo{state: state, fused: count, sink: sink}
	return &persist{t: t, tab: table{}}
}

// Step by step, the three states under the same sequence of multi-puts:
// batch 1 (two records), batch 1 again (a replay after a commit that was
// applied but not acknowledged), an opaque-style replay of batch 2 that
// carries one more record than its failed attempt, and finally a zombie's
// late write of batch 1 after batch 2.
func TestStateRules(t *testing.T) {
	type step struct {
		w       *write
		val     int64 // the key's value after the step
		commits int   // effects committed by the step
	}
	cases := []struct {
		state string
		steps []step
	}{
		{stateTransactional, []step{
			{batch(1, 0, 1, 2), 2, 2},
			{batch(1, 1, 1, 2), 2, 0}, // stored txid = 1: skipped
			{batch(2, 0, 3), 3, 1},    //
			{batch(2, 1, 3, 4), 3, 0}, // skipped: transactional state cannot take a different replay
			{batch(1, 2, 1, 2), 3, 0}, // zombie: txid 1 < stored 2, fenced
		}},
		{stateOpaque, []step{
			{batch(1, 0, 1, 2), 2, 2},
			{batch(1, 1, 1, 2), 2, 0}, // reapplied to prev (0): same value, no new effect
			{batch(2, 0, 3), 3, 1},    //
			{batch(2, 1, 3, 4), 4, 1}, // reapplied to prev (2) with the extra record: only it is a new effect
			{batch(1, 2, 1, 2), 4, 0}, // zombie: fenced
		}},
		{stateNonTransactional, []step{
			{batch(1, 0, 1, 2), 2, 2},
			{batch(1, 1, 1, 2), 4, 2}, // applied again: double counted
			{batch(2, 0, 3), 5, 1},
			{batch(2, 1, 3, 4), 7, 2},
			{batch(1, 2, 1, 2), 9, 2},
		}},
	}
	for _, c := range cases {
		p, ctx := counting(c.state), newApplyCtx()
		for i, s := range c.steps {
			before := len(ctx.commits)
			p.apply(ctx, s.w)
			if got := p.tab[7].val; got != s.val {
				t.Fatalf("%s step %d (tx %d/%d): value %d, want %d", c.state, i+1, s.w.tx.txid, s.w.tx.attempt, got, s.val)
			}
			if got := len(ctx.commits) - before; got != s.commits {
				t.Fatalf("%s step %d: %d effects committed, want %d", c.state, i+1, got, s.commits)
			}
			if s.commits > 0 && ctx.last() != s.val {
				t.Fatalf("%s step %d: last effect %d, want the stored value %d", c.state, i+1, ctx.last(), s.val)
			}
		}
	}
}

// The fence is what keeps a zombie's late write from corrupting state:
// counted, and nothing of it applied.
func TestZombieWriteIsFenced(t *testing.T) {
	for _, state := range []string{stateTransactional, stateOpaque} {
		p, ctx := counting(state), newApplyCtx()
		p.apply(ctx, batch(1, 0, 1))
		p.apply(ctx, batch(2, 0, 2, 3))
		p.apply(ctx, batch(1, 0, 1)) // the old committer of batch 1, late
		if e := p.tab[7]; e.val != 3 || e.txid != 2 || ctx.counters[cFencedWrites] != 1 {
			t.Fatalf("%s: entry %+v, fenced %d: want value 3 at txid 2 and one fenced write", state, *e, ctx.counters[cFencedWrites])
		}
	}
}

// A batch's buffer holds its own attempt's tuples only. Torture's trident
// campaign (seed 1, transactional spout, opaque state, run 6) found a late
// tuple of txid 2's failed attempt 0 — emitted late by an emitter whose
// partition was down (source-down), and slowed by a throttle — reaching a
// partition after it had all of attempt 1 (so its tracker had forgotten
// the batch): it went into attempt 1's buffer and was applied twice at the
// commit. Here the tracker is empty, as after attempt 1 finished.
func TestLateOlderAttemptNotBuffered(t *testing.T) {
	p := counting("opaque")
	p.trk = newTracker(1, 0)
	p.bufs = map[int64]*buffer{2: {attempt: 1, recs: []engine.Msg{{Key: 7, ID: engine.EffectID{Off: 5}}}}}
	tests := []struct {
		tx   txAttempt
		want int // records in txid 2's buffer after the tuple
	}{
		{txAttempt{txid: 2, attempt: 0}, 1}, // late and older: dropped
		{txAttempt{txid: 2, attempt: 1}, 2}, // its own attempt: buffered
		{txAttempt{txid: 2, attempt: 2}, 1}, // a newer attempt: a new buffer
	}
	for _, tt := range tests {
		p.Handle(newApplyCtx(), 0, withTx(engine.Msg{Key: 7, ID: engine.EffectID{Off: 5}}, tt.tx))
		if b := p.bufs[2]; b.attempt < tt.tx.attempt || len(b.recs) != tt.want {
			t.Errorf("after a tuple of %+v: buffer of attempt %d with %d records, want %d", tt.tx, b.attempt, len(b.recs), tt.want)
		}
	}
}

// An opaque replay that brings a record appended before the ones its
// failed attempt committed (a partition the failed attempt went on without:
// source-down) commits only the new record's effect: the records already
// committed are applied first and show the values they showed. Applied in
// append order instead, the old record's output would come at another
// value and be committed a second time (torture's trident campaign, seed 1,
// opaque spout, run 193).
func TestOpaqueReplayWithEarlierRecordCommitsEachEffectOnce(t *testing.T) {
	p := counting("opaque")
	ctx := newApplyCtx()
	p.apply(ctx, batch(1, 0, 10)) // committed at this partition, then the batch failed elsewhere
	p.apply(ctx, batch(1, 1, 5, 10))
	seen := map[engine.EffectID]int{}
	for _, c := range ctx.commits {
		seen[c.ID]++
	}
	if len(ctx.commits) != 2 || seen[engine.EffectID{Off: 10}] != 1 || seen[engine.EffectID{Off: 5}] != 1 || ctx.last() != 2 {
		t.Fatalf("commits %+v: want offsets 10 then 5, once each, ending at 2", ctx.commits)
	}
}
