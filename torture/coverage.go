package torture

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/harness"
	"ftbench/systems"
	"ftbench/workloads"
)

// Protocol paths a campaign must reach, in the order of the coverage table
// (docs/torture.md, "Coverage"). Each is recognised from a run's events.
const (
	PathCheckpoint      = "checkpoint-completed"
	PathCrashAlignment  = "crash-during-alignment"
	PathCrashWrite      = "crash-during-snapshot-write"
	PathCrash2PC        = "crash-during-2pc-commit"
	PathRestore         = "restore-from-checkpoint"
	PathRecomputeCutoff = "recompute-with-cutoff"
	PathRecomputeNoCut  = "recompute-without-cutoff"
	PathTimeoutReplay   = "acker-timeout-replay"
	PathAcksOffResume   = "acks-off-resume"
	PathAlignTimeout    = "aligned-timeout-switch"
	PathSpeculative     = "speculative-task"
	PathCLReorder       = "cl-under-reorder"
	PathLaiYangReorder  = "lai-yang-under-reorder"
	PathMatternReorder  = "mattern-under-reorder"
	// A pause that outlasts the detection delay: the worker is declared
	// failed while its processes are stopped, and recovery runs around them.
	PathPauseDeclared = "pause-declared-failed"
	// An ack timeout replays trees stuck behind a paused worker that is not
	// declared failed: the originals are still queued there (stormack).
	PathPauseReplay = "timeout-replay-during-pause"
	// A checkpoint-store write failed (store-down) and the system handled
	// it: lineage wrote it again, snapshot declined the checkpoint or
	// rewrote a sink's transaction record.
	PathStoreFailed = "store-write-failed"
	// More checkpoints failed in a row than tolerated, and the job failed
	// over from the last completed one (barrier's
	// --tolerable-failed-checkpoints).
	PathCheckpointFailover = "checkpoint-failure-failover"
	// The master node crashed (crash@T:master): the checkpoint
	// coordinator, the driver, or for stormack Storm's nimbus, which is not
	// on the data path.
	PathMasterCrash = "master-crash"
	// A new leader took over after a master crash: a checkpoint
	// coordinator restored the job from the latest completed checkpoint, or
	// a new driver recovered from its metadata checkpoint and batch log.
	PathMasterTakeover = "master-takeover"
	// The master crashed while a 2PC sink held a pre-committed
	// transaction: the new leader's restore must commit it if its
	// checkpoint completed (the commit notice died with the old leader:
	// recoverAndCommit) and drop it otherwise. The narrowest case, a crash
	// between a checkpoint's completion and its commit notices (about a
	// network latency), is barrier's
	// TestMasterCrashBetweenCompletionAndCommitNotice.
	PathMasterPending2PC = "master-crash-with-pending-2pc"
	// A failed worker's processes were re-placed on other workers' spare
	// slots (--slots) and the system recovered around them there.
	PathReplaced = "task-replaced"
	// A partition outlasted the detection delay: the far side was declared
	// failed while its processes ran on.
	PathPartitionDeclared = "partition-declared-failed"
	// A 2PC sink attempt cut off by a partition (a zombie) got a commit
	// notice for a transaction a newer attempt had committed, and the
	// fence stopped it.
	PathZombieFenced = "zombie-commit-fenced"
	// A checkpoint was still in progress --checkpoint-timeout after its
	// trigger and expired (barrier): a failed checkpoint, which past the
	// tolerable number fails the job over.
	PathCheckpointExpired = "checkpoint-expired"
	// kstreams: a failed member's tasks moved to other threads in a
	// rebalance (an assignment after a failure that moved tasks).
	PathRebalance = "rebalance-after-failure"
	// kstreams: a moved task replayed its changelog into a fresh store.
	PathRestoreChangelog = "restore-from-changelog"
	// kstreams: a moved task took over a standby replica's store and
	// replayed only its lag.
	PathRestoreStandby = "restore-from-standby"
	// kstreams: a transaction was aborted (a restarted thread's epoch
	// bump, a fenced zombie, the transaction timeout).
	PathTxnAborted = "transaction-aborted"
	// kstreams: a static member came back within its session timeout and
	// kept its tasks without a rebalance.
	PathStaticRejoin = "static-member-rejoined"
	// kstreams: a warm-up replica was placed on a task's balanced target
	// instance while a caught-up one kept the task (KIP-441).
	PathWarmup = "warmup-assigned"
	// kstreams: a task was assigned to the thread holding its caught-up
	// warm-up, at a probing rebalance or any later one.
	PathWarmupPromoted = "warmup-promoted"
	// kstreams: a probing rebalance fired (probing.rebalance.interval.ms
	// after an assignment that left tasks off their target).
	PathProbing = "probing-rebalance"
	// kstreams: a task moved off a live owner started on its new one (a
	// cooperative revocation, commit and follow-up rebalance; or an eager
	// rebalance's move).
	PathHandover = "task-handover"
	// Trident replayed a batch under its txid (a new attempt after a
	// failed or timed-out one).
	PathTridentReplay = "trident-batch-replayed"
	// Trident's transactional state skipped updates of a batch it had
	// already applied (the txid check after a partly applied commit).
	PathTridentTxidSkip = "trident-txid-skip"
	// Trident's opaque state applied a replayed txid again to the stored
	// previous value.
	PathTridentOpaqueReapply = "trident-opaque-reapply"
	// Trident's coordinator restarted and resumed from its stored txid.
	PathTridentCoordResume = "trident-coordinator-resume"
	// A source found its partition down (source-down) and waited for it,
	// or went on without it (trident's opaque and non-transactional
	// spouts): workloads.EventSourceDown.
	PathSourceDown = "source-down-wait"
)

