package main

import (
	"fmt"

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
