//go:build ftbench_mutant_unaligned_drop_channel_state

package barrier

// mutantUnalignedDropChannelState: see mutant_unaligned_drop_channel_state_off.go. Only builds with
// -tags ftbench_mutant_unaligned_drop_channel_state compile this.
const mutantUnalignedDropChannelState = true
