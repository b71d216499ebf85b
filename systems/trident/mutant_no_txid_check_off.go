//go:build !ftbench_mutant_no_txid_check

package trident

// mutantNoTxidCheck is false in every real build, so the compiler removes the
// branches it guards. The ftbench_mutant_no_txid_check build tag
// (mutant_no_txid_check_on.go) turns it on to make a deliberately broken build:
// transactional state applies a batch whose txid the entry already has, so a batch replayed after a partly applied commit counts twice.
// docs/torture.md lists the mutants and what catches each.
const mutantNoTxidCheck = false
