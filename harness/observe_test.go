package harness

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/systems"
	"ftbench/workloads"
)

// mutant wraps a registered system: same processes, but every commit goes
// through mutate, which returns what the sink really commits, and the
// claim is replaced. It stands in for sinks whose bugs the checks must
// catch.
type mutant struct {
	systems.System
	name  string
	claim systems.Claim
	// mutate is called per commit with per-process scratch state.
	mutate func(s *mutState, c engine.Commit) []engine.Commit
}

type mutState struct {
	n     int
	extra map[uint64]int64
	last  []engine.Commit
}

func (m mutant) Name() string                                { return m.name }
func (m mutant) Claim(string, systems.Options) systems.Claim { return m.claim }
func (m mutant) Compile(job systems.Job) (*engine.Deployment, error) {
	dep, err := m.System.Compile(job)
	if err != nil {
		return nil, err
	}
	for i := range dep.Procs {
		inner := dep.Procs[i].New
		dep.Procs[i].New = func() engine.Process {
			return &tapped{Process: inner(), t: &mutTap{m: &m, s: &mutState{extra: map[uint64]int64{}}}}
		}
	}
	return dep, nil
}

// mutTap is a mutant's tap (tap_test.go) on one process.
type mutTap struct {
	m *mutant
	s *mutState
}

func (t *mutTap) commit(ctx engine.Ctx, x engine.Commit) {
	for _, y := range t.m.mutate(t.s, x) {
		ctx.Commit(y)
	}
}

func (t *mutTap) timer(engine.Ctx, int64) bool { return false }

// dirty wraps none into a sink with a read-uncommitted store: each effect
// is first written to the store as a pre-committed value, which the broken
// store already serves to readers (dirtyValues, through
// testUncommittedReads), and committed holdFor later. Every effect is
// committed exactly once, in order, with the right value: the delivery
// checker, which sees commits only, finds nothing wrong.
type dirty struct{ systems.System }

const (
	holdFor    = 3 * engine.Millisecond
	dirtyTimer = math.MinInt64 + 12 // none's own timers are small
)

// dirtyValues are the pre-committed values of the test-dirty run in
// progress (the simulation runs on one goroutine).
var dirtyValues = map[uint64]int64{}

func (dirty) Name() string { return "test-dirty" }
func (dirty) Claim(string, systems.Options) systems.Claim {
	return systems.Claim{Guarantee: systems.AtMostOnce}
}
func (d dirty) Compile(job systems.Job) (*engine.Deployment, error) {
	clear(dirtyValues)
	dep, err := d.System.Compile(job)
	if err != nil {
		return nil, err
	}
	for i := range dep.Procs {
		inner := dep.Procs[i].New
		dep.Procs[i].New = func() engine.Process { return &tapped{Process: inner(), t: &dirtyTap{}} }
	}
	return dep, nil
}

// dirtyTap is test-dirty's tap (tap_test.go) on one process: it holds each
// commit back for holdFor, its value pre-committed in dirtyValues.
type dirtyTap struct {
	held  []engine.Commit
	armed bool
}

func (t *dirtyTap) commit(ctx engine.Ctx, x engine.Commit) {
	t.held = append(t.held, x)
	dirtyValues[x.Key] = x.Value
	if !t.armed {
		t.armed = true
		ctx.After(holdFor, dirtyTimer)
	}
}

func (t *dirtyTap) timer(ctx engine.Ctx, id int64) bool {
	if id != dirtyTimer {
		return false
	}
	for _, c := range t.held {
		ctx.Commit(c)
		if dirtyValues[c.Key] == c.Value {
			delete(dirtyValues, c.Key)
		}
	}
	t.held, t.armed = t.held[:0], false
	return true
}

