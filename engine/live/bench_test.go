package live_test

import (
	"sync"
	"testing"
	"time"

	"ftbench/engine"
	"ftbench/harness"
	"ftbench/workloads"
)

// BenchmarkGrepLiveVsChannels measures, in one benchmark run, the live
// runtime's throughput for none on grep with --work none (the bare
// implementation: channels, credit, buffers, timers, the harness's
// checking) against the floor of what Go can do with the same records: a
// plain pipeline of goroutines and buffered Go channels running the same
// workload functions (source, filter, sink per partition) with no
// accounting at all. It reports both in input records/s and their ratio.
//
//	go test -run '^$' -bench GrepLiveVsChannels -benchtime 1x ./engine/live
func BenchmarkGrepLiveVsChannels(b *testing.B) {
	const parts = 2
	for range b.N {
		chanRate := channelPipeline(b, parts, 500_000)
		cfg := harness.DefaultConfig()
		cfg.Runtime, cfg.Work = harness.RuntimeLive, "none"
		cfg.System, cfg.Workload = "none", "grep"
		cfg.Parallelism, cfg.Workers = parts, 1
		// Offered well above what the pipeline managed, so the live run is
		// overloaded and its committed throughput is what it sustains (a
		// fixed cap here would measure the cap once live reached it).
		cfg.Rate, cfg.Duration, cfg.Drain = 2*chanRate, 3*engine.Second, engine.Second
		out, err := harness.Execute(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out.Result.ThroughputRPS == nil {
			b.Fatalf("live run measured no throughput: %v", out.Result.Problems)
		}
		live := *out.Result.ThroughputRPS
		b.ReportMetric(chanRate, "chan-records/s")
		b.ReportMetric(live, "live-records/s")
		b.ReportMetric(live/chanRate, "live/chan")
	}
}

// channelPipeline pushes n records per partition through source -> filter
// -> sink goroutines joined by buffered channels and returns input
// records/s.
func channelPipeline(b *testing.B, parts int, n int64) float64 {
	w, err := workloads.New("grep", 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	plan := w.Plan()
	filter := plan.Stages[0].Fn
	var wg sync.WaitGroup
	sink := make(chan engine.Msg, 1024)
	committed := make([]int64, parts)
	var sinkDone sync.WaitGroup
	sinkDone.Add(1)
	go func() {
		defer sinkDone.Done()
		for m := range sink {
			committed[m.ID.Part]++
		}
	}()
	t0 := time.Now()
	for p := range parts {
		toFilter := make(chan engine.Msg, 1024)
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer close(toFilter)
			for off := range n {
				toFilter <- w.Record(int32(p), off)
			}
		}()
		go func() {
			defer wg.Done()
			for m := range toFilter {
				filter(m, func(o engine.Msg) { sink <- o })
			}
		}()
	}
	wg.Wait()
	close(sink)
	sinkDone.Wait()
	elapsed := time.Since(t0)
	if committed[0] == 0 {
		b.Fatal("no record matched")
	}
	return float64(int64(parts)*n) / elapsed.Seconds()
}
