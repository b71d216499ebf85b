// Package summary holds what the checkpointing systems' Summarize
// functions (barrier, snapshot) compute the same way, so that a figure
// both report is derived once.
//
// Their distributions stay apart on purpose: barrier's are
// {n, p50, p99, max, mean} with interpolated percentiles
// (metrics.Summary) over durations already rounded to the microsecond,
// snapshot's {n, mean, p50, max} with the upper median of unrounded
// values. Sharing one would move published figures.
package summary

import "math"

// Round3 rounds x to three decimals: run.json reports milliseconds to the
// microsecond and ratios to a thousandth, so that figures compare by eye
// and diff cleanly between runs.
func Round3(x float64) float64 { return math.Round(x*1000) / 1000 }
