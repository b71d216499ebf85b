package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CostModel is every cost the simulator charges. All defaults live in
// DefaultCost and are documented by CostParams (printed by `bench list
// --costs` and in the README); each can be overridden with --cost name=value.
type CostModel struct {
	// Cores is the hardware: every worker, and the master node, has this
	// many cores, shared by all the processes placed on it (0: a CPU per
	// process, for the runtime's own unit tests).
	Cores int

	SourceRecord Time // CPU to read one record from the source log and hand it on
	RecordCPU    Time // CPU of a stateless operator (map, flatMap, filter) per input record
	StateCPU     Time // CPU of a keyed state read-modify-write per input record
	SinkCPU      Time // CPU of the sink per record written
	ScanPerByte  Time // CPU per payload byte an operator inspects (grep's scan)
	SendCPU      Time // CPU per message sent (serialisation, record writer)
	SerdePerByte Time // CPU per wire byte sent
	MsgHeader    int  // bytes added to every message on the wire

	NetLatency     Time    // one-way network latency per buffer
	NetBandwidth   float64 // bytes per second per channel
	BufferBytes    int     // network buffer size; a full buffer is flushed at once
	BufferTimeout  Time    // a partly filled buffer is flushed after this long
	ChannelBuffers int     // channel capacity in buffers (credit): sender blocks when full

	PollInterval Time // how often an idle source looks for newly appended records
	Quantum      Time // longest CPU slice a process runs before others get a turn

	DetectDelay  Time // failure to coordinator notification
	RestartDelay Time // worker crash to worker back up (overridable per fault)
	TaskRestart  Time // re-deploying one task in a failover (global or region restart)

	StoreLatency    Time    // per durable write or read
	StoreWriteBytes float64 // durable write bandwidth, bytes per second per writer
	StoreReadBytes  float64 // durable read bandwidth, bytes per second
}

// DefaultCost is the documented default cost model. Its magnitudes follow a
// commodity cluster: microsecond per-record operator costs, 100 µs LAN
// latency, 10 Gbit/s links, 32 KiB network buffers (Flink's default segment
// size), and a DFS with 5 ms latency and 200 MB/s per writer.
func DefaultCost() CostModel {
	return CostModel{
		Cores: 4,

		SourceRecord: 1 * Microsecond,
		RecordCPU:    2 * Microsecond,
		StateCPU:     4 * Microsecond,
		SinkCPU:      2 * Microsecond,
		ScanPerByte:  5 * Nanosecond,
		SendCPU:      500 * Nanosecond,
		SerdePerByte: 2 * Nanosecond,
		MsgHeader:    16,

		NetLatency:     100 * Microsecond,
		NetBandwidth:   1.25e9,
		BufferBytes:    32 << 10,
		BufferTimeout:  10 * Millisecond,
		ChannelBuffers: 4,

		PollInterval: 1 * Millisecond,
		Quantum:      1 * Millisecond,

		DetectDelay:  1 * Second,
		RestartDelay: 1 * Second,
		TaskRestart:  200 * Millisecond,

		StoreLatency:    5 * Millisecond,
		StoreWriteBytes: 200e6,
		StoreReadBytes:  500e6,
	}
}

// CostParam names one field of the cost model for documentation and overrides.
type CostParam struct {
	Name string
	Doc  string
	time *Time
	f64  *float64
	i    *int
}

