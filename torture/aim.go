package torture

import (
	"cmp"
	"fmt"
	"slices"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
	"ftbench/systems"
)

// Aiming at milestones. A bug that lives a few milliseconds after a
// protocol milestone — a checkpoint's files deleted before the next one's
// metadata is durable, a commit notice lost between completion and
// commit — is caught only by a fault that lands in that window. Faults
// aimed at a checkpoint's trigger (schedule.go) reach it by luck: how long
// a checkpoint takes depends on the run. So a share of the drawn crashes,
// master crashes, pauses and partitions is re-timed at the milestones the
// system names (systems.Milestoner), found in a dry run: the same
// configuration without the re-timed faults. Like Jepsen's targeted
// nemeses, the fault also moves, three times in four, to the node of the
// process that reached the milestone (the master node for a coordinator
// or driver).
//
// The dry run is deterministic (one seed drives everything), so aiming is
// too. It keeps the faults that are not re-timed, so an aimed fault is
// exact when the faults before it are kept; a second aimed fault in the
// same run is aimed at the timeline without the first, and so lands near,
// not exactly at, a milestone of the faulted run.
const (
	// aimWindow: an aimed fault starts 0 to aimWindow after its milestone
	// (whole milliseconds, as every drawn time): about a store write's
	// latency, the window a checkpoint's metadata write or a commit notice
	// is in flight.
	aimWindow = 5 * engine.Millisecond
	// aimOdds: each crash, pause and partition is re-aimed with
	// probability 1/aimOdds.
	aimOdds = 2
	// retargetOdds: an aimed fault moves to the milestone's node with
	// probability 1-1/retargetOdds.
	retargetOdds = 4
)

// aim re-times some of cfg's crashes, pauses and partitions just after
// the system's milestones, from its own random stream (the other draws stay
// as they were). It returns the new configuration and one line per aimed
// fault for torture.json; a configuration that cannot be aimed (no
// milestones, no fault to aim, the live runtime, a dry run that fails) is
// returned as it is.
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
	kinds := systems.Milestones(sys, variant)
	if len(kinds) == 0 {
		return cfg, nil
	}
	specs := make([]faults.Spec, len(cfg.Faults))
	for i, f := range cfg.Faults {
		if specs[i], err = faults.Parse(f, faults.Defaults{Duration: cfg.Duration}); err != nil {
			return cfg, nil // the run itself reports it
		}
	}
	rng := engine.NewRand(engine.ChildSeed(seed, "torture/aim"))
	var chosen []int
	for i, s := range specs {
		if aimable(s) && rng.IntN(aimOdds) == 0 {
			chosen = append(chosen, i)
		}
	}
	if len(chosen) == 0 {
		return cfg, nil
	}
	marks, err := dryRun(cfg, specs, chosen, kinds)
	if err != nil || len(marks) == 0 {
		return cfg, nil
	}
	dep, err := harness.Deployment(cfg)
	if err != nil {
		return cfg, nil
	}
	nodeOf := map[string]int{}
	for _, p := range dep.Procs {
		nodeOf[p.Name] = p.Worker
	}
	b := runBounds(cfg)
	// The earliest fault kept in the dry run that kills, stops or cuts off
	// a node: the milestones after it are the recovery's.
	recovery := engine.Time(-1)
	for i, s := range specs {
		if aimable(s) && !slices.Contains(chosen, i) && (recovery < 0 || s.At < recovery) {
			recovery = s.At
		}
	}
	var notes []string
	for _, i := range chosen {
		s := specs[i]
		// Where the drawn fault could start and still end (or restart)
		// before 80% of the input, as schedule.go draws them.
		lo, late := cfg.Duration/10, cfg.Duration*8/10-away(s, b)
		if recovery >= 0 && rng.IntN(2) == 0 && hasMark(marks, max(lo, recovery), late) {
			// Half the time, a milestone of the recovery from that
			// fault: the first checkpoint after a restore, the replays
			// after an ack timeout — where recovery bugs live.
			lo = max(lo, recovery)
		}
		// Each milestone kind is as likely as the others, however often it
		// occurs (every sink commits once per checkpoint; the coordinator
		// acknowledges it once).
		byKind := map[string][]engine.Event{}
		var present []string
		for _, m := range marks {
			if hasMark([]engine.Event{m}, lo, late) {
				if byKind[m.Kind] == nil {
					present = append(present, m.Kind)
				}
				byKind[m.Kind] = append(byKind[m.Kind], m)
			}
		}
		if len(present) == 0 {
			continue
		}
		slices.SortFunc(present, func(a, b string) int { return cmp.Compare(slices.Index(kinds, a), slices.Index(kinds, b)) })
		cands := byKind[present[rng.IntN(len(present))]]
		m := cands[rng.IntN(len(cands))]
		moved := s
		moved.At = ceilMs(m.Time) + engine.Time(rng.IntN(int(aimWindow/engine.Millisecond)))*engine.Millisecond
		if s.End > 0 {
			moved.End = moved.At + (s.End - s.At)
		}
		if rng.IntN(retargetOdds) != 0 {
			retarget(&moved, nodeOf, m.Proc)
		}
		trial := slices.Clone(specs)
		trial[i] = moved
		if faults.Check(trial, dep, b) != nil {
			continue // it would overlap another fault: keep the drawn one
		}
		specs[i] = moved
		notes = append(notes, fmt.Sprintf("%s: %s after %s %d of %s (at %s in the dry run)", moved.String(), fmtTime(moved.At-m.Time), m.Kind, m.ID, m.Proc, fmtTime(m.Time)))
	}
	slices.SortStableFunc(specs, func(a, b faults.Spec) int { return cmp.Compare(a.At, b.At) })
	cfg.Faults = make([]string, len(specs))
	for i, s := range specs {
		cfg.Faults[i] = s.String()
	}
	return cfg, notes
}

// hasMark reports whether a milestone can be aimed at in [lo, late].
func hasMark(marks []engine.Event, lo, late engine.Time) bool {
	return slices.ContainsFunc(marks, func(m engine.Event) bool {
		at := ceilMs(m.Time)
		return at >= lo && at+aimWindow <= late
	})
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

// dryRun runs cfg without the faults chosen for aiming, without the
// observer, and returns its milestone events in time order.
func dryRun(cfg harness.Config, specs []faults.Spec, chosen []int, kinds []string) ([]engine.Event, error) {
	dry := cfg
	dry.Faults = nil
	for i, s := range specs {
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
		if slices.Contains(kinds, e.Kind) {
			marks = append(marks, e)
		}
	}
	slices.SortStableFunc(marks, func(a, b engine.Event) int { return cmp.Compare(a.Time, b.Time) })
	return marks, nil
}

// ceilMs rounds t up to a whole millisecond: the first drawable time at or
// after a milestone.
func ceilMs(t engine.Time) engine.Time {
	return (t + engine.Millisecond - 1) / engine.Millisecond * engine.Millisecond
}

// fmtTime prints a simulated time in milliseconds with microseconds.
func fmtTime(t engine.Time) string {
	return fmt.Sprintf("%.3fms", float64(t)/float64(engine.Millisecond))
}
