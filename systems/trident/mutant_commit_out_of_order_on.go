//go:build ftbench_mutant_commit_out_of_order

package trident

// mutantCommitOutOfOrder: see mutant_commit_out_of_order_off.go. Only builds with
// -tags ftbench_mutant_commit_out_of_order have it on.
const mutantCommitOutOfOrder = true
