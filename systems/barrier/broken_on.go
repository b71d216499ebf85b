//go:build ftbench_broken_sink

package barrier

// brokenEarlyCommit: see broken_off.go. Only `go test -tags
// ftbench_broken_sink` builds this.
const brokenEarlyCommit = true
