package torture

import (
	"math/rand/v2"
	"strconv"
	"time"

	"ftbench/engine"
)

// choice is one system option torture draws, unless the user set it: the
// values are the configurations whose protocol paths a campaign must reach
// (docs/torture.md, "Options and coverage"); a value listed twice is drawn
// twice as often. when restricts it to the runs where the option means
// something; it may read only the options listed before it (drawOptions
// applies them in order).
type choice struct {
	name   string
	values []string
	when   func(r runKind) bool
}

// runKind is what a choice's when may look at: the run's variant, whether
// its workload is peer-to-peer, and its options (the user's, those drawn so
// far, else the system's defaults).
type runKind struct {
	variant string
	p2p     bool
	opt     func(name string) string
}

func always(runKind) bool { return true }

// choices is keyed by system, in the order the options are drawn (the
// order is part of the campaign: run i must stay a pure function of the
// campaign seed and i; new options go last so that the draws before them
// stay as they were). Every option of every system is here or in notDrawn
// (TestEveryOptionIsDrawnOrExcused). Why each:
//   - barrier: checkpoints of 200 ms-1 s so that a few-second run has
//     several, both sinks (plain claims at-least-once, 2pc exactly-once), and
//     for aligned-timeout timeouts short enough to switch under the drawn
//     slow and throttle windows, and one (500 ms) long enough that most
//     alignments complete, so crashes also land inside them (with 20-100 ms
//     only, 4 of 200 runs crashed during an alignment); max-concurrent-checkpoints 2 only for the
//     aligned variant (unaligned and sync need 1); both failover strategies
//     (region restarts only the failed pipelined regions, full every task);
//     tolerable failed checkpoints 0 (Flink's default: a checkpoint failed
//     by a store-down window fails the job over) or 3 (the job runs on its
//     last completed checkpoint through the window).
//     Retention 1 (Flink's default: every completed checkpoint deletes its
//     predecessor, so recovery and the shared registry run with nothing
//     to spare), 2, or 64 (nothing is deleted in a few-second run). The
//     post-run snapshot audit checks the retained checkpoints, so with 1
//     it checks the last one (the one a recovery would use) and counts the
//     others as not retained; 64 keeps the audit of every checkpoint in a
//     third of the runs. Incremental snapshots on and off: on, a retained
//     checkpoint references its chain's older pieces and the registry must
//     keep them while any retained checkpoint needs them, however few are
//     retained; full-checkpoint-every 2 (a chain consolidated after one
//     delta, so pieces are released every other checkpoint) or 10 (the
//     default: long chains, a restore reads up to 10 pieces), incremental
//     runs only. Checkpoint timeout 10 min (Flink's default: never in a
//     short run) or 200 ms: a checkpoint takes about 11 ms unhindered and
//     up to 700 ms behind a slow, throttle or store-slow window, so those
//     expire, count as failed and, past the tolerable number, fail the
//     job over (with 1 s, 2 runs in 40 saw an expiry). Operator chaining
//     on in two runs of three (Flink's default: a chain's operators share
//     one snapshot and one restore, its sink pre-commits in its source's
//     thread on grep) and off in one (every edge a channel, so throttle
//     and reorder reach every edge); object reuse on half the chained runs.
//   - none: chaining and object reuse as barrier's.
//   - lineage: batches of 250 ms-1 s and a checkpoint every 2-3 batches (the
//     default, 10 one-second batches, never checkpoints in a short run, so no
//     recovery ever used the cutoff), speculation on and off; 3 shuffle
//     partitions in a third of the runs, fewer than the executors (the
//     default is 8 a worker): a lost state partition is then recomputed by
//     one task, and some executors hold no state at all.
//   - snapshot: checkpoints of 200 ms-1 s on dataflows, snapshots every
//     100-500 ms on bank-p2p.
//   - kstreams: exactly-once v2 in two runs of three, at-least-once in the
//     third (its 30 s commit interval never commits in a short run, so a
//     crash replays from the start); commit intervals of 50 ms and 300 ms
//     beside the default; both rebalance protocols; static membership
//     and a 2 s session timeout (a restarted thread back within it keeps
//     its tasks), or a 500 ms one, below the detection delay, so that a
//     pause outlasts the session but not the detection and the thread
//     wakes a live zombie that the generation must fence; one standby replica (a failover restores its lag only);
//     KIP-892 stores (an aborted task rolls back instead of wiping); a
//     2 KiB record cache (evictions write the changelog between commits);
//     one thread per instance (every task of an instance on one thread, so
//     a fenced or aborted thread rewinds all of them). KIP-441: an
//     acceptable recovery lag of 200 records in a third of the runs (with
//     10000 a few seconds' changelog is short enough that a returning
//     instance counts as caught up and takes its tasks back at once; with
//     200 it gets warm-ups, promoted at a later rebalance once within
//     200), one warm-up replica or two (Kafka's default), and a probing
//     interval of 60 s (Kafka's minimum) in a fifth of the runs, whose
//     input then goes on 63 s past its drawn length (schedule.go) so that
//     the probing rebalance a recovery arms fires within the run.
//   - stormack: ack timeouts of 500 ms-2 s: short enough that a crash's lost
//     trees time out and replay within the run; acking off (--ackers 0,
//     at most once) in a third of the runs, so crashes also land between a
//     spout's offset commit and the emission of its batch. With acking on,
//     max-spout-pending 1000 (a spout whose window fills with the trees a
//     crash left stuck stops emitting until they time out: 39 of seed 1's
//     64 runs with 1000 filled it, and none of its 73 with the default
//     5000, peak 4746) and offset commits every 200 ms or
//     1 s (a restarted spout resumes further or less far back). With acking
//     off, polls of 100 or 500 records (the batch a crash can cut between
//     its commit and its emission; 100 still leaves a spout 20 000
//     records/s at the store's 5 ms latency, above the drawn rates).
//   - trident: every spout, and the state as the spout's in half the runs,
//     opaque or non-transactional in the others: transactional state is
//     only drawn with the transactional spout, because with the others it
//     claims nothing (it skips a replayed txid's different tuples for good,
//     which a run reports as undrained, exit 4). Batches every
//     200 ms or 500 ms, one batch in flight (Trident's default) or three
//     (commits must still go in txid order), ack timeouts of 500 ms-2 s as
//     stormack's; the non-transactional spout's offset commits every 200 ms
//     or 1 s (how far back a restarted spout resumes).
var choices = map[string][]choice{
	"barrier": {
		{"checkpoint-interval", []string{"200ms", "500ms", "1s"}, always},
		{"sink", []string{"2pc", "2pc", "plain"}, always},
		{"max-concurrent-checkpoints", []string{"1", "2"}, func(r runKind) bool { return r.variant == "aligned" }},
		{"aligned-checkpoint-timeout", []string{"20ms", "50ms", "100ms", "500ms"}, func(r runKind) bool { return r.variant == "aligned-timeout" }},
		{"failover", []string{"region", "full"}, always},
		{"checkpoints-retained", []string{"1", "2", "64"}, always},
		{"tolerable-failed-checkpoints", []string{"0", "3"}, always},
		{"incremental", []string{"false", "true"}, always},
		{"full-checkpoint-every", []string{"2", "10"}, func(r runKind) bool { return r.opt("incremental") == "true" }},
		{"checkpoint-timeout", []string{"10m", "200ms"}, always},
		{"chaining", []string{"true", "true", "false"}, always},
		{"object-reuse", []string{"false", "true"}, func(r runKind) bool { return r.opt("chaining") != "false" }},
	},
	"none": {
		{"chaining", []string{"true", "true", "false"}, always},
		{"object-reuse", []string{"false", "true"}, func(r runKind) bool { return r.opt("chaining") != "false" }},
	},
	"lineage": {
		{"batch-interval", []string{"250ms", "500ms", "1s"}, always},
		{"checkpoint-every", []string{"2", "3"}, always},
		{"speculation", []string{"false", "true"}, always},
		{"shuffle-partitions", []string{"0", "0", "3"}, always},
	},
	"snapshot": {
		{"checkpoint-interval", []string{"200ms", "500ms", "1s"}, func(r runKind) bool { return !r.p2p }},
		{"snapshot-interval", []string{"100ms", "250ms", "500ms"}, func(r runKind) bool { return r.p2p && r.opt("snapshots") == "0" }},
	},
	"kstreams": {
		{"guarantee", []string{"exactly-once-v2", "exactly-once-v2", "at-least-once"}, always},
		{"commit-interval", []string{"auto", "50ms", "300ms"}, always},
		{"rebalance", []string{"cooperative", "eager"}, always},
		{"static-membership", []string{"false", "true"}, always},
		{"session-timeout", []string{"detect-delay", "500ms", "2s"}, always},
		{"standby-replicas", []string{"0", "1"}, always},
		{"transactional-stores", []string{"false", "true"}, func(r runKind) bool { return r.opt("guarantee") != "at-least-once" }},
		{"cache-max-bytes", []string{"10485760", "10485760", "2048"}, always},
		{"threads", []string{"auto", "1"}, always},
		{"acceptable-recovery-lag", []string{"10000", "10000", "200"}, always},
		{"max-warmup-replicas", []string{"2", "1"}, always},
		{"probing-rebalance-interval", []string{"10m", "10m", "10m", "10m", "60s"}, always},
	},
	"stormack": {
		{"ack-timeout", []string{"500ms", "1s", "2s"}, always},
		{"ackers", []string{"workers", "workers", "0"}, always},
		{"max-spout-pending", []string{"5000", "1000"}, acking},
		{"offset-commit-interval", []string{"200ms", "1s"}, acking},
		{"max-poll-records", []string{"500", "100"}, func(r runKind) bool { return !acking(r) }},
	},
	"trident": {
		{"spout", []string{"transactional", "opaque", "non-transactional"}, always},
		{"state", []string{"spout", "spout", "opaque", "non-transactional"}, always},
		{"batch-emit-interval", []string{"200ms", "500ms"}, always},
		{"max-batches-pending", []string{"1", "1", "3"}, always},
		{"ack-timeout", []string{"500ms", "1s", "2s"}, always},
		{"offset-commit-interval", []string{"200ms", "1s"}, func(r runKind) bool { return r.opt("spout") == "non-transactional" }},
	},
}

