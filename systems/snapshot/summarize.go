package snapshot

import (
	"fmt"
	"slices"
	"strings"

	"ftbench/check"
	"ftbench/engine"
	"ftbench/systems"
	"ftbench/systems/internal/summary"
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

// summarizeP2P audits every durable snapshot of a peer-to-peer run against
// the workload's conservation law and judges the run by the variant's
// consistency claim.
func summarizeP2P(r systems.RunInfo, w workloads.PeerToPeer) map[string]any {
	times, _, _ := schedule(r.Job.Opts, r.Log.End)
	a := p2pAudit{variant: r.Job.Variant}
	for _, id := range eventIDs(r.Events, "snapshot_completed") {
		v, ok := r.Store(snapshotKey(id))
		if !ok {
			a.notDurable++ // completed, but the run ended before it was durable
			continue
		}
		a.add(id, v.(*GlobalSnapshot), w.Total())
	}
	requested := int64(len(times))
	fifo := r.Counters[cntFIFO]
	m := a.report(requested, fifo)
	overhead(m, r.Counters, a.taken)
	data := r.Counters[cntData]
	m["data_messages"] = data
	extraBytes(m, r.Counters, a.taken, data)
	a.judge(m, requested-a.taken, fifo)
	return m
}

// p2pAudit tallies the audits of a run's durable snapshots.
type p2pAudit struct {
	variant                                     string
	taken, consistent, inconsistent, notDurable int64
	// Conservation: snapshots holding more money than the total (orphans)
	// or less (in-flight money not recorded).
	surplus, deficit, maxSurplus, maxDeficit int64
	// Transfers in the wrong place, over all snapshots.
	orphans, withOrphans, late, missing, doubled int64
	// cl: snapshots whose own markers a transfer crossed, and the
	// inconsistent ones with that excuse and without.
	crossed, excused, unexcused int64
	excusedList                 []map[string]any
	unexcusedList               []int64
	examples                    []map[string]any
	// Per snapshot: duration and what it recorded.
	durations, stateBytes, chanBytes, chanMsgs []float64
}

// add audits snapshot id.
func (a *p2pAudit) add(id int64, gs *GlobalSnapshot, total int64) {
	cs := gs.Check(total)
	audit := check.AuditSnapshot(cs)
	mutantRecordAudit(cs, audit)
	a.taken++
	crossings := markerCrossings(gs)
	if len(crossings) > 0 {
		a.crossed++
	}
	if audit.Consistent {
		a.consistent++
	} else {
		a.addInconsistent(id, gs, audit, crossings)
	}
	a.addConservation(audit)
	a.addMisplaced(audit)
	a.addSizes(gs)
}

// addInconsistent counts an inconsistent snapshot, judges it if the
// variant is cl, and keeps the first few as examples.
func (a *p2pAudit) addInconsistent(id int64, gs *GlobalSnapshot, audit check.Audit, crossings []markerCrossing) {
	a.inconsistent++
	var why string
	if a.variant == CL {
		why = a.excuseCL(id, crossings)
	}
	if len(a.examples) >= maxExamples {
		return
	}
	ex := map[string]any{
		"id": id, "initiator": gs.Initiator, "imbalance": audit.Imbalance, "orphans": audit.Orphans,
		"late_channel_messages": audit.LateRecorded, "missing_in_flight": audit.Missing, "problems": audit.Examples,
	}
	if a.variant == CL {
		ex["excuse"] = why
	}
	a.examples = append(a.examples, ex)
}

// excuseCL excuses an inconsistent cl snapshot if a transfer crossed one
// of its own markers (the one way non-FIFO delivery breaks Chandy-Lamport)
// and says why or why not.
func (a *p2pAudit) excuseCL(id int64, crossings []markerCrossing) string {
	if len(crossings) == 0 {
		a.unexcused++
		if len(a.unexcusedList) < maxListed {
			a.unexcusedList = append(a.unexcusedList, id)
		}
		return "none: no transfer crossed this snapshot's markers"
	}
	why := excuse(crossings)
	a.excused++
	if len(a.excusedList) < maxListed {
		a.excusedList = append(a.excusedList, map[string]any{"id": id, "crossings": crossings, "why": why})
	}
	return why
}

// addConservation counts a snapshot whose money differs from the total.
func (a *p2pAudit) addConservation(audit check.Audit) {
	switch {
	case audit.Imbalance > 0:
		a.surplus++
		a.maxSurplus = max(a.maxSurplus, audit.Imbalance)
	case audit.Imbalance < 0:
		a.deficit++
		a.maxDeficit = min(a.maxDeficit, audit.Imbalance)
	}
}

// addMisplaced counts the snapshot's transfers recorded on the wrong side
// of its cut, or not at all.
func (a *p2pAudit) addMisplaced(audit check.Audit) {
	a.orphans += audit.Orphans
	if audit.Orphans > 0 {
		a.withOrphans++
	}
	a.late += audit.LateRecorded
	a.missing += audit.Missing
	a.doubled += audit.DoubleCounted
}

// addSizes samples the snapshot's duration and what it recorded.
func (a *p2pAudit) addSizes(gs *GlobalSnapshot) {
	a.durations = append(a.durations, float64(gs.CompletedAt-gs.Started())/1e6)
	var sb, cb, cm int64
	for _, rep := range gs.Reports {
		sb += rep.StateBytes
		cb += rep.channelBytes()
		for _, ch := range rep.Chans {
			cm += int64(len(ch))
		}
	}
	a.stateBytes = append(a.stateBytes, float64(sb))
	a.chanBytes = append(a.chanBytes, float64(cb))
	a.chanMsgs = append(a.chanMsgs, float64(cm))
}

// report is what the audits found, whatever the variant claims.
func (a *p2pAudit) report(requested, fifo int64) map[string]any {
	m := map[string]any{
		"snapshots_requested":      requested,
		"snapshots_taken":          a.taken,
		"snapshots_consistent":     a.consistent,
		"snapshots_inconsistent":   a.inconsistent,
		"snapshots_incomplete":     requested - a.taken,
		"snapshots_not_durable":    a.notDurable,
		"consistency_claim":        consistencyClaim(a.variant),
		"fifo_violations_observed": fifo,
		"conservation": map[string]any{
			"violated":    a.surplus + a.deficit,
			"surplus":     a.surplus, // snapshots holding more money than the total (orphans)
			"deficit":     a.deficit, // snapshots holding less (in-flight money not recorded)
			"max_surplus": a.maxSurplus,
			"max_deficit": a.maxDeficit,
		},
		"orphan_messages":        a.orphans,
		"snapshots_with_orphans": a.withOrphans,
		"late_channel_messages":  a.late,
		"missing_in_flight":      a.missing,
		"double_counted":         a.doubled,
		"duration_ms":            stat(a.durations),
		"state_bytes":            stat(a.stateBytes),
		"channel_state_bytes":    stat(a.chanBytes),
		"channel_state_messages": stat(a.chanMsgs),
	}
	if len(a.examples) > 0 {
		m["inconsistent_examples"] = a.examples
	}
	return m
}

// judge reports the safety violations against the variant's consistency
// claim: lai-yang and mattern on any channels; cl on FIFO channels, judged
// per snapshot. An inconsistent cl snapshot is the expected break of the
// algorithm's assumption only when a transfer crossed one of its own
// markers (the one way non-FIFO delivery breaks it); then it is reported
// but not a safety violation. Any other inconsistent cl snapshot is a bug,
// whatever else the run reordered. Naive claims nothing.
func (a *p2pAudit) judge(m map[string]any, incomplete, fifo int64) {
	var violations int64
	switch a.variant {
	case LaiYang, Mattern:
		violations = a.inconsistent + incomplete
	case CL:
		violations = a.unexcused + incomplete // termination does not need FIFO
		a.reportBreaksCL(m, fifo)
	}
	m["safety_violations"] = violations
}

// reportBreaksCL lists cl's inconsistent snapshots, excused and not.
func (a *p2pAudit) reportBreaksCL(m map[string]any, fifo int64) {
	m["snapshots_with_marker_crossings"] = a.crossed
	m["expected_breaks"] = a.excused
	m["unexcused_breaks"] = a.unexcused
	if a.excused > 0 {
		m["excused_snapshots"] = a.excusedList
		m["expected_break"] = fmt.Sprintf("Chandy-Lamport assumes FIFO channels; receivers saw %d messages out of sending order. "+
			"In %d of %d inconsistent snapshots a transfer crossed one of the snapshot's own markers (excused_snapshots): "+
			"a transfer sent after its sender's cut that overtakes the marker is counted by the receiver, in its balance (an orphan) "+
			"or as channel state (a late message): money appears; a marker that overtakes a transfer sent before the cut leaves it "+
			"recorded nowhere: money vanishes. Lai-Yang (--variant lai-yang) does not depend on order.",
			fifo, a.excused, a.inconsistent)
	}
	if a.unexcused > 0 {
		m["unexcused_snapshots"] = a.unexcusedList
	}
}

// overhead adds the control-message overhead.
func overhead(m map[string]any, counters map[string]int64, taken int64) {
	markers := counters[cntMarkers]
	m["markers"] = markers
	m["marker_bytes"] = counters[cntMarkerBytes]
	m["reports"] = counters[cntReports]
	m["report_bytes"] = counters[cntReportBytes]
	if taken > 0 {
		m["markers_per_snapshot"] = summary.Round3(float64(markers) / float64(taken))
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
		m["coordination_messages_per_snapshot"] = summary.Round3(float64(coord) / float64(taken))
		m["extra_bytes_per_snapshot"] = summary.Round3(float64(counters[cntMarkerBytes]+coordBytes) / float64(taken))
	}
	if data > 0 {
		m["extra_bytes_per_message"] = summary.Round3(float64(piggy) / float64(data))
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

// stat summarises a sample: mean, median (the upper one of an even
// sample) and maximum. Not barrier's distribution: see package summary.
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
	return map[string]any{"n": len(s), "mean": summary.Round3(sum / float64(len(s))), "p50": summary.Round3(s[len(s)/2]), "max": summary.Round3(s[len(s)-1])}
}
