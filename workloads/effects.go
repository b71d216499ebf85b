package workloads

// EffectCounter is implemented by a workload whose records' sink effect
// counts do not depend on the state: Effects(part, off) is exactly the
// number of effects the oracle's Feed(part, off) returns, whatever was fed
// before. The harness's delivery checker then needs no table of the whole
// log's counts (memory bounded by what is in flight, not by the run), and
// the oracle pass that computes the final state checks every count against
// it. It must be a pure function.
type EffectCounter interface {
	Effects(part int32, off int64) int32
}

// Effects is the line's word count: split emits one word per word and
// count one effect per word.
func (w *wordcount) Effects(part int32, off int64) int32 {
	return 1 + int32(w.lineHash(part, off)%maxWords)
}

// Effects is 1 for a matching line, else 0.
func (g *grep) Effects(part int32, off int64) int32 {
	if g.matches(part, off) {
		return 1
	}
	return 0
}