// acking is stormack with acking on: max-spout-pending and the offset
// commit interval apply only then, max-poll-records only with it off.
func acking(r runKind) bool { return r.opt("ackers") != "0" }

// notDrawn are the options torture leaves to the user, and why: none of
// them changes a protocol path.
var notDrawn = map[string]map[string]string{
	"barrier": {
		"txn-timeout": "a transaction timeout shorter than an outage loses pre-committed data by design (Flink's documented pitfall, " +
			"systems/barrier TestBrokerTxnTimeoutLosesData): drawn, the loss would be the configuration's, not a bug",
		"broker-txn-timeout": "as txn-timeout: the broker's cap on it (Kafka's transaction.max.timeout.ms)",
	},
	"lineage": {"task-overhead": "a cost (executor CPU per task launch): no protocol step depends on it"},
	"kstreams": {
		"instances": "one per worker, as the other systems place one pipeline slice per worker; the workers are drawn",
	},
	"trident": {
		"max-batch-records": "a cap on a batch's size only moves records to later batches, as a partition with less appended does",
		"ackers":            "how many acker tasks share the batch trees: no protocol step depends on it (0 is refused)",
	},
	"snapshot": {"snapshots": "bank-p2p: when the snapshots start, as snapshot-interval (drawn) does; " +
		"refused on dataflows"},
}

