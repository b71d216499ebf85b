//go:build !unix

package capacity

import "time"

// processCPU is not measured off unix: live probes then record no CPU use.
func processCPU() (time.Duration, bool) { return 0, false }