func init() {
	none, err := systems.Lookup("none")
	if err != nil {
		panic(err)
	}
	// Storm's pattern: every 40th commit is applied twice to an external
	// store that counts each application, so later values include it.
	dups := func(s *mutState, c engine.Commit) []engine.Commit {
		s.n++
		c.Value += s.extra[c.Key]
		out := []engine.Commit{c}
		if s.n%40 == 0 {
			s.extra[c.Key]++
			again := c
			again.Value++
			out = append(out, again)
		}
		return out
	}
	systems.Register(mutant{System: none, name: "test-dups", claim: systems.Claim{Guarantee: systems.AtLeastOnce, Monotonic: true}, mutate: dups})
	// A plain sink after a rollback: every 500th commit, the sink first
	// re-commits its previous three effects with the values they had, as a
	// replay from a restored checkpoint would, then carries on. Nothing is
	// lost and the final state is right; a reader sees values go back. One
	// copy claims a monotonic view (broken), one does not (held): barrier's
	// plain sink's claim.
	rollback := func(s *mutState, c engine.Commit) []engine.Commit {
		s.n++
		var out []engine.Commit
		if s.n%500 == 0 {
			out = append(out, s.last...)
		}
		s.last = append(s.last, c)
		if len(s.last) > 3 {
			s.last = s.last[1:]
		}
		return append(out, c)
	}
	systems.Register(mutant{System: none, name: "test-rollback", claim: systems.Claim{Guarantee: systems.AtLeastOnce, Monotonic: true}, mutate: rollback})
	systems.Register(mutant{System: none, name: "test-rollback-plain", claim: systems.Claim{Guarantee: systems.AtLeastOnce}, mutate: rollback})
	systems.Register(dirty{System: none})
	testUncommittedReads["test-dirty"] = func(key uint64) (int64, bool) {
		v, ok := dirtyValues[key]
		return v, ok
	}
}

func observed(system string, faults ...string) Config {
	cfg := short(system, faults...)
	cfg.Duration, cfg.Rate, cfg.Drain = 1500*engine.Millisecond, 5000, 2*engine.Second
	cfg.Observe = true
	return cfg
}

func model(t *testing.T, r *Result) *ModelResult {
	t.Helper()
	if r.Observer == nil || r.Observer.Models[r.Observer.RequiredModel] == nil {
		t.Fatalf("no model result in %+v", r.Observer)
	}
	return r.Observer.Models[r.Observer.RequiredModel]
}

func TestObserveCleanRun(t *testing.T) {
	r := runCfg(t, observed("none"))
	o := r.Observer
	if o.Result != check.LinOK || o.RequiredModel != "at-most-once, non-monotonic" || model(t, r).Visualization != "" {
		t.Errorf("none claims at-most-once, non-monotonic: result %q, model %q", o.Result, o.RequiredModel)
	}
	if o.Applies != r.CommittedEffects || o.Reads < 500 || o.FinalReads != int64(o.Keys) || o.Segments < o.Keys {
		t.Errorf("applies %d (committed %d), reads %d, finals %d, keys %d, segments %d",
			o.Applies, r.CommittedEffects, o.Reads, o.FinalReads, o.Keys, o.Segments)
	}
	if r.ClaimedReader != "non-monotonic" || r.ObservedReader != "monotonic" || !r.ClaimHeld || r.ExitCode != ExitOK {
		t.Errorf("claimed %s observed %s held %v exit %d", r.ClaimedReader, r.ObservedReader, r.ClaimHeld, r.ExitCode)
	}
	if !strings.Contains(r.Replay, " --observe") {
		t.Errorf("replay lacks --observe: %s", r.Replay)
	}
}

// The losses of none: a crash loses the count state, so a reader sees the
// count restart and the final reads miss effects. none claims at-most-once
// and a non-monotonic view, so both the harness and the observer accept
// it; the harness reports the view it saw.
func TestObserveNoneLosses(t *testing.T) {
	r := runCfg(t, observed("none", "crash@500ms:worker=1,restart=200ms"))
	if r.Lost == 0 || r.ObservedReader != "non-monotonic" || r.ReaderRegressions == 0 || r.FirstRegression == nil {
		t.Fatalf("lost %d, observed reader %s, regressions %d", r.Lost, r.ObservedReader, r.ReaderRegressions)
	}
	if r.FirstRegression.AtS < 0.5 || r.FirstRegression.To >= r.FirstRegression.From {
		t.Errorf("first regression %+v: before the crash at 0.5 s, or not back", r.FirstRegression)
	}
	if r.Observer.Result != check.LinOK || !r.ClaimHeld || r.ExitCode != ExitOK {
		t.Fatalf("at-most-once, non-monotonic holds: observer %q held %v exit %d %v", r.Observer.Result, r.ClaimHeld, r.ExitCode, r.Problems)
	}
}

