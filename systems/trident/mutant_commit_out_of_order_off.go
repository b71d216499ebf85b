//go:build !ftbench_mutant_commit_out_of_order

package trident

// mutantCommitOutOfOrder is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_commit_out_of_order build tag
// (mutant_commit_out_of_order_on.go) turns it on to make a deliberately broken build:
// the coordinator sends the commit tuple of the latest processed batch instead of the lowest uncommitted txid's, so with --max-batches-pending above 1 state is updated out of txid order: the earlier batch's updates of keys the later one touched are then refused (stored txid above theirs) and lost.
// docs/torture.md lists the mutants and what catches each.
const mutantCommitOutOfOrder = false
