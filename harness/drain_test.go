package harness

import (
	"strings"
	"testing"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/systems"
	_ "ftbench/systems/barrier"
	_ "ftbench/systems/stormack"
)

// sinkBug wraps a registered system: its sink processes get a fresh tap
// from newTap (tap_test.go), and the claim is replaced. It stands in for
// sinks with the bugs the drain and settle rules must catch.
type sinkBug struct {
	systems.System
	name   string
	claim  systems.Claim
	newTap func() tap
}

func (s sinkBug) Name() string                                { return s.name }
func (s sinkBug) Claim(string, systems.Options) systems.Claim { return s.claim }

// CommitCycle forwards to the wrapped system: the embedded interface does
// not promote it, and the settle window depends on it.
func (s sinkBug) CommitCycle(variant string, opts systems.Options) engine.Time {
	return systems.CommitCycle(s.System, variant, opts)
}

func (s sinkBug) Compile(job systems.Job) (*engine.Deployment, error) {
	dep, err := s.System.Compile(job)
	if err != nil {
		return nil, err
	}
	for i := range dep.Procs {
		if !dep.Procs[i].Runs("sink") {
			continue
		}
		inner := dep.Procs[i].New
		dep.Procs[i].New = func() engine.Process { return &tapped{Process: inner(), t: s.newTap()} }
	}
	return dep, nil
}

// dropper drops every 50th commit and keeps a periodic timer ticking
// forever, as a sink with a bug and a heartbeat would: the run is quiet
// otherwise, so its missing effects must be losses, not pending.
type dropper struct{ n int }

const tickHeartbeat = 1 << 40

func (d *dropper) start(ctx engine.Ctx) { ctx.After(engine.Millisecond, tickHeartbeat) }

func (d *dropper) commit(ctx engine.Ctx, x engine.Commit) {
	d.n++
	if d.n%50 != 0 {
		ctx.Commit(x)
	}
}

func (d *dropper) timer(ctx engine.Ctx, id int64) bool {
	if id != tickHeartbeat {
		return false
	}
	ctx.After(engine.Millisecond, tickHeartbeat)
	return true
}

// lateDup commits its last effect once more when the sink has been silent
// for lateAfter: under a 2PC sink committing every second that happens only
// after the last checkpoint of the drain, 1.5 s after the last expected
// effect, where the run used to have stopped (1 s after).
type lateDup struct {
	last   engine.Commit
	lastAt engine.Time
	armed  bool
	done   bool
}

const (
	tickLate  = 1 << 41
	lateAfter = 1500 * engine.Millisecond
)

func (l *lateDup) commit(ctx engine.Ctx, x engine.Commit) {
	ctx.Commit(x)
	l.last, l.lastAt = x, ctx.Now()
	if !l.armed && !l.done {
		l.armed = true
		ctx.After(lateAfter, tickLate)
	}
}

func (l *lateDup) timer(ctx engine.Ctx, id int64) bool {
	if id != tickLate {
		return false
	}
	if wait := l.lastAt + lateAfter - ctx.Now(); wait > 0 {
		ctx.After(wait, tickLate)
		return true
	}
	l.armed, l.done = false, true
	ctx.Commit(l.last)
	return true
}

func init() {
	none, err := systems.Lookup("none")
	if err != nil {
		panic(err)
	}
	systems.Register(sinkBug{System: none, name: "test-drop", claim: systems.ExactlyOnceMonotonic,
		newTap: func() tap { return &dropper{} }})
	barrier, err := systems.Lookup("barrier")
	if err != nil {
		panic(err)
	}
	systems.Register(sinkBug{System: barrier, name: "test-late-dup", claim: systems.ExactlyOnceMonotonic,
		newTap: func() tap { return &lateDup{} }})
}

