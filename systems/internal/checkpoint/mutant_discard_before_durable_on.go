//go:build ftbench_mutant_discard_before_durable

package checkpoint

// mutantDiscardBeforeDurable: see mutant_discard_before_durable_off.go. Only
// builds with the ftbench_mutant_discard_before_durable tag compile this.
const mutantDiscardBeforeDurable = true
