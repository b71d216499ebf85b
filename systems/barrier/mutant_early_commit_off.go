//go:build !ftbench_mutant_early_commit

package barrier

// mutantEarlyCommit is false in every real build. The ftbench_mutant_early_commit
// build tag (mutant_early_commit_on.go) turns it on to make a deliberately broken barrier
// whose 2PC sink commits at pre-commit, before its checkpoint completes, so
// tests can show that `bench torture` catches and shrinks the bug.
const mutantEarlyCommit = false
