package sim

import (
	"testing"
	"unsafe"
)

// refRecord is the reference pipeline's record: 32 bytes, about what the
// simulator's compact records carry (an effect id, a key and a value).
type refRecord struct {
	part, sub int32
	off       int64
	key       uint64
	val       int64
}

// refBuffer is the capacity of the reference pipeline's channels.
const refBuffer = 1024

// BenchmarkChannelPipeline is the reference every speed figure of the
// harness is given as a fraction of (scripts/speed.sh): a plain Go channel
// pipeline of three goroutines — producer, stage, consumer — passing one
// 32-byte record per send through channels buffered to 1024. It is what
// the machine does with no simulation, routing or checking at all: the
// cost of moving a record between goroutines.
func BenchmarkChannelPipeline(b *testing.B) {
	if unsafe.Sizeof(refRecord{}) != 32 {
		b.Fatalf("refRecord is %d bytes, want 32", unsafe.Sizeof(refRecord{}))
	}
	in := make(chan refRecord, refBuffer)
	out := make(chan refRecord, refBuffer)
	done := make(chan int64)
	b.ResetTimer()
	go func() { // producer
		for i := 0; i < b.N; i++ {
			in <- refRecord{part: int32(i & 3), sub: int32(i & 1), off: int64(i), key: uint64(i) * 0x9e3779b97f4a7c15, val: 1}
		}
		close(in)
	}()
	go func() { // stage: a map
		for r := range in {
			r.val += int64(r.key>>60) + int64(r.sub)
			out <- r
		}
		close(out)
	}()
	go func() { // consumer
		var sum int64
		for r := range out {
			sum += r.val
		}
		done <- sum
	}()
	if sum := <-done; sum < int64(b.N) {
		b.Fatalf("consumer saw %d, want at least %d", sum, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