// Params lists the cost model's fields with names and meanings, in a fixed order.
func (c *CostModel) Params() []CostParam {
	return []CostParam{
		{Name: "cores", Doc: "cores per worker and on the master node, shared by the processes placed there", i: &c.Cores},
		{Name: "source-record", Doc: "CPU to read one source record and hand it on", time: &c.SourceRecord},
		{Name: "record-cpu", Doc: "CPU of a stateless operator per input record", time: &c.RecordCPU},
		{Name: "state-cpu", Doc: "CPU of a keyed state update per input record", time: &c.StateCPU},
		{Name: "sink-cpu", Doc: "CPU of the sink per record written", time: &c.SinkCPU},
		{Name: "scan-per-byte", Doc: "CPU per payload byte scanned (grep)", time: &c.ScanPerByte},
		{Name: "send-cpu", Doc: "CPU per message sent", time: &c.SendCPU},
		{Name: "serde-per-byte", Doc: "CPU per wire byte sent", time: &c.SerdePerByte},
		{Name: "msg-header", Doc: "bytes added to every message on the wire", i: &c.MsgHeader},
		{Name: "net-latency", Doc: "one-way network latency per buffer", time: &c.NetLatency},
		{Name: "net-bandwidth", Doc: "bytes per second per channel", f64: &c.NetBandwidth},
		{Name: "buffer-bytes", Doc: "network buffer size (flushed when full)", i: &c.BufferBytes},
		{Name: "buffer-timeout", Doc: "flush a partly filled buffer after this long", time: &c.BufferTimeout},
		{Name: "channel-buffers", Doc: "channel capacity in buffers (credit-based backpressure)", i: &c.ChannelBuffers},
		{Name: "poll-interval", Doc: "idle source polling interval", time: &c.PollInterval},
		{Name: "quantum", Doc: "longest CPU slice before other processes run", time: &c.Quantum},
		{Name: "detect-delay", Doc: "failure detection delay (crash to coordinator notified)", time: &c.DetectDelay},
		{Name: "restart-delay", Doc: "worker restart delay after a crash", time: &c.RestartDelay},
		{Name: "task-restart", Doc: "re-deploy delay of one task in a failover (global or region restart)", time: &c.TaskRestart},
		{Name: "store-latency", Doc: "durable storage latency per read or write", time: &c.StoreLatency},
		{Name: "store-write-bw", Doc: "durable write bandwidth per writer, bytes/s", f64: &c.StoreWriteBytes},
		{Name: "store-read-bw", Doc: "durable read bandwidth, bytes/s", f64: &c.StoreReadBytes},
	}
}

// Value formats the parameter's current value.
func (p CostParam) Value() string {
	switch {
	case p.time != nil:
		return time.Duration(*p.time).String()
	case p.f64 != nil:
		return strconv.FormatFloat(*p.f64, 'g', -1, 64)
	default:
		return strconv.Itoa(*p.i)
	}
}

// Set applies an override "name=value"; durations use Go syntax (1.5ms).
func (c *CostModel) Set(assign string) error {
	name, val, ok := strings.Cut(assign, "=")
	if !ok {
		return fmt.Errorf("cost override %q: want name=value", assign)
	}
	for _, p := range c.Params() {
		if p.Name != name {
			continue
		}
		switch {
		case p.time != nil:
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 {
				return fmt.Errorf("cost %s=%q: want a non-negative duration such as 2us or 1.5ms", name, val)
			}
			*p.time = Time(d)
		case p.f64 != nil:
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || f <= 0 {
				return fmt.Errorf("cost %s=%q: want a positive number", name, val)
			}
			*p.f64 = f
		default:
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || (n == 0 && name != "msg-header") {
				return fmt.Errorf("cost %s=%q: want a positive integer", name, val)
			}
			*p.i = n
		}
		return nil
	}
	return fmt.Errorf("cost override %q: unknown parameter %q (see `bench list --costs`)", assign, name)
}

// Map returns every parameter's value by name (for run.json).
func (c *CostModel) Map() map[string]string {
	m := map[string]string{}
	for _, p := range c.Params() {
		m[p.Name] = p.Value()
	}
	return m
}

// SendCost is the sender's CPU for one message of payload size bytes.
func (c *CostModel) SendCost(size int32) Time {
	return c.SendCPU + Time(int64(size)+int64(c.MsgHeader))*c.SerdePerByte
}

// WireBytes is the size of a message on the wire.
func (c *CostModel) WireBytes(size int32) int { return int(size) + c.MsgHeader }
