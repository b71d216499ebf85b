package live

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	"ftbench/engine"
)

// store is the durable store: every Put writes a file of the value's size
// under the store folder and fsyncs it, on a small pool of writer
// goroutines, before the value becomes readable and the writer gets
// KindStoreDone. A writer's puts go to one pool goroutine, so they
// complete in order, as in the simulator. The value itself is kept in
// memory next to its file: protocol state is a Go value (the Store contract
// takes any), which systems do not serialise, so the file carries the
// bytes the cost model says the state has and the disk does the real work
// of writing and syncing them.
type store struct {
	rt     *Runtime
	dir    string
	tmp    bool // dir is a temporary folder, removed by close
	queues []chan putJob

	mu   sync.Mutex
	vals map[string]stored
}

type stored struct {
	val  any
	size int64
}

type putJob struct {
	c     *incarnation
	key   string
	val   any
	size  int64
	token int64
}

func newStore(rt *Runtime, dir string, writers int) *store {
	st := &store{rt: rt, dir: dir, vals: map[string]stored{}}
	for range writers {
		st.queues = append(st.queues, make(chan putJob, 4096))
	}
	return st
}

// open makes the store folder (a temporary one if none was given).
func (st *store) open() error {
	if st.dir == "" {
		dir, err := os.MkdirTemp("", "ftbench-live-store-")
		if err != nil {
			return fmt.Errorf("live store: %w", err)
		}
		st.dir, st.tmp = dir, true
		return nil
	}
	if err := os.MkdirAll(st.dir, 0o755); err != nil {
		return fmt.Errorf("live store: %w", err)
	}
	return nil
}

func (st *store) close() {
	if st.tmp {
		_ = os.RemoveAll(st.dir)
	}
}

func (st *store) run() {
	for _, q := range st.queues {
		st.rt.wg.Add(1)
		go st.writer(q)
	}
}

func (st *store) path(key string) string { return filepath.Join(st.dir, url.PathEscape(key)) }

func (st *store) writer(q chan putJob) {
	defer st.rt.wg.Done()
	zeros := make([]byte, 64<<10)
	for {
		select {
		case <-st.rt.halt:
			return
		case j := <-q:
			if !j.c.alive() {
				continue // its writer died: the write is lost
			}
			if err := writeFile(st.path(j.key), j.size, zeros); err != nil {
				st.rt.fail(fmt.Errorf("live store: %w", err))
				return
			}
			p := j.c.p
			p.mu.Lock()
			if j.c.alive() {
				st.mu.Lock()
				st.vals[j.key] = stored{val: j.val, size: j.size}
				st.mu.Unlock()
				p.urgent = append(p.urgent, urgentItem{from: engine.Runtime, m: engine.StoreDoneMsg(j.key, j.token)})
				p.syncPrio()
				p.signal()
			}
			p.mu.Unlock()
		}
	}
}

func writeFile(path string, size int64, zeros []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for size > 0 {
		n := min(size, int64(len(zeros)))
		if _, err := f.Write(zeros[:n]); err != nil {
			f.Close()
			return err
		}
		size -= n
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (st *store) value(key string) (any, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	v, ok := st.vals[key]
	return v.val, ok
}

// --- engine.Store ---

func (c *incarnation) Put(key string, val any, size int64, token int64) {
	if !c.alive() {
		return
	}
	st := c.p.rt.store
	select {
	case st.queues[int(c.p.id)%len(st.queues)] <- putJob{c: c, key: key, val: val, size: size, token: token}:
	case <-c.p.rt.halt:
	}
}

// Get reads the value's file (the real read) and returns the value.
func (c *incarnation) Get(key string) (any, bool) {
	st := c.p.rt.store
	v, ok := st.value(key)
	if ok {
		_, _ = os.ReadFile(st.path(key)) // a concurrent Delete may have removed it
	}
	return v, ok
}

// Delete removes a key and its file when the step ends (publish).
func (c *incarnation) Delete(key string) {
	if c.alive() {
		c.deletes = append(c.deletes, key)
	}
}

func (st *store) remove(keys []string) {
	if len(keys) == 0 {
		return
	}
	st.mu.Lock()
	for _, k := range keys {
		delete(st.vals, k)
	}
	st.mu.Unlock()
	for _, k := range keys {
		_ = os.Remove(st.path(k))
	}
}
