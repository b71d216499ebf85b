//go:build ftbench_mutant_epoch_first

package barrier

// mutantEpochFirst: see mutant_epoch_first_off.go. Only builds with
// -tags ftbench_mutant_epoch_first compile this.
const mutantEpochFirst = true
