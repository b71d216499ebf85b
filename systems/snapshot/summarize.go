package snapshot

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/systems"
	"ftbench/workloads"
)

// Summarize audits every snapshot of the run and reports the results under
// run.json's system_metrics (keys documented in the package doc).
func (system) Summarize(r systems.RunInfo) map[string]any {
	if w, ok := r.Workload.(workloads.PeerToPeer); ok {
		return summarizeP2P(r, w)
	}
	return summarizeDAG(r)
}

// Consistency claims, as reported.
const (
	claimFIFO = "consistent on FIFO channels"
	claimAny  = "consistent on any channels"
	claimNone = "none"
)

func consistencyClaim(variant string) string {
	switch variant {
	case CL:
		return claimFIFO
	case LaiYang, Mattern:
		return claimAny
	}
	return claimNone
}

// maxExamples bounds the inconsistent snapshots described in run.json.
const maxExamples = 3

// maxListed bounds the per-snapshot lists (excused_snapshots,
// unexcused_snapshots); the counts beside them are exact.
const maxListed = 100

// markerCrossing is one channel on which transfers crossed a snapshot's own
// marker (see Crossing), as run.json lists it.
type markerCrossing struct {
	From      int   `json:"from"`
	To        int   `json:"to"`
	Overtook  int64 `json:"overtook_marker"`     // sent after the marker, received before it
	Overtaken int64 `json:"overtaken_by_marker"` // sent before the marker, received after it
}

// markerCrossings lists, from the receivers' ground truth, the channels on
// which a transfer crossed gs's own markers; none for variants without
// markers. It is the only excuse an inconsistent cl snapshot has: crossings
// of other snapshots' markers, or FIFO violations elsewhere in the run, do
// not touch this snapshot's cut.
func markerCrossings(gs *GlobalSnapshot) []markerCrossing {
	var out []markerCrossing
	for to, r := range gs.Reports {
		for from, c := range r.Crossings {
			if c.crossed() {
				out = append(out, markerCrossing{From: from, To: to, Overtook: c.Overtook, Overtaken: c.Overtaken})
			}
		}
	}
	return out
}

// excuse explains crossings in a sentence.
func excuse(cs []markerCrossing) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "channel %d->%d:", c.From, c.To)
		if c.Overtook > 0 {
			fmt.Fprintf(&b, " %d transfers sent after the marker received before it", c.Overtook)
		}
		if c.Overtaken > 0 {
			if c.Overtook > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %d transfers sent before the marker received after it", c.Overtaken)
		}
	}
	return b.String()
}

