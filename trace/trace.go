// Package trace is the format of a run's bounded trace (trace.jsonl): what
// `bench run --trace` records inside its window and what `bench view` draws
// as a space-time diagram. It is data only (vegeta's model: results as data,
// reports as readers of it): the simulator writes it, the viewer reads it,
// and neither depends on the other.
//
// A trace file is JSON lines. The first line is a Header; every other line is
// one Record, in non-decreasing T. Records are of four types:
//
//   - "msg": one message, sent at T from From to To and received at Recv
//     (Recv is 0 when it never arrived: lost to a crash or a partition).
//     Every control message in the window is recorded; data messages are
//     sampled (Header.SamplePerBucket per channel per bucket, chosen
//     deterministically from the seed) and counted in "count" records.
//   - "event": a protocol or process event at T on Proc (checkpoint
//     triggered/acknowledged/completed, batch cut, ack tree completed,
//     crash, restart, restore, state snapshot ...), with the event's ID
//     (checkpoint, batch, snapshot or tree id), Value and Note as in
//     events.jsonl.
//   - "count": Data data messages sent on the channel From->To during the
//     bucket starting at T (Header.BucketNS long); only non-zero buckets.
//   - "fault": a fault's band [T, End) as the run applied it (Kind is the
//     fault kind, Note its spec), for shading like the PNG reports.
package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// Record types.
const (
	TypeMsg   = "msg"
	TypeEvent = "event"
	TypeCount = "count"
	TypeFault = "fault"
)

// Header is the first line of a trace: what was traced and how.
type Header struct {
	Format  int    `json:"format"` // 1
	System  string `json:"system"`
	Variant string `json:"variant,omitempty"`
	Seed    uint64 `json:"seed"`
	// FromNS and ToNS bound the window, in simulated ns since the run's start.
	FromNS int64 `json:"from_ns"`
	ToNS   int64 `json:"to_ns"`
	// BucketNS is the length of a count bucket; SamplePerBucket the number
	// of data messages recorded per channel per bucket.
	BucketNS        int64 `json:"bucket_ns"`
	SamplePerBucket int   `json:"sample_per_bucket"`
	// Processes are every process of the deployment in deployment order,
	// one lane each in the diagram (a chained task is one process).
	Processes []Process `json:"processes"`
	// Truncated is true when the trace hit its size budget and stopped
	// recording before ToNS.
	Truncated bool `json:"truncated,omitempty"`
}

// Process is one lane: a process and the worker it was first placed on.
type Process struct {
	Name   string `json:"name"`
	Worker int    `json:"worker"`
	// Ops are the operators it runs (several when chained); empty for
	// control processes (coordinator, acker, driver).
	Ops []string `json:"ops,omitempty"`
}

// Record is one line after the header; which fields are set depends on Type.
type Record struct {
	Type string `json:"type"`
	T    int64  `json:"t"` // ns: send time (msg), event time, bucket start, fault start
	// msg, count
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	Recv int64  `json:"recv,omitempty"` // msg: receive time, 0 when never received
	Ctrl bool   `json:"ctrl,omitempty"` // msg: a control message
	Data int64  `json:"data,omitempty"` // count: data messages in the bucket
	// event, fault
	Proc string `json:"proc,omitempty"`
	End  int64  `json:"end,omitempty"` // fault: end of its band
	// msg, event, fault: the message kind as its system names it
	// ("barrier", "marker", "ack", "data", "commit" ...), the event kind
	// (events.jsonl's kind) or the fault kind.
	Kind  string `json:"kind"`
	ID    int64  `json:"id,omitempty"` // checkpoint, batch, snapshot, transaction or tree id
	Value int64  `json:"value,omitempty"`
	Bytes int64  `json:"bytes,omitempty"`
	Note  string `json:"note,omitempty"`
}

// Write writes h and recs as JSON lines.
func Write(w io.Writer, h Header, recs []Record) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(h); err != nil {
		return err
	}
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Read reads a trace written by Write.
func Read(r io.Reader) (Header, []Record, error) {
	var h Header
	dec := json.NewDecoder(bufio.NewReader(r))
	if err := dec.Decode(&h); err != nil {
		return h, nil, fmt.Errorf("trace header: %w", err)
	}
	if h.Format != 1 {
		return h, nil, fmt.Errorf("trace format %d, want 1", h.Format)
	}
	var recs []Record
	for dec.More() {
		var rec Record
		if err := dec.Decode(&rec); err != nil {
			return h, nil, fmt.Errorf("trace record %d: %w", len(recs)+1, err)
		}
		recs = append(recs, rec)
	}
	return h, recs, nil
}
