package lineage

import (
	"ftbench/engine"
	"ftbench/systems/internal/stream"
)

// The executor's block manager: map outputs it computed (the shuffle files
// the lineage points at), buckets pushed to it, cached state partitions,
// and the fetches that move them between executors.

type outKey struct {
	s, part int32
	j       int64
}

type inKey struct {
	s, r int32
	j    int64
}

type stKey struct{ s, part int32 }

type stVer struct {
	ver  int64
	maps []map[uint64]int64
}

// inboxEntry holds the buckets pushed to this executor for one reduce
// partition of one batch, by map partition.
type inboxEntry struct {
	blocks [][]rec
	have   []bool
}

func (x *executor) stateAt(ref blockRef) []map[uint64]int64 {
	for _, v := range x.states[stKey{ref.s, ref.part}] {
		if v.ver == ref.j {
			return v.maps
		}
	}
	return nil
}

// push sends each destination one message with all its buckets.
func (x *executor) push(sp *taskSpec, buckets [][]rec) {
	byDest := make([][]int32, len(x.e.execs))
	for r, d := range sp.dests {
		if d >= 0 {
			byDest[d] = append(byDest[d], int32(r))
		}
	}
	for d, rs := range byDest {
		if len(rs) == 0 {
			continue
		}
		msg := &pushMsg{s: int32(sp.s), q: int32(sp.part), j: sp.from, rs: rs, blocks: make([][]rec, len(rs))}
		var bytes int64
		for i, r := range rs {
			msg.blocks[i] = buckets[r]
			bytes += blockBytes(buckets[r])
		}
		if d == x.idx {
			x.pushed(msg)
			continue
		}
		x.ctx.Count("lineage.shuffle_bytes", bytes)
		x.ctx.Send(x.e.execs[d], ctrl(kPush, bytes, msg))
	}
}

func (x *executor) putState(k stKey, v stVer) {
	vs := x.states[k]
	for i := range vs {
		if vs[i].ver == v.ver {
			vs[i] = v
			return
		}
	}
	vs = append(vs, v)
	if len(vs) > 2 { // the newest two: a speculative copy may still read the previous one
		vs = vs[len(vs)-2:]
	}
	x.states[k] = vs
}

func (x *executor) serve(from engine.ProcID, req *fetchReq) {
	resp := &fetchResp{attempt: req.attempt, refs: req.refs, found: make([]bool, len(req.refs)), blocks: make([][]rec, len(req.refs))}
	bytes := int64(len(req.refs)) * refBytes
	for i, ref := range req.refs {
		if ref.state {
			if v := x.stateAt(ref); v != nil {
				resp.state, resp.found[i] = v, true
				bytes += stream.StateBytes(stateKeys(v))
			}
			continue
		}
		if out, ok := x.outputs[outKey{ref.s, ref.part, ref.j}]; ok {
			resp.blocks[i], resp.found[i] = out[ref.r], true
			bytes += blockBytes(out[ref.r])
		}
	}
	x.ctx.Count("lineage.shuffle_bytes", bytes)
	x.ctx.Send(from, ctrl(kBlocks, bytes, resp))
}

func (x *executor) received(resp *fetchResp) {
	r := x.cur
	if r == nil || r.phase != phaseGather || r.spec.attempt != resp.attempt {
		return
	}
	for i, ref := range resp.refs {
		if !resp.found[i] {
			x.fail(ref)
			return
		}
		if ref.state {
			r.state = copyStates(resp.state)
		} else {
			jj := ref.j - r.spec.from
			r.blocks[jj][ref.part], r.have[jj][ref.part] = resp.blocks[i], true
		}
		r.waitOn[ref.exec]--
		r.waiting--
	}
	if r.waiting == 0 {
		x.compute()
	}
}

func (x *executor) pushed(msg *pushMsg) {
	n := x.e.parts[msg.s]
	for i, rr := range msg.rs {
		k := inKey{msg.s, rr, msg.j}
		in := x.inbox[k]
		if in == nil {
			in = &inboxEntry{blocks: make([][]rec, n), have: make([]bool, n)}
			x.inbox[k] = in
		}
		in.blocks[msg.q], in.have[msg.q] = msg.blocks[i], true
	}
	r := x.cur
	if r == nil || r.phase != phaseGather || r.spec.pushed == nil || int(msg.s) != r.spec.s-1 {
		return
	}
	jj := msg.j - r.spec.from
	if jj < 0 || jj >= int64(len(r.blocks)) || !r.spec.pushed[jj][msg.q] || r.have[jj][msg.q] {
		return
	}
	for i, rr := range msg.rs {
		if int(rr) == r.spec.part {
			r.blocks[jj][msg.q], r.have[jj][msg.q] = msg.blocks[i], true
			r.waitOn[r.spec.in[jj][msg.q]]--
			r.waiting--
			if r.waiting == 0 {
				x.compute()
			}
			return
		}
	}
}

// gc drops what the lineage no longer needs. Deleting while ranging over a
// map has the same result in any order.
func (x *executor) gc(m gcMsg) {
	for k := range x.inbox {
		if k.j <= m.committed {
			delete(x.inbox, k)
		}
	}
	for k := range x.outputs {
		if k.j <= m.ckpt {
			delete(x.outputs, k)
		}
	}
	for k, vs := range x.states {
		keep := vs[:0]
		for _, v := range vs {
			if v.ver >= m.ckpt {
				keep = append(keep, v)
			}
		}
		if len(keep) == 0 {
			delete(x.states, k)
		} else {
			x.states[k] = keep
		}
	}
}
