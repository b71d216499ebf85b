//go:build ftbench_mutant_early_commit

package barrier

// mutantEarlyCommit: see mutant_early_commit_off.go. Only `go test -tags
// ftbench_mutant_early_commit` builds this.
const mutantEarlyCommit = true
