package harness

import (
	"slices"
	"sync"
	"unsafe"

	"ftbench/engine"
)

// commitPipe hands the run's commits to the delivery checker, the output
// store, the latency histogram and the time series on a goroutine of their
// own, so that checking a simulated run uses the machine's second core
// instead of the event loop's. It models nothing of the system under test;
// it only moves the harness's bookkeeping.
//
// Invariant: whenever the event loop reads what the checkers computed or
// touches the series (a drain test, a Sample after the input ended, the end
// of the run), sync has run first, so the checkers have
// taken every commit reported so far, in report order — exactly what they
// would hold had each commit been checked inline. A Sample before the end
// of the input does not wait: it queues a marker (mark), and the checker
// takes the lag when it reaches it, after the same commits. The results
// are therefore the same, run for run, as with inline checking.
//
// Used only in the simulator without the observer (whose reads go to the
// output store during the run) and without test hooks that watch commits as
// they happen; everywhere else commits are checked inline.
//
// A 2PC sink hands over whole pieces of a committed transaction
// (engine.CommitOwned): they are queued as they are, one entry each, and
// once checked go back to the sinks through a pool (buffer), so a
// checkpoint's effects are neither copied into the queue nor written to
// fresh memory.
//
// The goroutine also runs the harness's other work beside the simulation
// (background: the oracle pass, expect.go), in small steps whenever no batch
// waits, so that the harness never has more than one goroutine of its own
// busy beside the event loop: on a 2-core machine a third would take turns
// with the event loop for a core and slow the run it is only checking.
type commitPipe struct {
	batch *commitBatch
	work  chan *commitBatch
	free  chan *commitBatch
	// spare holds checked pieces for buffer; it holds at most the
	// queue's bytes of them.
	spare chan []engine.Commit
	busy  sync.WaitGroup // batches sent and not yet checked
	done  bool           // stopped
	fault any            // a panic of the checking goroutine
	check func(q *queuedCommit)
	// checkPiece, if set, checks a piece handed over whole and reports
	// whether it kept the piece: the output store holds a 2PC burst's
	// pieces until their commits settle and gives them back through
	// release, instead of copying each commit. Unset, or when it keeps
	// nothing, each commit of the piece goes through check.
	checkPiece func(now, at engine.Time, cs []engine.Commit) (kept bool)
	// background does one bounded step of other work and reports whether
	// any is left; nil when there is none.
	background func() bool
}

// commitBatch is what goes over to the checker at once: entries in report
// order; a queuedPiece entry stands for pieces[c.Value], every commit of
// which was reported at (now, at).
type commitBatch struct {
	entries []queuedCommit
	pieces  [][]engine.Commit
	commits int // commits in entries and pieces
}

type queuedCommit struct {
	now, at engine.Time
	c       engine.Commit
	kind    queuedKind
}

// queuedKind says what a queued entry is: a commit, or one of the things
// the event loop hands the checker in order with the commits, because the
// checker owns what they update (the time series) until the next sync.
type queuedKind uint8

const (
	queuedCommitKind queuedKind = iota
	// queuedSample is a Sample at instant at: the checker takes the source
	// lag there, after exactly the commits reported before it, as the
	// event loop would have after a sync.
	queuedSample
	// queuedCheckpoint is a completed checkpoint at instant at, its
	// duration in c.Value.
	queuedCheckpoint
	// queuedPiece is a piece of commits handed over whole (CommitOwned),
	// its index in the batch's pieces in c.Value.
	queuedPiece
)

// pipeBatch commits go over at once: large enough that handing a batch over
// costs nothing per commit, small enough that the checker works while the
// loop runs.
//
// Up to a queue's worth of batches wait for the checker (pipeQueueBytes). A
// 2PC sink commits a whole checkpoint's effects in one burst (the main
// job: 4 sinks of about 90 000 effects each, every second; parallelism 64:
// 64 sinks of about 94 000), several times faster than they are checked,
// and an event loop that blocks on a full queue waits for the checker's
// core instead of simulating, though the checker keeps up between bursts.
// So the queue holds a burst: a second of input at pipeEntriesPerRecord
// entries a record (a checkpoint interval at the default 1 s; wordcount's
// lines hold 3 words on average, 5 at most), between 64 and 512 MB. With 64
// MB, parallelism 64 blocked the event loop for a fifth of its wall time.
// A longer checkpoint interval makes larger bursts, which still wait, as
// they must: memory stays bounded. The batches of a burst, and the 2PC
// pieces they carried, are kept for the next one: writing fresh ones cost
// the event loop a third of the gain.
const (
	pipeBatch            = 4096 // commits, counting those of pieces
	pipeEntriesPerRecord = 4
	minPipeQueueBytes    = 64 << 20
	maxPipeQueueBytes    = 512 << 20
	queuedBytes          = int64(unsafe.Sizeof(queuedCommit{}))
	commitBytes          = int64(unsafe.Sizeof(engine.Commit{}))
)

// falseSharingPad keeps the fields either side of it on different cache
// lines, so that a field one goroutine writes on every commit does not
// share a line with what the other goroutine reads or writes. 128 bytes,
// not 64: x86 cores prefetch adjacent lines in pairs, so a write to one
// line of a pair still disturbs the other.
type falseSharingPad [128]byte

// pipeQueueBytes is the commit pipe's queue for a run that appends
// recordsPerSecond source records (all partitions) per simulated second.
func pipeQueueBytes(recordsPerSecond float64) int64 {
	b := recordsPerSecond * pipeEntriesPerRecord * float64(queuedBytes)
	return int64(min(max(b, minPipeQueueBytes), maxPipeQueueBytes))
}

