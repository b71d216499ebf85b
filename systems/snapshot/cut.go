package snapshot

import "ftbench/engine"

// Message kinds of the snapshot protocol. They stay clear of the
// checkpoint package's range (0xF000...) and the runtime's (0xFF00...);
// data records of dataflow workloads have kind 0.
const (
	kindTransfer uint16 = 0x5300 + iota // bank-p2p: a transfer; Key packs (seq, colour), Val the amount
	kindMarker                          // CL marker. bank-p2p: Key = snapshot id, Val = data sent on the channel before it. Dataflow: Key = attempt, Val = checkpoint
	kindDone                            // Lai-Yang: Key = snapshot, Val = white messages sent on the channel
	kindReport                          // a process's local snapshot, to the collector; Body *Report
	kindAnnounce                        // Mattern: Key = snapshot, Body the cut vector ([]int64)
	kindAck                             // Mattern: Key = snapshot, the announcement arrived
	kindForce                           // Mattern: Key = snapshot, Body the initiator's clock at its cut
)

// Counters (run.json "counters"), summarised by Summarize.
const (
	cntMarkers     = "snapshot_markers"               // markers (Lai-Yang: done messages) sent
	cntMarkerBytes = "snapshot_marker_bytes"          // their wire bytes
	cntCoord       = "snapshot_coordination_messages" // Mattern: announcements, acks and forces sent
	cntCoordBytes  = "snapshot_coordination_bytes"    // their wire bytes
	cntPiggyback   = "snapshot_piggyback_bytes"       // bytes transfers carry for the algorithm (colour, vector clock)
	cntReports     = "snapshot_reports"               // local snapshots sent to a collector
	cntReportBytes = "snapshot_report_bytes"
	cntFIFO        = "snapshot_fifo_violations" // arrivals out of sending order, seen by receivers
	cntData        = "snapshot_data_messages"   // bank-p2p transfers sent
	cntReinjected  = "snapshot_reinjected"      // channel-state records re-injected on restore
	// Transactions a restored sink found still pre-committed (and committed
	// then) or already committed before the failure.
	cntTxnsRecommitted = "snapshot_txns_committed_on_restore"
	cntTxnsDone        = "snapshot_txns_committed_before_failure"
)

const markerBytes = 16

// cut is one snapshot in progress at one process (lecture 12.3.1): the
// process has recorded its state; cut tracks which input channels are still
// being recorded and what arrived on them. Concurrent snapshots are told
// apart by id, each with its own cut.
type cut struct {
	id     int64
	at     engine.Time // when the local state was recorded
	open   int         // inputs still recording
	closed []bool      // per input index
	chans  [][]engine.Msg

	local *Report    // bank-p2p: the recorded process state
	snap  *taskState // dataflow: the recorded task state
}

// newCut opens a cut over n inputs, all recording except first (the input
// whose marker triggered the recording: its channel state is empty; -1
// when the process initiated) and skip (a process's own slot in a
// group of processes; -1 for none).
func newCut(id int64, at engine.Time, n, first, skip int) *cut {
	c := &cut{id: id, at: at, open: n, closed: make([]bool, n), chans: make([][]engine.Msg, n)}
	for _, i := range [2]int{first, skip} {
		if i >= 0 && !c.closed[i] {
			c.closed[i] = true
			c.open--
		}
	}
	return c
}

// record appends m, which arrived on input i, to that channel's state if
// the channel is still being recorded.
func (c *cut) record(i int, m engine.Msg) {
	if !c.closed[i] {
		c.chans[i] = append(c.chans[i], m)
	}
}

// close ends the recording of input i (its marker arrived).
func (c *cut) close(i int) {
	if !c.closed[i] {
		c.closed[i] = true
		c.open--
	}
}

// channelBytes is the payload recorded in the channel states.
func (c *cut) channelBytes() (bytes int64, msgs int) {
	for _, ch := range c.chans {
		for i := range ch {
			bytes += int64(ch[i].Size)
		}
		msgs += len(ch)
	}
	return bytes, msgs
}

// cuts is the set of snapshots in progress at a process, in the order they
// started (a slice, not a map: iteration order must be deterministic).
type cuts []*cut

func (cs cuts) find(id int64) *cut {
	for _, c := range cs {
		if c.id == id {
			return c
		}
	}
	return nil
}

func (cs *cuts) remove(c *cut) {
	for i, x := range *cs {
		if x == c {
			*cs = append((*cs)[:i], (*cs)[i+1:]...)
			return
		}
	}
}

// sendMarkers sends a marker on every output channel; val is per channel.
func sendMarkers(ctx engine.Ctx, outputs []engine.ProcID, key uint64, val func(engine.ProcID) int64) {
	wire := int64(ctx.Cost().WireBytes(markerBytes))
	for _, o := range outputs {
		ctx.Send(o, engine.Msg{Kind: kindMarker, Ctrl: true, Key: key, Val: val(o), Size: markerBytes})
	}
	ctx.Count(cntMarkers, int64(len(outputs)))
	ctx.Count(cntMarkerBytes, wire*int64(len(outputs)))
}
