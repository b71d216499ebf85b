//go:build !ftbench_mutant_early_ack

package storm

// mutantEarlyAck is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_early_ack build tag
// (mutant_early_ack_on.go) turns it on to make a deliberately broken build:
// the acker reports a tree complete as soon as its init arrives, before the XOR of its acks reaches zero, so tuples a crash loses downstream are never replayed (at-least-once broken).
// docs/torture.md lists the mutants and what catches each.
const mutantEarlyAck = false