// Paths is the fixed list, in table order.
var Paths = []string{PathCheckpoint, PathCrashAlignment, PathCrashWrite, PathCrash2PC, PathRestore,
	PathRecomputeCutoff, PathRecomputeNoCut, PathTimeoutReplay, PathAcksOffResume, PathAlignTimeout, PathSpeculative,
	PathCLReorder, PathLaiYangReorder, PathMatternReorder,
	PathPauseDeclared, PathPauseReplay, PathStoreFailed, PathCheckpointFailover,
	PathMasterCrash, PathMasterTakeover, PathMasterPending2PC, PathReplaced,
	PathPartitionDeclared, PathZombieFenced, PathCheckpointExpired,
	PathRebalance, PathRestoreChangelog, PathRestoreStandby, PathTxnAborted, PathStaticRejoin,
	PathWarmup, PathWarmupPromoted, PathProbing, PathHandover,
	PathTridentReplay, PathTridentTxidSkip, PathTridentOpaqueReapply, PathTridentCoordResume, PathSourceDown}

// applicable returns the paths run cfg's configuration can take: a path
// another system, variant, sink or workload cannot take is n/a, not missed.
func applicable(cfg harness.Config) map[string]bool {
	r, _, ok := resolve(cfg)
	if !ok {
		return nil
	}
	variant, p2p, opt := r.variant, r.p2p, r.opt
	p := PropsOf(cfg.System, variant)
	reorder := p.Reorders(p2p)
	a := map[string]bool{}
	set := func(paths ...string) {
		for _, q := range paths {
			a[q] = true
		}
	}
	if !p2p && cfg.System != "none" { // pauses and partitions are drawn where crashes are; none has no recovery
		set(PathPauseDeclared)
		if cfg.Runtime != harness.RuntimeLive { // the live runtime has no master crash or partition yet
			set(PathMasterCrash, PathPartitionDeclared)
			if cfg.System != "stormack" && cfg.System != "trident" { // Storm runs nothing on the master node (nimbus is not modelled)
				set(PathMasterTakeover)
			}
		}
	}
	if cfg.Runtime != harness.RuntimeLive { // where source-down is drawn (schedule.go)
		set(PathSourceDown)
	}
	if !p2p && (cfg.System == "barrier" || cfg.System == "snapshot") && cfg.Slots > 0 {
		// The other systems' processes are pinned to their workers.
		set(PathReplaced)
	}
	if !p2p && cfg.System != "none" && cfg.Runtime != harness.RuntimeLive { // where aim.go aims
		if sys, err := systems.Lookup(cfg.System); err == nil {
			for _, k := range systems.Milestones(sys, variant) {
				set(milestoneRow(k))
			}
		}
	}
	switch cfg.System {
	case "barrier":
		set(PathCheckpoint, PathCrashWrite, PathRestore, PathStoreFailed, PathCheckpointFailover, PathCheckpointExpired)
		if variant != "unaligned" {
			set(PathCrashAlignment)
		}
		if opt("sink") == "2pc" {
			set(PathCrash2PC)
			if a[PathMasterCrash] {
				set(PathMasterPending2PC)
			}
			if cfg.Slots > 0 {
				set(PathZombieFenced)
			}
		}
		if variant == "aligned-timeout" {
			set(PathAlignTimeout)
		}
	case "lineage":
		set(PathCheckpoint, PathCrashWrite, PathRestore, PathRecomputeCutoff, PathRecomputeNoCut, PathStoreFailed)
		if opt("speculation") == "true" {
			set(PathSpeculative)
		}
	case "snapshot":
		set(PathCheckpoint)
		if !p2p {
			// Dataflows: checkpoints with channel state and a 2PC sink.
			set(PathCrashWrite, PathCrash2PC, PathRestore, PathStoreFailed)
			if a[PathMasterCrash] {
				set(PathMasterPending2PC)
			}
			if cfg.Slots > 0 {
				set(PathZombieFenced)
			}
		}
		if reorder && variant == "cl" {
			set(PathCLReorder)
		}
		if reorder && variant == "lai-yang" {
			set(PathLaiYangReorder)
		}
		if reorder && variant == "mattern" {
			set(PathMatternReorder)
		}
	case "kstreams":
		set(PathRebalance, PathTxnAborted, PathZombieFenced)
		if workload := cfg.Workload; workload != "grep" {
			set(PathRestoreChangelog)
			if opt("standby-replicas") != "0" && cfg.Workers > 1 {
				set(PathRestoreStandby)
			}
		}
		if opt("static-membership") == "true" && opt("session-timeout") == "2s" {
			set(PathStaticRejoin)
		}
		if cfg.Workers > 1 {
			// A returning instance is some task's balanced target.
			set(PathHandover)
			if cfg.Workload != "grep" {
				set(PathWarmup, PathWarmupPromoted)
				if opt("probing-rebalance-interval") == "60s" {
					set(PathProbing)
				}
			}
		}
	case "stormack":
		// With acking off (--ackers 0) nothing times out; what a crash
		// exercises is a spout resuming at the offset it committed before
		// emitting.
		if opt("ackers") == "0" {
			set(PathAcksOffResume)
		} else {
			set(PathTimeoutReplay, PathPauseReplay)
		}
	case "trident":
		set(PathTridentReplay, PathTridentCoordResume)
		state := opt("state")
		if state == "spout" {
			state = opt("spout")
		}
		switch state {
		case "transactional":
			set(PathTridentTxidSkip)
		case "opaque":
			set(PathTridentOpaqueReapply)
		}
	}
	return a
}

