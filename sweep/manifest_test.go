package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"ftbench/engine"
	"ftbench/harness"
	_ "ftbench/systems/barrier" // full() runs barrier
)

// full sets every field of harness.Config that a configuration's JSON
// carries (TestFullSetsEveryField keeps it so as the type grows).
func full() harness.Config {
	return harness.Config{
		System: "barrier", Variant: "aligned", Workload: "wordcount", Seed: 3,
		WorkloadOpts: map[string]string{"vocabulary": "100"},
		SystemOpts:   map[string]string{"checkpoint-interval": "100ms"},
		Faults:       []string{"crash@100ms:worker=1"},
		Duration:     300 * engine.Millisecond, Rate: 2000, Parallelism: 2, Workers: 2, Cores: 2, Slots: 6,
		CostOverride: []string{"restart-delay=2s", "count.state-cpu=8µs"},
		Drain:        3 * engine.Second, Bucket: 50 * engine.Millisecond,
		Observe: true, Runtime: harness.RuntimeSim, Work: "model",
	}
}

// jsonFields are the fields of a struct type that its JSON carries, by
// Go name, with their JSON names.
func jsonFields(t reflect.Type) map[string]string {
	out := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out[f.Name] = name
	}
	return out
}

// A field harness.Config gains is a field the manifest must carry, or a
// manifest read back is another grid: full() must set it, and then the
// round trip below fails until baseJSON carries it.
func TestFullSetsEveryField(t *testing.T) {
	v := reflect.ValueOf(full())
	for name := range jsonFields(v.Type()) {
		if v.FieldByName(name).IsZero() {
			t.Errorf("full() leaves harness.Config.%s zero: set it, so the manifest round trip covers it", name)
		}
	}
}

// A manifest written and read back is the same grid: the same base
// configuration, nil and empty alike, so the same grid id and run keys,
// whatever the durations, the order of the cost overrides or the
// characters of a fault spec.
func TestManifestRoundTrip(t *testing.T) {
	odd := tiny()
	odd.Duration, odd.Drain, odd.Bucket = 3*3600*engine.Second+1, 1, 1000*3600*engine.Second+123456789
	odd.Rate = 1234.5678901234567
	odd.CostOverride = []string{"restart-delay=2s", "count.state-cpu=8us", "restart-delay=1s", "odd"}
	odd.Faults = []string{"throttle@1s-2s:edge=split->count,rate=2000/s", `slow@1s-2s:op=count/0,factor=8 & "more"`}
	empty := tiny()
	empty.Faults, empty.CostOverride, empty.SystemOpts, empty.WorkloadOpts = []string{}, []string{}, map[string]string{}, map[string]string{}
	nils := tiny()
	nils.Faults, nils.CostOverride, nils.SystemOpts, nils.WorkloadOpts = nil, nil, nil, nil
	for _, tc := range []struct {
		name string
		base harness.Config
	}{
		{"bench sweep's base", harness.DefaultConfig()},
		{"every field set", full()},
		{"odd durations, rate, overrides and faults", odd},
		{"empty lists and maps", empty},
		{"nil lists and maps", nils},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := restartManifest()
			m.Base = tc.base
			m.Shard = &Shard{I: 2, N: 3}
			dir := t.TempDir()
			if err := WriteFileAtomic(filepath.Join(dir, ManifestFile), marshal(m)); err != nil {
				t.Fatal(err)
			}
			back, ok, err := ReadManifest(dir)
			if err != nil || !ok {
				t.Fatalf("reading it back: %v", err)
			}
			if back.Format != ManifestFormat {
				t.Errorf("written as %q, want %q", back.Format, ManifestFormat)
			}
			if !reflect.DeepEqual(back.Base, m.Base) {
				t.Errorf("base read back:\n%#v\nwritten:\n%#v", back.Base, m.Base)
			}
			if back.GridID() != m.GridID() || !reflect.DeepEqual(back.Shard, m.Shard) || back.Command != m.Command {
				t.Errorf("grid %s, shard %v read back; written grid %s, shard %v", back.GridID(), back.Shard, m.GridID(), m.Shard)
			}
		})
	}
}

