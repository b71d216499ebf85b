//go:build ftbench_mutant_early_ack

package storm

// mutantEarlyAck: see mutant_early_ack_off.go. Only builds with
// -tags ftbench_mutant_early_ack compile this.
const mutantEarlyAck = true
