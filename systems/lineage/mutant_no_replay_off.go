//go:build !ftbench_mutant_no_replay

package lineage

// mutantNoReplay is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_no_replay build tag
// (mutant_no_replay_on.go) turns it on to make a deliberately broken build:
// a lost state partition is restored from the last checkpoint without replaying the batches after it (the recompute chain starts at the batch to rebuild), so the state misses their updates (exactly-once broken: wrong values).
// docs/torture.md lists the mutants and what catches each.
const mutantNoReplay = false
