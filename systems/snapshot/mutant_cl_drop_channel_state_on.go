//go:build ftbench_mutant_cl_drop_channel_state

package snapshot

import (
	"sync"

	"ftbench/check"
)

// mutantCLDropChannelState: see mutant_cl_drop_channel_state_off.go. Only
// `go test -tags ftbench_mutant_cl_drop_channel_state` builds this.
const mutantCLDropChannelState = true

// MutantAudits are the snapshots the audit rejected in this process's runs
// of the mutant: bad histories for the checker mutants' corpus
// (TestWriteAuditCorpus writes them to check/testdata/corpus).
var (
	MutantAudits   []*check.GlobalSnapshot
	mutantAuditsMu sync.Mutex
)

func mutantRecordAudit(g *check.GlobalSnapshot, a check.Audit) {
	if a.Consistent {
		return
	}
	mutantAuditsMu.Lock()
	MutantAudits = append(MutantAudits, g)
	mutantAuditsMu.Unlock()
}