// variantChoices are the variants torture draws per run, from their own
// stream, when the user gave no --variant (a system not listed runs its
// default): every variant that claims something and runs on the
// workload. snapshot's naive variant claims nothing (it is the lecture's
// counter-example) and, like lai-yang and mattern, runs on bank-p2p only.
var variantChoices = map[string]func(p2p bool) []string{
	"barrier": func(bool) []string { return []string{"aligned", "unaligned", "aligned-timeout", "sync"} },
	"lineage": func(bool) []string { return []string{"parallel", "upstream"} },
	"snapshot": func(p2p bool) []string {
		if p2p {
			return []string{"cl", "lai-yang", "mattern"}
		}
		return []string{"cl"}
	},
}

// variantsNotDrawn are the variants never drawn, and why.
var variantsNotDrawn = map[string]map[string]string{
	"snapshot": {"naive": "claims nothing: the lecture's counter-example, run it with --variant naive"},
}

// drawVariant returns the variant of a run: the user's, else one drawn
// from variantChoices (one draw from rng whether or not it is used).
func drawVariant(rng *rand.Rand, system, user string, p2p bool) string {
	vs := variantChoices[system]
	if vs == nil {
		return user
	}
	v := vs(p2p)[rng.IntN(len(vs(p2p)))]
	if user != "" {
		return user
	}
	return v
}

