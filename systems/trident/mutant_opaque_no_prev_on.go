//go:build ftbench_mutant_opaque_no_prev

package trident

// mutantOpaqueNoPrev: see mutant_opaque_no_prev_off.go. Only builds with
// -tags ftbench_mutant_opaque_no_prev have it on.
const mutantOpaqueNoPrev = true
