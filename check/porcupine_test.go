package check

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"ftbench/engine"
)

const ms = engine.Millisecond

// hist builds observed histories by hand. Every effect contributes 1, as a
// word count's do.
type hist struct {
	ops  []Op
	want map[uint64]Expect
}

func effect(off int64) engine.EffectID { return engine.EffectID{Off: off} }

// The claims of the systems.
var (
	eo     = Claim{Guarantee: ExactlyOnce, Monotonic: true}  // 2PC, lineage, snapshot
	aloMon = Claim{Guarantee: AtLeastOnce, Monotonic: true}  // stormack
	aloNon = Claim{Guarantee: AtLeastOnce, Monotonic: false} // barrier's plain sink
	amoNon = Claim{Guarantee: AtMostOnce, Monotonic: false}  // none
	noneNo = Claim{Guarantee: None, Monotonic: false}        // snapshot naive
	claims = []Claim{eo, aloMon, aloNon, amoNon, noneNo}
)

// apply adds a commit; commits of one key at one instant fold into one
// apply operation, as the observer folds them.
func (h *hist) apply(key uint64, off int64, at engine.Time, value int64, repeat bool) *hist {
	st := CommitFirst
	if repeat {
		st = CommitDuplicate
	}
	for i := len(h.ops) - 1; i >= 0; i-- {
		if op := &h.ops[i]; op.Key == key {
			if op.Kind == OpApply && op.Return == at {
				op.Add(effect(off), at-ms, at, value, st)
				return h
			}
			break
		}
	}
	var op Op
	op.Key = key
	op.Add(effect(off), at-ms, at, value, st)
	h.ops = append(h.ops, op)
	return h
}

func (h *hist) read(key uint64, call, served, ret engine.Time, value int64) *hist {
	h.ops = append(h.ops, Op{Kind: OpRead, Key: key, Born: served, Value: value, Call: call, Return: ret})
	return h
}

// final adds the final read of key after the run, expecting effects offs.
func (h *hist) final(key uint64, at engine.Time, value int64, offs ...int64) *hist {
	if h.want == nil {
		h.want = map[uint64]Expect{}
	}
	var e Expect
	for _, o := range offs {
		e.Add(effect(o), 1)
	}
	h.want[key] = e
	h.ops = append(h.ops, Op{Kind: OpFinal, Key: key, Value: value, Call: at, Return: at + 1})
	return h
}

