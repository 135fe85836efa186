package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
)

// Output formats.
const (
	FormatTable    = "table"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// Clouds.
const (
	CloudAWS = "aws"
	CloudSim = "sim"
)

// GlobalOptions are the flags every command shares.
type GlobalOptions struct {
	Dir      string
	Backend  string
	Cloud    string
	Output   string
	Parallel int
	NoColor  bool
	Yes      bool
}

// Factory hands commands their dependencies.
type Factory struct {
	IO     *iostreams.IOStreams
	Global *GlobalOptions

	once  sync.Once
	fleet *fleet.Fleet
	err   error
}

// NewFactory returns a factory over io.
func NewFactory(io *iostreams.IOStreams) *Factory {
	return &Factory{IO: io, Global: &GlobalOptions{}}
}

// Fleet loads the fleet repository once.
func (f *Factory) Fleet() (*fleet.Fleet, error) {
	f.once.Do(func() {
		dir, err := filepath.Abs(f.Global.Dir)
		if err != nil {
			f.err = err
			return
		}
		f.fleet, f.err = fleet.Load(dir)
		if f.err != nil {
			f.err = fmt.Errorf("invalid fleet configuration in %s:\n%w", f.Global.Dir, f.err)
		}
	})
	return f.fleet, f.err
}

// Styles returns styles for stdout.
func (f *Factory) Styles() *render.Styles { return render.NewStyles(f.IO.Out, f.IO.ColorOut()) }

// ErrStyles returns styles for stderr.
func (f *Factory) ErrStyles() *render.Styles { return render.NewStyles(f.IO.ErrOut, f.IO.ColorErr()) }

// CheckOutput rejects an -o value the command does not support.
func (f *Factory) CheckOutput(allowed ...string) error {
	if !slices.Contains(allowed, f.Global.Output) {
		return exitcode.With(exitcode.Error, fmt.Errorf("--output %q is not supported here (allowed: %s)", f.Global.Output, strings.Join(allowed, ", ")))
	}
	return nil
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	g := f.Global
	cmd := &cobra.Command{
		Use:   "cellctl",
		Short: "Run a cell-based architecture on AWS",
		Long: `cellctl provisions and operates a fleet of cells: complete, isolated copies of
the application stack, one Pulumi stack per cell, behind a global router that
maps each tenant to its cell.

The fleet lives in a repository: Pulumi.yaml (the fleet baseline),
stacks/Pulumi.cell-<id>.yaml (one per cell), stacks/Pulumi.router.yaml,
stacks/waves.yaml (rollout order) and stacks/routing.json (tenant routing).

Exit codes: 0 ok, 1 error, 2 findings (drift, quota, isolation),
3 rollout halted, 4 a stack is locked by another operation.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if g.NoColor {
				f.IO.DisableColor()
			}
			if g.Cloud != CloudAWS && g.Cloud != CloudSim {
				return exitcode.With(exitcode.Error, fmt.Errorf("--cloud %q is not supported (allowed: aws, sim)", g.Cloud))
			}
			if g.Parallel < 1 {
				return exitcode.With(exitcode.Error, fmt.Errorf("--parallel must be at least 1, got %d", g.Parallel))
			}
			return nil
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&g.Dir, "dir", ".", "fleet repository (the directory holding Pulumi.yaml)")
	pf.StringVar(&g.Backend, "backend", "", "Pulumi backend URL (default $PULUMI_BACKEND_URL, else file://<dir>/.cellctl/state)")
	pf.StringVar(&g.Cloud, "cloud", CloudAWS, "cloud to act on: aws, or sim (cellctl's simulated AWS, for rehearsals and tests)")
	pf.StringVarP(&g.Output, "output", "o", FormatTable, "output format: table, json (markdown where supported)")
	pf.IntVar(&g.Parallel, "parallel", defaultParallel(), "stacks to work on at once")
	pf.BoolVar(&g.NoColor, "no-color", false, "disable colour (also NO_COLOR=1)")
	pf.BoolVarP(&g.Yes, "yes", "y", false, "answer yes to confirmations (for CI)")

	cmd.AddCommand(
		NewCmdPlan(f, nil),
		NewCmdUp(f, nil),
		NewCmdPreview(f, nil),
		NewCmdStatus(f, nil),
		NewCmdDestroy(f, nil),
		NewCmdUnlock(f, nil),
		NewCmdRoute(f, nil),
		NewCmdLanes(f, nil),
		NewCmdSim(f),
	)
	return cmd
}

func defaultParallel() int {
	if n := runtime.NumCPU(); n < 4 {
		return 4
	}
	return runtime.NumCPU()
}
