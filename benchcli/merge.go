package benchcli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"ftbench/harness"
	"ftbench/sweep"
	"ftbench/torture"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:  "merge",
		Usage: "join the folders of a sharded sweep or torture campaign (--shard I/N or auto) into one folder, curve or campaign summary",
		UsageText: "bench merge --out DIR SHARD_DIR...\n\n" +
			"Sweep shards give one curve (exit 0; missing points are listed). Torture shards give one campaign,\n" +
			"torture.json and summary.json, and exit like bench torture (3 a broken claim, 1 an error or missing runs, 4 not recovered).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "merged results folder (required)"},
			&cli.BoolFlag{Name: "allow-partial", Usage: "merge even if shards are missing (their points or runs are listed as missing)"},
		},
		Action: func(c *cli.Context) error {
			shards, err := trailingFlags(c)
			if err != nil {
				return err
			}
			out := c.String("out")
			if out == "" {
				return usageErr("bench merge needs --out DIR")
			}
			if len(shards) == 0 {
				return usageErr("bench merge needs the shard folders to join")
			}
			if err := checkOneCampaign(shards); err != nil {
				return err
			}
			if err := sweep.CheckOutsideInputs(out, shards); err != nil {
				return usageErr("%v", err)
			}
			if err := checkShards(shards, c.Bool("allow-partial")); err != nil {
				return err
			}
			if err := checkOut("out", out); err != nil {
				return err
			}
			if torture.IsCampaign(shards[0]) {
				rep, err := torture.Merge(out, shards)
				return reportTorture(c, rep, out, err)
			}
			ew := c.App.ErrWriter
			curve, err := sweep.Merge(out, shards, func(s string) { fmt.Fprintln(ew, "bench: note: "+s) })
			if err != nil {
				if sweep.IsInputError(err) {
					return usageErr("%v", err)
				}
				return &exitError{code: harness.ExitInternal, msg: err.Error()}
			}
			w := c.App.Writer
			printCurve(w, curve)
			fmt.Fprintf(w, "merged %d shard folder(s) into %s: %d points, %d missing\n", len(shards), out, len(curve.Points)-len(curve.Missing), len(curve.Missing))
			fmt.Fprintf(w, "curve:   %s/%s and %s/%s\n", out, sweep.CurveJSON, out, sweep.CurveCSV)
			return nil
		},
	}
}

// shardOf is what a shard folder is a shard of: kind "sweep" with its grid
// id, or "torture campaign" with its campaign id; kind is "" for a folder
// that is neither (the merge names what it is not).
type shardOf struct {
	dir, kind, id string
	m             *sweep.Manifest // sweeps only
}

// name is the id as the folder's own file calls it.
func (s shardOf) name() string {
	if s.kind == "sweep" {
		return "grid " + s.id
	}
	return "campaign " + s.id
}

func readShardOf(dir string) (shardOf, error) {
	if torture.IsCampaign(dir) {
		rep, err := torture.ReadReport(dir)
		if err != nil {
			return shardOf{}, usageErr("%v", err)
		}
		return shardOf{dir: dir, kind: "torture campaign", id: rep.CampaignID}, nil
	}
	m, ok, err := sweep.ReadManifest(dir)
	if err != nil {
		return shardOf{}, usageErr("%v", err)
	}
	if !ok {
		return shardOf{dir: dir}, nil
	}
	return shardOf{dir: dir, kind: "sweep", id: m.GridID(), m: m}, nil
}

// checkOneCampaign refuses shard folders of different sweeps or campaigns,
// naming the two folders and what each is of. It runs before checkShards,
// which compares shard numbers only: shard 1/2 of one grid and shard 1/2
// of another are not "both shard 1/2" of anything.
func checkOneCampaign(dirs []string) error {
	var first shardOf
	for _, dir := range dirs {
		s, err := readShardOf(dir)
		if err != nil || s.kind == "" {
			return err
		}
		switch {
		case first.kind == "":
			first = s
		case s.kind != first.kind:
			return usageErr("different campaigns/sweeps: %s is a %s (%s) but %s is a %s (%s); a merge joins the shards of one sweep or of one campaign",
				s.dir, s.kind, s.name(), first.dir, first.kind, first.name())
		case s.id != first.id && s.kind == "sweep":
			return usageErr("different sweeps: %s is of grid %s but %s of grid %s (their %s differ in %s); a merge joins the shards of one sweep",
				s.dir, s.id, first.dir, first.id, sweep.ManifestFile, gridDifference(s.m, first.m))
		case s.id != first.id:
			return usageErr("different campaigns: %s is of campaign %s but %s of campaign %s; a merge joins the shards of one campaign",
				s.dir, s.id, first.dir, first.id)
		}
	}
	return nil
}

// gridDifference names the parts of two manifests that make their grid ids
// differ (sweep.Manifest.GridID digests these four).
func gridDifference(a, b *sweep.Manifest) string {
	var parts []string
	for _, p := range []struct {
		name string
		a, b any
	}{
		{"base configuration", a.Base, b.Base}, {"systems", a.Targets, b.Targets}, {"params", a.Params, b.Params}, {"seeds", a.Seeds, b.Seeds},
	} {
		x, _ := json.Marshal(p.a)
		y, _ := json.Marshal(p.b)
		if string(x) != string(y) {
			parts = append(parts, p.name)
		}
	}
	if len(parts) == 0 {
		return "format" // the same grid written by another bench
	}
	return strings.Join(parts, " and ")
}
