package sim

import "ftbench/engine"

// Event kinds. The heap holds plain structs, never interfaces, so pushing
// and popping an event allocates nothing.
const (
	evRun         uint8 = iota // a process takes its next CPU slice
	evTimer                    // a timer set with After fires
	evDeliver                  // a network buffer arrives
	evFlush                    // a partly filled buffer's timeout expires
	evCrash                    // a worker crashes
	evWorkerUp                 // a crashed worker is back
	evProcUp                   // a task killed by Restart is re-deployed
	evNotify                   // failure detection reaches the coordinator
	evStoreDone                // a durable write completes
	evSample                   // metrics bucket boundary
	evCores                    // a core frees on a machine with processes waiting
	evPause                    // a worker's processes stop (pause.go)
	evResume                   // a paused worker's processes resume
	evDeclare                  // the failure detector's timeout on a paused worker
	evPartition                // a network partition starts (partition.go)
	evPartDetect               // the master's heartbeat timeout on the far side
	evConnTimeout              // connections across the cut reset
	evHeal                     // the partition heals
	evRejoin                   // far workers declared failed re-register
)

type event struct {
	at    engine.Time
	seq   uint64 // insertion order: deterministic tie-breaking
	a     int64  // timer id, worker, write slot, restart delay
	buf   *netBuf
	proc  int32
	inc   uint32 // incarnation (or channel epoch) the event belongs to
	kind  uint8
	flags uint8
}

// flagPeriodic marks a timer that its process re-armed from its own
// handler: a periodic timer, which quiescence does not wait for.
const (
	flagPeriodic uint8 = 1 << iota // evTimer: a timer re-armed from its own handler
	flagFailed                     // evStoreDone: the write failed (store down)
)

func (e *event) before(o *event) bool {
	return e.at < o.at || (e.at == o.at && e.seq < o.seq)
}

// eventHeap is a 4-ary min-heap ordered by (at, seq): shallower than a
// binary heap, so fewer cache misses per pop.
type eventHeap struct{ ev []event }

func (h *eventHeap) len() int { return len(h.ev) }

func (h *eventHeap) push(e event) {
	h.ev = append(h.ev, e)
	i := len(h.ev) - 1
	for i > 0 {
		parent := (i - 1) / 4
		if !h.ev[i].before(&h.ev[parent]) {
			break
		}
		h.ev[i], h.ev[parent] = h.ev[parent], h.ev[i]
		i = parent
	}
}

func (h *eventHeap) peek() *event { return &h.ev[0] }

func (h *eventHeap) pop() event {
	top := h.ev[0]
	n := len(h.ev) - 1
	h.ev[0] = h.ev[n]
	h.ev[n] = event{}
	h.ev = h.ev[:n]
	i := 0
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		best := first
		last := min(first+4, n)
		for c := first + 1; c < last; c++ {
			if h.ev[c].before(&h.ev[best]) {
				best = c
			}
		}
		if !h.ev[best].before(&h.ev[i]) {
			break
		}
		h.ev[i], h.ev[best] = h.ev[best], h.ev[i]
		i = best
	}
	return top
}
