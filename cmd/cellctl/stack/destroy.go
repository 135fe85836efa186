package stack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/render"
)

// DestroyOptions are the inputs of `cellctl destroy`.
type DestroyOptions struct {
	IO       *iostreams.IOStreams
	Fleet    func() (*fleet.Fleet, error)
	Engine   EngineFunc
	View     render.View[*apply.Report]
	Parallel int
	// Yes skips the confirmation (--yes).
	Yes bool

	Cell             string
	ReleaseProtected bool
	DryRun           bool
	// Retire removes the cell from the repository once its stack is gone.
	Retire bool
	// Hold takes the fleet lock (cmdutil.Factory.HoldFleet) before the
	// release guard, so a destroy while another run holds the fleet is
	// refused for that (exit 4) even when the guard would refuse it too.
	Hold func(ctx context.Context) error
}

// NewCmdDestroy builds `cellctl destroy`.
func NewCmdDestroy(f *cmdutil.Factory, runF func(*DestroyOptions) error) *cobra.Command {
	opts := &DestroyOptions{IO: f.IO, Fleet: f.DesiredFleet, Engine: f.ApplyEngine, Hold: f.HoldFleet}
	cmd := &cobra.Command{
		Use:               "destroy CELL",
		ValidArgsFunction: f.CompleteOneCell,
		Short:             "Tear down one cell (refused until it is drained)",
		Long: `Destroy every resource of one cell. cellctl refuses unless stacks/routing.json
has the cell drained — no bucket and no tenant override pointing at it:
run cellctl drain CELL first (a cell not in the table at all, e.g. a cell
add that stopped before routing, may be destroyed).

The cell's stateful resources — Aurora cluster, cache, queues — are
protected. A destroy stops at them and says so; --release-protected first
lifts the protection (Pulumi protect and Aurora deletion protection) with
an update, then destroys. Aurora still writes its final snapshot.

Asks for confirmation on a terminal; pass --yes in CI. --dry-run checks
the same refusals and prints the run plan without asking or changing
anything.`,
		Example: `  cellctl destroy cell-d
  cellctl destroy cell-d --release-protected --dry-run
  cellctl destroy cell-d --release-protected --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cell = args[0]
			opts.Parallel, opts.Yes = f.Global.Parallel, f.Global.Yes
			var err error
			if opts.View, err = render.Pick(f.Global.Output, tableView, jsonView); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return destroyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.ReleaseProtected, "release-protected", false, "lift the protection of the cell's stateful resources, then destroy them")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "check the refusals, print the run plan and change nothing")
	cmd.Flags().BoolVar(&opts.Retire, "retire", false, "once the stack is gone, remove the cell from routing.json, waves.yaml and the repository (its stack file)")
	return cmd
}

func destroyRun(ctx context.Context, opts *DestroyOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	if opts.Hold != nil && !opts.DryRun && (fl.Cell(opts.Cell) != nil || opts.Cell == fleet.RouterStack) {
		if err := opts.Hold(ctx); err != nil {
			return err
		}
	}
	env, done := applyEnv(ctx, opts.IO, fl, opts.Engine, opts.Parallel)
	rep, err := apply.Destroy(ctx, env, apply.DestroyOptions{
		Cell: opts.Cell, ReleaseProtected: opts.ReleaseProtected, DryRun: opts.DryRun, Confirm: opts.confirm,
	})
	done()
	var gone *apply.NotDeployedError
	if opts.Retire && !opts.DryRun && (err == nil || errors.As(err, &gone)) {
		// Only once the stack is gone: its stack file is the only record
		// of its config a rerun of the destroy would need.
		if gone != nil {
			fmt.Fprintf(opts.IO.ErrOut, "%s: the stack is already gone\n", opts.Cell)
			err = nil
		}
		steps, rerr := lifecycle.Retire(fl, opts.Cell)
		for _, s := range steps {
			fmt.Fprintf(opts.IO.ErrOut, "%s: %s\n", opts.Cell, s)
		}
		if rerr != nil {
			err = fmt.Errorf("%s was destroyed but not retired: %w; fix that and rerun `cellctl destroy %s --retire`", opts.Cell, rerr, opts.Cell)
		}
		if rep == nil {
			return err
		}
	}
	return show(opts.IO, opts.View, rep, err)
}

// confirm asks the operator to type the cell id, unless --yes.
func (opts *DestroyOptions) confirm(c *fleet.Cell) error {
	if opts.Yes {
		return nil
	}
	if !opts.IO.CanPrompt() {
		return fmt.Errorf("destroying %s needs confirmation and there is no terminal to answer on: pass --yes (or set %s=true)", c.ID, cmdutil.SkipConfirmationsEnv)
	}
	fmt.Fprintf(opts.IO.ErrOut, "This destroys every resource of %s (%s, %s). Type the cell id to confirm: ", c.ID, c.Region, c.CIDR())
	line, _ := bufio.NewReader(opts.IO.In).ReadString('\n')
	if strings.TrimSpace(line) != c.ID {
		return errors.New("not confirmed; nothing was destroyed")
	}
	return nil
}
