package harness

import (
	"strconv"
	"strings"

	"ftbench/engine"
	"ftbench/trace"
)

// Result is run.json. Its keys are stable and documented in docs/metrics.md ("run.json keys");
// everything outside Host is a pure function of the configuration and seed.
type Result struct {
	System   string `json:"system"`
	Variant  string `json:"variant"`
	Workload string `json:"workload"`
	Seed     uint64 `json:"seed"`
	// Runtime is "sim" or "live"; a live run is not byte-reproducible (its
	// seed and fault schedule are still those given), and Work is its
	// --work mode.
	Runtime string    `json:"runtime"`
	Work    string    `json:"work,omitempty"`
	Faults  []string  `json:"faults"`
	Config  RunConfig `json:"config"`
	// Tasks are the tasks the job ran as: chains of operators (barrier
	// with --chaining), else one operator each.
	Tasks []Task `json:"tasks"`
	// Processes are every process of the deployment in deployment order,
	// with the worker it was placed on (-1 the master node) and the
	// operators it runs (several when chained; none for control
	// processes): a trace's lanes (trace.jsonl's header lists the same).
	Processes        []trace.Process `json:"processes"`
	ClaimedGuarantee string          `json:"claimed_guarantee"`
	Verdict          string          `json:"verdict"`
	// ClaimedReader and ObservedReader are the reader half of the claim
	// (check.ReaderMonotonic or ReaderNonMonotonic); ReaderRegressions
	// counts commits that took a visible effect back, the first of them
	// in FirstRegression.
	ClaimedReader     string      `json:"claimed_reader"`
	ObservedReader    string      `json:"observed_reader"`
	ReaderRegressions int64       `json:"reader_regressions"`
	FirstRegression   *Regression `json:"first_reader_regression,omitempty"`
	ClaimHeld         bool        `json:"claim_held"`
	// OfferedRPS is the input rate (records/s over all partitions; the
	// same as config.rate_rps) and RateChosen how it was set: RateGiven
	// (--rate) or RateAutomatic (workloads.DefaultRate).
	OfferedRPS float64 `json:"offered_rps"`
	RateChosen string  `json:"rate_chosen"`
	// RateRule is how an automatic rate was chosen (RuleHalfCapacity or
	// RulePeerToPeer); empty for a given rate.
	RateRule string `json:"rate_rule,omitempty"`
	// ThroughputRPS and ThroughputEffects are measured from commits over
	// ThroughputWindowS ([from, to) s, whole commit cycles); all three are
	// null when no whole cycle fits between warm-up and the first fault or
	// the end of the input.
	ThroughputRPS     *float64  `json:"throughput_rps"`
	ThroughputEffects *float64  `json:"throughput_effects_per_s"`
	ThroughputWindowS []float64 `json:"throughput_window_s"`
	LatencyMS         Latency   `json:"latency_ms"`
	LagSlopeRPS       *float64  `json:"lag_slope_rps"`
	Overloaded        *bool     `json:"overloaded"`
	LagTrend          LagTrend  `json:"lag_trend"`
	// RecoveryTimeS is the slowest fault's output-staleness recovery and
	// LagRecoveryTimeS its source-lag recovery (docs/metrics.md, "Lag recovery time").
	RecoveryTimeS    *float64   `json:"recovery_time_s"`
	LagRecoveryTimeS *float64   `json:"lag_recovery_time_s"`
	Recoveries       []Recovery `json:"recoveries"`
	DetectionDelayS  *float64   `json:"detection_delay_s"`
	Duplicates       int64      `json:"duplicates"`
	Lost             int64      `json:"lost"`
	WrongKeys        int64      `json:"wrong_keys"`
	// StaleFinalKeys and AheadFinalKeys split WrongKeys: final values
	// behind the oracle's (an update a reader never sees) and beyond it (an
	// update applied twice) (docs/metrics.md, "Duplicates, lost, wrong
	// keys").
	StaleFinalKeys   int64     `json:"stale_final_keys"`
	AheadFinalKeys   int64     `json:"ahead_final_keys"`
	WrongKeyExamples []KeyDiff `json:"wrong_key_examples,omitempty"`
	Unexpected       int64     `json:"unexpected_effects"`
	ExpectedEffects  int64     `json:"expected_effects"`
	CommittedEffects int64     `json:"committed_effects"`
	AppendedRecords  int64     `json:"appended_records"`
	Drained          bool      `json:"drained"`
	// Quiescent: nothing was going on when the run stopped (drain.go).
	Quiescent bool `json:"quiescent"`
	// PendingEffects are expected effects not committed when an undrained
	// run stopped (not counted in Lost), and Pending says where.
	PendingEffects   int64            `json:"pending_effects"`
	Pending          *Pending         `json:"pending,omitempty"`
	PeakChannelBytes int64            `json:"peak_channel_bytes"`
	ChannelCapBytes  int64            `json:"channel_capacity_bytes"`
	SimTimeS         float64          `json:"sim_time_s"`
	SimEvents        uint64           `json:"sim_events"`
	Counters         map[string]int64 `json:"counters"`
	SystemMetrics    map[string]any   `json:"system_metrics"`
	ExitCode         int              `json:"exit_code"`
	Problems         []string         `json:"problems"`
	Replay           string           `json:"replay"`
	Observer         *Observation     `json:"observer,omitempty"`
	Host             Host             `json:"host"`
}