// Storm's duplicates pass at-least-once, monotonic with both checks.
func TestObserveDuplicates(t *testing.T) {
	r := runCfg(t, observed("test-dups"))
	if r.Duplicates == 0 || r.Lost != 0 {
		t.Fatalf("test system: dup=%d lost=%d", r.Duplicates, r.Lost)
	}
	if r.Observer.Result != check.LinOK || !r.ClaimHeld || r.ObservedReader != "monotonic" || r.ExitCode != ExitOK {
		t.Errorf("claim at-least-once, monotonic: observer %q held %v reader %s exit %d %v",
			r.Observer.Result, r.ClaimHeld, r.ObservedReader, r.ExitCode, r.Problems)
	}
}

// A plain sink's rollback: delivery is at-least-once and the final state is
// right, but a reader sees a count and then a smaller one. Under a
// monotonic claim the harness (from the commits) and the observer (from
// the reads) both reject it, and the run exits 3; under barrier's plain
// sink's claim (non-monotonic) both accept it. They never disagree.
func TestObserveRollback(t *testing.T) {
	r := runCfg(t, observed("test-rollback"))
	if r.Duplicates == 0 || r.Lost != 0 || r.WrongKeys != 0 {
		t.Fatalf("test system: dup=%d lost=%d wrong=%d", r.Duplicates, r.Lost, r.WrongKeys)
	}
	if r.ObservedReader != "non-monotonic" || r.ClaimHeld || r.Observer.Result != check.LinIllegal {
		t.Fatalf("monotonic claim: observed %s held %v observer %s", r.ObservedReader, r.ClaimHeld, r.Observer.Result)
	}
	problems := strings.Join(r.Problems, "\n")
	if r.ExitCode != ExitSafety || !strings.Contains(problems, "porcupine") || !strings.Contains(problems, "monotonic reader view") {
		t.Fatalf("exit %d, problems %v", r.ExitCode, r.Problems)
	}
	p := runCfg(t, observed("test-rollback-plain"))
	if p.ObservedReader != "non-monotonic" || !p.ClaimHeld || p.Observer.Result != check.LinOK || p.ExitCode != ExitOK {
		t.Fatalf("non-monotonic claim: observed %s held %v observer %s exit %d %v", p.ObservedReader, p.ClaimHeld, p.Observer.Result, p.ExitCode, p.Problems)
	}
}

