// Package chapter is `bench chapter`: the fixed campaign that measures
// seed 004's comparison table of Storm (+Trident), Spark Streaming
// (D-Streams), Flink and Kafka Streams on one workload, hardware model and
// fault set, and the chapter.md that puts each measured figure beside the
// seed's claim. The campaign is data (Setups, Measures, Jobs), so that
// docs/chapter.md's command list is checked against it by a test.
package chapter

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"ftbench/engine"
	"ftbench/harness"
)

// Hardware is the profile every run of the campaign uses unless told
// otherwise: the D-Streams paper's testbed, so that throughput cells
// compare with its figures.
const Hardware = "dstreams-2013"

// Setup is one system in one of its usual configurations: a column of the
// seed's table holds one or more.
type Setup struct {
	ID     string // short name, used in job IDs and folder names
	Column string // the seed's column: Columns
	Label  string // as the table prints it
	System string
	// Variant is the system's variant ("" its first).
	Variant string
	Opts    map[string]string
	// LatencyBound is the capacity searches' p99 bound: the paper's 1 s,
	// or more for a setup whose commit cycle alone makes every p99 exceed
	// it (barrier's 2PC sink commits once a 1 s checkpoint completes).
	LatencyBound engine.Time
	// Claim is what the seed claims this configuration delivers
	// (exactly-once, at-least-once) or "" when the seed says nothing of
	// it; a crash or partition that breaks it is a disagreement.
	Claim string
}

// Columns are the seed's four columns, in its order, and the baseline.
var Columns = []string{"Storm (+Trident)", "Spark Streaming (D-Streams)", "Flink", "Kafka Streams", "baseline"}

// Setups is the campaign's configurations: each system in its usual
// configurations (the list), and none as the throughput ceiling.
var Setups = []Setup{
	{ID: "storm-ack", Column: Columns[0], Label: "Storm, acking", System: "stormack", Claim: "at-least-once"},
	{ID: "storm-noack", Column: Columns[0], Label: "Storm, --ackers 0", System: "stormack", Opts: map[string]string{"ackers": "0"}},
	{ID: "trident", Column: Columns[0], Label: "Trident, transactional", System: "trident", Claim: "exactly-once"},
	{ID: "spark", Column: Columns[1], Label: "D-Streams, 500 ms batches", System: "lineage", Variant: "parallel", Opts: map[string]string{"batch-interval": "500ms"}, Claim: "exactly-once"},
	{ID: "flink-aligned-2pc", Column: Columns[2], Label: "aligned, 2PC sink", System: "barrier", Variant: "aligned", LatencyBound: 2 * engine.Second, Claim: "exactly-once"},
	{ID: "flink-aligned-plain", Column: Columns[2], Label: "aligned, plain sink", System: "barrier", Variant: "aligned", Opts: map[string]string{"sink": "plain"}},
	{ID: "flink-unaligned-2pc", Column: Columns[2], Label: "unaligned, 2PC sink", System: "barrier", Variant: "unaligned", LatencyBound: 2 * engine.Second, Claim: "exactly-once"},
	{ID: "flink-unaligned-plain", Column: Columns[2], Label: "unaligned, plain sink", System: "barrier", Variant: "unaligned", Opts: map[string]string{"sink": "plain"}},
	{ID: "ks-eos", Column: Columns[3], Label: "exactly-once-v2", System: "kstreams", Opts: map[string]string{"guarantee": "exactly-once-v2"}, Claim: "exactly-once"},
	{ID: "ks-alos", Column: Columns[3], Label: "at-least-once", System: "kstreams", Opts: map[string]string{"guarantee": "at-least-once"}},
	{ID: "none", Column: Columns[4], Label: "none (no fault tolerance)", System: "none"},
}

// Measure is one kind of measurement every setup gets.
type Measure string

// The measures. Capacity ones are `bench capacity` searches; the others
// are single `bench run`s.
const (
	Cap100     Measure = "cap-grep100"  // capacity, grep 100 B, one node
	Cap1000    Measure = "cap-grep1000" // capacity, grep 1000 B, one node
	CapWC      Measure = "cap-wordcount"
	Latency    Measure = "latency" // grep 100 B at half of Cap100
	Crash      Measure = "crash"
	Partition  Measure = "partition"
	Slow       Measure = "slow"
	StateLarge Measure = "restore-large" // Crash with a larger vocabulary
)

// Job is one run or capacity search of the campaign.
type Job struct {
	ID      string // Setup.ID + "." + Measure: the folder under --out
	Setup   Setup
	Measure Measure
	// Capacity marks a capacity search (Config is its probe base).
	Capacity bool
	// HalfOf names the capacity job whose half sets this run's rate.
	HalfOf string
	Config harness.Config
	// LatencyBound is the capacity search's p99 bound.
	LatencyBound engine.Time
	// Tolerance is the capacity search's bracket width (0: the default).
	Tolerance float64
	// Hardware is the profile whose overrides Config.CostOverride holds.
	Hardware string
}

// Shape is what quick and full campaigns differ in.
type Shape struct {
	ProbeDuration engine.Time // capacity probe input (extended by capacity for long commit cycles)
	RunDuration   engine.Time // input of a single run
	Tolerance     float64     // capacity bracket width
	LargeVocab    int         // the large state of the restore measure (words)
	Seed          uint64
	// Hardware is the hardware profile of every run (engine.Hardware).
	Hardware string
}