func (h *hist) check(t *testing.T, c Claim, opt Options) *Report {
	t.Helper()
	rep, err := Check(h.ops, h.want, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func expectResult(t *testing.T, h *hist, c Claim, want string, violation string) {
	t.Helper()
	rep := h.check(t, c, Options{})
	if rep.Result != want {
		t.Fatalf("%s: result %s, want %s (first: %+v)", c, rep.Result, want, rep.First)
	}
	if violation != "" && (rep.First == nil || !strings.Contains(rep.First.Op, violation)) {
		t.Fatalf("%s: first violation %+v, want one naming %q", c, rep.First, violation)
	}
}

// A plain (non-transactional) sink after a barrier rollback: the count was
// at 5 when the job rolled back to a checkpoint taken at 2; the replay
// commits effects 2-4 again with the values they had, so a reader that saw
// 5 now sees 3. Nothing is lost and the final state is right.
func plainSinkRollback() *hist {
	h := &hist{}
	for i := int64(0); i < 5; i++ {
		h.apply(7, i, engine.Time(i+1)*ms, i+1, false)
	}
	h.read(7, 5500*engine.Microsecond, 5550*engine.Microsecond, 5600*engine.Microsecond, 5)
	h.apply(7, 2, 8*ms, 3, true)
	h.read(7, 8200*engine.Microsecond, 8250*engine.Microsecond, 8300*engine.Microsecond, 3)
	h.apply(7, 3, 9*ms, 4, true)
	h.apply(7, 4, 10*ms, 5, true)
	h.apply(7, 5, 11*ms, 6, false)
	return h.final(7, 20*ms, 6, 0, 1, 2, 3, 4, 5)
}

// The plain sink's own claim (at-least-once, non-monotonic) accepts the
// rollback; a monotonic claim rejects the value going back, exactly-once
// the re-application.
func TestPlainSinkRollback(t *testing.T) {
	expectResult(t, plainSinkRollback(), aloNon, LinOK, "")
	expectResult(t, plainSinkRollback(), noneNo, LinOK, "")
	expectResult(t, plainSinkRollback(), eo, LinIllegal, "p0/o2/s0, 1 again -> 3")
	expectResult(t, plainSinkRollback(), aloMon, LinIllegal, "p0/o2/s0, 1 again -> 3")
	expectResult(t, plainSinkRollback(), amoNon, LinIllegal, "again")
}

// The reader's view alone: every commit is fine, but a read returns a
// count smaller than the one committed before it (a stale replica). No
// claim allows a reader to see what the commits never showed then.
func TestReaderSeesStaleValue(t *testing.T) {
	h := &hist{}
	for i := int64(0); i < 5; i++ {
		h.apply(7, i, engine.Time(i+1)*ms, i+1, false)
	}
	h.read(7, 6*ms, 6*ms, 6*ms+10, 5)
	h.read(7, 7*ms, 7*ms, 7*ms+10, 3)
	h.final(7, 20*ms, 5, 0, 1, 2, 3, 4)
	for _, c := range claims {
		expectResult(t, h, c, LinIllegal, "read -> 3")
	}
}

// A read shown a value before it was committed (a read-uncommitted store
// exposing a transaction's pre-committed value): every commit is right, so
// the delivery checker sees nothing, but no claim allows the read.
func TestReaderSeesUncommittedValue(t *testing.T) {
	h := &hist{}
	h.apply(4, 0, 1*ms, 1, false)
	h.read(4, 2*ms, 2*ms+50, 2*ms+100, 3) // effects 1 and 2 commit at 5 ms
	h.apply(4, 1, 5*ms, 2, false).apply(4, 2, 5*ms, 3, false)
	h.final(4, 20*ms, 3, 0, 1, 2)
	for _, c := range claims {
		expectResult(t, h, c, LinIllegal, "read -> 3")
	}
}

// Storm's duplicates: a replayed tuple is applied again, counted by an
// external store (word count) or rewritten idempotently (grep). Both pass
// at-least-once (monotonic) and fail exactly-once.
func TestStormDuplicates(t *testing.T) {
	counted := &hist{}
	idem := &hist{}
	for i := int64(0); i < 5; i++ {
		counted.apply(1, i, engine.Time(i+1)*ms, i+1, false)
		idem.apply(1, i, engine.Time(i+1)*ms, i+1, false)
	}
	counted.apply(1, 2, 7*ms, 6, true).read(1, 7*ms, 7*ms+5, 7*ms+9, 6).apply(1, 5, 8*ms, 7, false)
	counted.final(1, 20*ms, 7, 0, 1, 2, 3, 4, 5)
	idem.apply(1, 2, 7*ms, 5, true).read(1, 7*ms, 7*ms+5, 7*ms+9, 5).apply(1, 5, 8*ms, 6, false)
	idem.final(1, 20*ms, 6, 0, 1, 2, 3, 4, 5)
	for _, h := range []*hist{counted, idem} {
		expectResult(t, h, eo, LinIllegal, "again")
		expectResult(t, h, aloMon, LinOK, "")
	}
}

// One duplicate and one loss on a key: the final count equals the
// oracle's, but the set of applied effects does not.
func TestDuplicateAndLossDoNotCancel(t *testing.T) {
	h := &hist{}
	h.apply(3, 0, 1*ms, 1, false).apply(3, 1, 2*ms, 2, false).apply(3, 1, 3*ms, 3, true)
	h.final(3, 20*ms, 3, 0, 1, 2) // effect 2 was never committed
	expectResult(t, h, aloMon, LinIllegal, "final read -> 3")
	expectResult(t, h, eo, LinIllegal, "again")
}

// none after a crash: the count's state is gone, so it restarts at 1, and
// effect 5 is lost. Only none's own claim (at-most-once, non-monotonic)
// accepts it.
func TestLostStateRestartsCount(t *testing.T) {
	h := &hist{}
	for i := int64(0); i < 5; i++ {
		h.apply(9, i, engine.Time(i+1)*ms, i+1, false)
	}
	h.apply(9, 6, 50*ms, 1, false).final(9, 90*ms, 1, 0, 1, 2, 3, 4, 5, 6)
	expectResult(t, h, eo, LinIllegal, "p0/o6/s0 -> 1")
	expectResult(t, h, aloMon, LinIllegal, "p0/o6/s0 -> 1")
	expectResult(t, h, aloNon, LinIllegal, "final read")
	expectResult(t, h, amoNon, LinOK, "")
}

func TestConcurrency(t *testing.T) {
	for _, tc := range []struct {
		name      string
		h         *hist
		want      string
		nonMonoOK bool // the non-monotonic claims accept it
	}{
		{"read overlapping a commit sees before", (&hist{}).apply(1, 0, 10*ms, 1, false).read(1, 9*ms, 10*ms, 11*ms, 0), LinOK, true},
		{"read overlapping a commit sees after", (&hist{}).apply(1, 0, 10*ms, 1, false).read(1, 9*ms, 10*ms, 11*ms, 1), LinOK, true},
		{"read called at a commit's instant sees before", (&hist{}).apply(1, 0, 10*ms, 1, false).read(1, 10*ms, 10*ms, 11*ms, 0), LinOK, true},
		{"read returning at a commit's instant sees after", (&hist{}).apply(1, 0, 10*ms, 1, false).read(1, 9*ms, 9*ms, 10*ms, 1), LinOK, true},
		{"read sees a value nobody wrote", (&hist{}).apply(1, 0, 10*ms, 1, false).read(1, 9*ms, 10*ms, 11*ms, 2), LinIllegal, false},
		{"read after a commit sees before", (&hist{}).apply(1, 0, 10*ms, 1, false).read(1, 11*ms, 11*ms, 12*ms, 0), LinIllegal, false},
		{"read sees the middle of an instant", (&hist{}).apply(1, 0, 10*ms, 1, false).apply(1, 1, 10*ms, 2, false).read(1, 9*ms, 10*ms, 11*ms, 1), LinIllegal, false},
		{"one instant, value back in commit order",
			(&hist{}).apply(1, 0, 10*ms, 2, false).apply(1, 1, 10*ms, 1, false).apply(1, 2, 10*ms, 3, false), LinIllegal, true},
		{"three instants, value back",
			(&hist{}).apply(1, 0, 10*ms, 2, false).apply(1, 1, 11*ms, 1, false).apply(1, 2, 12*ms, 3, false), LinIllegal, true},
	} {
		for _, c := range []Claim{eo, aloNon} {
			want := tc.want
			if !c.Monotonic && tc.nonMonoOK {
				want = LinOK
			}
			if rep := tc.h.check(t, c, Options{}); rep.Result != want {
				t.Errorf("%s, %s: %s, want %s (%+v)", tc.name, c, rep.Result, want, rep.First)
			}
		}
	}
}

// Cutting a key's history into segments at quiescent instants changes
// nothing: random sinks with random bugs get the same verdict with tiny
// segments as with one segment per key.
func TestSegmentsAreExact(t *testing.T) {
	illegal, checks := 0, 0
	for seed := uint64(0); seed < 300; seed++ {
		h := randomHistory(seed)
		for _, c := range claims {
			whole := h.check(t, c, Options{SegmentOps: 1 << 30})
			cut := h.check(t, c, Options{SegmentOps: 2, Jobs: 3})
			if whole.Result != cut.Result || cut.Segments <= whole.Segments && len(h.ops) > 40 {
				t.Fatalf("seed %d %s: whole %s (%d segments), cut %s (%d segments)", seed, c, whole.Result, whole.Segments, cut.Result, cut.Segments)
			}
			checks++
			if whole.Result == LinIllegal {
				illegal++
			}
		}
	}
	t.Logf("%d of %d illegal", illegal, checks)
	if illegal < checks/6 || illegal > checks*5/6 {
		t.Fatalf("%d of %d checks illegal: the generator should give both verdicts often", illegal, checks)
	}
}

// randomHistory is a counting sink on three keys that, rarely, replays a
// commit (counted, idempotent or rolled back), loses its state or has a read
// served stale, with reads in between and final reads.
func randomHistory(seed uint64) *hist {
	rng := engine.NewRand(seed)
	h := &hist{}
	var off int64
	for key := uint64(0); key < 3; key++ {
		var value int64
		var offs []int64
		t := engine.Time(0)
		for range 20 + rng.IntN(20) {
			t += engine.Time(rng.IntN(3)) // instants are shared sometimes
			switch x := rng.IntN(1000); {
			case x < 4 && len(offs) > 0:
				value = int64(rng.IntN(int(value) + 1)) // rollback or lost state
				h.apply(key, offs[len(offs)-1], t, value, true)
			case x < 12 && len(offs) > 0:
				value += int64(rng.IntN(2)) // counted or idempotent replay
				h.apply(key, offs[rng.IntN(len(offs))], t, value, true)
			case x < 250:
				// Served after the commits of its instant are whole: a
				// read served at t sees those strictly before t.
				served := t + 1 + engine.Time(rng.IntN(2))
				v := value
				if rng.IntN(100) < 2 {
					v-- // stale
				}
				h.read(key, t, served, served+engine.Time(rng.IntN(2)), v)
				t = served
			default:
				value++
				h.apply(key, off, t, value, false)
				offs = append(offs, off)
				off++
			}
		}
		h.final(key, 1000, value, offs...)
	}
	return h
}

func TestTimeoutIsUnknownNeverOK(t *testing.T) {
	rep := plainSinkRollback().check(t, aloNon, Options{Timeout: time.Nanosecond})
	if rep.Result != LinUnknown || rep.Unchecked != rep.Segments || rep.First != nil {
		t.Fatalf("a check that ran out of time: %s, %d of %d unchecked", rep.Result, rep.Unchecked, rep.Segments)
	}
}

func TestVisualizeAnnotatesFaults(t *testing.T) {
	rep := plainSinkRollback().check(t, aloMon, Options{})
	var html bytes.Buffer
	ok, err := rep.Visualize(&html, []Annotation{{Start: 6 * ms, End: 7 * ms, Description: "crash", Details: "crash@6ms:worker=1"}})
	if err != nil || !ok {
		t.Fatalf("visualize: %v %v", ok, err)
	}
	for _, want := range []string{"crash@6ms:worker=1", "p0/o2/s0, 1 again -\\u003e 3", "segment start"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("visualization lacks %q", want)
		}
	}
	good := (&hist{}).apply(1, 0, ms, 1, false).check(t, eo, Options{})
	if ok, _ := good.Visualize(&html, nil); ok {
		t.Fatalf("a linearizable history has nothing to show")
	}
}

// A long run's hot key: 100k commits and reads on one key are checked in
// segments, quickly and in little memory.
func TestLongHistory(t *testing.T) {
	h := &hist{}
	var offs []int64
	for i := int64(0); i < 100_000; i++ {
		at := engine.Time(i) * 10 * engine.Microsecond
		h.apply(1, i, at, i+1, false)
		offs = append(offs, i)
		if i%10 == 0 {
			h.read(1, at+1, at+2, at+3, i+1)
		}
	}
	h.final(1, engine.Second*10, 100_000, offs...)
	rep := h.check(t, eo, Options{})
	if rep.Result != LinOK || rep.Segments < 100 {
		t.Fatalf("result %s in %d segments", rep.Result, rep.Segments)
	}
}

func TestUnknownModel(t *testing.T) {
	if _, err := Check(nil, nil, Claim{Guarantee: "at-least-twice"}, Options{}); err == nil {
		t.Fatal("an unknown guarantee has no model")
	}
}

// A 2PC sink's checkpoint: thousands of commits of each key at one
// instant, with reads around them. Folded per instant, they cost one step
// each, so the check is linear in the history: 200 keys x 50 checkpoints
// x 1000 commits (10 M commits) check in well under the time limit.
func TestTiesAtOneInstantScale(t *testing.T) {
	h := &hist{}
	want := map[uint64]Expect{}
	var off int64
	for key := uint64(0); key < 200; key++ {
		var value int64
		var e Expect
		for ck := int64(1); ck <= 50; ck++ {
			at := engine.Time(ck) * engine.Second
			var op Op
			op.Key = key
			for range 1000 {
				value++
				op.Add(effect(off), at-ms, at, value, CommitFirst)
				e.Add(effect(off), 1)
				off++
			}
			h.ops = append(h.ops, op)
			h.read(key, at-ms, at, at+ms, value) // concurrent with the instant
			h.read(key, at+2*ms, at+3*ms, at+4*ms, value)
		}
		want[key] = e
		h.ops = append(h.ops, Op{Kind: OpFinal, Key: key, Value: value, Call: 100 * engine.Second, Return: 100*engine.Second + 1})
	}
	h.want = want
	start := time.Now()
	rep := h.check(t, eo, Options{Timeout: 20 * time.Second})
	if rep.Result != LinOK {
		t.Fatalf("result %s (%+v)", rep.Result, rep.First)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("10 M commits at 10 000 instants took %v", el)
	}
}
