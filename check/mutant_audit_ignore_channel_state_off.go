//go:build !ftbench_mutant_audit_ignore_channel_state

package check

// mutantAuditIgnoreChannelState is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_audit_ignore_channel_state build tag
// (mutant_audit_ignore_channel_state_on.go) turns it on to make a deliberately broken build:
// the snapshot audit ignores channel state: conservation, late and missing in-flight messages are not judged, only orphans and double counting.
// docs/torture.md lists the mutants and what catches each.
const mutantAuditIgnoreChannelState = false
