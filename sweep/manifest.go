package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"ftbench/engine"
	"ftbench/harness"
)

// ManifestFormat identifies sweep.json as this bench writes it: the base
// configuration in run.json's keys and units (baseJSON).
const ManifestFormat = "ftbench-sweep/2"

// ManifestFormatV1 is sweep.json as bench wrote it before: the base
// configuration as harness.Config's Go field names, durations in
// nanoseconds. It is still read (resume, merge, report), and a folder
// written in it is rewritten in ManifestFormat when a sweep resumes there.
const ManifestFormatV1 = "ftbench-sweep/1"

// baseJSON is the base configuration as sweep.json writes it: what it sets,
// under the keys and in the units of run.json, the config block's
// (duration_s, rate_rps, ..., cost_model) and the top-level keys of what
// ran (workload, faults, runtime, work). Unlike a run's, the base is not
// resolved: 0 (and null) mean the default each run resolves for itself,
// system_options and workload_options hold only what was given, and
// cost_model only the overrides, in the order given, values as typed.
// Decoding gives back exactly the harness.Config encoded, nil and empty
// alike, so that the grid id and the run keys of a manifest read back are
// those of the sweep that wrote it (TestManifestRoundTrip).
type baseJSON struct {
	System       string            `json:"system,omitempty"` // cleared in a sweep's base
	Variant      string            `json:"variant,omitempty"`
	Seed         uint64            `json:"seed,omitempty"`
	Workload     string            `json:"workload"`
	Faults       []string          `json:"faults"`
	Runtime      string            `json:"runtime,omitempty"`
	Work         string            `json:"work,omitempty"`
	Observe      bool              `json:"observe,omitempty"`
	DurationS    seconds           `json:"duration_s"`
	RateRPS      float64           `json:"rate_rps"`
	Parallelism  int               `json:"parallelism"`
	Workers      int               `json:"workers"`
	Cores        int               `json:"cores"`
	Slots        int               `json:"slots,omitempty"`
	DrainS       seconds           `json:"drain_s"`
	BucketS      seconds           `json:"bucket_s"`
	SystemOpts   map[string]string `json:"system_options"`
	WorkloadOpts map[string]string `json:"workload_options"`
	Cost         costOverrides     `json:"cost_model"`
}

func baseOf(c harness.Config) baseJSON {
	return baseJSON{
		System: c.System, Variant: c.Variant, Seed: c.Seed, Workload: c.Workload, Faults: c.Faults,
		Runtime: c.Runtime, Work: c.Work, Observe: c.Observe,
		DurationS: seconds(c.Duration), RateRPS: c.Rate, Parallelism: c.Parallelism, Workers: c.Workers,
		Cores: c.Cores, Slots: c.Slots, DrainS: seconds(c.Drain), BucketS: seconds(c.Bucket),
		SystemOpts: c.SystemOpts, WorkloadOpts: c.WorkloadOpts, Cost: costOverrides(c.CostOverride),
	}
}

func (b baseJSON) config() harness.Config {
	return harness.Config{
		System: b.System, Variant: b.Variant, Seed: b.Seed, Workload: b.Workload, Faults: b.Faults,
		Runtime: b.Runtime, Work: b.Work, Observe: b.Observe,
		Duration: engine.Time(b.DurationS), Rate: b.RateRPS, Parallelism: b.Parallelism, Workers: b.Workers,
		Cores: b.Cores, Slots: b.Slots, Drain: engine.Time(b.DrainS), Bucket: engine.Time(b.BucketS),
		SystemOpts: b.SystemOpts, WorkloadOpts: b.WorkloadOpts, CostOverride: []string(b.Cost),
	}
}

// seconds is a duration written as run.json writes one, in seconds, but
// as the exact decimal of its nanoseconds (1.5, 0.000000001), so that it
// reads back to the same nanosecond.
type seconds engine.Time

func (s seconds) MarshalJSON() ([]byte, error) {
	ns := int64(s)
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns // no duration reaches -2^63
	}
	out := sign + strconv.FormatInt(ns/int64(engine.Second), 10)
	if frac := ns % int64(engine.Second); frac != 0 {
		out += "." + strings.TrimRight(fmt.Sprintf("%09d", frac), "0")
	}
	return []byte(out), nil
}

func (s *seconds) UnmarshalJSON(b []byte) error {
	r, ok := new(big.Rat).SetString(string(b))
	if !ok {
		return fmt.Errorf("%s is not a number of seconds", b)
	}
	r.Mul(r, big.NewRat(int64(engine.Second), 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return fmt.Errorf("%s seconds is not a whole number of nanoseconds", b)
	}
	*s = seconds(r.Num().Int64())
	return nil
}

// costOverrides are harness.Config.CostOverride ("name=value", the
// operator's name first for a per-operator cost: count.state-cpu=8us)
// written as run.json's cost_model writes them, an object of name: value,
// keeping their order (a later override of a name wins, in the harness and
// for a JSON reader alike) and null when there are none.
type costOverrides []string

func (c costOverrides) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, o := range c {
		if i > 0 {
			b.WriteByte(',')
		}
		name, value, ok := strings.Cut(o, "=")
		k, _ := encode(name) // a string always encodes
		b.Write(k)
		b.WriteByte(':')
		if ok {
			v, _ := encode(value)
			b.Write(v)
		} else {
			b.WriteString("null") // not name=value: kept as given
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (c *costOverrides) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*c = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("cost_model is not an object of name: value")
	}
	out := costOverrides{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name := t.(string) // object keys are strings
		var value *string
		if err := dec.Decode(&value); err != nil {
			return fmt.Errorf("cost_model %s: %v", name, err)
		}
		if value == nil {
			out = append(out, name)
		} else {
			out = append(out, name+"="+*value)
		}
	}
	*c = out
	return nil
}

// manifestJSON is sweep.json with its base still encoded: the manifest's
// own fields, but for Base, which the outer field shadows.
type manifestJSON struct {
	*plainManifest
	Base json.RawMessage `json:"base"`
}

// plainManifest is a Manifest without its JSON methods.
type plainManifest Manifest

// MarshalJSON writes the manifest in ManifestFormat, whatever format it
// was read in.
func (m Manifest) MarshalJSON() ([]byte, error) {
	base, err := encode(baseOf(m.Base))
	if err != nil {
		return nil, err
	}
	m.Format = ManifestFormat
	return encode(manifestJSON{plainManifest: (*plainManifest)(&m), Base: base})
}

// UnmarshalJSON reads ManifestFormat and ManifestFormatV1; Format keeps
// the format read.
func (m *Manifest) UnmarshalJSON(b []byte) error {
	*m = Manifest{}
	mj := manifestJSON{plainManifest: (*plainManifest)(m)}
	if err := json.Unmarshal(b, &mj); err != nil {
		return err
	}
	switch {
	case len(mj.Base) == 0 && (m.Format == ManifestFormat || m.Format == ManifestFormatV1):
		// no base: the zero configuration, as before
	case m.Format == ManifestFormat:
		var base baseJSON
		if err := json.Unmarshal(mj.Base, &base); err != nil {
			return fmt.Errorf("base: %v", err)
		}
		m.Base = base.config()
	case m.Format == ManifestFormatV1:
		if err := json.Unmarshal(mj.Base, &m.Base); err != nil {
			return fmt.Errorf("base: %v", err)
		}
	default:
		return fmt.Errorf("its format is %q", m.Format)
	}
	return nil
}

// encode is json.Marshal without HTML escaping (commands and fault specs
// keep their '&' and '>' as harness.MarshalIndent keeps them).
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
