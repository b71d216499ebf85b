// Package benchcli is the bench command line: its commands, flags, output
// and exit codes. cmd/bench is only its entry point, so that the build of
// cmd/bench with its profile (cmd/bench/default.pgo) is not repeated for
// these tests (docs/performance.md, "`go test` from an empty build cache").
//
// Run takes the arguments and the output streams and returns the exit code
// (0 ok, 1 internal error, 2 bad usage or input, 3 a safety claim broken,
// 4 not recovered). The binary chooses the systems it links (a blank import
// of ftbench/systems/all); this package reaches them through the registry.
package benchcli

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"ftbench/harness"
)

// exitError carries an exit code and a one-line message out of an action.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &exitError{code: harness.ExitUsage, msg: fmt.Sprintf(format, args...)}
}

// Run runs the bench command line args (args[0] is the program name) and
// returns its exit code. A panic is reported as an internal error (exit 1)
// rather than reaching the user.
func Run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "bench: internal error: %v\n", r)
			code = harness.ExitInternal
		}
	}()
	app := newApp(stdout, stderr)
	unknown := false
	app.CommandNotFound = func(_ *cli.Context, name string) {
		fmt.Fprintf(stderr, "bench: unknown command %q (try `bench help`)\n", name)
		unknown = true
	}
	if err := repeatedFlag(app, args); err != nil {
		fmt.Fprintln(stderr, "bench: "+err.Error())
		return harness.ExitUsage
	}
	err := app.Run(args)
	if unknown {
		return harness.ExitUsage
	}
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "bench: "+firstLine(ee.msg))
		}
		return ee.code
	}
	// Anything else from the CLI library is a usage problem (unknown flag,
	// bad flag value, unknown command).
	fmt.Fprintln(stderr, "bench: "+firstLine(err.Error()))
	return harness.ExitUsage
}

// version is the module version and the VCS revision the binary was built
// from (go build stamps it; "devel" without one, as under go run), with a
// "+dirty" mark for uncommitted changes, and the Go version.
func version() string {
	v, rev, dirty := "devel", "", false
	info, ok := debug.ReadBuildInfo()
	if ok {
		if info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev != "" {
		v += " " + rev[:min(12, len(rev))]
		if dirty {
			v += "+dirty"
		}
	} else {
		v += " (revision unknown: built without VCS information)"
	}
	return v + ", " + runtime.Version()
}

// repeatedFlag refuses a list-valued flag (--system, --seeds) given twice
// to a command. The CLI library keeps the last value of a flag given twice,
// the usual convention and what scripts that append an override rely on;
// but for a flag that takes a comma-separated list a reader expects the
// union, so `compare --system barrier --system lineage` (which would
// compare lineage alone) is refused before any work.
func repeatedFlag(app *cli.App, args []string) error {
	if len(args) < 2 || app.Command(args[1]) == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, a := range args[2:] {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "system" && name != "seeds" {
			continue
		}
		if seen[name] {
			return fmt.Errorf("--%s is given twice: give one comma-separated list (--%s %s)", name, name, map[string]string{"system": "barrier,lineage", "seeds": "1-3,7"}[name])
		}
		seen[name] = true
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func newApp(stdout, stderr io.Writer) *cli.App {
	onUsage := func(_ *cli.Context, err error, _ bool) error { return usageErr("%v", err) }
	app := &cli.App{
		Name:           "bench",
		Usage:          "benchmark and fault-injection harness for stream-processing fault tolerance",
		Version:        version(),
		Writer:         stdout,
		ErrWriter:      stderr,
		OnUsageError:   onUsage,
		ExitErrHandler: func(*cli.Context, error) {},
		// Fault specs contain commas (crash@8s:op=count/0,restart=1s): one
		// --fault is one spec, so slice flags are never split on commas.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			runCommand(),
			listCommand(),
			tortureCommand(),
			compareCommand(),
			capacityCommand(),
			chapterCommand(),
			sweepCommand(),
			mergeCommand(),
			reportCommand(),
			viewCommand(),
			regressCommand(),
		},
	}
	for _, c := range app.Commands {
		c.OnUsageError = onUsage
	}
	return app
}
