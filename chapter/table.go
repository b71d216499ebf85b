package chapter

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"ftbench/harness"
)

// Mark is how a measured figure stands against the seed's claim.
type Mark int

// The marks. Unchecked: the claim says nothing a number can break.
const (
	Unchecked Mark = iota
	Agrees
	Disagrees
	NotMeasured
)

// Entry is one setup's measured figure in a cell, with the jobs behind it.
type Entry struct {
	Setup string // Setup.Label
	Text  string
	Mark  Mark
	Why   string // for Disagrees and NotMeasured: what and why
	Jobs  []string
}

// Cell is one dimension of one column: the seed's claim (translated) and
// an entry per setup of the column.
type Cell struct {
	Claim   string
	Entries []Entry
}

// Row is one of the seed's eight dimensions.
type Row struct {
	Name string
	// How says what is measured for this row.
	How   string
	Cells []Cell // one per seed column (Columns[:4])
}

// seedClaims is the seed's table (seed 004, end of section 21.2.7),
// translated: rows in its order, cells in Columns' order.
var seedClaims = [][4]string{
	{"record-at-a-time: a topology of long-running stateful operators",
		"micro-batch: a DStream is a sequence of RDDs cut at the batch interval",
		"true record-at-a-time streaming (dataflow with stateful operators); batch is a special case of a stream",
		"record-at-a-time, a library rather than a cluster (embedded in the application, Kafka for state and coordination)"},
	{"milliseconds (the best minimum latency)",
		"seconds (floor = the batch interval; the paper aims at 0.5-2 s)",
		"milliseconds to sub-second (the barrier mechanism adds no batch wait)",
		"milliseconds to seconds (depends on the commit interval and caching)"},
	{"at-least-once (default); Trident reaches exactly-once (transactional topologies + replicated database state)",
		"micro-batches are naturally 'atomic per batch'; with replayable input and idempotent/transactional output, exactly-once",
		"native exactly-once (barrier checkpoints + 2PC sink)",
		"exactly-once (Kafka transactions: state updates and offset commits in one transaction)"},
	{"tuple-level acks (XOR checksums) + timeout replay + anchoring; a failure replays the whole tree",
		"RDD lineage + partition-level recomputation + checkpoints (lineage cutoff); parallel recovery instead of upstream backup",
		"Chandy-Lamport barrier checkpoints (aligned/unaligned) + state-backend snapshots + 2PC output",
		"Kafka's transaction log (changelog topic): state in local stores, changes written to the changelog, rebuilt after a failure"},
	{"left to user code (Trident: an external replicated database); ack state in the ackers' memory",
		"state is RDDs (cacheable, recomputable by lineage), checkpointed periodically",
		"first-class keyed and operator state, pluggable backends (memory / RocksDB), large state and incremental checkpoints",
		"first-class local state + changelog topic (Kafka is its durable layer)"},
	{"weak natively (acking overhead + queue build-up); Heron improves it with TCP/spout/stage-by-stage backpressure",
		"micro-batches give backpressure naturally (the next batch waits until this one is done)",
		"network-level backpressure + alignment stalls (unaligned checkpoints relieve them)",
		"consumer-side backpressure set by max.poll.records / the fetch pace"},
	{"measured in the paper about 2x slower than Spark Streaming at 1000-byte records; the gap is larger at 100 bytes",
		"measured in the paper 60M records/s (6 GB/s) on 100 nodes at sub-second latency; grep 670K records/s per node vs Storm's 115K",
		"high (record-at-a-time + efficient network stack + state-backend optimisations)",
		"high (within one application, no separate cluster overhead)"},
	{"none (topologies and batch processing are entirely different models)",
		"strong: the same RDD API and the same code run batch, streaming and interactive queries",
		"strong: DataStream/DataSet unified, Table/SQL on one engine",
		"weak (streaming only; batch via Kafka Connect or others)"},
}

// rowNames are the seed's eight dimensions.
var rowNames = []string{"Processing model", "Latency", "Delivery semantics", "Fault-tolerance mechanism",
	"State management", "Backpressure", "Throughput", "Unification with batch processing"}

