//go:build !ftbench_mutant_double_commit

package barrier

// mutantDoubleCommit is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_double_commit build tag
// (mutant_double_commit_on.go) turns it on to make a deliberately broken build:
// the 2PC sink keeps a committed transaction's durable record instead of deleting it with the commit, so a restore commits it a second time (exactly-once broken).
// docs/torture.md lists the mutants and what catches each.
const mutantDoubleCommit = false
