//go:build ftbench_mutant_timeout_commits

package stormack

// mutantTimeoutCommits: see mutant_timeout_commits_off.go. Only builds with
// the ftbench_mutant_timeout_commits tag compile this.
const mutantTimeoutCommits = true
