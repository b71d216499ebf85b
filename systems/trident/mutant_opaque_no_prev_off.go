//go:build !ftbench_mutant_opaque_no_prev

package trident

// mutantOpaqueNoPrev is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_opaque_no_prev build tag
// (mutant_opaque_no_prev_on.go) turns it on to make a deliberately broken build:
// opaque state reapplies a replayed txid to the stored value instead of the previous one, so the failed attempt's update is counted again.
// docs/torture.md lists the mutants and what catches each.
const mutantOpaqueNoPrev = false
