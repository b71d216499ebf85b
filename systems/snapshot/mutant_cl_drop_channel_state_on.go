//go:build ftbench_mutant_cl_drop_channel_state

package snapshot

// mutantCLDropChannelState: see mutant_cl_drop_channel_state_off.go. Only
// `go test -tags ftbench_mutant_cl_drop_channel_state` builds this.
const mutantCLDropChannelState = true
