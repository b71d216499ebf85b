package engine

import (
	"ftbench/number"

	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CostModel is every cost the simulator charges. All defaults live in
// DefaultCost and are documented by Params (printed by `bench list --costs`
// and in docs/cost-model.md); each can be overridden with --cost name=value, and the
// CPU costs also for one operator with --cost op.name=value (For).
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
	// ConnTimeout is how long a connection whose peer stopped answering
	// (a network partition) stalls before it is reset and the task using
	// it fails (TCP giving up on retransmissions, as a TCP_USER_TIMEOUT
	// or Flink's netty timeouts bound it).
	ConnTimeout Time

	StoreLatency    Time    // per durable write or read
	StoreWriteBytes float64 // durable write bandwidth, bytes per second per writer
	StoreReadBytes  float64 // durable read bandwidth, bytes per second

	// perOp holds the operator-qualified overrides (--cost
	// count.state-cpu=8us) in the order given; For applies them. They win
	// over global overrides whatever the order on the command line.
	perOp []opOverride
	// base is the run's model when this one is a per-operator model made
	// by For, so that For on it starts from the run's values again.
	base *CostModel
}

// opOverride is one operator-qualified override: param is set to val (a
// value Set has checked) for the instances of operator op.
type opOverride struct{ op, param, val string }

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
		ConnTimeout:  5 * Second,

		StoreLatency:    5 * Millisecond,
		StoreWriteBytes: 200e6,
		StoreReadBytes:  500e6,
	}
}

// CostParam names one field of the cost model for documentation and overrides.
type CostParam struct {
	Name string
	Doc  string
	// PerOp marks the CPU costs an operator's instances pay themselves,
	// which --cost OP.NAME=VALUE may set for one operator. The others
	// (hardware, network, storage, failure handling) belong to the cluster.
	PerOp bool
	time  *Time
	f64   *float64
	i     *int
}

