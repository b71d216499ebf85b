package reports

import (
	"os"
	"path/filepath"
	"testing"

	"ftbench/capacity"
)

// The plot's data is every probe of every series, each series in rate
// order whatever order the search probed in (a line through the probes
// must not zigzag back).
func TestWriteLatencyVsRate(t *testing.T) {
	dir := t.TempDir()
	series := []LatencySeries{
		{Name: "a", Probes: []capacity.Probe{{RateRPS: 400, P99MS: 900}, {RateRPS: 100, P99MS: 0, Sustained: true}, {RateRPS: 200, P99MS: 20, Sustained: true}}},
		{Name: "b", Probes: []capacity.Probe{{RateRPS: 300, P99MS: 5, Sustained: true}}},
	}
	if err := WriteLatencyVsRate(dir, "t", series); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, LatencyVsRateFile+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := "series,rate_rps,p99_ms,sustained\na,100,0,true\na,200,20,true\na,400,900,false\nb,300,5,true\n"
	if string(b) != want {
		t.Errorf("csv\n%s\nwant\n%s", b, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, LatencyVsRateFile+".png")); err != nil || fi.Size() == 0 {
		t.Errorf("no PNG: %v", err)
	}
}
