//go:build ftbench_mutant_audit_ignore_channel_state

package check

// mutantAuditIgnoreChannelState: see mutant_audit_ignore_channel_state_off.go. Only builds with
// -tags ftbench_mutant_audit_ignore_channel_state compile this.
const mutantAuditIgnoreChannelState = true
