package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
)

// UpOptions are the inputs of `cellctl up`.
type UpOptions struct {
	*Factory
	Cells   []string
	Router  bool
	Refresh bool
}

// NewCmdUp builds `cellctl up`.
func NewCmdUp(f *Factory, runF func(*UpOptions) error) *cobra.Command {
	opts := &UpOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "up [cell...]",
		Short: "Create or update cells, then the router",
		Long: `Deploy the fleet through the Pulumi engine: every cell (in parallel, up to
--parallel at once), then the router, which is updated only when all its
cells succeeded. Name cells to deploy only those; --router deploys the
router alone.

Each stack is rendered offline first, so a program error stops the run
before anything changes. A failing cell does not stop the others; all
failures are reported together. Exit 4 when another operation holds a
stack's lock.`,
		Example: `  cellctl up --cloud sim
  cellctl up cell-b cell-c
  cellctl up --router
  cellctl up -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cells = args
			if err := f.CheckOutput(FormatTable, FormatJSON); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return upRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Router, "router", false, "deploy the router stack (alone, unless cells are named too)")
	cmd.Flags().BoolVar(&opts.Refresh, "refresh", false, "refresh each stack from the cloud before updating (reconciles drift)")
	return cmd
}

// selectStacks resolves the stacks a command acts on: the named cells (and
// the router when asked), or every cell then the router.
func selectStacks(fl *fleet.Fleet, cells []string, router bool) ([]string, error) {
	for _, c := range cells {
		if c == fleet.RouterStack {
			router = true
			continue
		}
		if fl.Cell(c) == nil {
			return nil, exitcode.With(exitcode.Error, fmt.Errorf("unknown cell %q (cells of this fleet: %v)", c, fl.CellIDs()))
		}
	}
	var names []string
	for _, c := range cells {
		if c != fleet.RouterStack && !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	if len(cells) == 0 && !router {
		names = fl.CellIDs()
		router = fl.Router != nil
	}
	if router {
		if fl.Router == nil {
			return nil, exitcode.With(exitcode.Error, fmt.Errorf("the fleet has no router stack (%s/Pulumi.router.yaml)", fl.StackDir))
		}
		names = append(names, fleet.RouterStack)
	}
	return names, nil
}

func upRun(ctx context.Context, opts *UpOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	names, err := selectStacks(fl, opts.Cells, opts.Router)
	if err != nil {
		return err
	}
	res, err := runOperation(ctx, opts.Factory, fl, engine.OpUp, names, engine.RunOptions{Refresh: opts.Refresh})
	if res != nil {
		if perr := printResult(opts.Factory, res); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}
