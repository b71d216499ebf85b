//go:build ftbench_mutant_double_commit

package barrier

// mutantDoubleCommit: see mutant_double_commit_off.go. Only builds with
// -tags ftbench_mutant_double_commit compile this.
const mutantDoubleCommit = true
