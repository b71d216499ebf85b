//go:build ftbench_mutant_no_txid_check

package trident

// mutantNoTxidCheck: see mutant_no_txid_check_off.go. Only builds with
// -tags ftbench_mutant_no_txid_check have it on.
const mutantNoTxidCheck = true
