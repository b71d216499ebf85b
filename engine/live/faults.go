package live

import (
	"fmt"
	"time"

	"ftbench/engine"
)

// Faults at wall-clock times. Crash and Slow are supported live; Reorder
// and Throttle act on the simulated network's links, which a run inside one
// OS process does not have, and are refused (Supported).

// Supported reports whether fault kind can run live ("" if so, else why not).
func Supported(kind string, work WorkMode) string {
	switch kind {
	case "crash":
		return ""
	case "slow":
		if work == WorkNone {
			return "slow multiplies the Work a process pays, and --work none pays none"
		}
		return ""
	case "pause", "store-slow", "store-down", "source-down":
		return kind + " is not implemented by the live runtime yet"
	}
	return kind + " acts on the simulated network's links, which a live run in one OS process does not have"
}

type slowRule struct {
	from, to engine.Time
	factor   float64
}

// Crash crashes worker at wall-clock time at of the run; it restarts after
// restart (the cost model's RestartDelay when restart < 0). Call it before Run.
func (rt *Runtime) Crash(worker int, at, restart engine.Time) error {
	if worker < 0 || worker >= len(rt.workerDown) {
		return fmt.Errorf("crash: no worker %d (workers are 0-%d)", worker, len(rt.workerDown)-1)
	}
	if rt.started {
		return fmt.Errorf("crash: the live run has started; install faults before Run")
	}
	if restart < 0 {
		restart = rt.cost.RestartDelay
	}
	rt.pending = append(rt.pending, func() {
		rt.after(time.Duration(at), func() { rt.crash(worker, restart) })
	})
	return nil
}

// Slow multiplies the Work of process id by factor during [from, to).
func (rt *Runtime) Slow(id engine.ProcID, from, to engine.Time, factor float64) error {
	if factor <= 0 {
		return fmt.Errorf("slow: factor must be positive, got %g", factor)
	}
	if rt.work == WorkNone {
		return fmt.Errorf("slow: %s", Supported("slow", rt.work))
	}
	p := rt.mustProc(id)
	p.slow = append(p.slow, slowRule{from: from, to: to, factor: factor})
	return nil
}

// Reorder is not supported live; the harness refuses it before the run
// (Supported), so reaching it is a bug.
func (rt *Runtime) Reorder(from, to engine.Time, p float64, match func(from, to engine.ProcID) bool) {
	panic("live: reorder is not supported")
}

// Throttle is not supported live (see Reorder).
func (rt *Runtime) Throttle(from, to engine.Time, rate float64, match func(from, to engine.ProcID) bool) {
	panic("live: throttle is not supported")
}

// Pause is not supported live yet; the harness refuses it before the run
// (Supported), so reaching it is a bug.
func (rt *Runtime) Pause(worker int, from, to engine.Time) error {
	return fmt.Errorf("live: pause is not supported")
}

// StoreSlow is not supported live yet (see Pause).
func (rt *Runtime) StoreSlow(from, to engine.Time, factor float64) error {
	return fmt.Errorf("live: store-slow is not supported")
}

// StoreDown is not supported live yet (see Pause).
func (rt *Runtime) StoreDown(from, to engine.Time) error {
	return fmt.Errorf("live: store-down is not supported")
}

// crash kills every process on worker, then notifies the coordinator after
// the detection delay and brings the worker back after restart.
func (rt *Runtime) crash(worker int, restart engine.Time) {
	rt.life.Lock()
	if rt.halted.Load() || rt.workerDown[worker] {
		rt.life.Unlock()
		return
	}
	at := rt.Now()
	rt.workerDown[worker] = true
	var ids []engine.ProcID
	for _, p := range rt.procs {
		if p.spec.Worker == worker && rt.kill(p) {
			ids = append(ids, p.id)
		}
	}
	rt.failures = append(rt.failures, engine.Failure{Worker: worker, Procs: ids, FailedAt: at})
	idx := len(rt.failures) - 1
	rt.after(time.Duration(rt.cost.DetectDelay), func() { rt.notifyFailure(idx) })
	rt.after(time.Duration(restart), func() { rt.workerUp(worker) })
	rt.life.Unlock()
	rt.observe(func() {
		rt.observer.Event(engine.Event{Time: at, Kind: "worker_crash", ID: int64(worker), Value: int64(restart)})
	})
}

func (rt *Runtime) workerUp(worker int) {
	rt.life.Lock()
	if rt.halted.Load() {
		rt.life.Unlock()
		return
	}
	rt.workerDown[worker] = false
	at := rt.Now()
	for _, p := range rt.procs {
		if p.spec.Worker == worker {
			rt.startProc(p)
		}
	}
	rt.life.Unlock()
	rt.observe(func() { rt.observer.Event(engine.Event{Time: at, Kind: "worker_up", ID: int64(worker)}) })
	rt.notify(engine.Msg{Kind: engine.KindWorkerUp, Ctrl: true, Val: int64(worker)})
}

func (rt *Runtime) notifyFailure(idx int) {
	rt.life.Lock()
	f := rt.failures[idx]
	back := !rt.workerDown[f.Worker]
	rt.life.Unlock()
	rt.notify(engine.FailureMsg(f, back))
}

// notify hands a runtime message to the deployment's coordinator.
func (rt *Runtime) notify(m engine.Msg) {
	c := rt.dep.Coordinator
	if c < 0 || int(c) >= len(rt.procs) {
		return
	}
	p := rt.procs[c]
	p.mu.Lock()
	if p.up {
		p.urgent = append(p.urgent, urgentItem{from: engine.Runtime, m: m})
		p.syncPrio()
		p.signal()
	}
	p.mu.Unlock()
}