// span is a protocol step in progress at one process: from its start event
// until its end event with the same process and id, or the process's crash.
type span struct {
	path string
	proc string
	id   int64
}

// spanStarts and spanEnds name the events that open and close the steps a
// crash can land in (recorded by barrier, snapshot and the checkpoint
// coordinator's participants).
var (
	spanStarts = map[string]string{
		"alignment_start": PathCrashAlignment,
		"snapshot_write":  PathCrashWrite,
		"sink_precommit":  PathCrash2PC,
	}
	spanEnds = map[string][]string{
		"alignment":               {PathCrashAlignment},
		"unaligned_switch":        {PathCrashAlignment},
		"task_checkpoint_dropped": {PathCrashAlignment, PathCrashWrite},
		"snapshot_write":          {PathCrashAlignment},
		"snapshot_acked":          {PathCrashWrite},
		"sink_commit":             {PathCrash2PC},
	}
)

// pathsHit returns the paths run cfg took, from its events: a crash during
// a step counts when the crashed worker hosts a process that had started
// the step and not finished it (any sink, for a pending 2PC transaction);
// the others are events of their own.
func pathsHit(cfg harness.Config, events []engine.Event, workerOf map[string]int) map[string]bool {
	hit := map[string]bool{}
	workerOf = maps.Clone(workerOf) // re-placements move processes
	var reorders [][2]engine.Time
	for _, f := range cfg.Faults {
		if s, err := faults.Parse(f, faults.Defaults{Duration: cfg.Duration}); err == nil && s.Kind == faults.Reorder {
			reorders = append(reorders, [2]engine.Time{s.At, s.End})
		}
	}
	ev := slices.Clone(events)
	slices.SortStableFunc(ev, func(a, b engine.Event) int {
		switch {
		case a.Time < b.Time:
			return -1
		case a.Time > b.Time:
			return 1
		}
		return 0
	})
	open := map[span]bool{}
	paused := map[int64]bool{} // paused workers, true once declared failed
	var milestones []string
	if sys, err := systems.Lookup(cfg.System); err == nil {
		milestones = systems.Milestones(sys, cfg.Variant)
	}
	last := map[string]engine.Time{} // milestone kind -> its latest time
	failures := 0                    // failures detected so far (kstreams' group coordinator)
	for _, e := range ev {
		if slices.Contains(milestones, e.Kind) {
			last[e.Kind] = e.Time
		}
		switch e.Kind {
		case "worker_crash", "worker_pause", "partition_start":
			// A fault that struck within aimWindow of a milestone.
			for k, t := range last {
				if e.Time-t <= aimWindow {
					hit[milestoneRow(k)] = true
				}
			}
		}
		if path, ok := spanStarts[e.Kind]; ok {
			open[span{path, e.Proc, e.ID}] = true
		}
		for _, path := range spanEnds[e.Kind] {
			delete(open, span{path, e.Proc, e.ID})
		}
		switch e.Kind {
		case "worker_pause":
			paused[e.ID] = false
		case "worker_resume":
			delete(paused, e.ID)
		case "worker_declared_failed":
			if e.Note == "partition" {
				// Its processes run on (zombies): no crash of theirs.
				hit[PathPartitionDeclared] = true
				continue
			}
			paused[e.ID] = true
			hit[PathPauseDeclared] = true
		}
		switch e.Kind {
		case "worker_crash", "worker_declared_failed": // either kills the worker's processes
			if e.Kind == "worker_crash" && e.ID == engine.MasterNode {
				hit[PathMasterCrash] = true
				for s := range open {
					if s.path == PathCrash2PC {
						hit[PathMasterPending2PC] = true
					}
				}
			}
			for s := range open {
				// A pending transaction counts wherever its sink runs: a
				// restored sink must commit or drop its pending
				// transactions (snapshot and barrier's full failover
				// restore every sink), and a running one (barrier's region
				// failover) must commit them with the next checkpoint.
				if w, ok := workerOf[s.proc]; ok && (int64(w) == e.ID || s.path == PathCrash2PC) {
					hit[s.path] = true
					delete(open, s) // the process is gone; its restart starts afresh
				}
			}
		case "checkpoint_completed", "checkpoint_done":
			hit[PathCheckpoint] = true
		case "leader_takeover":
			hit[PathMasterTakeover] = true
		case "snapshot_completed":
			hit[PathCheckpoint] = true
			start := e.Time - engine.Time(e.Value)
			for _, w := range reorders {
				if start <= w[1] && e.Time >= w[0] {
					hit[PathCLReorder] = true // kept only where applicable
					hit[PathLaiYangReorder] = true
					hit[PathMatternReorder] = true
				}
			}
		case "restore":
			hit[PathRestore] = true
			if e.Bytes > 0 && e.Note == "from=changelog" {
				hit[PathRestoreChangelog] = true
			}
			if e.Note == "from=standby" {
				hit[PathRestoreStandby] = true
			}
		case "failure_detected":
			failures++
		case "recovery_start":
			ckpt, tasks := noteInt(e.Note, "checkpoint"), noteInt(e.Note, "tasks")
			if tasks > 0 && ckpt >= 0 {
				hit[PathRecomputeCutoff], hit[PathRestore] = true, true
			} else if tasks > 0 {
				hit[PathRecomputeNoCut] = true
			}
		case "timeout_replay":
			hit[PathTimeoutReplay] = true
			for _, declared := range paused {
				if !declared {
					hit[PathPauseReplay] = true
				}
			}
		case "spout_resume":
			if strings.Contains(e.Note, "acking=off") {
				hit[PathAcksOffResume] = true
			}
		case "unaligned_switch":
			hit[PathAlignTimeout] = true
		case "snapshot_declined", "store_write_retry", "sink_txn_rewrite":
			hit[PathStoreFailed] = true
		case "speculative_task":
			hit[PathSpeculative] = true
		case "failover_on_checkpoint_failure":
			hit[PathCheckpointFailover] = true
		case "checkpoint_aborted":
			if e.Note == "timeout" {
				hit[PathCheckpointExpired] = true
			}
		case "sink_commit_fenced", "ks_fenced":
			hit[PathZombieFenced] = true
		case "ks_broker_up":
			hit[PathMasterTakeover] = true
		case "ks_assigned":
			if e.Value > 0 && failures > 0 {
				hit[PathRebalance] = true
			}
		case "ks_txn_aborted":
			hit[PathTxnAborted] = true
		case "ks_static_rejoin":
			hit[PathStaticRejoin] = true
		case "ks_warmup":
			hit[PathWarmup] = true
		case "ks_warmup_promoted":
			hit[PathWarmupPromoted] = true
		case "ks_probing_rebalance":
			hit[PathProbing] = true
		case "ks_handover":
			hit[PathHandover] = true
		case "batch_started":
			if e.Value > 0 {
				hit[PathTridentReplay] = true
			}
		case "txid_skip":
			hit[PathTridentTxidSkip] = true
		case "opaque_reapply":
			hit[PathTridentOpaqueReapply] = true
		case "coordinator_resume":
			hit[PathTridentCoordResume] = true
		case workloads.EventSourceDown:
			hit[PathSourceDown] = true
		case "task_replaced":
			hit[PathReplaced] = true
			workerOf[e.Proc] = int(e.ID) // where a later crash finds it
		}
	}
	return hit
}

