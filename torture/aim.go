package torture

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
	"ftbench/systems"
)

// Aiming at milestones. A bug that lives a few milliseconds after a
// protocol milestone — a checkpoint's files deleted before the next one's
// metadata is durable, a write-ahead log cleaned before the checkpoint that
// covers it is — is caught only by a fault that lands in that window.
// Faults aimed at a checkpoint's trigger (schedule.go) reach it by luck:
// how long a checkpoint takes depends on the run. So three runs in four
// aim, at the milestones the system names (systems.Milestoner), found in a
// dry run of the same configuration (one seed drives everything, so the
// dry run and the aim are deterministic); the fourth runs as drawn. (With
// half the runs aimed, the barrier milestone mutant escaped seed 4's 200
// runs: docs/torture.md, "Mutants".)
//
//   - re-timing (a quarter of the runs): some of the drawn crashes, master
//     crashes, pauses and partitions move to within 5 ms after a milestone
//     of the dry run without them (exact for the first of them; a second
//     is aimed at the timeline without the first, so it lands near, not
//     exactly at, a milestone);
//   - a follow-up (half the runs): the dry run is the run as drawn,
//     and one more crash lands within 5 ms after a milestone of the
//     recovery from its first fault (the first checkpoint after a restore,
//     the commit that moves past replayed tuples): exact, since the run is
//     the dry run up to then. Not in a run with a drawn partition, which
//     is aimed at the commit-notice window already.
//
// Like Jepsen's targeted nemeses, an aimed fault also moves, three times
// in four (always for a follow-up), to the node of the process that
// reached the milestone: the master node for a coordinator or driver.
const (
	// aimWindow: an aimed fault starts 0 to aimWindow after its milestone
	// (whole milliseconds, as every drawn time): about a store write's
	// latency, the window a checkpoint's metadata write or a commit notice
	// is in flight.
	aimWindow = 5 * engine.Millisecond
	// retimeOdds: a re-timing moves each crash, pause and partition with
	// probability 1/retimeOdds.
	retimeOdds = 2
	// retargetOdds: a re-timed fault moves to the milestone's node with
	// probability 1-1/retargetOdds.
	retargetOdds = 4
	// shortRestart is the restart delay of an aimed crash whose drawn
	// delay would leave no milestone to aim at (schedule.go's shortest).
	shortRestart = 100 * engine.Millisecond
)

// aim aims some of run cfg's faults at the system's milestones, from its
// own random stream (the other draws stay as they were). It returns the new
// configuration and one line per aimed fault for torture.json; a
// configuration that cannot be aimed (no milestones, no fault, the live
// runtime, a dry run that fails) is returned as it is.
func aim(cfg harness.Config, seed uint64) (harness.Config, []string) {
	if cfg.Runtime == harness.RuntimeLive || len(cfg.Faults) == 0 {
		return cfg, nil // the live runtime's timing is not reproducible
	}
	sys, err := systems.Lookup(cfg.System)
	if err != nil {
		return cfg, nil
	}
	variant, err := systems.ResolveVariant(sys, cfg.Variant)
	if err != nil {
		return cfg, nil
	}
	a := aimer{cfg: cfg, kinds: systems.Milestones(sys, variant), rng: engine.NewRand(engine.ChildSeed(seed, "torture/aim"))}
	if len(a.kinds) == 0 {
		return cfg, nil
	}
	a.specs = make([]faults.Spec, len(cfg.Faults))
	for i, f := range cfg.Faults {
		if a.specs[i], err = faults.Parse(f, faults.Defaults{Duration: cfg.Duration}); err != nil {
			return cfg, nil // the run itself reports it
		}
	}
	dep, err := harness.Deployment(cfg)
	if err != nil {
		return cfg, nil
	}
	a.dep, a.b = dep, runBounds(cfg)
	a.nodeOf = map[string]int{}
	for _, p := range dep.Procs {
		a.nodeOf[p.Name] = p.Worker
	}
	switch a.rng.IntN(4) { // the shares in the comment at the top
	case 0:
		a.retime()
	case 1, 2:
		a.followUp()
	default:
		return cfg, nil
	}
	slices.SortStableFunc(a.specs, func(x, y faults.Spec) int { return cmp.Compare(x.At, y.At) })
	cfg.Faults = make([]string, len(a.specs))
	for i, s := range a.specs {
		cfg.Faults[i] = s.String()
	}
	return cfg, a.notes
}

