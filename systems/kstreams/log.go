package kstreams

import (
	"slices"
	"sort"

	"ftbench/engine"
	"ftbench/systems/internal/stream"
)

// entry is one record of a partition log: a data message's typed fields
// (data records carry no Body). It holds no pointer, so the collector
// never scans a batch's records, and the logs hold every record between
// two purges or compactions.
type entry struct {
	key  uint64
	val  int64
	id   engine.EffectID
	born engine.Time
	size int32
	kind uint16
}

func entryOf(m engine.Msg) entry {
	return entry{key: m.Key, val: m.Val, id: m.ID, born: m.Born, size: m.Size, kind: m.Kind}
}

// msg is the record as a consumer receives it.
func (e *entry) msg() engine.Msg {
	return engine.Msg{Kind: e.kind, Size: e.size, Key: e.key, Val: e.val, ID: e.id, Born: e.born}
}

// batch is one producer batch as a partition log keeps it, whole, as a
// Kafka log keeps a record batch: records [base, end()) of one partition,
// written by one transaction (txn, its id; 0 outside one). A repartition
// batch holds data records (recs), a changelog batch a store's key-values
// (kvs: a third of an entry's bytes, and a changelog keeps its records
// until the cleaner's next pass). The log appends the producer's array as
// it is and never writes it; a purge or compaction drops whole batches
// from the log's list.
type batch struct {
	base int64
	recs []entry
	kvs  []stream.KV
	txn  int32
}

func (b *batch) end() int64 { return b.base + int64(len(b.recs)+len(b.kvs)) }

type based struct {
	kv  stream.KV
	off int64
}

// plog is one partition: a list of batches in offset order. Offsets count
// records; start is the first live one, which lies in bs[0] (a purge may
// cut a batch). stable is the last stable offset: every record below it is
// committed, aborted or non-transactional (read_committed reads up to it);
// since a batch is decided whole, stable always ends a batch, bs[sb] being
// the first one at or beyond it. The high watermark is end(). A
// repartition partition is purged below its committed offset (Streams'
// deleteRecords after a commit); a changelog partition is compacted: the
// cleaner folds its decided records into base, the last committed value of
// each key with its offset.
type plog struct {
	start, stable int64
	next          int64   // the high watermark: the offset of the next record appended
	bs            []batch // the live batches
	sb            int     // bs[sb] is the first batch at or beyond stable
	changelog     bool
	base          []based // compacted records, by offset
	txns          *[]*txn // the cluster's byID
	// dropped and droppedKV hold the arrays of the batches a purge or
	// compaction dropped, for the broker to hand back to producers.
	dropped   [][]entry
	droppedKV [][]stream.KV
	// pos is, for a repartition partition, its consuming task's position as
	// the broker last saw it in a fetch: [pos, next) is the consumer lag
	// the run's internal lag counts (systems.InternalLag).
	pos int64
}

// txnOf is the transaction that wrote b, nil when none did.
func (l *plog) txnOf(b *batch) *txn {
	if b.txn == 0 {
		return nil
	}
	return (*l.txns)[b.txn-1]
}

func (l *plog) end() int64 { return l.next }

// push appends a producer's batch for this partition, as it is: data
// records or, for a changelog, key-values.
func (l *plog) push(recs []entry, kvs []stream.KV, t *txn) {
	b := batch{base: l.next, recs: recs, kvs: kvs}
	if t != nil {
		b.txn = t.id
	}
	l.bs = append(l.bs, b)
	l.next = b.end()
}

// advance moves the last stable offset past decided batches.
func (l *plog) advance() {
	for l.sb < len(l.bs) && l.txnOf(&l.bs[l.sb]).decided() {
		l.stable = l.bs[l.sb].end()
		l.sb++
	}
}

// readable is how far a consumer may read: the LSO under read_committed.
func (l *plog) readable(committed bool) int64 {
	if committed {
		return l.stable
	}
	return l.end()
}

