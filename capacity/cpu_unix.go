//go:build unix

package capacity

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the OS has given this process, user and
// system, all threads: what a busy machine withholds shows here, where the
// Go runtime's CPU metrics estimate from its own scheduler, which does not
// see the OS take a thread away.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
