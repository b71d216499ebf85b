package kstreams

import (
	"slices"

	"ftbench/engine"
	"ftbench/metrics"
	"ftbench/systems"
	"ftbench/systems/internal/summary"
)

// Summarize derives run.json's system_metrics from the protocol events
// (the package doc defines each key).
func (system) Summarize(r systems.RunInfo) map[string]any {
	p, err := parseOptions(r.Job)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	subs, err := splitTopology(r.Job.Workload.Plan())
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	m := map[string]any{
		"guarantee":                     r.Job.Opts["guarantee"],
		"commit_interval_ms":            summary.Round3(float64(p.commitInterval) / 1e6),
		"instances":                     int64(p.instances),
		"threads_per_instance":          int64(p.threads),
		"sub_topologies":                int64(len(subs)),
		"tasks":                         int64(len(subs) * r.Job.Parallelism),
		"rebalance_protocol":            map[bool]string{true: Eager, false: Cooperative}[p.eager],
		"static_membership":             p.static,
		"standby_replicas":              int64(p.standbys),
		"transactional_stores":          p.txnStores,
		"max_warmup_replicas":           int64(p.warmups),
		"probing_rebalance_interval_ms": summary.Round3(float64(p.probing) / 1e6),
	}
	var (
		commitMS, restoreMS, rebalMS, pauseMS []float64
		committed, aborted, fenced            int64
		restored, restores, paused, moved     int64
		rebalances, stableWaits, compacted    int64
		staticRejoins, brokerUps              int64
		warmups, promoted, probes, revoked    int64
		handoverMS                            []float64
		perTask                               = map[int64]int64{}
		abortedBy                             = map[string]int64{}
		started                               = map[int64]engine.Time{}
	)
	for _, e := range r.Events {
		switch e.Kind {
		case evTxnCommitted:
			committed++
			commitMS = append(commitMS, float64(e.Value)/1e6)
		case evTxnAborted:
			aborted++
			abortedBy[e.Note]++
		case evFenced:
			fenced++
		case evRebalance:
			started[e.ID] = e.Time
		case evAssigned:
			rebalances++
			moved += e.Value
			if t, ok := started[e.ID]; ok {
				rebalMS = append(rebalMS, float64(e.Time-t)/1e6)
			}
		case evPaused:
			paused++
			pauseMS = append(pauseMS, float64(e.Value)/1e6)
		case evRestored:
			restores++
			restored += e.Bytes
			perTask[e.ID] += e.Bytes
			restoreMS = append(restoreMS, float64(e.Value)/1e6)
		case evStableWait:
			stableWaits++
		case evCompacted:
			compacted += e.Value
		case evStaticRejoin:
			staticRejoins++
		case evBrokerUp:
			brokerUps++
		case evWarmup:
			warmups++
		case evPromoted:
			promoted++
		case evProbing:
			probes++
		case evRevoked:
			revoked++
		case evHandover:
			handoverMS = append(handoverMS, float64(e.Value)/1e6)
		}
	}
	m["transactions_committed"] = committed
	m["transactions_aborted"] = aborted
	m["transactions_aborted_by_reason"] = abortedBy
	m["commit_latency_ms"] = dist(commitMS)
	m["fenced_requests"] = fenced
	m["rebalances"] = rebalances
	m["rebalance_ms"] = dist(rebalMS)
	m["rebalance_tasks_moved"] = moved
	m["rebalance_tasks_paused"] = moved + paused
	m["rebalance_revoked_pause_ms"] = dist(pauseMS)
	m["static_rejoins"] = staticRejoins
	m["restores"] = restores
	m["restore_ms"] = dist(restoreMS)
	m["changelog_records_restored"] = restored
	tasks := make([]int64, 0, len(perTask))
	for t := range perTask {
		tasks = append(tasks, t)
	}
	slices.Sort(tasks)
	per := map[string]int64{}
	for _, t := range tasks {
		if perTask[t] > 0 {
			per[p.taskNameIn(subs, r.Job.Parallelism, t)] = perTask[t]
		}
	}
	m["changelog_records_restored_per_task"] = per
	m["require_stable_waits"] = stableWaits
	m["changelog_records_compacted"] = compacted
	m["broker_failovers"] = brokerUps
	m["repartition_bytes"] = r.Counters[cRepartitionBytes]
	m["changelog_bytes"] = r.Counters[cChangelogBytes]
	m["standby_records_applied"] = r.Counters[cStandbyRecords]
	m["warmup_replicas_assigned"] = warmups
	m["warmup_tasks_promoted"] = promoted
	m["probing_rebalances"] = probes
	m["rebalance_tasks_revoked"] = revoked
	m["handover_ms"] = dist(handoverMS)
	return m
}

func (p *params) taskNameIn(subs []subTopology, parts int, t int64) string {
	q := &params{subs: subs, parts: parts}
	return q.taskName(taskID(t))
}

// dist is {n, p50, p99, max, mean} in ms.
func dist(xs []float64) map[string]any {
	if len(xs) == 0 {
		return map[string]any{"n": int64(0)}
	}
	s := metrics.Summary(xs)
	return map[string]any{"n": int64(s.N), "p50": summary.Round3(s.P50), "p99": summary.Round3(s.P99),
		"max": summary.Round3(s.Max), "mean": summary.Round3(s.Mean)}
}

// Run counters.
const (
	cRepartitionBytes = "kstreams_repartition_bytes"
	cChangelogBytes   = "kstreams_changelog_bytes"
	cStandbyRecords   = "kstreams_standby_records_applied"
)