// noteInt reads key=<int> from an event note; -1 if absent.
func noteInt(note, key string) int64 {
	for _, f := range strings.Fields(note) {
		if k, v, ok := strings.Cut(f, "="); ok && k == key {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// runPaths is a run's entry in torture.json: every applicable path, true
// if the run took it, and its option rows (optionPaths). user is the
// campaign's base configuration: the options the user set.
func runPaths(user, cfg harness.Config, out *harness.Outcome) map[string]bool {
	a := applicable(cfg)
	if len(a) == 0 {
		return nil
	}
	workerOf := map[string]int{}
	if dep, err := harness.Deployment(cfg); err == nil {
		for _, p := range dep.Procs {
			workerOf[p.Name] = p.Worker
		}
	}
	hit := pathsHit(cfg, out.Events, workerOf)
	m := map[string]bool{}
	for q := range a {
		m[q] = hit[q]
	}
	faulted := false
	for q, took := range m {
		// Where a fault struck is not a path recovery took.
		faulted = faulted || (took && !faultFree[q] && !strings.HasPrefix(q, milestoneRow("")))
	}
	for q, took := range optionPaths(user, cfg, faulted) {
		m[q] = took
	}
	return m
}

// faultFree are the paths a run takes without a fault being recovered
// from: checkpoints complete in a failure-free run, and a master crash
// alone counts for nothing (stormack's nimbus is not on the data path;
// where the master runs the job, master-takeover follows it). A run that
// took any other path exercised its options under a fault.
var faultFree = map[string]bool{PathCheckpoint: true, PathMasterCrash: true}

// resolve is run cfg's runKind (its resolved variant, whether its workload
// is peer-to-peer, its options with the system's defaults) and the
// system's declared options; false if cfg names no system or variant.
func resolve(cfg harness.Config) (runKind, map[string]string, bool) {
	sys, err := systems.Lookup(cfg.System)
	if err != nil {
		return runKind{}, nil, false
	}
	variant, err := systems.ResolveVariant(sys, cfg.Variant)
	if err != nil {
		return runKind{}, nil, false
	}
	p2p := false
	if w, err := workloads.New(cfg.Workload, engine.ChildSeed(cfg.Seed, "workload"), cfg.WorkloadOpts); err == nil {
		_, p2p = w.(workloads.PeerToPeer)
	}
	declared := map[string]string{}
	for _, f := range sys.Flags() {
		declared[f.Name] = f.Default
	}
	return kindOf(variant, p2p, cfg.SystemOpts, declared), declared, true
}

// milestoneRow names the coverage row of faults that struck within
// aimWindow after a system milestone (aim.go): a crash of any node, a
// pause or a partition's start, whatever drew it.
func milestoneRow(kind string) string { return "fault-just-after-" + kind }

// milestoneRows lists every system's milestone rows, system by system, in
// systems.Names order, each row once.
func milestoneRows() []string {
	var rows []string
	for _, name := range systems.Names() {
		sys, err := systems.Lookup(name)
		if err != nil {
			continue
		}
		for _, v := range sys.Variants() {
			for _, k := range systems.Milestones(sys, v) {
				if q := milestoneRow(k); !slices.Contains(rows, q) {
					rows = append(rows, q)
				}
			}
		}
	}
	return rows
}

// optionRow names the coverage row of one value of a drawn option (or of
// the variant, "variant").
func optionRow(name, value string) string { return "--" + name + "=" + value }

// optionRows lists every option row in table order: the variants, then
// the options, system by system (sorted), each row once (barrier and
// snapshot share --checkpoint-interval's).
func optionRows() []string {
	var names []string
	for s := range choices {
		names = append(names, s)
	}
	for s := range variantChoices {
		if _, ok := choices[s]; !ok {
			names = append(names, s)
		}
	}
	slices.Sort(names)
	var rows []string
	add := func(name string, values []string) {
		for _, v := range values {
			if q := optionRow(name, v); !slices.Contains(rows, q) {
				rows = append(rows, q)
			}
		}
	}
	for _, s := range names {
		if vs := variantChoices[s]; vs != nil {
			add("variant", vs(false))
			add("variant", vs(true))
		}
	}
	for _, s := range names {
		for _, c := range choices[s] {
			add(c.name, c.values)
		}
	}
	return rows
}

// optionPaths returns run cfg's option rows: one per value its
// configuration could have drawn (the choice applies to the run, and the
// user did not set the option, or set it to that value), true if the run
// ran with the value and faulted (it took a path a fault leads to). So a
// value a campaign never drew, or drew only in runs without a fault,
// shows as missed.
func optionPaths(user, cfg harness.Config, faulted bool) map[string]bool {
	r, declared, ok := resolve(cfg)
	if !ok {
		return nil
	}
	m := map[string]bool{}
	row := func(name, value, fixed, ran string, isFixed bool) {
		if isFixed && fixed != value {
			return
		}
		m[optionRow(name, value)] = faulted && ran == value
	}
	if vs := variantChoices[cfg.System]; vs != nil {
		for _, v := range vs(r.p2p) {
			row("variant", v, user.Variant, r.variant, user.Variant != "")
		}
	}
	for _, c := range choices[cfg.System] {
		if _, ok := declared[c.name]; !ok || !c.when(r) {
			continue
		}
		fixed, isFixed := user.SystemOpts[c.name]
		for _, v := range c.values {
			row(c.name, v, fixed, r.opt(c.name), isFixed)
		}
	}
	return m
}

// PathCoverage is one row of a campaign's coverage table: how many runs
// could take a protocol path and how many did.
type PathCoverage struct {
	Path       string `json:"path"`
	Applicable int    `json:"applicable_runs"`
	Hit        int    `json:"runs_hit"`
	// Status is "hit", "missed" (applicable in some run, taken by none) or
	// "n/a" (no run's configuration can take it).
	Status string `json:"status"`
}

// pathTable counts the runs' paths in the fixed order, then the option
// rows (optionRows) that apply to some run: another system's options are
// left out rather than listed n/a.
func pathTable(runs []*Run) []PathCoverage {
	var out []PathCoverage
	for i, q := range slices.Concat(Paths, milestoneRows(), optionRows()) {
		c := PathCoverage{Path: q}
		for _, r := range runs {
			if took, ok := r.Paths[q]; ok {
				c.Applicable++
				if took {
					c.Hit++
				}
			}
		}
		switch {
		case c.Applicable == 0 && i >= len(Paths):
			continue
		case c.Applicable == 0:
			c.Status = "n/a"
		case c.Hit == 0:
			c.Status = "missed"
		default:
			c.Status = "hit"
		}
		out = append(out, c)
	}
	return out
}
