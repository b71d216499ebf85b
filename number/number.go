// Package number parses the numbers users type — flag values, workload and
// system options, cost overrides, fault arguments, sweep values — so that
// every numeric input goes through one parser. strconv.ParseFloat accepts
// "NaN", "Inf" and "-Infinity"; no option means any of them, and a NaN
// passes every range check written as "v < lo || v > hi", so one slipped
// through as a recorded configuration (--active-keys NaN). Float refuses
// them; callers keep their own messages, which name the flag.
package number

import (
	"errors"
	"math"
	"strconv"
)

// ErrNotFinite is Float's error for NaN and the infinities.
var ErrNotFinite = errors.New("not a finite number")

// Float parses s as a finite float64: what strconv.ParseFloat accepts,
// less NaN and ±Inf (spelled any way strconv knows).
func Float(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, ErrNotFinite
	}
	return v, nil
}