func newCommitPipe(check func(q *queuedCommit), background func() bool, queueBytes int64) *commitPipe {
	n := max(1, int(queueBytes/(pipeBatch*queuedBytes)))
	p := &commitPipe{work: make(chan *commitBatch, n), free: make(chan *commitBatch, n), check: check, background: background,
		spare: make(chan []engine.Commit, max(1, int(queueBytes/(pipeBatch*commitBytes))))}
	p.batch = newCommitBatch()
	go p.loop(p.work)
	return p
}

func newCommitBatch() *commitBatch { return &commitBatch{entries: make([]queuedCommit, 0, pipeBatch)} }

func (p *commitPipe) loop(work <-chan *commitBatch) {
	bg := p.background
	for {
		var b *commitBatch
		ok := true
		if bg != nil {
			select {
			case b, ok = <-work:
			default:
				if !bg() {
					bg = nil
				}
				continue
			}
		} else {
			b, ok = <-work
		}
		if !ok {
			for bg != nil && bg() {
			}
			return
		}
		p.run(b)
		for i, piece := range b.pieces {
			if piece != nil { // nil: kept by checkPiece
				p.release(piece)
			}
			b.pieces[i] = nil
		}
		b.entries, b.pieces, b.commits = b.entries[:0], b.pieces[:0], 0
		select {
		case p.free <- b:
		default:
		}
		p.busy.Done()
	}
}

func (p *commitPipe) run(b *commitBatch) {
	defer func() {
		if f := recover(); f != nil && p.fault == nil {
			p.fault = f
		}
	}()
	if p.fault != nil {
		return // checking stopped at its first panic; sync re-raises it
	}
	for i := range b.entries {
		q := &b.entries[i]
		if q.kind != queuedPiece {
			p.check(q)
			continue
		}
		if p.checkPiece != nil && p.checkPiece(q.now, q.at, b.pieces[q.c.Value]) {
			b.pieces[q.c.Value] = nil
			continue
		}
		e := queuedCommit{now: q.now, at: q.at, kind: queuedCommitKind}
		for _, c := range b.pieces[q.c.Value] {
			e.c = c
			p.check(&e)
		}
	}
}

// release gives a checked piece back for buffer (any goroutine), or to
// the collector when spare holds enough.
func (p *commitPipe) release(piece []engine.Commit) {
	select {
	case p.spare <- piece[:0]:
	default:
	}
}

// mark queues an entry of kind k (not a commit) at instant at.
func (p *commitPipe) mark(k queuedKind, at engine.Time, value int64) {
	*p.entry() = queuedCommit{at: at, c: engine.Commit{Value: value}, kind: k}
	p.counted(1)
}

// add queues one commit.
func (p *commitPipe) add(now, at engine.Time, c *engine.Commit) {
	// Field by field, once a commit: c points at a commit its caller
	// stored field by field a moment before, and copying it whole in
	// 16-byte loads would wait for those narrower stores to reach the
	// cache (a store-forwarding stall), behind the stores of earlier
	// entries: 3.44 -> 3.26 s a 60 s wordcount (5 runs each).
	e := p.entry()
	e.now, e.at, e.kind = now, at, queuedCommitKind
	e.c.ID.Part, e.c.ID.Sub, e.c.ID.Off = c.ID.Part, c.ID.Sub, c.ID.Off
	e.c.Key, e.c.Value, e.c.Born = c.Key, c.Value, c.Born
	p.counted(1)
}

// addPiece queues cs, reported at instant now for instant at, as it is:
// the pipe keeps it and hands it out again from buffer once checked.
func (p *commitPipe) addPiece(now, at engine.Time, cs []engine.Commit) {
	b := p.batch
	*p.entry() = queuedCommit{now: now, at: at, c: engine.Commit{Value: int64(len(b.pieces))}, kind: queuedPiece}
	b.pieces = append(b.pieces, cs)
	p.counted(len(cs)) // also caps the entries: a piece is never empty
}

// entry appends an entry to the batch and returns it to be filled in
// place; the caller sets every field (a reused batch holds old entries).
func (p *commitPipe) entry() *queuedCommit {
	b := p.batch
	n := len(b.entries)
	if n == cap(b.entries) {
		b.entries = slices.Grow(b.entries, 1)
	}
	b.entries = b.entries[:n+1]
	return &b.entries[n]
}

// counted adds n commits to the batch (a mark counts as one) and sends it
// once it holds pipeBatch.
func (p *commitPipe) counted(n int) {
	p.batch.commits += n
	if p.batch.commits >= pipeBatch {
		p.send()
	}
}

// buffer is an empty slice with room for n commits, a checked piece if
// one is at hand (engine.CommitBuffer).
func (p *commitPipe) buffer(n int) []engine.Commit {
	select {
	case b := <-p.spare:
		if cap(b) >= n {
			return b
		}
	default:
	}
	return make([]engine.Commit, 0, n)
}

func (p *commitPipe) send() {
	p.busy.Add(1)
	p.work <- p.batch
	select {
	case p.batch = <-p.free:
	default:
		p.batch = newCommitBatch()
	}
}

// sync waits until every queued commit has been checked.
func (p *commitPipe) sync() {
	if len(p.batch.entries) > 0 {
		p.send()
	}
	p.busy.Wait()
	if p.fault != nil {
		panic(p.fault) // Execute turns it into an internal error
	}
}

// stop ends the goroutine (once every batch sent is checked); the pipe
// takes no more commits.
func (p *commitPipe) stop() {
	if !p.done {
		close(p.work)
		p.done = true
	}
}
