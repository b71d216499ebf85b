//go:build ftbench_mutant_early_wal_clean

package lineage

// mutantEarlyWALClean: see mutant_early_wal_clean_off.go. Only builds with
// -tags ftbench_mutant_early_wal_clean compile this.
const mutantEarlyWALClean = true
