package lineage

import (
	"fmt"
	"strconv"
	"time"

	"ftbench/engine"
	"ftbench/systems"
)

func init() { systems.Register(system{}) }

// Flag names. checkpoint-every counts batches, so it cannot share the
// duration-valued checkpoint-interval of the barrier systems.
const (
	optInterval  = "batch-interval"
	optCkpt      = "checkpoint-every"
	optShuffle   = "shuffle-partitions"
	optOverhead  = "task-overhead"
	optSpeculate = "speculation"
)

// Variants.
const (
	variantParallel = "parallel"
	variantUpstream = "upstream"
)

// config is the parsed system options.
type config struct {
	interval  engine.Time
	ckptEvery int
	shuffle   int
	overhead  engine.Time
	speculate bool
	upstream  bool
}

type system struct{}

func (system) Name() string { return "lineage" }

func (system) Describe() string {
	return "Spark Streaming D-Streams: micro-batches, RDD lineage, checkpoint cutoff, parallel recovery (exactly-once)"
}

func (system) Variants() []string { return []string{variantParallel, variantUpstream} }

func (system) Flags() []systems.Flag {
	return []systems.Flag{
		{Name: optInterval, Default: "1s", Usage: "lineage: micro-batch interval"},
		{Name: optCkpt, Default: "10", Usage: "lineage: checkpoint the state RDDs every k batches (lineage cutoff)"},
		{Name: optShuffle, Default: "0", Usage: "lineage: partitions of the stages after a shuffle (0: 8 per worker)"},
		{Name: optOverhead, Default: "2ms", Usage: "lineage: executor CPU to launch one task (deserialise, set up, report)"},
		{Name: optSpeculate, Default: "false", Usage: "lineage: speculative copies of tasks slower than 1.4x their stage's median"},
	}
}

// Claim: each micro-batch's output is committed once, atomically, after
// the batch is computed, so a reader never sees it taken back.
func (system) Claim(string, systems.Options) systems.Claim { return systems.ExactlyOnceMonotonic }

func parseConfig(job systems.Job) (config, error) {
	var c config
	var err error
	if c.interval, err = job.Opts.Duration(optInterval); err != nil {
		return c, err
	}
	if c.ckptEvery, err = job.Opts.Int(optCkpt, 1, 1<<20); err != nil {
		return c, err
	}
	if c.shuffle, err = job.Opts.Int(optShuffle, 0, 1<<16); err != nil {
		return c, err
	}
	if c.shuffle == 0 {
		c.shuffle = 8 * job.Workers
	}
	d, err := time.ParseDuration(job.Opts[optOverhead])
	if err != nil || d < 0 {
		return c, fmt.Errorf("--%s=%q: want a non-negative duration such as 2ms", optOverhead, job.Opts[optOverhead])
	}
	c.overhead = engine.Time(d)
	if c.speculate, err = strconv.ParseBool(job.Opts[optSpeculate]); err != nil {
		return c, fmt.Errorf("--%s=%q: want true or false", optSpeculate, job.Opts[optSpeculate])
	}
	c.upstream = job.Variant == variantUpstream
	return c, nil
}