// rowHow says how each row is measured.
var rowHow = []string{
	"output cycle and tasks of the latency run (grep 100 B): continuous output is record-at-a-time, a fixed cycle is a batch or commit boundary",
	"p50/p99 end-to-end latency of grep 100 B at half the setup's own capacity, one node",
	"duplicates, losses and wrong keys after a worker crash and after a network partition (wordcount at 30 000 records/s, 2 workers)",
	"recovery time after a worker crash and its phases (detected, worker up, restored, recomputed, catch-up)",
	"recovery and restore time after a crash with 10 000 (the crash run) vs a large vocabulary of distinct words (state size)",
	"a slow operator (8x CPU from 30% to 60% of the run): source-lag recovery after it ends, p99 latency, peak bytes queued in channels, and for Flink the longest barrier alignment and checkpoint start delay",
	"capacity (bench capacity, p99 <= 1 s) on grep 100 B and 1000 B on one node of the dstreams-2013 hardware, and the ratio to none's",
	"",
}

// Results accessors that tolerate a missing job.
func (r *Results) run(id string) *harness.Result { return r.Runs[id] }
func (r *Results) capRPS(id string) (float64, bool) {
	c := r.Caps[id]
	if c == nil || c.CapacityRPS == nil {
		return 0, false
	}
	return *c.CapacityRPS, true
}

// missing is the entry of a setup whose job did not produce a result.
func (r *Results) missing(st Setup, ids ...string) Entry {
	why := "the run produced no result"
	for _, id := range ids {
		if f, ok := r.Failed[id]; ok {
			why = id + " failed: " + f
		} else if c := r.Caps[id]; c != nil && c.CapacityRPS == nil {
			why = fmt.Sprintf("%s found no sustained rate (overloaded at %.0f records/s, the lowest probed)", id, c.OverloadedAtRPS)
		}
	}
	return Entry{Setup: st.Label, Mark: NotMeasured, Why: why, Jobs: ids}
}