// aimer is one run's targeted nemesis, as Jepsen's are: it reads where the
// protocol will be (the dry run's milestones) and puts faults there. Its
// invariants: every fault it places passes faults.Check beside the others
// (or is not placed), each still ends or restarts before 80% of the input,
// and every draw comes from its own stream, so the schedule stays a pure
// function of the run's seed.
type aimer struct {
	cfg    harness.Config
	kinds  []string
	rng    *rand.Rand
	specs  []faults.Spec
	dep    *engine.Deployment
	b      faults.Bounds
	nodeOf map[string]int
	notes  []string
}

// retime moves each crash, pause and partition, with probability
// 1/retimeOdds, just after a milestone of the dry run without them.
func (a *aimer) retime() {
	var chosen []int
	for i, s := range a.specs {
		if aimable(s) && a.rng.IntN(retimeOdds) == 0 {
			chosen = append(chosen, i)
		}
	}
	if len(chosen) == 0 {
		return
	}
	marks, err := a.dryRun(chosen)
	if err != nil || len(marks) == 0 {
		return
	}
	for _, i := range chosen {
		s := a.specs[i]
		// Where the drawn fault could start and still end (or restart)
		// before 80% of the input, as schedule.go draws them.
		lo, late := a.cfg.Duration/10, a.cfg.Duration*8/10-away(s, a.b)
		if s.Kind == faults.Crash && s.Restart != shortRestart && !hasMark(marks, lo, late) {
			// The milestones come too late for the drawn restart delay:
			// a quick restart lets the crash aim at them.
			s.Restart = shortRestart
			late = a.cfg.Duration*8/10 - shortRestart
		}
		m, ok := a.pick(marks, lo, late)
		if !ok {
			continue
		}
		moved := s
		moved.At = a.after(m)
		if s.End > 0 {
			moved.End = moved.At + (s.End - s.At)
		}
		if a.rng.IntN(retargetOdds) != 0 {
			retarget(&moved, a.nodeOf, m.Proc)
		}
		a.place(i, moved, m)
	}
}

// followUp adds a crash just after a milestone of the recovery from the
// run's first fault, on the milestone's node, found in a dry run of the run
// as drawn.
func (a *aimer) followUp() {
	if slices.ContainsFunc(a.specs, func(s faults.Spec) bool { return s.Kind == faults.Partition }) {
		// The run has its targeted fault already: drawer.partition aims
		// it at the commit-notice window, and a crash beside it would end
		// the zombie it makes before the heal.
		return
	}
	first := slices.MinFunc(a.specs, func(x, y faults.Spec) int { return cmp.Compare(x.At, y.At) })
	marks, err := a.dryRun(nil)
	if err != nil {
		return
	}
	restart := []engine.Time{shortRestart, 300 * engine.Millisecond}[a.rng.IntN(2)]
	m, ok := a.pick(marks, first.At+engine.Millisecond, a.cfg.Duration*8/10-restart)
	if !ok {
		return
	}
	s := faults.Spec{Kind: faults.Crash, At: a.after(m), Worker: -1, Restart: restart}
	retarget(&s, a.nodeOf, m.Proc)
	if s.Worker < 0 && !s.Master {
		return // a process the deployment does not place
	}
	a.place(-1, s, m)
}

// pick chooses a milestone whose aimed fault would start in [lo, late]:
// each milestone kind is as likely as the others, however often it occurs
// (every sink commits once per checkpoint; the coordinator acknowledges it
// once).
func (a *aimer) pick(marks []engine.Event, lo, late engine.Time) (engine.Event, bool) {
	byKind := map[string][]engine.Event{}
	var present []string
	for _, m := range marks {
		if fits(m, lo, late) {
			if byKind[m.Kind] == nil {
				present = append(present, m.Kind)
			}
			byKind[m.Kind] = append(byKind[m.Kind], m)
		}
	}
	if len(present) == 0 {
		return engine.Event{}, false
	}
	slices.SortFunc(present, func(x, y string) int { return cmp.Compare(slices.Index(a.kinds, x), slices.Index(a.kinds, y)) })
	cands := byKind[present[a.rng.IntN(len(present))]]
	return cands[a.rng.IntN(len(cands))], true
}

