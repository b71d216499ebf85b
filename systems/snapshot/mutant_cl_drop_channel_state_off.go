//go:build !ftbench_mutant_cl_drop_channel_state

package snapshot

import "ftbench/check"

// mutantCLDropChannelState is false in every real build, so the compiler
// removes the branches it guards. The ftbench_mutant_cl_drop_channel_state
// build tag (mutant_cl_drop_channel_state_on.go) turns it on to make a
// deliberately broken Chandy-Lamport: every fifth snapshot (ids 5, 10, ...)
// drops the channel state it recorded, on bank-p2p and on dataflows, so
// tests can show that the snapshot audit catches it, also when an
// unrelated reorder window gives the run FIFO violations to hide behind.
//
// Mutants follow one scheme: build tag ftbench_mutant_<name>, files
// mutant_<name>_on.go / _off.go, a const mutant<Name>; docs/torture.md
// lists them with the test that catches each.
const mutantCLDropChannelState = false

// mutantRecordAudit does nothing outside the mutant build; there it keeps
// the snapshots the audit rejects (MutantAudits), the checker mutants'
// corpus (check/testdata/corpus).
func mutantRecordAudit(*check.GlobalSnapshot, check.Audit) {}
