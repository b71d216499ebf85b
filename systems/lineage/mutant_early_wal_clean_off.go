//go:build !ftbench_mutant_early_wal_clean

package lineage

// mutantEarlyWALClean is false in every real build, so the compiler removes
// the branch it guards. The ftbench_mutant_early_wal_clean build tag
// (mutant_early_wal_clean_on.go) turns it on to make a deliberately broken
// driver that cleans its write-ahead log too early: the commit records a new
// metadata checkpoint covers are deleted as soon as the driver issues that
// metadata write (writeMeta, right after checkpoint_done; for a stateless
// workload, after every k-th batch_committed), not once it is durable
// (metaWritten). A master crash in that window, one store latency (5 ms by
// default), leaves a new driver with the previous metadata and no record of
// the batches committed since: it cuts them again from the previous
// checkpoint's offsets and commits their output a second time (exactly-once
// broken: duplicates). The bug class of SPARK-6222 (WAL data cleaned before
// the checkpoint that covers it is complete). Torture must catch it by
// aiming master crashes at the checkpoint_done milestone.
// docs/torture.md lists the mutants and what catches each.
const mutantEarlyWALClean = false
