//go:build !ftbench_mutant_unfenced_zombie

package barrier

// mutantUnfencedZombie is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_unfenced_zombie build tag
// (mutant_unfenced_zombie_on.go) turns it on to make a deliberately broken build:
// the 2PC sink commits a pending transaction from memory without checking that it
// is still pending in the external system, so an old sink attempt cut off by a
// partition (a zombie) that gets a delayed commit notice commits a transaction a
// newer attempt already restored and committed (exactly-once broken).
// docs/torture.md lists the mutants and what catches each.
const mutantUnfencedZombie = false