// Slow runs: each stops with effects pending while the
// runtime still sees work (a backlog in channels, a worker down with its
// restart pending, commits still coming), so each is undrained (exit 4)
// with its pending effects counted, not a broken claim.
func TestSlowRunsAreUndrained(t *testing.T) {
	slowBuffers := DefaultConfig()
	slowBuffers.System, slowBuffers.Duration = "barrier", 2*engine.Second
	slowBuffers.CostOverride = []string{"buffer-bytes=1"}
	// Every record its own network buffer on all three edges: unchained
	// (chained, only split->count has a channel and the run drains).
	slowBuffers.SystemOpts = map[string]string{"chaining": "false"}
	neverBack := DefaultConfig()
	neverBack.System, neverBack.Duration = "barrier", 3*engine.Second
	neverBack.Faults = []string{"crash@1s:worker=1,restart=1000000h"}
	pending := DefaultConfig()
	pending.System, pending.Duration, pending.Rate = "stormack", 6*engine.Second, 40_000
	pending.SystemOpts = map[string]string{"ack-timeout": "1s", "max-spout-pending": "10"}
	for name, tc := range map[string]struct {
		cfg  Config
		want string // in the runtime's account
	}{
		"buffer-bytes=1":       {slowBuffers, "data bytes in channels"},
		"restart=1000000h":     {neverBack, "processes down with a restart pending"},
		"max-spout-pending=10": {pending, "data bytes in channels"},
	} {
		r := runCfg(t, tc.cfg)
		if r.ExitCode != ExitLiveness || !r.Undrained() || r.Drained || r.Quiescent {
			t.Errorf("%s: exit %d undrained=%v drained=%v quiescent=%v, want exit 4 undrained; problems %v",
				name, r.ExitCode, r.Undrained(), r.Drained, r.Quiescent, r.Problems)
			continue
		}
		if r.PendingEffects == 0 || r.Lost != 0 || r.WrongKeys != 0 || !r.ClaimHeld || r.Pending == nil {
			t.Errorf("%s: pending=%d lost=%d wrong=%d held=%v: the backlog must be pending, not lost", name, r.PendingEffects, r.Lost, r.WrongKeys, r.ClaimHeld)
			continue
		}
		var sum int64
		for _, p := range r.Pending.Partitions {
			sum += p.Effects
		}
		if sum != r.PendingEffects || r.Pending.OldestOffset < 0 || !strings.Contains(r.Pending.Activity, tc.want) {
			t.Errorf("%s: pending detail %+v (sum %d of %d), want the runtime to report %q", name, r.Pending, sum, r.PendingEffects, tc.want)
		}
		if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "undrained") {
			t.Errorf("%s: problems %v", name, r.Problems)
		}
	}
}

// An at-most-once system's crash losses stay losses: the run goes quiet.
func TestNoneCrashIsQuiescentLoss(t *testing.T) {
	r := runCfg(t, short("none", "crash"))
	if r.Lost == 0 || r.PendingEffects != 0 || !r.Quiescent || r.ExitCode != ExitOK || r.Verdict != "at-most-once" {
		t.Fatalf("lost=%d pending=%d quiescent=%v exit=%d verdict=%s problems=%v", r.Lost, r.PendingEffects, r.Quiescent, r.ExitCode, r.Verdict, r.Problems)
	}
}

// A sink that drops effects and then only ticks a periodic timer is
// quiescent: its missing effects are losses and its exactly-once claim is
// broken (exit 3), however long its heartbeat goes on.
func TestLossIsNeverUndrained(t *testing.T) {
	r := runCfg(t, short("test-drop"))
	if r.Lost == 0 || r.PendingEffects != 0 || !r.Quiescent || r.Drained || r.ExitCode != ExitSafety || r.ClaimHeld {
		t.Fatalf("lost=%d pending=%d quiescent=%v drained=%v exit=%d held=%v problems=%v",
			r.Lost, r.PendingEffects, r.Quiescent, r.Drained, r.ExitCode, r.ClaimHeld, r.Problems)
	}
}

// A 2PC sink that commits an effect again 1.5 s after its last expected
// effect is caught: the settle window (two 1 s checkpoint cycles) is still
// running. The run used to stop 1 s after draining and miss it.
func TestLateDuplicateIsCounted(t *testing.T) {
	cfg := short("test-late-dup")
	cfg.Duration, cfg.Rate = 3*engine.Second, 5000
	var drainedAt, dupAt engine.Time
	out := executeHooked(t, cfg, func(at engine.Time, c engine.Commit, first bool) {
		if !first {
			dupAt = max(dupAt, at)
		} else {
			drainedAt = max(drainedAt, at)
		}
	})
	r := out.Result
	if r.Duplicates == 0 || r.ExitCode != ExitSafety || !r.Drained || r.ClaimHeld {
		t.Fatalf("duplicates=%d exit=%d drained=%v held=%v problems=%v", r.Duplicates, r.ExitCode, r.Drained, r.ClaimHeld, r.Problems)
	}
	if dupAt-drainedAt < engine.Second {
		t.Fatalf("the duplicate came %v after the last expected effect, want more than the old 1 s hold", dupAt-drainedAt)
	}
	if r.Config.SettleS != 2 {
		t.Errorf("settle_s %g, want 2 (two 1 s checkpoint cycles)", r.Config.SettleS)
	}
}

// The observer does not turn an undrained run into a broken claim: keys
// that pending effects write get no final read (their value lags the
// oracle's legitimately), the rest are still checked.
func TestObservedUndrainedRun(t *testing.T) {
	cfg := DefaultConfig()
	cfg.System, cfg.Duration, cfg.Rate, cfg.Drain = "stormack", 2*engine.Second, 40_000, 2*engine.Second
	cfg.SystemOpts = map[string]string{"ack-timeout": "1s", "max-spout-pending": "10"}
	cfg.Observe = true
	r := runCfg(t, cfg)
	if r.ExitCode != ExitLiveness || !r.Undrained() || r.Observer == nil || r.Observer.Result == check.LinIllegal {
		t.Fatalf("exit %d undrained=%v observer %+v problems %v", r.ExitCode, r.Undrained(), r.Observer, r.Problems)
	}
}
