//go:build !ftbench_mutant_epoch_first

package barrier

// mutantEpochFirst is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_epoch_first build tag
// (mutant_epoch_first_on.go) turns it on to make a deliberately broken build:
// a restored 2PC sink bumps its producer epoch (initTransactions) before it
// re-commits the restored checkpoint's pre-committed transactions, so the
// broker fences those re-commits and their data is lost (exactly-once broken).
// docs/torture.md lists the mutants and what catches each.
const mutantEpochFirst = false
