package view

import (
	"sort"
	"strconv"
	"strings"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/trace"
)

// History is the run's table of protocol units, as Flink's web UI shows its
// checkpoint history: one row per checkpoint (barrier, snapshot), batch
// (lineage, trident), transaction (kstreams) or ack tree (stormack), with
// its status, trigger time, duration, size and, per task, the start delay
// and alignment. Checkpoints, batches and transactions come from
// events.jsonl, so they cover the whole run; ack trees exist only as
// messages, so they come from the trace's window.
type History struct {
	Unit string `json:"unit"` // "checkpoint", "batch", "transaction", "ack tree"
	Rows []Unit `json:"rows"`
	// MsgKinds are the message kinds whose id is a unit's id (a barrier's
	// checkpoint, a batch tuple's txid; a kstreams transaction's number,
	// which tagMsgs writes over the requests' own ids): selecting a unit
	// highlights its messages of these kinds.
	MsgKinds []string `json:"msg_kinds"`
	// Capped is the number of rows left out to keep the page small (ack
	// trees: the first maxTrees of the window are listed).
	Capped int `json:"capped,omitempty"`
	// byOwner: the units are an owner's one after another (kstreams), and
	// tagMsgs numbers their messages.
	byOwner bool
}

// Unit is one row. Times are ns since the run's start; EndNS is 0 while
// the unit is open (never completed nor aborted within the run).
type Unit struct {
	ID      int64  `json:"id"`
	Status  string `json:"status"` // "completed", "aborted", "open"
	StartNS int64  `json:"start_ns"`
	EndNS   int64  `json:"end_ns,omitempty"`
	// DurationNS is the system's own figure where it records one (the
	// coordinator's trigger-to-complete), else EndNS-StartNS.
	DurationNS int64 `json:"duration_ns,omitempty"`
	Bytes      int64 `json:"bytes,omitempty"`
	// InFlightBytes is the channel state the checkpoint persisted (an
	// unaligned checkpoint's in-flight records; checkpoint_channel_state).
	InFlightBytes int64  `json:"in_flight_bytes,omitempty"`
	Note          string `json:"note,omitempty"`
	Tasks         []Task `json:"tasks,omitempty"`
	// proc and after place an owner's unit (a kstreams transaction) for
	// tagMsgs: the owner's process, and the end of its previous unit,
	// after which this one's messages start.
	proc  string
	after int64
}

// Task is one process's part in a unit: when it started its part after the
// unit's start (Flink's start delay), how long it aligned its inputs and
// how many records it buffered meanwhile. -1 = not recorded.
type Task struct {
	Proc         string `json:"proc"`
	StartDelayNS int64  `json:"start_delay_ns"`
	AlignmentNS  int64  `json:"alignment_ns"`
	Buffered     int64  `json:"buffered"`
	AckedNS      int64  `json:"acked_ns"`
	// Bytes is the snapshot the task wrote (state, and channel state when
	// unaligned); 0 = not recorded.
	Bytes int64 `json:"bytes,omitempty"`
}

// unitKinds names the events that make up one system's units.
type unitKinds struct {
	unit      string
	start     []string // open a unit (trigger, cut, first offsets)
	done      []string // complete it; Value is the duration when durValue
	aborted   []string
	durValue  bool
	taskStart []string // a task's first part in the unit
	taskAck   []string
	msgKinds  []string // History.MsgKinds
	// owner: the events' ID names who runs the units one after another
	// (kstreams: the stream thread), not the unit; a start opens the
	// owner's next unit unless one is open, a done or abort closes it, and
	// rows are numbered in the order they open.
	owner string
}

// checkpointMsgs are the coordinator's messages about a checkpoint
// (systems/internal/checkpoint names them for the trace).
var checkpointMsgs = []string{"trigger", "checkpoint_ack", "checkpoint_complete", "checkpoint_abort", "checkpoint_decline", "alignment_timeout"}

var unitsBySystem = map[string]unitKinds{
	"barrier": {unit: "checkpoint", start: []string{"checkpoint_triggered"}, done: []string{"checkpoint_completed"},
		aborted: []string{"checkpoint_aborted"}, durValue: true,
		taskStart: []string{"checkpoint_start", "snapshot_write"}, taskAck: []string{"snapshot_acked"},
		msgKinds: append([]string{"barrier", "unaligned_barrier", "barrier_announcement"}, checkpointMsgs...)},
	"snapshot": {unit: "checkpoint", start: []string{"checkpoint_triggered"}, done: []string{"checkpoint_completed", "snapshot_completed"},
		aborted: []string{"checkpoint_aborted"}, durValue: true,
		taskStart: []string{"checkpoint_start", "snapshot_write"}, taskAck: []string{"snapshot_acked"},
		msgKinds: append([]string{"marker", "done", "report", "announce", "ack", "force"}, checkpointMsgs...)},
	// A lineage task launch carries the first batch it computes.
	"lineage": {unit: "batch", start: []string{"batch_cut"}, done: []string{"batch_committed"}, durValue: true,
		msgKinds: []string{"launch", "recompute"}},
	"trident": {unit: "batch", start: []string{"batch_started"}, done: []string{"batch_committed"}, aborted: []string{"batch_failed"},
		msgKinds: []string{"batch", "commit", "batch_count", "success"}},
	// A thread's transaction is everything it sends the broker, and hears
	// back, between its previous commit or abort and this one's
	// (exactly-once v2 begins a transaction implicitly with its first
	// write): tagMsgs numbers these messages with the row's id.
	"kstreams": {unit: "transaction", start: []string{"ks_txn_offsets"}, done: []string{"ks_txn_committed"},
		aborted: []string{"ks_txn_aborted"}, owner: "thread",
		msgKinds: []string{"produce", "produce_ack", "txn_offsets", "txn_offsets_ack", "commit_txn", "abort_txn", "end_txn_ack"}},
}