// RunConfig is the resolved configuration.
type RunConfig struct {
	DurationS   float64 `json:"duration_s"`
	RateRPS     float64 `json:"rate_rps"`
	Parallelism int     `json:"parallelism"`
	Workers     int     `json:"workers"`
	Cores       int     `json:"cores"` // per worker and on the master node
	// Slots is every worker's slot count (--slots); absent: each worker has
	// exactly the slots its placement uses.
	Slots   int     `json:"slots,omitempty"`
	DrainS  float64 `json:"drain_s"`
	BucketS float64 `json:"bucket_s"`
	WarmUpS float64 `json:"warm_up_s"`
	// SettleS is how long a drained run goes on to see late duplicates, and
	// how long an undrained one must go without a commit to be quiescent.
	SettleS float64 `json:"settle_s"`
	// CommitCycleS is the period of the sink's visible-output bursts
	// (systems.CommitCycle), 0 for a continuous sink.
	CommitCycleS float64           `json:"commit_cycle_s"`
	SystemOpts   map[string]string `json:"system_options"`
	WorkloadOpts map[string]string `json:"workload_options"`
	Cost         map[string]string `json:"cost_model"`
}

// How the input rate was chosen (run.json's rate_chosen).
const (
	RateGiven     = "given"
	RateAutomatic = "automatic"
)

// Rules for an automatic rate (run.json's rate_rule).
const (
	// RuleHalfCapacity: workloads.DefaultRate.
	RuleHalfCapacity = "half the cost model's capacity bound on this hardware"
	// RulePeerToPeer: a peer-to-peer workload's own DefaultRate.
	RulePeerToPeer = "the peer-to-peer workload's default"
)

// Latency is the end-to-end latency distribution of committed effects.
type Latency struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Task is one kind of task the deployment runs: the operators chained into
// it, in order (one, without chaining), and how many instances run.
// Control processes (coordinators, ackers, drivers) are not tasks.
type Task struct {
	Operators []string `json:"operators"`
	Instances int      `json:"instances"`
}

// Name is the task as the run summary prints it: "[source→split]".
func (t Task) Name() string { return "[" + strings.Join(t.Operators, "→") + "]" }

// tasksOf groups dep's tasks (Deployment.Tasks, else its data processes)
// by the operators they run, in deployment order.
func tasksOf(dep *engine.Deployment) []Task {
	all := dep.Tasks
	if all == nil {
		for _, p := range dep.Procs {
			all = append(all, p.Ops())
		}
	}
	ts := []Task{}
	index := map[string]int{}
	for _, ops := range all {
		if len(ops) == 0 {
			continue
		}
		key := strings.Join(ops, "\x00")
		k, ok := index[key]
		if !ok {
			k = len(ts)
			index[key] = k
			ts = append(ts, Task{Operators: ops})
		}
		ts[k].Instances++
	}
	return ts
}

// Recovery is one fault's recovery.
type Recovery struct {
	Fault         string   `json:"fault"`
	AtS           float64  `json:"at_s"`
	RecoveryTimeS *float64 `json:"recovery_time_s"`
	// LagRecoveryTimeS is the same rule on source lag (the old figure).
	LagRecoveryTimeS *float64 `json:"lag_recovery_time_s"`
	// Phases breaks a crash's recovery down by the events recorded.
	Phases *Phases `json:"phases,omitempty"`
	// Crashed is what a crash took down (omitted for other faults).
	Crashed *Crashed `json:"crashed,omitempty"`
}

// Crashed is what one crash took down: the worker and every process placed
// on it, in deployment order. A crash aimed at an operator instance
// (crash@8s:op=count/0) kills the whole worker hosting it, so its
// neighbours (source/0, split/0, sink/0 ...) go down with it.
type Crashed struct {
	Worker    int      `json:"worker"`
	Processes []string `json:"processes"`
}

// Phases are the steps of a crash's recovery, in seconds after the crash,
// each present only if the run recorded it (docs/metrics.md, "Recovery phases").
type Phases struct {
	DetectedS     *float64 `json:"detected_s,omitempty"`
	WorkerUpS     *float64 `json:"worker_up_s,omitempty"`
	RedeployedS   *float64 `json:"redeployed_s,omitempty"`
	RestoredS     *float64 `json:"restored_s,omitempty"`
	RecomputedS   *float64 `json:"recomputed_s,omitempty"`
	SpoutResumedS *float64 `json:"spout_resumed_s,omitempty"`
	// CatchUpS is the rest of the recovery after the last recorded step.
	CatchUpS *float64 `json:"catch_up_s,omitempty"`
}

// KeyDiff is a key whose final visible value differs from the oracle's.
type KeyDiff struct {
	Key  uint64 `json:"key"`
	Got  int64  `json:"got"`
	Want int64  `json:"want"`
}

// Host is everything that depends on the machine, not the configuration.
type Host struct {
	RunID     string  `json:"run_id"`
	WallTimeS float64 `json:"wall_time_s"`
	GoVersion string  `json:"go_version"`
	StartedAt string  `json:"started_at"`
	// ObserverWallS is the observer's wall time (history, reads, porcupine).
	ObserverWallS float64 `json:"observer_wall_s,omitempty"`
}

// FormatRPS prints a nullable records/s figure rounded to a record, or none
// when it is null (no whole commit cycle to measure over).
func FormatRPS(v *float64, none string) string {
	if v == nil {
		return none
	}
	return strconv.FormatFloat(*v, 'f', 0, 64)
}