// after is a drawn whole millisecond within aimWindow after milestone m.
func (a *aimer) after(m engine.Event) engine.Time {
	return nextMs(m.Time) + engine.Time(a.rng.IntN(int(aimWindow/engine.Millisecond)))*engine.Millisecond
}

// place puts aimed fault s in the schedule (replacing spec i, or added
// when i < 0) unless the runtime could not run it beside the others (a
// second crash of a worker still down, overlapping partitions).
func (a *aimer) place(i int, s faults.Spec, m engine.Event) {
	trial := slices.Clone(a.specs)
	if i >= 0 {
		trial[i] = s
	} else {
		trial = append(trial, s)
	}
	if faults.Check(trial, a.dep, a.b) != nil {
		return
	}
	a.specs = trial
	a.notes = append(a.notes, fmt.Sprintf("%s: %s after %s %d of %s (at %s in the dry run)", s.String(), fmtTime(s.At-m.Time), m.Kind, m.ID, m.Proc, fmtTime(m.Time)))
}

// hasMark reports whether a milestone can be aimed at in [lo, late].
func hasMark(marks []engine.Event, lo, late engine.Time) bool {
	return slices.ContainsFunc(marks, func(m engine.Event) bool { return fits(m, lo, late) })
}

// fits reports whether a fault aimed after milestone m starts in [lo,
// late] wherever in its window it lands.
func fits(m engine.Event, lo, late engine.Time) bool {
	at := nextMs(m.Time)
	return at >= lo && at+aimWindow <= late
}

// aimable: the faults that kill, stop or cut off a node.
func aimable(s faults.Spec) bool {
	switch s.Kind {
	case faults.Crash:
		return s.Op == "" // crashes by operator name their target
	case faults.Pause, faults.Partition:
		return s.Op == ""
	}
	return false
}

// away is how long fault s keeps its node away: a crash's restart delay, a
// window's length.
func away(s faults.Spec, b faults.Bounds) engine.Time {
	if s.Kind == faults.Crash {
		if s.Restart < 0 {
			return b.RestartDelay
		}
		return s.Restart
	}
	return s.End - s.At
}

// retarget moves aimed fault s to the node of proc, the process that
// reached the milestone: a crash of the master node when proc runs there
// (the checkpoint coordinator, the driver), else of proc's worker. Pauses
// and partitions take workers only; a two-sided partition keeps its sides.
func retarget(s *faults.Spec, nodeOf map[string]int, proc string) {
	w, ok := nodeOf[proc]
	switch {
	case !ok:
	case w == engine.MasterNode && s.Kind == faults.Crash:
		s.Master, s.Worker = true, -1
	case w >= 0 && (s.Kind == faults.Crash || s.Kind == faults.Pause || s.Sides == ""):
		s.Master, s.Worker = false, w
	}
}

// dryRun runs the configuration without the faults chosen for aiming,
// without the observer, and returns its milestone events in time order.
func (a *aimer) dryRun(chosen []int) ([]engine.Event, error) {
	dry := a.cfg
	dry.Faults = nil
	for i, s := range a.specs {
		if !slices.Contains(chosen, i) {
			dry.Faults = append(dry.Faults, s.String())
		}
	}
	dry.Observe = false
	dry.Progress = nil
	out, err := harness.Execute(dry)
	if err != nil {
		return nil, err
	}
	var marks []engine.Event
	for _, e := range out.Events {
		if slices.Contains(a.kinds, e.Kind) {
			marks = append(marks, e)
		}
	}
	slices.SortStableFunc(marks, func(x, y engine.Event) int { return cmp.Compare(x.Time, y.Time) })
	return marks, nil
}

// nextMs is the first whole millisecond after t: the first drawable time
// after a milestone. A fault at the milestone's own instant may run before
// it (the simulator orders equal times by scheduling), so it does not count.
func nextMs(t engine.Time) engine.Time {
	return (t/engine.Millisecond + 1) * engine.Millisecond
}

// fmtTime prints a simulated time in milliseconds with microseconds.
func fmtTime(t engine.Time) string {
	return fmt.Sprintf("%.3fms", float64(t)/float64(engine.Millisecond))
}