// sweep.json's base is written in run.json's keys and units: every key is
// one of run.json's (its config block's, or a top-level one for what ran:
// workload, faults, runtime, work), observe aside, and a real run of the
// same configuration gives each the same value (the base's options and
// cost overrides among the run's resolved ones).
func TestManifestBaseIsRunJSON(t *testing.T) {
	runKeys := map[string]bool{}
	for _, n := range jsonFields(reflect.TypeOf(harness.RunConfig{})) {
		runKeys[n] = true
	}
	for _, n := range jsonFields(reflect.TypeOf(harness.Result{})) {
		runKeys[n] = true
	}
	for _, n := range jsonFields(reflect.TypeOf(baseJSON{})) {
		if !runKeys[n] && n != "observe" { // run.json has the observer's block instead
			t.Errorf("sweep.json's base key %q is no run.json key", n)
		}
	}

	cfg := full()
	cfg.Work = "" // the simulator's runs have no work mode
	out, err := harness.Execute(cfg)
	if err != nil {
		t.Fatal(err)
	}
	asMap := func(v any) map[string]any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	res := asMap(out.Result)
	run := res["config"].(map[string]any)
	for _, k := range []string{"system", "variant", "seed", "workload", "faults", "runtime", "work"} {
		if v, ok := res[k]; ok {
			run[k] = v
		}
	}
	base := asMap(baseOf(cfg))
	for k, want := range base {
		got, ok := run[k]
		switch {
		case k == "observe":
		case !ok:
			t.Errorf("base %s = %v; run.json has no %s", k, want, k)
		case k == "system_options" || k == "workload_options" || k == "cost_model":
			resolved := got.(map[string]any)
			for name, v := range want.(map[string]any) {
				if resolved[name] != v {
					t.Errorf("base %s.%s = %v, run.json's %v", k, name, v, resolved[name])
				}
			}
		case !reflect.DeepEqual(got, want):
			t.Errorf("base %s = %v, run.json's %v", k, want, got)
		}
	}
	if len(base) < 18 {
		t.Errorf("the base has %d keys: %v", len(base), base)
	}
}

// The format sweep.json had before (Go field names, nanoseconds) is still
// read: shards written in it merge into the unsharded sweep's curve files
// byte for byte, a sweep resumes in it (rewriting it in the current
// format), and a manifest of neither format is refused in one line naming
// both.
func TestManifestV1(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "sweep-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := harness.DefaultConfig()
	want.System, want.Seed = "", 0
	want.Duration = 2 * engine.Second
	want.CostOverride = []string{"restart-delay=2s"}
	want.SystemOpts, want.WorkloadOpts = map[string]string{}, map[string]string{}
	if m.Format != ManifestFormatV1 || !reflect.DeepEqual(m.Base, want) || len(m.Targets) != 1 || len(m.Params) != 1 {
		t.Fatalf("testdata/sweep-v1.json read as %s %#v %v %v", m.Format, m.Base, m.Targets, m.Params)
	}

	dir := t.TempDir()
	whole, err := Execute(filepath.Join(dir, "whole"), restartManifest(), Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var shards []string
	for i := 1; i <= 2; i++ {
		m := restartManifest()
		m.Shard = &Shard{I: i, N: 2}
		d := filepath.Join(dir, "shard", string(rune('0'+i)))
		if _, err := Execute(d, m, Options{Jobs: 1}); err != nil {
			t.Fatal(err)
		}
		writeV1(t, d, m)
		shards = append(shards, d)
	}
	merged := filepath.Join(dir, "merged")
	if _, err := Merge(merged, shards, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CurveJSON, CurveCSV} {
		a, errA := os.ReadFile(filepath.Join(dir, "whole", f))
		b, errB := os.ReadFile(filepath.Join(merged, f))
		if errA != nil || errB != nil || string(a) != string(b) {
			t.Errorf("%s merged from shards with old manifests differs from the unsharded one (%v, %v)", f, errA, errB)
		}
	}
	if mm, _, err := ReadManifest(merged); err != nil || mm.Format != ManifestFormat {
		t.Errorf("the merged manifest: %v, format %q, want %q", err, mm.Format, ManifestFormat)
	}
	m1 := restartManifest()
	m1.Shard = &Shard{I: 1, N: 2}
	o, err := Execute(shards[0], m1, Options{Jobs: 1, Resume: true})
	if err != nil || o.Executed != 0 {
		t.Fatalf("resuming a folder with an old manifest ran %d runs, %v; want none", o.Executed, err)
	}
	if again, _, err := ReadManifest(shards[0]); err != nil || again.Format != ManifestFormat || again.GridID() != whole.Curve.GridID {
		t.Errorf("resumed manifest: %v, format %q, grid %s (want %s)", err, again.Format, again.GridID(), whole.Curve.GridID)
	}

	for _, bad := range []string{
		`{"format": "ftbench-sweep/9", "base": {}}`,
		`{"format": "ftbench-sweep/2", "base": {"duration_s": "20s"}}`,
		`{"format": "ftbench-sweep/2", "base": {"cost_model": ["restart-delay=2s"]}}`,
		`[1, 2]`,
	} {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, ManifestFile), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		_, ok, err := ReadManifest(d)
		if !ok || err == nil || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), ManifestFormat) || !strings.Contains(err.Error(), ManifestFormatV1) {
			t.Errorf("%s: %v; want one line naming both formats", bad, err)
		}
	}
}

// writeV1 rewrites dir's sweep.json as bench wrote it before
// ManifestFormat: harness.Config as Go encodes it.
func writeV1(t *testing.T, dir string, m *Manifest) {
	t.Helper()
	base, err := json.Marshal(m.Base)
	if err != nil {
		t.Fatal(err)
	}
	old := *m
	old.Format = ManifestFormatV1
	v1 := manifestJSON{plainManifest: (*plainManifest)(&old), Base: base}
	if err := WriteFileAtomic(filepath.Join(dir, ManifestFile), marshal(v1)); err != nil {
		t.Fatal(err)
	}
}