// dropBatches forgets the first k batches; their arrays go to dropped
// (a fetch response holds a copy of its records, so no one else holds
// them).
func (l *plog) dropBatches(k int) {
	for i := range l.bs[:k] {
		if b := &l.bs[i]; b.kvs != nil {
			l.droppedKV = append(l.droppedKV, b.kvs[:0])
		} else {
			l.dropped = append(l.dropped, b.recs[:0])
		}
	}
	clear(l.bs[:k])
	l.bs = l.bs[k:]
	l.sb -= k
}

// purge drops the decided records below off (a repartition topic's records
// once their consumer committed past them).
func (l *plog) purge(off int64) {
	off = min(off, l.stable)
	if off <= l.start {
		return
	}
	l.start = off
	k := 0
	for k < l.sb && l.bs[k].end() <= off {
		k++
	}
	l.dropBatches(k)
}

// scan walks the records a consumer receives from offset from up to limit,
// at most n of them: it calls fn with each run of them (a view of one
// batch) and skips aborted batches. It returns the offset to read next:
// past the last record handed out once n are, else limit.
func (l *plog) scan(from, limit int64, n int, fn func([]entry)) int64 {
	return l.walk(from, limit, n, func(b *batch, lo, hi int64) { fn(b.recs[lo:hi]) })
}

// walk is scan for either kind of batch: fn gets the batch and the run's
// bounds, as indexes into it.
func (l *plog) walk(from, limit int64, n int, fn func(b *batch, lo, hi int64)) int64 {
	next := max(from, l.start)
	if next >= limit || n <= 0 {
		return next
	}
	i := sort.Search(len(l.bs), func(i int) bool { return l.bs[i].end() > next })
	for ; i < len(l.bs) && next < limit; i++ {
		b := &l.bs[i]
		hi := min(b.end(), limit)
		if t := l.txnOf(b); t != nil && t.state == txnAborted {
			next = hi
			continue
		}
		k := min(hi-next, int64(n))
		fn(b, next-b.base, next-b.base+k)
		next += k
		if n -= int(k); n == 0 {
			break
		}
	}
	return next
}

// compact is one log-cleaner pass over a changelog partition: when the
// decided records since the last pass are at least as many as the live
// keys (min.cleanable.dirty.ratio 0.5), they are folded into base, which
// keeps each key's last committed value and drops aborted records. It
// returns the records removed.
func (l *plog) compact() int64 {
	dirty := l.stable - l.start
	if dirty == 0 || dirty < int64(len(l.base)) {
		return 0
	}
	last := map[uint64]based{}
	for _, b := range l.base {
		last[b.kv.Key] = b
	}
	for i := range l.bs[:l.sb] {
		b := &l.bs[i]
		if t := l.txnOf(b); t != nil && t.state != txnCommitted {
			continue
		}
		for off := max(l.start, b.base); off < b.end(); off++ {
			last[b.kvs[off-b.base].Key] = based{b.kvs[off-b.base], off}
		}
	}
	before := int64(len(l.base)) + dirty
	base := make([]based, 0, len(last))
	for _, b := range last {
		base = append(base, b)
	}
	slices.SortFunc(base, func(a, b based) int { return int(a.off - b.off) })
	l.base = base
	l.dropBatches(l.sb)
	l.start = l.stable
	return before - int64(len(base))
}

// readChangelog returns up to n visible records at offsets from `from` up
// to limit (base first, then the log), and the offset to read next.
func (l *plog) readChangelog(from, limit int64, n int) ([]stream.KV, int64) {
	var kvs []stream.KV
	next := from
	if from < l.start {
		i, _ := slices.BinarySearchFunc(l.base, from, func(b based, off int64) int { return int(b.off - off) })
		for ; i < len(l.base) && len(kvs) < n; i++ {
			kvs = append(kvs, l.base[i].kv)
			next = l.base[i].off + 1
		}
		if len(kvs) == n {
			return kvs, next
		}
		next = l.start
	}
	next = l.walk(next, limit, n-len(kvs), func(b *batch, lo, hi int64) {
		kvs = append(kvs, b.kvs[lo:hi]...)
	})
	return kvs, next
}
