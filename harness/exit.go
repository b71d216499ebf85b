package harness

import (
	"fmt"
	"strings"

	"ftbench/check"
)

// The exit decision: the run's problems and the exit code they give. The
// first kind found decides the code: a safety problem (a broken claim, a
// reader's or the system's own check, effects the oracle never produces)
// exits 3; else an undrained run 4; else an observer that could not decide
// the claim 1; else a fault never recovered from 4.

// Exit codes (docs/metrics.md, "Exit codes").
const (
	ExitOK       = 0
	ExitInternal = 1
	ExitUsage    = 2
	ExitSafety   = 3
	ExitLiveness = 4
)

// finals is the final-value half of the delivery check, as run.json keeps it.
func (res *Result) finals() check.Finals {
	return check.Finals{Wrong: res.WrongKeys, Stale: res.StaleFinalKeys, Ahead: res.AheadFinalKeys}
}

// exitCode adds the run's problems to res and returns its exit code.
func (r *runner) exitCode(res *Result) int {
	if broken := r.claim.Broken(res.Duplicates, res.Lost, res.finals()); len(broken) > 0 {
		// Name what broke: "claimed exactly-once but observed
		// exactly-once" says nothing when only final values were wrong.
		res.Problems = append(res.Problems, fmt.Sprintf("claimed %s, observed %s: %s (duplicates=%d lost=%d wrong_keys=%d)",
			res.ClaimedGuarantee, res.Verdict, strings.Join(broken, ", "), res.Duplicates, res.Lost, res.WrongKeys))
	}
	if p := readerProblem(res); p != "" {
		res.Problems = append(res.Problems, p)
	}
	if res.Unexpected > 0 {
		res.Problems = append(res.Problems, fmt.Sprintf("%d effects committed that the oracle never produces", res.Unexpected))
	}
	if v, ok := res.SystemMetrics["safety_violations"]; ok {
		if n, ok := v.(int64); ok && n > 0 {
			res.Problems = append(res.Problems, fmt.Sprintf("%d safety violations reported by the system's checks", n))
		}
	}
	if p := observerProblem(res); p != "" {
		res.Problems = append(res.Problems, p)
	}
	if len(res.Problems) > 0 {
		return ExitSafety
	}
	// Effects still pending in a busy run are not lost (drain.go).
	if p := undrainedProblem(res); p != "" {
		res.Problems = append(res.Problems, p)
		return ExitLiveness
	}
	if p := observerUnknown(res); p != "" {
		// Not a pass: the claim is unknown, and the run says so.
		res.Problems = append(res.Problems, p)
		return ExitInternal
	}
	for _, rec := range res.Recoveries {
		if rec.RecoveryTimeS == nil {
			res.Problems = append(res.Problems, "not recovered within the run from "+rec.Fault)
			return ExitLiveness
		}
	}
	return ExitOK
}
