package stack

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
)

// UpOptions are the inputs of `cellctl up`.
type UpOptions struct {
	IO       *iostreams.IOStreams
	Fleet    func() (*fleet.Fleet, error)
	Engine   EngineFunc
	View     render.View[*apply.Report]
	Parallel int

	Cells   []string
	Router  bool
	Refresh bool
	DryRun  bool

	// QuotaCheck checks that new cells fit the account's quotas and that
	// the zones new stacks (cells, and the router by its stack name) write
	// in hold their records (nil: no check); SkipQuotaCheck turns it off
	// (--skip-quota-check).
	QuotaCheck     func(ctx context.Context, fl *fleet.Fleet, newCells []string) error
	SkipQuotaCheck bool
	// Bootstrap runs each cell database's users and grants after its up
	// (cmdutil.Factory.Bootstrap; nil: none).
	Bootstrap func(ctx context.Context, cell *fleet.Cell, outputs map[string]any) error
	// Yes skips the confirmation asked at a terminal (--yes).
	Yes bool
}

// NewCmdUp builds `cellctl up`.
func NewCmdUp(f *cmdutil.Factory, runF func(*UpOptions) error) *cobra.Command {
	opts := &UpOptions{IO: f.IO, Fleet: f.DesiredFleet, Engine: f.ApplyEngine, QuotaCheck: f.QuotaCheck, Bootstrap: f.Bootstrap}
	cmd := &cobra.Command{
		Use:               "up [cell...]",
		ValidArgsFunction: f.CompleteCells,
		Short:             "Create or update cells, then the router",
		Long: `Deploy the fleet through the Pulumi engine: every cell (in parallel, up to
--parallel at once), then the router, which is updated only when all its
cells succeeded. Name cells to deploy only those; --router deploys the
router alone.

Each stack is rendered offline first, so a program error stops the run
before anything changes. A failing cell does not stop the others; all
failures are reported together. Exit 4 when another operation holds a
stack's lock, or when this checkout is older than what the fleet runs: a
routing table older than the deployed router's, an origin-verify secret a
completed rotation replaced (git pull, then run it again).

Before it creates a cell that was never deployed, up runs the quota
check of ` + "`cellctl quota`" + ` for it and refuses (exit 2, nothing created) when
the cell would pass a quota or a quota it needs cannot be read, when RDS
no longer offers its Aurora version, or when a hosted zone it (or a new
router) writes records in does not exist, cannot be read or cannot hold
those names (Route 53 GetHostedZone; on --cloud sim, name zones first with
sim zone add); --skip-quota-check creates it anyway. --dry-run renders, checks and prints the run plan, and
changes nothing.`,
		Example: `  cellctl up --cloud sim
  cellctl up cell-b cell-c
  cellctl up --router
  cellctl up --dry-run
  cellctl up -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cells = args
			opts.Parallel = f.Global.Parallel
			opts.Yes = f.Global.Yes
			var err error
			if opts.View, err = render.Pick(f.Global.Output, tableView, jsonView); err != nil {
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
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the run plan (after the offline render and isolation audit) and change nothing")
	cmd.Flags().BoolVar(&opts.SkipQuotaCheck, "skip-quota-check", false, "create new cells (and a new router) without checking the account's quotas, engine versions and hosted zones first")
	return cmd
}

func upRun(ctx context.Context, opts *UpOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	env, done := applyEnv(ctx, opts.IO, fl, opts.Engine, opts.Parallel)
	env.Bootstrap = opts.Bootstrap
	switch {
	case opts.SkipQuotaCheck:
		fmt.Fprintln(opts.IO.ErrOut, "WARNING: --skip-quota-check: new cells are created without checking the account's quotas; a quota that runs out fails the cell half created")
	case opts.QuotaCheck != nil:
		env.QuotaCheck = func(ctx context.Context, cells []string) error { return opts.QuotaCheck(ctx, fl, cells) }
	}
	env.Confirm = cmdutil.Confirmation{IO: opts.IO, Yes: opts.Yes, Verb: "up"}.Plan
	rep, err := apply.Up(ctx, env, apply.Options{Cells: opts.Cells, Router: opts.Router, Refresh: opts.Refresh, DryRun: opts.DryRun})
	done()
	return show(opts.IO, opts.View, rep, err)
}

// show renders the report (when there is one) and returns the use case's
// error, or the view's.
func show(io *iostreams.IOStreams, view render.View[*apply.Report], rep *apply.Report, err error) error {
	if rep == nil {
		return err
	}
	if verr := view.Render(io, rep); verr != nil && err == nil {
		err = verr
	}
	return err
}

// The engine reads deployed outputs, so an up or preview refuses a change
// a deployed cell cannot take (apply.DeployedReader).
var _ apply.DeployedReader = (*engine.Engine)(nil)
