package benchcli

import (
	"bytes"
	"strings"
	"testing"

	"ftbench/check"
	"ftbench/harness"
)

// The summary never says "claim held" beside a failed or unfinished
// observation.
func TestSummaryNeverHoldsBesideAFailedObservation(t *testing.T) {
	for _, tc := range []struct {
		obs, want string
		held      bool
		exit      int
	}{
		{check.LinOK, "claim held", true, 0},
		{check.LinIllegal, "CLAIM BROKEN", false, harness.ExitSafety},
		{check.LinUnknown, "claim UNKNOWN", false, harness.ExitInternal},
	} {
		r := &harness.Result{ClaimedGuarantee: "at-least-once", ClaimedReader: "non-monotonic", Verdict: "at-least-once",
			ObservedReader: "non-monotonic", ClaimHeld: tc.held, ExitCode: tc.exit,
			Observer: &harness.Observation{Result: tc.obs, RequiredModel: "at-least-once, non-monotonic"}}
		var b bytes.Buffer
		printSummary(&b, r, nil, "dir")
		out := b.String()
		if !strings.Contains(out, "verdict:     at-least-once, non-monotonic (claimed at-least-once, non-monotonic): "+tc.want) {
			t.Errorf("observer %s:\n%s", tc.obs, out)
		}
		if tc.obs != check.LinOK && strings.Contains(out, "claim held") {
			t.Errorf("observer %s, yet the summary says claim held:\n%s", tc.obs, out)
		}
	}
}