// Params lists the cost model's fields with names and meanings, in a fixed order.
func (c *CostModel) Params() []CostParam {
	return []CostParam{
		{Name: "cores", Doc: "cores per worker and on the master node, shared by the processes placed there", i: &c.Cores},
		{Name: "source-record", PerOp: true, Doc: "CPU to read one source record and hand it on", time: &c.SourceRecord},
		{Name: "record-cpu", PerOp: true, Doc: "CPU of a stateless operator per input record", time: &c.RecordCPU},
		{Name: "state-cpu", PerOp: true, Doc: "CPU of a keyed state update per input record", time: &c.StateCPU},
		{Name: "sink-cpu", PerOp: true, Doc: "CPU of the sink per record written", time: &c.SinkCPU},
		{Name: "scan-per-byte", PerOp: true, Doc: "CPU per payload byte scanned (grep)", time: &c.ScanPerByte},
		{Name: "send-cpu", PerOp: true, Doc: "CPU per message sent", time: &c.SendCPU},
		{Name: "serde-per-byte", PerOp: true, Doc: "CPU per wire byte sent", time: &c.SerdePerByte},
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
		{Name: "conn-timeout", Doc: "a connection across a network partition stalls this long, then resets and its task fails", time: &c.ConnTimeout},
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

// Set applies an override "name=value" (durations use Go syntax: 1.5ms), or
// an operator-qualified one "op.name=value" that sets a PerOp parameter for
// operator op's instances only (For). Whether op exists is the workload's
// business: CheckOps.
func (c *CostModel) Set(assign string) error {
	name, val, ok := strings.Cut(assign, "=")
	if !ok {
		return fmt.Errorf("cost override %q: want name=value or operator.name=value", assign)
	}
	op, param, qualified := strings.Cut(name, ".")
	if !qualified {
		return c.set(name, name, val)
	}
	p, found := c.param(param)
	switch {
	case op == "":
		return fmt.Errorf("cost override %q: empty operator name before %q", assign, "."+param)
	case !found:
		return fmt.Errorf("cost override %q: unknown parameter %q (see `bench list --costs`)", assign, param)
	case !p.PerOp:
		return fmt.Errorf("cost override %q: %s belongs to the cluster, not to one operator (per operator: %s)", assign, param, strings.Join(PerOpParams(), ", "))
	}
	scratch := *c
	if err := scratch.set(name, param, val); err != nil {
		return err
	}
	// A full slice expression: a copy of c that appends must not write
	// into c's array.
	c.perOp = append(c.perOp[:len(c.perOp):len(c.perOp)], opOverride{op: op, param: param, val: val})
	return nil
}

// PerOpParams lists the parameters an operator-qualified override may set.
func PerOpParams() []string {
	var names []string
	c := DefaultCost()
	for _, p := range c.Params() {
		if p.PerOp {
			names = append(names, p.Name)
		}
	}
	return names
}

func (c *CostModel) param(name string) (CostParam, bool) {
	for _, p := range c.Params() {
		if p.Name == name {
			return p, true
		}
	}
	return CostParam{}, false
}

// set assigns one parameter; label is its name as given (count.state-cpu),
// for errors.
func (c *CostModel) set(label, name, val string) error {
	p, ok := c.param(name)
	if !ok {
		return fmt.Errorf("cost override %q: unknown parameter %q (see `bench list --costs`)", label+"="+val, name)
	}
	switch {
	case p.time != nil:
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			return fmt.Errorf("cost %s=%q: want a non-negative duration such as 2us or 1.5ms", label, val)
		}
		*p.time = Time(d)
	case p.f64 != nil:
		f, err := number.Float(val)
		if err != nil || f <= 0 {
			return fmt.Errorf("cost %s=%q: want a finite positive number", label, val)
		}
		*p.f64 = f
	default:
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 || (n == 0 && name != "msg-header") {
			return fmt.Errorf("cost %s=%q: want a positive integer", label, val)
		}
		*p.i = n
	}
	return nil
}

// For is the cost model operator op's instances pay: the run's model with
// op's operator-qualified overrides applied. It returns the run's model
// itself when op has none, and a new model otherwise, so a caller on a hot
// path calls it once and keeps the result. The runtime gives every process
// the model of its ProcSpec.CostOp as its Ctx.Cost(); a process that runs
// several operators' work (lineage's executors) charges each with For.
func (c *CostModel) For(op string) *CostModel {
	root := c
	if c.base != nil {
		root = c.base
	}
	var m *CostModel
	for _, o := range root.perOp {
		if o.op != op {
			continue
		}
		if m == nil {
			cp := *root
			cp.base = root
			m = &cp
		}
		_ = m.set(o.param, o.param, o.val) // checked by Set
	}
	if m == nil {
		return root
	}
	return m
}

// CheckOps reports an operator-qualified override naming an operator that
// workload (whose operators are ops) does not have.
func (c *CostModel) CheckOps(workload string, ops []string) error {
	for _, o := range c.perOp {
		if !slices.Contains(ops, o.op) {
			return fmt.Errorf("cost override %q: workload %s has no operator %q (its operators: %s)",
				o.op+"."+o.param+"="+o.val, workload, o.op, strings.Join(ops, ", "))
		}
	}
	return nil
}

// Map returns every parameter's value by name (for run.json), and each
// operator-qualified override as "op.name" with the value op pays.
func (c *CostModel) Map() map[string]string {
	m := map[string]string{}
	for _, p := range c.Params() {
		m[p.Name] = p.Value()
	}
	for _, o := range c.perOp {
		if p, ok := c.For(o.op).param(o.param); ok {
			m[o.op+"."+o.param] = p.Value()
		}
	}
	return m
}

// SendCost is the sender's CPU for one message of payload size bytes.
func (c *CostModel) SendCost(size int32) Time {
	return c.SendCPU + Time(int64(size)+int64(c.MsgHeader))*c.SerdePerByte
}

// WireBytes is the size of a message on the wire.
func (c *CostModel) WireBytes(size int32) int { return int(size) + c.MsgHeader }
