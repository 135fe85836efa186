package lifecycle

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/render"
)

// DrainOptions are the inputs of `cellctl drain`.
type DrainOptions struct {
	Deps
	View render.View[*lifecycle.Report]

	Cell       string
	MovePinned bool
	Now        bool
	Grace      time.Duration
	DryRun     bool
}

// NewCmdDrain builds `cellctl drain`.
func NewCmdDrain(f *cmdutil.Factory, runF func(*DrainOptions) error) *cobra.Command {
	opts := &DrainOptions{Deps: depsOf(f)}
	cmd := &cobra.Command{
		Use:               "drain CELL",
		ValidArgsFunction: f.CompleteOneCell,
		Short:             "Move every tenant off a cell and publish the router",
		Long: `Drain a cell in two published steps:

1. mark it draining in stacks/routing.json and move all of its buckets —
   and only its buckets — to the other active cells in proportion to their
   spare capacity (refused, with the numbers, when they do not fit), then
   publish the router (an up of the router stack alone);
2. wait --grace for requests already forwarded to the cell, mark it
   drained, and publish again (the cell's CloudFront origin goes away).

Before anything is written, the table is compared with the version the
deployed router serves: if someone else published a newer one, the drain is
refused. The previous table is kept in .cellctl/routing.previous.json
(cellctl route --diff .cellctl/routing.previous.json shows what moved).

Refused: the last active cell, a cell a tenant is migrating to or from, and
a cell with pinned tenants unless --move-pinned re-pins them with its
buckets. --now evacuates a cell that is degraded: no grace wait. The router
is the only stack either form touches, so a drain works while the cell's own
stack cannot be read or updated. A drain stopped half way (the cell is
draining and owns nothing) continues where it stopped when run again.`,
		Example: `  cellctl drain cell-d --dry-run
  cellctl drain cell-d
  cellctl drain cell-b --move-pinned --now`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Yes = f.Global.Yes
			opts.Cell = args[0]
			opts.Parallel = f.Global.Parallel
			var err error
			if opts.View, err = render.Pick(f.Global.Output, Formats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return drainRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.MovePinned, "move-pinned", false, "re-pin the tenants pinned to the cell to the cells that take its buckets")
	cmd.Flags().BoolVar(&opts.Now, "now", false, "evacuate: no grace wait (the router is the only stack touched)")
	cmd.Flags().DurationVar(&opts.Grace, "grace", lifecycle.DefaultGrace, "wait between the two publishes for requests in flight to the cell")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the transitions and write or publish nothing")
	return cmd
}

func drainRun(ctx context.Context, opts *DrainOptions) error {
	env, done := opts.env(ctx, "drain")
	grace := opts.Grace
	if grace == 0 {
		grace = -1 // --grace 0: no wait
	}
	rep, err := lifecycle.Drain(ctx, env, lifecycle.DrainOptions{
		Cell: opts.Cell, MovePinned: opts.MovePinned, Now: opts.Now, Grace: grace, DryRun: opts.DryRun,
	})
	done()
	return show(opts.IO, opts.View, rep, err)
}
