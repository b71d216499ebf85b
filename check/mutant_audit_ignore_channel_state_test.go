//go:build ftbench_mutant_audit_ignore_channel_state

package check_test

import "testing"

// TestMutantAuditIgnoreChannelStateCaught runs only in the mutant build (go
// test -tags ftbench_mutant_audit_ignore_channel_state ./check -run Mutant):
// the corpus must hold an inconsistent snapshot the mutant audit accepts.
func TestMutantAuditIgnoreChannelStateCaught(t *testing.T) {
	if a, n := acceptedByAudit(t); a == 0 {
		t.Fatalf("the mutant audit rejects all %d inconsistent snapshots: the corpus does not catch it", n)
	}
}
