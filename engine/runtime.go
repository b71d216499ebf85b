package engine

import "fmt"

// Observer receives what the harness measures from a runtime: commits,
// protocol events, counters and the sampling clock. The simulator calls it
// from its single event loop; the live runtime (engine/live) serialises its
// calls, so an Observer never needs locks of its own.
type Observer interface {
	Commit(at Time, c Commit)
	Event(e Event)
	Count(name string, delta int64)
	// Sample is called at every multiple of the runtime's sampling period.
	Sample(at Time)
}

// BatchObserver is an Observer that takes many commits of one instant in
// one call, as that many Commit calls would give them
// (engine.BatchCommitter).
type BatchObserver interface {
	CommitAll(at Time, cs []Commit)
	// CommitOwned is CommitAll, and the observer keeps cs.
	CommitOwned(at Time, cs []Commit)
	// CommitBuffer is an empty slice with room for n commits, reused from
	// those given to CommitOwned when it can be.
	CommitBuffer(n int) []Commit
}

// Activity is what a runtime still sees going on: the evidence the
// harness needs to tell a run that lost effects (quiescent: nothing can
// deliver them any more) from one that ran out of time (undrained). It is
// observed by the runtime, never reported by a system, so a protocol bug
// cannot turn a loss into "still busy".
type Activity struct {
	// DataBytes is data held in channels: senders' buffers, the wire and
	// receivers' queues; Channels names the busiest ones (at most five).
	DataBytes int      `json:"data_bytes"`
	Channels  []string `json:"channels,omitempty"`
	// Down lists processes that are down with a restart pending.
	Down []string `json:"down,omitempty"`
	// Timers counts one-shot timers due before the deadline. Periodic
	// timers (re-armed by their own handler: polls, checkpoint triggers)
	// fire forever and are not activity.
	Timers int `json:"timers"`
	// Busy lists processes still working past the deadline: a step whose
	// CPU cost (a slow factor, a read from a slowed store) runs beyond it.
	Busy []string `json:"busy,omitempty"`
	// Store says why the durable store holds the run up, "" when it does
	// not: an outage in force ("down until 1m0s"), or writes in progress
	// that complete only after the deadline ("2 writes in progress, the
	// first done at 55h33m20s"). Either is a stall, not the end of the
	// run's work: what waits on those writes (a checkpoint, a batch's
	// commit) is pending, never lost.
	Store string `json:"store,omitempty"`
}

// Quiet reports whether nothing is going on.
func (a Activity) Quiet() bool {
	return a.DataBytes == 0 && len(a.Down) == 0 && a.Timers == 0 && len(a.Busy) == 0 && a.Store == ""
}

func (a Activity) String() string {
	if a.Quiet() {
		return "quiescent"
	}
	s := fmt.Sprintf("%d data bytes in channels", a.DataBytes)
	if len(a.Channels) > 0 {
		s += fmt.Sprintf(" (%v)", a.Channels)
	}
	if len(a.Down) > 0 {
		s += fmt.Sprintf(", %d processes down with a restart pending (%v)", len(a.Down), a.Down)
	}
	if a.Timers > 0 {
		s += fmt.Sprintf(", %d one-shot timers due", a.Timers)
	}
	if len(a.Busy) > 0 {
		s += fmt.Sprintf(", %d processes busy past the settle window (%v)", len(a.Busy), a.Busy)
	}
	if a.Store != "" {
		s += ", the checkpoint store: " + a.Store
	}
	return s
}

// BusyChannel is one channel's data in an Activity report.
type BusyChannel struct {
	Name  string
	Bytes int
}

// TopChannels returns the names of the (at most five) busiest channels,
// busiest first; ties keep their order in busy.
func TopChannels(busy []BusyChannel) []string {
	sorted := append([]BusyChannel(nil), busy...)
	for i := 1; i < len(sorted); i++ { // insertion sort: stable, and busy is short
		for j := i; j > 0 && sorted[j].Bytes > sorted[j-1].Bytes; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var names []string
	for i := 0; i < len(sorted) && i < 5; i++ {
		names = append(names, sorted[i].Name)
	}
	return names
}

// FailureMsg is the KindFailure notice a runtime hands the coordinator for
// failure f; back says whether the worker is up again by then.
func FailureMsg(f Failure, back bool) Msg {
	f.Back = back
	return Msg{Kind: KindFailure, Ctrl: true, Val: int64(f.Worker), Body: f}
}

// StoreDoneMsg is the KindStoreDone notice of a completed Store.Put.
func StoreDoneMsg(key string, token int64) Msg {
	return Msg{Kind: KindStoreDone, Ctrl: true, Val: token, Body: key}
}

// Backpressure counters a runtime reports, each followed by an operator's
// name (docs/metrics.md, "Backpressure"): the mean over the operator's
// instances and the most backpressured instance's, in ms per second of
// input (Flink's backPressuredTimeMsPerSecond). Reports read them by these
// names.
const (
	BackpressuredCounter    = "backpressured_time_ms_per_s/"
	BackpressuredMaxCounter = "backpressured_time_ms_per_s_max/"
)