// Build is the measured table: the seed's eight rows and four columns,
// each cell the seed's claim and an entry per setup of the column.
func Build(r *Results) []Row {
	var rows []Row
	for i, name := range rowNames {
		row := Row{Name: name, How: rowHow[i]}
		for c := range 4 {
			cell := Cell{Claim: seedClaims[i][c]}
			for _, st := range Setups {
				if st.Column != Columns[c] {
					continue
				}
				if i == 7 {
					cell.Entries = append(cell.Entries, Entry{Setup: "every setup", Mark: NotMeasured,
						Why: "ftbench runs streaming jobs only; whether one API also runs batch and interactive queries is a property of the API, not of any run"})
					break // one entry for the column: the reason is the same
				}
				cell.Entries = append(cell.Entries, measure(i, st, r))
			}
			row.Cells = append(row.Cells, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

// measure is one setup's entry of row i.
func measure(i int, st Setup, r *Results) Entry {
	id := func(m Measure) string { return st.ID + "." + string(m) }
	switch i {
	case 0: // processing model
		lr := r.run(id(Latency))
		if lr == nil {
			return r.missing(st, id(Latency))
		}
		e := Entry{Setup: st.Label, Jobs: []string{id(Latency)}, Text: outputCycle(lr)}
		cycle := lr.Config.CommitCycleS
		switch {
		case st.System == "lineage":
			e.Mark, e.Why = check(cycle > 0, "output is continuous: no micro-batch boundary")
		case st.System == "stormack" || st.Opts["sink"] == "plain":
			e.Mark, e.Why = check(cycle == 0, fmt.Sprintf("output comes in cycles of %g s, not record at a time", cycle))
		}
		return e
	case 1: // latency
		lr := r.run(id(Latency))
		if lr == nil {
			return r.missing(st, id(Cap100), id(Latency))
		}
		e := Entry{Setup: st.Label, Jobs: []string{id(Latency)},
			Text: fmt.Sprintf("p50 %s, p99 %s at %.0f records/s", ms(lr.LatencyMS.P50), ms(lr.LatencyMS.P99), lr.OfferedRPS)}
		p50, p99 := lr.LatencyMS.P50, lr.LatencyMS.P99
		switch {
		case st.ID == "storm-ack":
			// "The best minimum latency": below every other column's.
			e.Mark, e.Why = check(p50 < 100, "p50 is not in milliseconds (>= 100 ms)")
			if lower, l := lowestElsewhere(r, st.Column); e.Mark == Agrees && lower != "" && l < p50 {
				e.Mark, e.Why = Disagrees, fmt.Sprintf("not the lowest: %s has p50 %s", lower, ms(l))
			}
		case st.System == "stormack":
			e.Mark, e.Why = check(p50 < 100, "p50 is not in milliseconds (>= 100 ms)")
		case st.System == "lineage":
			e.Mark, e.Why = check(p50 >= 250 && p99 <= 2000, "p50 below half the batch interval or p99 above 2 s")
		case st.System == "barrier":
			e.Mark, e.Why = check(p50 < 1000, "p50 is not sub-second")
		case st.System == "kstreams":
			e.Mark, e.Why = check(p50 < 10000, "p50 is above seconds (>= 10 s)")
		}
		return e
	case 2: // delivery
		cr, pr := r.run(id(Crash)), r.run(id(Partition))
		if cr == nil || pr == nil {
			return r.missing(st, id(Crash), id(Partition))
		}
		e := Entry{Setup: st.Label, Jobs: []string{id(Crash), id(Partition)},
			Text: fmt.Sprintf("crash: %s; partition: %s", delivery(cr), delivery(pr))}
		lost := cr.Lost + pr.Lost
		wrong := cr.Duplicates + pr.Duplicates + cr.WrongKeys + pr.WrongKeys + lost
		switch st.Claim {
		case "exactly-once":
			e.Mark, e.Why = check(wrong == 0, "claimed exactly-once, but duplicates, losses or wrong keys were measured")
		case "at-least-once":
			e.Mark, e.Why = check(lost == 0, "claimed at-least-once, but effects were lost")
		}
		return e
	case 3: // fault-tolerance mechanism
		cr := r.run(id(Crash))
		if cr == nil {
			return r.missing(st, id(Crash))
		}
		return Entry{Setup: st.Label, Jobs: []string{id(Crash)}, Text: recovery(cr)}
	case 4: // state management
		sm, lg := r.run(id(Crash)), r.run(id(StateLarge))
		if sm == nil || lg == nil {
			return r.missing(st, id(Crash), id(StateLarge))
		}
		e := Entry{Setup: st.Label, Jobs: []string{id(Crash), id(StateLarge)},
			Text: fmt.Sprintf("%s words: %s; %s words: %s", sm.Config.WorkloadOpts["vocabulary"], restore(sm),
				lg.Config.WorkloadOpts["vocabulary"], restore(lg))}
		if st.System == "kstreams" {
			// Rebuilt from the changelog: more state, longer restore.
			s, l := restoredS(sm), restoredS(lg)
			e.Mark, e.Why = check(l > s, "the restore does not grow with the state: the changelog rebuild is not what bounds it")
		}
		return e
	case 5: // backpressure
		sr := r.run(id(Slow))
		if sr == nil {
			return r.missing(st, id(Slow))
		}
		e := Entry{Setup: st.Label, Jobs: []string{id(Slow)}, Text: fmt.Sprintf("lag recovery %s after the slow operator; p99 %s; peak %s queued in channels",
			seconds(sr.LagRecoveryTimeS), ms(sr.LatencyMS.P99), bytes(sr.PeakChannelBytes))}
		align, okA := metricMax(sr, "alignment_ms")
		delay, okD := metricMax(sr, "checkpoint_start_delay_ms")
		if okA && okD {
			e.Text += fmt.Sprintf("; alignment max %s, checkpoint start delay max %s", ms(align), ms(delay))
		}
		// "Unaligned checkpoints relieve the alignment stalls": under the
		// same straggler, the barrier waits less than the aligned setup's
		// with the same sink.
		if st.Variant == "unaligned" {
			peer := r.run(strings.Replace(st.ID, "unaligned", "aligned", 1) + "." + string(Slow))
			if peerDelay, ok := metricMax(peer, "checkpoint_start_delay_ms"); ok && okD {
				e.Mark, e.Why = check(delay < peerDelay, fmt.Sprintf("checkpoint start delay max %s, not below the aligned setup's %s", ms(delay), ms(peerDelay)))
			}
		}
		return e
	case 6: // throughput
		c100, ok1 := r.capRPS(id(Cap100))
		c1000, ok2 := r.capRPS(id(Cap1000))
		if !ok1 || !ok2 {
			return r.missing(st, id(Cap100), id(Cap1000))
		}
		e := Entry{Setup: st.Label, Jobs: []string{id(Cap100), id(Cap1000)},
			Text: fmt.Sprintf("grep 100 B: %s/s, 1000 B: %s/s per node", count(c100), count(c1000))}
		if n, ok := r.capRPS("none." + string(Cap100)); ok && st.System != "none" {
			e.Text += fmt.Sprintf(" (%.2fx none at 100 B)", c100/n)
		}
		s100, ok3 := r.capRPS("spark." + string(Cap100))
		s1000, ok4 := r.capRPS("spark." + string(Cap1000))
		if st.ID == "storm-ack" && ok3 && ok4 {
			e.Text += fmt.Sprintf("; Spark/Storm %.2fx at 100 B, %.2fx at 1000 B", s100/c100, s1000/c1000)
			e.Mark, e.Why = check(s1000 > c1000 && s100/c100 > s1000/c1000,
				"Storm is not slower than Spark at 1000 B, or the gap is not larger at 100 B")
		}
		return e
	}
	return Entry{Setup: st.Label, Mark: NotMeasured, Why: "no measurement defined"}
}

// lowestElsewhere is the setup outside column (and outside the baseline)
// with the lowest p50 latency, and that p50; "" if none was measured.
func lowestElsewhere(r *Results, column string) (string, float64) {
	best, p50 := "", 0.0
	for _, st := range Setups {
		lr := r.run(st.ID + "." + string(Latency))
		if st.Column == column || st.System == "none" || lr == nil {
			continue
		}
		if best == "" || lr.LatencyMS.P50 < p50 {
			best, p50 = st.Column+" "+st.Label, lr.LatencyMS.P50
		}
	}
	return best, p50
}

// metricMax is the "max" of a distribution in run.json's system_metrics
// (barrier's alignment_ms, checkpoint_start_delay_ms), false when the
// run or the metric is missing.
func metricMax(r *harness.Result, key string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	d, ok := r.SystemMetrics[key].(map[string]any)
	if !ok {
		return 0, false
	}
	v, ok := d["max"].(float64)
	return v, ok
}

func check(ok bool, why string) (Mark, string) {
	if ok {
		return Agrees, ""
	}
	return Disagrees, why
}

func outputCycle(r *harness.Result) string {
	var tasks []string
	for _, t := range r.Tasks {
		tasks = append(tasks, fmt.Sprintf("%s x%d", t.Name(), t.Instances))
	}
	out := "continuous output"
	if c := r.Config.CommitCycleS; c > 0 {
		out = fmt.Sprintf("output every %g s", c)
	}
	return out + "; tasks " + strings.Join(tasks, " ")
}

func delivery(r *harness.Result) string {
	return fmt.Sprintf("%d duplicates, %d lost, %d wrong keys (%s)", r.Duplicates, r.Lost, r.WrongKeys, r.Verdict)
}

func recovery(r *harness.Result) string {
	s := "recovery " + seconds(r.RecoveryTimeS)
	for _, rc := range r.Recoveries {
		if p := rc.Phases; p != nil {
			var ph []string
			for _, x := range []struct {
				name string
				v    *float64
			}{{"detected", p.DetectedS}, {"worker up", p.WorkerUpS}, {"redeployed", p.RedeployedS}, {"restored", p.RestoredS},
				{"recomputed", p.RecomputedS}, {"spout resumed", p.SpoutResumedS}, {"catch-up", p.CatchUpS}} {
				if x.v != nil {
					ph = append(ph, x.name+" "+seconds(x.v))
				}
			}
			s += " (" + strings.Join(ph, ", ") + ")"
		}
	}
	return s
}

func restoredS(r *harness.Result) float64 {
	for _, rc := range r.Recoveries {
		if rc.Phases != nil && rc.Phases.RestoredS != nil {
			return *rc.Phases.RestoredS
		}
	}
	return 0
}

func restore(r *harness.Result) string {
	s := "recovery " + seconds(r.RecoveryTimeS)
	if v := restoredS(r); v > 0 {
		s += fmt.Sprintf(", restored at %.2f s", v)
	}
	return s
}

func seconds(v *float64) string {
	if v == nil {
		return "none measured"
	}
	return fmt.Sprintf("%.2f s", *v)
}

func ms(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}

func bytes(b int64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// count prints a records/s figure with k/M.
func count(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// Paper is one of the D-Streams paper's figures beside its measurement.
type Paper struct {
	Figure   string
	Paper    float64
	Measured float64
	Fitted   bool // the figure dstreams-2013 was fitted to
	Jobs     []string
	Ok       bool // all its measurements exist
}

// PaperFigures are the D-Streams paper's section 6 figures (as the seed
// relays them) beside the campaign's, on the dstreams-2013 profile.
func PaperFigures(r *Results) []Paper {
	get := func(id string) float64 { v, _ := r.capRPS(id); return v }
	has := func(ids ...string) bool {
		for _, id := range ids {
			if _, ok := r.capRPS(id); !ok {
				return false
			}
		}
		return true
	}
	s100, s1000, swc := "spark."+string(Cap100), "spark."+string(Cap1000), "spark."+string(CapWC)
	t100, t1000 := "storm-ack."+string(Cap100), "storm-ack."+string(Cap1000)
	ratio := func(a, b string) float64 {
		if get(b) == 0 {
			return 0
		}
		return get(a) / get(b)
	}
	return []Paper{
		{Figure: "Spark Streaming, grep 100 B, records/s per node", Paper: 670000, Measured: get(s100), Fitted: true, Jobs: []string{s100}, Ok: has(s100)},
		{Figure: "Storm, grep 100 B, records/s per node", Paper: 115000, Measured: get(t100), Jobs: []string{t100}, Ok: has(t100)},
		{Figure: "Spark / Storm, grep 100 B", Paper: 670.0 / 115, Measured: ratio(s100, t100), Jobs: []string{s100, t100}, Ok: has(s100, t100)},
		{Figure: "Spark / Storm, grep 1000 B (\"about 2x\")", Paper: 2, Measured: ratio(s1000, t1000), Jobs: []string{s1000, t1000}, Ok: has(s1000, t1000)},
		{Figure: "Spark grep / WordCount (64 M vs 25 M records/s on 100 nodes)", Paper: 64.0 / 25, Measured: ratio(s100, swc), Jobs: []string{s100, swc}, Ok: has(s100, swc)},
	}
}

// link is a job's result relative to chapter.md: the capacity.json or the
// run folder ("#runs" when it has none).
func (r *Results) link(j string) string {
	d, ok := r.Dirs[j]
	switch {
	case !ok:
		return "#runs"
	case isCapacity(j):
		return filepath.ToSlash(filepath.Join(d, capacityFile))
	}
	return filepath.ToSlash(d)
}

// isCapacity reports whether a job ID is a capacity search.
func isCapacity(id string) bool {
	return slices.ContainsFunc([]Measure{Cap100, Cap1000, CapWC}, func(m Measure) bool { return strings.HasSuffix(id, "."+string(m)) })
}
