//go:build !ftbench_mutant_discard_before_durable

package checkpoint

// mutantDiscardBeforeDurable is false in every real build. The
// ftbench_mutant_discard_before_durable build tag
// (mutant_discard_before_durable_on.go) turns it on to make a deliberately
// broken coordinator that discards the older checkpoints (and deletes their
// files) as soon as a new checkpoint is acknowledged by every task, before
// its metadata is durable: a master crash or a failed metadata write in
// those few milliseconds leaves the latest completed checkpoint without its
// files. Torture must catch it by aiming at the acknowledgement milestone
// (docs/torture.md, "Mutants").
const mutantDiscardBeforeDurable = false
