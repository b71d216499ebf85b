//go:build !ftbench_mutant_commit_out_of_order

package trident

// mutantCommitOutOfOrder is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_commit_out_of_order build tag
// (mutant_commit_out_of_order_on.go) turns it on to make a deliberately broken build:
// the coordinator sends the commit tuple of the first processed batch instead of waiting for the lowest uncommitted txid, so with --max-batches-pending above 1 state updates are applied out of txid order (a later batch's update is then skipped as already applied when the earlier one commits).
// docs/torture.md lists the mutants and what catches each.
const mutantCommitOutOfOrder = false
