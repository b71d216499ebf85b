//go:build !ftbench_mutant_unaligned_drop_channel_state

package barrier

// mutantUnalignedDropChannelState is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_unaligned_drop_channel_state build tag
// (mutant_unaligned_drop_channel_state_on.go) turns it on to make a deliberately broken build:
// unaligned (and aligned-timeout, once switched) snapshots drop the in-flight records they recorded as channel state, so a restore loses them (exactly-once broken).
// docs/torture.md lists the mutants and what catches each.
const mutantUnalignedDropChannelState = false