// Compile deploys the driver on the master node (worker -1; a master crash
// kills it, see takeover.go), one single-core executor per core of every worker (Spark
// standalone with spark.executor.cores=1 runs one executor per core; a
// worker's crash takes all of them, and they share the worker's cores with
// nothing else) and, for the upstream
// variant, an idle standby executor on a spare machine that no worker fault
// crashes (also worker -1).
//
// Faults name processes by operator instance. lineage has no per-operator
// processes, so executor w answers to <anchor>/<w>, where anchor is the
// workload's first stateful operator (or first stage): the bare crash and
// slow faults, which target <anchor>/0, hit executor 0 — the home of that
// operator's partition 0.
func (system) Compile(job systems.Job) (*engine.Deployment, error) {
	cfg, err := parseConfig(job)
	if err != nil {
		return nil, err
	}
	plan := job.Workload.Plan()
	stages, err := splitStages(plan)
	if err != nil {
		return nil, err
	}
	cores := max(job.Cost.Cores, 1)
	e := &env{w: job.Workload, log: job.Log, plan: plan, stages: stages, cfg: cfg, cost: job.Cost,
		workers: job.Workers * cores, nodes: job.Workers, srcCost: job.Cost.For(plan.Source)}
	for _, st := range plan.Stages {
		e.opCost = append(e.opCost, job.Cost.For(st.Name))
	}
	e.parts = make([]int, len(stages))
	for i := range stages {
		e.parts[i] = cfg.shuffle
	}
	e.parts[0] = job.Parallelism
	anchor := plan.Stages[0].Name
	if _, name := plan.FirstStateful(); name != "" {
		anchor = name
	}
	dep := &engine.Deployment{}
	e.driver = dep.Add(engine.ProcSpec{Name: "driver", Worker: -1, New: func() engine.Process { return newDriver(e) }})
	dep.Coordinator = e.driver
	for x := 0; x < e.workers; x++ {
		x := x
		e.execs = append(e.execs, dep.Add(engine.ProcSpec{
			Name: fmt.Sprintf("executor/%d", x), Op: anchor, Index: x, Worker: x % e.nodes, Pinned: true,
			// An executor exits when its driver disconnects
			// (CoarseGrainedExecutorBackend.onDisconnected).
			MasterBound: true,
			New:         func() engine.Process { return newExecutor(e, x) },
		}))
	}
	if cfg.upstream {
		w := e.workers
		e.execs = append(e.execs, dep.Add(engine.ProcSpec{
			Name: "standby", Op: "standby", Worker: -1,
			New: func() engine.Process { return newExecutor(e, w) },
		}))
	}
	return dep, nil
}

// Milestones: a micro-batch's cut (its blocks are fixed and its job
// submitted), its commit (output visible, the batch leaves the log's
// pending range), and a metadata checkpoint's completion (older batches and
// their lineage are dropped).
func (system) Milestones(string) []string {
	return []string{evBatchCut, evBatchCommitted, evCheckpointDone}
}

// CommitCycle: a micro-batch's output becomes visible when the batch's job
// commits, once per batch interval.
func (system) CommitCycle(_ string, opts systems.Options) engine.Time {
	d, _ := opts.Duration(optInterval)
	return d
}

// DescribeMsg names lineage's messages for a run's trace: the driver's task
// launches (a recomputation task's as "recompute") with their first batch,
// task results and cancels with their attempt, block fetches and pushes,
// lost-executor notices, garbage collection, and checkpoint acks with
// their batch.
func (system) DescribeMsg(systems.Job) func(engine.Msg) engine.MsgInfo {
	return func(m engine.Msg) engine.MsgInfo {
		switch m.Kind {
		case kLaunch:
			info := engine.MsgInfo{Kind: "launch"}
			if sp, ok := m.Body.(*taskSpec); ok {
				info.ID = sp.from
				if sp.recompute {
					info.Kind = "recompute"
				}
			}
			return info
		case kResult:
			info := engine.MsgInfo{Kind: "task_result"}
			if r, ok := m.Body.(*taskResult); ok {
				info.ID = r.attempt
			}
			return info
		case kFetch:
			info := engine.MsgInfo{Kind: "fetch"}
			if r, ok := m.Body.(*fetchReq); ok {
				info.ID = r.attempt
			}
			return info
		case kBlocks:
			info := engine.MsgInfo{Kind: "blocks"}
			if r, ok := m.Body.(*fetchResp); ok {
				info.ID = r.attempt
			}
			return info
		case kPush:
			info := engine.MsgInfo{Kind: "push"}
			if p, ok := m.Body.(*pushMsg); ok {
				info.ID = p.j
			}
			return info
		case kCancel:
			return engine.MsgInfo{Kind: "cancel", ID: m.Val}
		case kLost:
			return engine.MsgInfo{Kind: "executor_lost", ID: m.Val}
		case kGC:
			info := engine.MsgInfo{Kind: "gc"}
			if g, ok := m.Body.(gcMsg); ok {
				info.ID = g.committed
			}
			return info
		case kCkpt:
			info := engine.MsgInfo{Kind: "checkpoint_ack"}
			if a, ok := m.Body.(*ckptAck); ok {
				info.ID = a.ver
			}
			return info
		}
		return engine.MsgInfo{}
	}
}
