//go:build !ftbench_mutant_no_require_stable

package kstreams

// mutantNoRequireStable is false in every real build. The
// ftbench_mutant_no_require_stable tag turns it on: an offset fetch is
// answered at once, not after the transaction that will commit an offset
// for the task ends (KIP-447's require_stable), so a task's new owner can
// start from an offset a zombie's pending transaction then moves past
// (exactly-once broken: duplicates).
const mutantNoRequireStable = false