func summarizeP2P(r systems.RunInfo, w workloads.PeerToPeer) map[string]any {
	variant := r.Job.Variant
	times, _, _ := schedule(r.Job.Opts, r.Log.End)
	var (
		taken, consistent, inconsistent, notDurable  int64
		surplus, deficit, maxSurplus, maxDeficit     int64
		orphans, withOrphans, late, missing, doubled int64
		crossed, excused, unexcused                  int64
		durations, stateBytes, chanBytes, chanMsgs   []float64
		examples, excusedList                        []map[string]any
		unexcusedList                                []int64
	)
	for _, id := range eventIDs(r.Events, "snapshot_completed") {
		v, ok := r.Store(snapshotKey(id))
		if !ok {
			notDurable++ // completed, but the run ended before it was durable
			continue
		}
		gs := v.(*GlobalSnapshot)
		cs := gs.Check(w.Total())
		a := check.AuditSnapshot(cs)
		mutantRecordAudit(cs, a)
		taken++
		crossings := markerCrossings(gs)
		if len(crossings) > 0 {
			crossed++
		}
		if a.Consistent {
			consistent++
		} else {
			inconsistent++
			why := "none: no transfer crossed this snapshot's markers"
			if variant == CL && len(crossings) > 0 {
				why = excuse(crossings)
				excused++
				if len(excusedList) < maxListed {
					excusedList = append(excusedList, map[string]any{"id": id, "crossings": crossings, "why": why})
				}
			} else if variant == CL {
				unexcused++
				if len(unexcusedList) < maxListed {
					unexcusedList = append(unexcusedList, id)
				}
			}
			if len(examples) < maxExamples {
				ex := map[string]any{
					"id": id, "initiator": gs.Initiator, "imbalance": a.Imbalance, "orphans": a.Orphans,
					"late_channel_messages": a.LateRecorded, "missing_in_flight": a.Missing, "problems": a.Examples,
				}
				if variant == CL {
					ex["excuse"] = why
				}
				examples = append(examples, ex)
			}
		}
		switch {
		case a.Imbalance > 0:
			surplus++
			maxSurplus = max(maxSurplus, a.Imbalance)
		case a.Imbalance < 0:
			deficit++
			maxDeficit = min(maxDeficit, a.Imbalance)
		}
		orphans += a.Orphans
		if a.Orphans > 0 {
			withOrphans++
		}
		late += a.LateRecorded
		missing += a.Missing
		doubled += a.DoubleCounted
		durations = append(durations, float64(gs.CompletedAt-gs.Started())/1e6)
		var sb, cb, cm int64
		for _, rep := range gs.Reports {
			sb += rep.StateBytes
			cb += rep.channelBytes()
			for _, ch := range rep.Chans {
				cm += int64(len(ch))
			}
		}
		stateBytes = append(stateBytes, float64(sb))
		chanBytes = append(chanBytes, float64(cb))
		chanMsgs = append(chanMsgs, float64(cm))
	}
	requested := int64(len(times))
	incomplete := requested - taken
	fifo := r.Counters[cntFIFO]
	m := map[string]any{
		"snapshots_requested":      requested,
		"snapshots_taken":          taken,
		"snapshots_consistent":     consistent,
		"snapshots_inconsistent":   inconsistent,
		"snapshots_incomplete":     incomplete,
		"snapshots_not_durable":    notDurable,
		"consistency_claim":        consistencyClaim(variant),
		"fifo_violations_observed": fifo,
		"conservation": map[string]any{
			"violated":    surplus + deficit,
			"surplus":     surplus, // snapshots holding more money than the total (orphans)
			"deficit":     deficit, // snapshots holding less (in-flight money not recorded)
			"max_surplus": maxSurplus,
			"max_deficit": maxDeficit,
		},
		"orphan_messages":        orphans,
		"snapshots_with_orphans": withOrphans,
		"late_channel_messages":  late,
		"missing_in_flight":      missing,
		"double_counted":         doubled,
		"duration_ms":            stat(durations),
		"state_bytes":            stat(stateBytes),
		"channel_state_bytes":    stat(chanBytes),
		"channel_state_messages": stat(chanMsgs),
	}
	overhead(m, r.Counters, taken)
	data := r.Counters[cntData]
	m["data_messages"] = data
	extraBytes(m, r.Counters, taken, data)
	if len(examples) > 0 {
		m["inconsistent_examples"] = examples
	}
	// The consistency claim: lai-yang on any channels; cl on FIFO
	// channels, judged per snapshot. An inconsistent cl snapshot is the
	// expected break of the algorithm's assumption only when a transfer
	// crossed one of its own markers (the one way non-FIFO delivery breaks
	// it); then it is reported but not a safety violation. Any other
	// inconsistent cl snapshot is a bug, whatever else the run reordered.
	var violations int64
	switch variant {
	case LaiYang, Mattern:
		violations = inconsistent + incomplete
	case CL:
		violations = unexcused + incomplete // termination does not need FIFO
		m["snapshots_with_marker_crossings"] = crossed
		m["expected_breaks"] = excused
		m["unexcused_breaks"] = unexcused
		if excused > 0 {
			m["excused_snapshots"] = excusedList
			m["expected_break"] = fmt.Sprintf("Chandy-Lamport assumes FIFO channels; receivers saw %d messages out of sending order. "+
				"In %d of %d inconsistent snapshots a transfer crossed one of the snapshot's own markers (excused_snapshots): "+
				"a transfer sent after its sender's cut that overtakes the marker is counted by the receiver, in its balance (an orphan) "+
				"or as channel state (a late message): money appears; a marker that overtakes a transfer sent before the cut leaves it "+
				"recorded nowhere: money vanishes. Lai-Yang (--variant lai-yang) does not depend on order.",
				fifo, excused, inconsistent)
		}
		if unexcused > 0 {
			m["unexcused_snapshots"] = unexcusedList
		}
	}
	m["safety_violations"] = violations
	return m
}

// overhead adds the control-message overhead.
func overhead(m map[string]any, counters map[string]int64, taken int64) {
	markers := counters[cntMarkers]
	m["markers"] = markers
	m["marker_bytes"] = counters[cntMarkerBytes]
	m["reports"] = counters[cntReports]
	m["report_bytes"] = counters[cntReportBytes]
	if taken > 0 {
		m["markers_per_snapshot"] = round3(float64(markers) / float64(taken))
	}
}

// extraBytes adds what each algorithm adds to the traffic, split the way
// the algorithms differ: per snapshot, the wire bytes of its control
// messages on the channels (cl markers, lai-yang and mattern done
// messages) and on the collection network (mattern's announcements, acks
// and forces); per transfer, the bytes it carries for the algorithm
// (lai-yang's colour, mattern's vector clock). Reports, the same for all,
// are counted apart (report_bytes).
func extraBytes(m map[string]any, counters map[string]int64, taken, data int64) {
	coord, coordBytes, piggy := counters[cntCoord], counters[cntCoordBytes], counters[cntPiggyback]
	m["coordination_messages"] = coord
	m["coordination_bytes"] = coordBytes
	m["piggyback_bytes"] = piggy
	if taken > 0 {
		m["coordination_messages_per_snapshot"] = round3(float64(coord) / float64(taken))
		m["extra_bytes_per_snapshot"] = round3(float64(counters[cntMarkerBytes]+coordBytes) / float64(taken))
	}
	if data > 0 {
		m["extra_bytes_per_message"] = round3(float64(piggy) / float64(data))
	}
}

// eventIDs lists the ids of events of one kind, ascending, once each.
func eventIDs(events []engine.Event, kind string) []int64 {
	var ids []int64
	for _, e := range events {
		if e.Kind == kind {
			ids = append(ids, e.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// stat summarises a sample: mean, median and maximum.
func stat(xs []float64) map[string]any {
	if len(xs) == 0 {
		return map[string]any{"n": 0}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return map[string]any{"n": len(s), "mean": round3(sum / float64(len(s))), "p50": round3(s[len(s)/2]), "max": round3(s[len(s)-1])}
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
