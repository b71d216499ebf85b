package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"ftbench/harness"
	"ftbench/sweep"
)

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "join the folders of a sharded sweep (bench sweep --shard I/N) into one folder and curve",
		UsageText: "bench merge --out DIR SHARD_DIR...",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "merged results folder (required)"},
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