// kindOf is run cfg's runKind, reading its options with the system's
// declared defaults.
func kindOf(variant string, p2p bool, opts, declared map[string]string) runKind {
	return runKind{variant: variant, p2p: p2p, opt: func(name string) string {
		if v, ok := opts[name]; ok {
			return v
		}
		return declared[name]
	}}
}

// drawOptions sets, in opts, every option of choices[system] that applies
// and that neither the user nor the props table set. Every choice consumes
// one draw whether or not it is used, so fixing one option on the command
// line does not change the others.
func drawOptions(rng *rand.Rand, system, variant string, p2p bool, opts map[string]string, declared map[string]string) {
	r := kindOf(variant, p2p, opts, declared)
	for _, c := range choices[system] {
		v := c.values[rng.IntN(len(c.values))]
		if _, set := opts[c.name]; set || !c.when(r) {
			continue
		}
		if _, ok := declared[c.name]; ok {
			opts[c.name] = v
		}
	}
}

// workloadChoices are the workload options torture draws, unless the user
// set them, keyed by workload: bank-p2p's topology, so that campaigns run
// the snapshot algorithms on channels that are not all pairs (one marker
// or done message per channel, transfers only along them).
var workloadChoices = map[string][]choice{
	"bank-p2p": {{"topology", []string{"full", "ring", "star", "random,degree=2"}, always}},
}

// drawWorkloadOptions sets, in opts, every workload option of
// workloadChoices[workload] the user did not set. A random topology of
// degree 2 needs 3 processes; with fewer the default stays.
func drawWorkloadOptions(rng *rand.Rand, workload string, opts map[string]string) {
	for _, c := range workloadChoices[workload] {
		v := c.values[rng.IntN(len(c.values))]
		if _, set := opts[c.name]; set {
			continue
		}
		if n, err := strconv.Atoi(opts["processes"]); err == nil && n < 3 && v == "random,degree=2" {
			continue
		}
		opts[c.name] = v
	}
}

// checkpointPeriod is the time between a system's checkpoints (or
// snapshots) in the configuration opts, with declared defaults: lineage
// checkpoints every checkpoint-every batches. 0 if it has none.
func checkpointPeriod(opts, declared map[string]string) engine.Time {
	get := func(name string) (string, bool) {
		if v, ok := opts[name]; ok {
			return v, true
		}
		v, ok := declared[name]
		return v, ok
	}
	for _, name := range intervalFlags {
		v, ok := get(name)
		d, err := time.ParseDuration(v)
		if !ok || err != nil || d <= 0 {
			continue
		}
		period := engine.Time(d)
		if name == "batch-interval" {
			if k, ok := get("checkpoint-every"); ok {
				if n, err := strconv.Atoi(k); err == nil && n > 0 {
					period *= engine.Time(n)
				}
			}
		}
		return period
	}
	return 0
}

// minDurationFor is the shortest input that shows a system's checkpoints
// being used: three checkpoint periods and a second, so that crashes in
// 10-70% of the input land both before the first checkpoint and after one.
func minDurationFor(period engine.Time) engine.Time {
	d := 3*period + engine.Second
	step := 500 * engine.Millisecond
	return (d + step - 1) / step * step
}