// A sink whose store shows readers values before they are committed: every
// commit is right, so the harness's checks pass without --observe; only
// the reader processes see the uncommitted values, and the observer alone
// fails the run.
func TestObserverAloneCatchesUncommittedReads(t *testing.T) {
	cfg := observed("test-dirty")
	cfg.Observe = false
	plain := runCfg(t, cfg)
	if plain.Duplicates != 0 || plain.Lost != 0 || plain.WrongKeys != 0 || !plain.ClaimHeld || plain.ExitCode != ExitOK {
		t.Fatalf("the delivery checker must see nothing: dup %d lost %d wrong %d held %v exit %d %v",
			plain.Duplicates, plain.Lost, plain.WrongKeys, plain.ClaimHeld, plain.ExitCode, plain.Problems)
	}
	out, err := Execute(observed("test-dirty"))
	if err != nil {
		t.Fatal(err)
	}
	r := out.Result
	mr := model(t, r)
	if r.Observer.Result != check.LinIllegal || mr.FirstViolation == nil || !strings.Contains(mr.FirstViolation.Op, "read ->") {
		t.Fatalf("the observer must reject a read of an uncommitted value: %+v %+v", r.Observer, mr.FirstViolation)
	}
	if r.ClaimHeld || r.ExitCode != ExitSafety || !strings.Contains(strings.Join(r.Problems, "\n"), "porcupine") {
		t.Fatalf("held %v exit %d problems %v", r.ClaimHeld, r.ExitCode, r.Problems)
	}
	t.Logf("without --observe: exit %d, claim held %v; with it: exit %d, %d illegal segments, %s",
		plain.ExitCode, plain.ClaimHeld, r.ExitCode, mr.IllegalSegments, r.Problems[0])
	dir, err := Write(t.TempDir(), NewRunID(observed("test-dirty"), time.Unix(1e9, 0)), out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(filepath.Join(dir, r.Observer.Visualization)); err != nil || r.Observer.Visualization != "porcupine.html" {
		t.Fatalf("visualization %q named in run.json: %v", r.Observer.Visualization, err)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	var m struct {
		ClaimedReader  string `json:"claimed_reader"`
		ObservedReader string `json:"observed_reader"`
		ClaimHeld      bool   `json:"claim_held"`
	}
	if err := json.Unmarshal(js, &m); err != nil || m.ClaimedReader != "non-monotonic" || m.ObservedReader != "monotonic" || m.ClaimHeld {
		t.Fatalf("run.json: %+v (%v)", m, err)
	}
}

// A check that cannot finish is unknown: the claim is not held, the run
// exits non-zero, and the problem says why.
func TestObserverTimeoutIsUnknownNeverHeld(t *testing.T) {
	observerTimeout = time.Nanosecond
	defer func() { observerTimeout = 0 }()
	r := runCfg(t, observed("none"))
	if r.Observer.Result != check.LinUnknown || r.ClaimHeld || r.ExitCode != ExitInternal {
		t.Fatalf("observer %q held %v exit %d", r.Observer.Result, r.ClaimHeld, r.ExitCode)
	}
	if !strings.Contains(strings.Join(r.Problems, "\n"), "unknown") {
		t.Fatalf("problems %v", r.Problems)
	}
}

// The reader runs on a client machine of its own: observing a run changes
// nothing the run measures.
func TestObserveDoesNotPerturbTheRun(t *testing.T) {
	cfg := observed("none", "crash@500ms:worker=1,restart=200ms")
	a := runCfg(t, cfg)
	cfg.Observe = false
	b := runCfg(t, cfg)
	a.Observer, a.Host, b.Host, a.SimEvents, b.SimEvents = nil, Host{}, Host{}, 0, 0
	a.Replay, b.Replay = "", ""
	ja, _ := MarshalResult(a)
	jb, _ := MarshalResult(b)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("observing changed the run:\n%s\n%s", ja, jb)
	}
}

func TestObserveDeterministic(t *testing.T) {
	cfg := observed("test-rollback", "crash@500ms:worker=0,restart=200ms")
	enc := func() ([]byte, map[string][]byte) {
		out, err := Execute(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out.Result.Host = Host{}
		b, _ := MarshalResult(out.Result)
		return b, out.Files
	}
	a, fa := enc()
	b, fb := enc()
	if !bytes.Equal(a, b) || len(fa) == 0 || len(fa) != len(fb) {
		t.Fatalf("two observed runs with one seed differ (%d vs %d files)", len(fa), len(fb))
	}
	for name := range fa {
		if !bytes.Equal(fa[name], fb[name]) {
			t.Fatalf("%s differs between runs", name)
		}
	}
}

// The expectations the observer derives agree with the oracle's final
// state, and every workload's contributions are non-negative (the
// monotonic view's definition relies on it).
func TestExpectationsAgreeWithOracle(t *testing.T) {
	for _, name := range []string{"wordcount", "grep", "bank"} {
		w, err := workloads.New(name, 7, nil)
		if err != nil {
			t.Fatal(err)
		}
		appended := []int64{300, 200, 250}
		_, _, final := workloads.Expected(w, appended)
		want := map[uint64]check.Expect{}
		o := workloads.NewOracle(w)
		o.OnEffect = expectations(want)
		for off := int64(0); off < 300; off++ {
			for p, n := range appended {
				if off < n {
					o.Feed(int32(p), off)
				}
			}
		}
		if !hasSink(w) || len(want) != len(final) {
			t.Fatalf("%s: %d keys expected, oracle has %d", name, len(want), len(final))
		}
		for k, v := range final {
			if e := want[k]; e.Sum != v || e.N == 0 {
				t.Fatalf("%s: key %d sums to %d over %d effects, oracle says %d", name, k, e.Sum, e.N, v)
			}
		}
		o = workloads.NewOracle(w)
		o.OnEffect = func(m engine.Msg, prev int64) {
			if m.Val < prev {
				t.Fatalf("%s: effect %+v lowers key %d from %d to %d", name, m.ID, m.Key, prev, m.Val)
			}
		}
		for off := int64(0); off < 200; off++ {
			for p := range appended {
				o.Feed(int32(p), off)
			}
		}
	}
}

// Every read returns the value of its key's last commit strictly before
// the instant it is served, although commits arrive out of time order
// across sink processes (each reports at its slice's start or later).
func TestReadsSeeTheCommitsBeforeThem(t *testing.T) {
	s := newOutputStore()
	rng := engine.NewRand(3)
	type rec struct {
		at    engine.Time
		key   uint64
		value int64
	}
	var all []rec
	var clock [3]engine.Time
	now := engine.Time(0)
	for i := range 5000 {
		p := rng.IntN(3) // three sink processes, each with its own clock
		clock[p] = max(clock[p], now) + engine.Time(rng.IntN(400))*engine.Microsecond
		key := uint64(p*10 + rng.IntN(3))
		s.report(now, clock[p], engine.Commit{ID: engine.EffectID{Off: int64(i)}, Key: key, Value: int64(i)}, check.CommitFirst)
		all = append(all, rec{clock[p], key, int64(i)})
		now = min(clock[0], clock[1], clock[2]) // the runtime's time never passes a process's clock
		if rng.IntN(10) == 0 {
			key := uint64(rng.IntN(3)*10 + rng.IntN(3))
			got := s.read(key, now)
			var want int64
			when := engine.Time(-1)
			for _, c := range all {
				if c.key == key && c.at < now && c.at >= when {
					want, when = c.value, c.at
				}
			}
			if got != want {
				t.Fatalf("read of key %d at %v: got %d, want %d", key, now, got, want)
			}
		}
	}
}

// Monotonicity is judged in commit-time order, not in the order the
// runtime reports commits: a commit reported late but made earlier, with
// a smaller value, is no regression; one made later with a smaller value
// is.
func TestRegressionsInCommitOrder(t *testing.T) {
	s := newOutputStore()
	s.report(0, 5*engine.Millisecond, engine.Commit{Key: 1, Value: 10}, check.CommitFirst)
	s.report(0, 3*engine.Millisecond, engine.Commit{Key: 1, Value: 9}, check.CommitFirst) // another sink's slice
	s.settle(engine.Time(math.MaxInt64))
	if s.regressions != 0 || s.visible.Get(1) != 10 {
		t.Fatalf("in time order 9 then 10: %d regressions, visible %d", s.regressions, s.visible.Get(1))
	}
	s.report(6*engine.Millisecond, 7*engine.Millisecond, engine.Commit{Key: 1, Value: 4}, check.CommitFirst)
	s.settle(engine.Time(math.MaxInt64))
	if s.regressions != 1 || s.first == nil || s.first.From != 10 || s.first.To != 4 {
		t.Fatalf("10 then 4: %d regressions, first %+v", s.regressions, s.first)
	}
}

// The final reads come after the last commit, not only after the instant
// the run stopped: a CPU slice that began before the stop reports its
// commits at the slice's later instants, and the store the final reads
// read holds them. This run (torture's trident campaign, seed 2, shrunk:
// the only worker paused for 2.2 s, so it commits its backlog in long
// slices at the end) commits until 5.39 s while the run stops at 5.3 s;
// final reads placed at 5.3 s were shown those commits' values before the
// history had made them visible, and the observer called a held claim
// illegal.
func TestFinalReadsAfterTheLastCommit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.System, cfg.Workload, cfg.Seed = "trident", "wordcount", 8372316469430341012
	cfg.Duration, cfg.Parallelism, cfg.Workers, cfg.Rate = 4*engine.Second, 1, 1, 9400
	cfg.Faults = []string{"pause@490ms-2.71s:worker=0"}
	cfg.SystemOpts = map[string]string{"ack-timeout": "500ms", "batch-emit-interval": "200ms", "max-batches-pending": "1",
		"offset-commit-interval": "1s", "spout": "non-transactional", "state": "spout"}
	cfg.Observe = true
	r := runCfg(t, cfg)
	if r.Observer.Result != check.LinOK || !r.ClaimHeld || r.ExitCode != ExitOK {
		t.Fatalf("claim none, non-monotonic holds whatever is committed: observer %q held %v exit %d %v",
			r.Observer.Result, r.ClaimHeld, r.ExitCode, r.Problems)
	}
}