// treeMsgs are Storm's ack stream, each message with its tree's root id.
var treeMsgs = []string{"init", "ack", "tree_done", "fail", "tree_failed"}

// maxTrees bounds the ack trees listed (a window holds thousands).
const maxTrees = 500

func history(r *harness.Result, events []engine.Event, recs []trace.Record) *History {
	if r.System == "stormack" {
		return ackTrees(recs)
	}
	k, ok := unitsBySystem[r.System]
	if !ok {
		return &History{Unit: "unit", Rows: []Unit{}, MsgKinds: []string{}}
	}
	h := units(k, events)
	if r.System == "snapshot" && !hasKind(events, "checkpoint_triggered") {
		h.Unit = "snapshot" // a global snapshot of bank-p2p's processes, not a dataflow checkpoint
	}
	return h
}

func hasKind(events []engine.Event, kind string) bool {
	for _, e := range events {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

func has(kinds []string, k string) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// units builds the rows from events in event order; a unit's id is the
// event's ID (0 for lineage's first batch).
func units(k unitKinds, events []engine.Event) *History {
	h := &History{Unit: k.unit, Rows: []Unit{}, MsgKinds: k.msgKinds, byOwner: k.owner != ""}
	row := map[int64]int{}
	ownerProc, lastEnd := map[int64]string{}, map[int64]int64{} // owner mode: by owner
	task := map[int64]map[string]int{}                          // unit id -> proc -> index in its Tasks
	get := func(id int64, t int64) *Unit {
		i, ok := row[id]
		if !ok {
			i = len(h.Rows)
			row[id] = i
			u := Unit{ID: id, Status: "open", StartNS: t}
			if k.owner != "" {
				u.ID, u.Note = int64(i+1), k.owner+" "+strconv.FormatInt(id, 10)
				u.proc, u.after = ownerProc[id], lastEnd[id]
			}
			h.Rows = append(h.Rows, u)
		}
		return &h.Rows[i]
	}
	// closed ends an owner's unit: its next start opens a new one.
	closed := func(id int64, t int64) {
		if k.owner != "" {
			delete(row, id)
			lastEnd[id] = t
		}
	}
	taskOf := func(u *Unit, proc string) *Task {
		m := task[u.ID]
		if m == nil {
			m = map[string]int{}
			task[u.ID] = m
		}
		i, ok := m[proc]
		if !ok {
			i = len(u.Tasks)
			m[proc] = i
			u.Tasks = append(u.Tasks, Task{Proc: proc, StartDelayNS: -1, AlignmentNS: -1, Buffered: -1, AckedNS: -1})
		}
		return &u.Tasks[i]
	}
	for _, e := range events {
		t := int64(e.Time)
		switch {
		case has(k.start, e.Kind):
			if k.owner != "" && e.Proc != "" {
				ownerProc[e.ID] = e.Proc
			}
			if _, seen := row[e.ID]; !seen {
				get(e.ID, t)
			}
		case has(k.done, e.Kind):
			_, seen := row[e.ID]
			u := get(e.ID, t)
			if !seen && k.durValue && e.Value > 0 {
				// No start recorded (the peer-to-peer snapshots record only
				// their completion, with the duration): it began Value ago.
				u.StartNS = t - e.Value
			}
			u.Status, u.EndNS = "completed", t
			u.DurationNS = t - u.StartNS
			if k.durValue && e.Value > 0 {
				u.DurationNS = e.Value
			}
			if e.Bytes > 0 {
				u.Bytes = e.Bytes
			}
			closed(e.ID, t)
		case has(k.aborted, e.Kind):
			u := get(e.ID, t)
			u.Status, u.EndNS, u.DurationNS = "aborted", t, t-u.StartNS
			if e.Note != "" {
				u.Note = strings.TrimPrefix(u.Note+", "+e.Note, ", ")
			}
			closed(e.ID, t)
		case e.Kind == "checkpoint_channel_state":
			if i, ok := row[e.ID]; ok {
				h.Rows[i].InFlightBytes = e.Bytes
			}
		case e.Proc == "":
		case has(k.taskStart, e.Kind):
			if i, ok := row[e.ID]; ok {
				u := &h.Rows[i]
				tk := taskOf(u, e.Proc)
				if tk.StartDelayNS < 0 {
					tk.StartDelayNS = t - u.StartNS
				}
				if e.Kind == "snapshot_write" {
					tk.Bytes += e.Bytes
				}
			}
		case e.Kind == "alignment", e.Kind == "alignment_buffered", has(k.taskAck, e.Kind):
			i, ok := row[e.ID]
			if !ok {
				continue
			}
			u := &h.Rows[i]
			tk := taskOf(u, e.Proc)
			switch e.Kind {
			case "alignment":
				tk.AlignmentNS = e.Value
			case "alignment_buffered":
				tk.Buffered = e.Value
			default:
				tk.AckedNS = t - u.StartNS
			}
		}
	}
	sort.SliceStable(h.Rows, func(i, j int) bool { return h.Rows[i].StartNS < h.Rows[j].StartNS })
	return h
}

// ackTrees groups the trace's ack-stream messages by tree id (stormack's
// init, ack, tree_done, fail and tree_failed carry the root id): a tree
// starts at its first message and ends at its last message's receipt. The
// trace samples the stream per channel (all but the fails), so most trees
// show one message or a few: the rows are the maxTrees trees with the most
// messages in the window (ties in time order), each message one Task row
// (its channel, sent and received after the tree's start). A tree whose
// every traced message was received is "closed"; one with a message lost
// or still in flight at the window's end is "open".
func ackTrees(recs []trace.Record) *History {
	h := &History{Unit: "ack tree", Rows: []Unit{}, MsgKinds: treeMsgs}
	row := map[int64]int{}
	for _, rec := range recs {
		if rec.Type != trace.TypeMsg || rec.ID == 0 || !has(treeMsgs, rec.Kind) {
			continue
		}
		i, ok := row[rec.ID]
		if !ok {
			i = len(h.Rows)
			row[rec.ID] = i
			h.Rows = append(h.Rows, Unit{ID: rec.ID, Status: "open", StartNS: rec.T})
		}
		u := &h.Rows[i]
		u.Bytes += rec.Bytes
		u.Tasks = append(u.Tasks, Task{Proc: rec.Kind + " " + rec.From + " → " + rec.To, StartDelayNS: rec.T - u.StartNS, AlignmentNS: -1, Buffered: -1, AckedNS: recvAfter(rec, u.StartNS)})
		if rec.Recv > u.EndNS {
			u.EndNS = rec.Recv
			u.DurationNS = rec.Recv - u.StartNS
		}
	}
	for i := range h.Rows {
		u := &h.Rows[i]
		u.Note = plural(len(u.Tasks), "message") + " traced"
		if allReceived(u.Tasks) {
			u.Status = "closed"
		}
	}
	sort.SliceStable(h.Rows, func(i, j int) bool { return len(h.Rows[i].Tasks) > len(h.Rows[j].Tasks) })
	if len(h.Rows) > maxTrees {
		h.Capped = len(h.Rows) - maxTrees
		h.Rows = h.Rows[:maxTrees]
	}
	sort.SliceStable(h.Rows, func(i, j int) bool { return h.Rows[i].StartNS < h.Rows[j].StartNS })
	return h
}

func allReceived(ts []Task) bool {
	for _, t := range ts {
		if t.AckedNS < 0 {
			return false
		}
	}
	return true
}

func recvAfter(rec trace.Record, start int64) int64 {
	if rec.Recv == 0 {
		return -1
	}
	return rec.Recv - start
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// tagMsgs gives each message of an owner's units (a kstreams thread's
// produce, offsets and commit requests and their answers) the id of the
// unit it belongs to: the owner's unit whose span, from the end of the
// owner's previous unit to its own end, holds the message's send time, on
// either end of the message. The messages' own ids (request sequence
// numbers, generations) would otherwise pass for row ids; one in no unit
// gets 0.
func (h *History) tagMsgs(d *Diagram) {
	if !h.byOwner {
		return
	}
	unitKind := make([]bool, len(d.Kinds))
	for i, k := range d.Kinds {
		unitKind[i] = has(h.MsgKinds, k)
	}
	byProc := map[string][]*Unit{} // in the order they opened: by after
	for i := range h.Rows {
		u := &h.Rows[i]
		if u.proc != "" {
			byProc[u.proc] = append(byProc[u.proc], u)
		}
	}
	unitAt := func(lane, t int64) int64 {
		if lane < 0 {
			return 0
		}
		rows := byProc[d.Lanes[lane].Name]
		i := sort.Search(len(rows), func(i int) bool { return rows[i].after >= t }) - 1
		if i < 0 || (rows[i].Status != "open" && t > rows[i].EndNS) {
			return 0
		}
		return rows[i].ID
	}
	for i := range d.Msgs {
		m := &d.Msgs[i]
		if !unitKind[m[4]] {
			continue
		}
		id := unitAt(m[2], m[0])
		if id == 0 {
			id = unitAt(m[3], m[0])
		}
		m[5] = id
	}
}