// FaultRate is the offered rate of the fault runs (wordcount on 2
// workers): the same for every setup, and below the capacity of the
// slowest (Storm with acking).
const FaultRate = 30000

// SmallVocab is the vocabulary of the crash run, the small state of the
// restore measure (wordcount's default).
const SmallVocab = 10000

// Quick is `bench chapter --quick`: short probes, coarse capacity, one seed.
var Quick = Shape{ProbeDuration: 3 * engine.Second, RunDuration: 8 * engine.Second, Tolerance: 0.1, LargeVocab: 300000, Seed: 1, Hardware: Hardware}

// Full is the full campaign.
var Full = Shape{ProbeDuration: 6 * engine.Second, RunDuration: 30 * engine.Second, Tolerance: 0.02, LargeVocab: 3000000, Seed: 1, Hardware: Hardware}

// Jobs is the campaign of a shape, in a fixed order: every capacity search
// before the runs that take their rate from one. An unknown hardware
// profile is an error.
func Jobs(s Shape) ([]Job, error) {
	h, err := engine.Hardware(s.Hardware)
	if err != nil {
		return nil, err
	}
	var caps, runs []Job
	for _, st := range Setups {
		base := func(workload string, workers int) harness.Config {
			cfg := harness.DefaultConfig()
			cfg.System, cfg.Variant, cfg.Workload = st.System, st.Variant, workload
			cfg.Seed, cfg.Workers, cfg.Parallelism = s.Seed, workers, 4
			cfg.SystemOpts = map[string]string{}
			for k, v := range st.Opts {
				cfg.SystemOpts[k] = v
			}
			cfg.WorkloadOpts = map[string]string{}
			cfg.CostOverride = h.Overrides()
			return cfg
		}
		capJob := func(m Measure, workload, size string) Job {
			cfg := base(workload, 1)
			if size != "" {
				cfg.WorkloadOpts["record-size"] = size
			}
			cfg.Duration = s.ProbeDuration
			bound := st.LatencyBound
			if bound == 0 {
				bound = engine.Second
			}
			return Job{ID: st.ID + "." + string(m), Setup: st, Measure: m, Capacity: true, Config: cfg,
				LatencyBound: bound, Tolerance: s.Tolerance, Hardware: s.Hardware}
		}
		caps = append(caps, capJob(Cap100, "grep", "100"), capJob(Cap1000, "grep", "1000"))
		if st.System == "lineage" || st.System == "stormack" && st.Opts == nil {
			// The paper's grep/WordCount figure (64 M vs 25 M records/s).
			caps = append(caps, capJob(CapWC, "wordcount", ""))
		}
		lat := base("grep", 1)
		lat.WorkloadOpts["record-size"] = "100"
		lat.Duration = s.RunDuration
		runs = append(runs, Job{ID: st.ID + "." + string(Latency), Setup: st, Measure: Latency, HalfOf: st.ID + "." + string(Cap100), Config: lat, Hardware: s.Hardware})
		for _, m := range []Measure{Crash, Partition, Slow, StateLarge} {
			cfg := base("wordcount", 2)
			cfg.Duration, cfg.Rate = s.RunDuration, FaultRate
			cfg.Faults = []string{string(m)}
			switch m {
			case Crash:
				cfg.WorkloadOpts["vocabulary"] = strconv.Itoa(SmallVocab)
				// Traced (the default window, 1 s before to 3 s after
				// the crash), so chapter.html links each system's
				// recovery in the run explorer. A trace changes no
				// result, nor the command line.
				cfg.Trace = true
			case StateLarge:
				cfg.Faults = []string{string(Crash)}
				cfg.WorkloadOpts["vocabulary"] = strconv.Itoa(s.LargeVocab)
			}
			runs = append(runs, Job{ID: st.ID + "." + string(m), Setup: st, Measure: m, Config: cfg, Hardware: s.Hardware})
		}
	}
	return append(caps, runs...), nil
}

// Shard keeps the jobs of shard i of n (1 <= i <= n): every n-th setup
// from the i-th, with all its jobs, so that a latency run is in the shard
// of the search it takes its rate from. Shards' folders are joined by
// copying their runs/ folders into one and running the campaign there:
// every job is found finished and reused.
func Shard(jobs []Job, i, n int) []Job {
	var out []Job
	for _, j := range jobs {
		k := slices.IndexFunc(Setups, func(s Setup) bool { return s.ID == j.Setup.ID })
		if k%n == i-1 {
			out = append(out, j)
		}
	}
	return out
}

// Command is the job as a bench command line: the capacity search, or the
// run (whose --rate is spelled HALF(job) when it comes from a search).
func (j Job) Command() string {
	cfg := j.Config
	cfg.CostOverride = nil // spelled as the profile's name
	line := cfg.ReplayCommand() + " --hardware " + j.Hardware
	if j.Capacity {
		line = strings.Replace(line, "bench run", "bench capacity", 1)
		line += " --latency-bound " + time.Duration(j.LatencyBound).String()
	}
	if j.HalfOf != "" {
		line += " --rate HALF(" + j.HalfOf + ")"
	}
	return line
}

// Commands lists every job's command, in campaign order (docs/chapter.md
// holds the quick campaign's, checked by a test).
func Commands(s Shape) ([]string, error) {
	jobs, err := Jobs(s)
	return CommandLines(jobs), err
}

// CommandLines is "ID: command" for each job.
func CommandLines(jobs []Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, fmt.Sprintf("%s: %s", j.ID, j.Command()))
	}
	return out
}
