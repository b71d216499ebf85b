package benchcli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"ftbench/engine"
	"ftbench/faults"
	"ftbench/systems"
	"ftbench/workloads"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list systems (with variants and claimed guarantees), workloads and fault kinds",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "costs", Usage: "also print the cost model's parameters and defaults"},
			&cli.BoolFlag{Name: "hardware", Usage: "also print the named hardware profiles (--hardware NAME) and the cost overrides each stands for"},
		},
		Action: func(c *cli.Context) error {
			w := c.App.Writer
			for _, name := range systems.Names() {
				s, _ := systems.Lookup(name)
				var claims []string
				for _, v := range s.Variants() {
					defaults := systems.Options{}
					for _, f := range s.Flags() {
						defaults[f.Name] = f.Default
					}
					claims = append(claims, v+"=("+s.Claim(v, defaults).String()+")")
				}
				fmt.Fprintf(w, "system   %-10s variants: %s  — %s\n", name, strings.Join(claims, ", "), s.Describe())
			}
			for _, name := range workloads.Names() {
				f, _ := workloads.Lookup(name)
				fmt.Fprintf(w, "workload %-10s %s\n", name, f.Describe)
			}
			for _, k := range faults.Kinds() {
				fmt.Fprintf(w, "fault    %s\n", k)
			}
			if c.Bool("costs") {
				cm := engine.DefaultCost()
				for _, p := range cm.Params() {
					doc := p.Doc
					if p.PerOp {
						doc += " [per operator]"
					}
					fmt.Fprintf(w, "cost     %-16s %-10s %s\n", p.Name, p.Value(), doc)
				}
				fmt.Fprintf(w, "cost     per operator: --cost OP.NAME=VALUE sets a [per operator] cost for one operator's instances only (--cost count.state-cpu=8us)\n")
			}
			if c.Bool("hardware") {
				for _, h := range engine.HardwareProfiles() {
					fmt.Fprintf(w, "hardware %-14s %s; %s (CPU x%g): %s\n", h.Name, h.Doc, h.Fit, h.CPUScale, strings.Join(h.Overrides(), " "))
				}
			}
			return nil
		},
	}
}
