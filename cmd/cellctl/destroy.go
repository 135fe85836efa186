package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router"
)

// DestroyOptions are the inputs of `cellctl destroy`.
type DestroyOptions struct {
	*Factory
	Cell             string
	ReleaseProtected bool
}

// NewCmdDestroy builds `cellctl destroy`.
func NewCmdDestroy(f *Factory, runF func(*DestroyOptions) error) *cobra.Command {
	opts := &DestroyOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "destroy CELL",
		Short: "Tear down one cell (refused while tenants are routed to it)",
		Long: `Destroy every resource of one cell. cellctl refuses while stacks/routing.json
still lists the cell as anything but drained (buckets or tenant overrides
pointing at it): drain the cell first.

The cell's stateful resources — Aurora cluster, cache, queues — are
protected. A destroy stops at them and says so; --release-protected first
lifts the protection (Pulumi protect and Aurora deletion protection) with
an update, then destroys. Aurora still writes its final snapshot.

Asks for confirmation on a terminal; pass --yes in CI.`,
		Example: `  cellctl destroy cell-d
  cellctl destroy cell-d --release-protected --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cell = args[0]
			if err := f.CheckOutput(FormatTable, FormatJSON); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return destroyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.ReleaseProtected, "release-protected", false, "lift the protection of the cell's stateful resources, then destroy them")
	return cmd
}

// routedTo explains why the routing table still needs the cell, or "".
func routedTo(fl *fleet.Fleet, cell string) (string, error) {
	t := fl.Routing
	if t == nil {
		return "", nil
	}
	cs, ok := t.Cell(cell)
	if !ok {
		return "", nil
	}
	buckets := 0
	for _, c := range t.Assignment() {
		if c == cell {
			buckets++
		}
	}
	var pinned []string
	for _, o := range t.Overrides() {
		if o.Cell == cell || o.Target == cell {
			pinned = append(pinned, o.Tenant)
		}
	}
	if cs.State == router.CellDrained && buckets == 0 && len(pinned) == 0 {
		return "", nil
	}
	why := fmt.Sprintf("%s is %s in %s with %d of %d buckets", cell, cs.State, filepath.Join(fl.StackDir, fleet.RoutingFile), buckets, t.Buckets())
	if len(pinned) > 0 {
		why += fmt.Sprintf(" and %d tenant override(s) (%s)", len(pinned), strings.Join(pinned, ", "))
	}
	return why, nil
}

func destroyRun(ctx context.Context, opts *DestroyOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	c := fl.Cell(opts.Cell)
	if c == nil {
		return exitcode.With(exitcode.Error, fmt.Errorf("unknown cell %q (cells of this fleet: %v); the router stack is not destroyed by cellctl", opts.Cell, fl.CellIDs()))
	}
	why, err := routedTo(fl, c.ID)
	if err != nil {
		return err
	}
	if why != "" {
		return exitcode.With(exitcode.Error, fmt.Errorf("refusing to destroy %s: tenants are still routed to it — %s; drain the cell and remove it from the routing table first", c.ID, why))
	}
	eng, closeEng, err := opts.Engine(ctx, fl, nil, nil)
	if err != nil {
		return err
	}
	protected, err := eng.Protected(ctx, c.ID)
	closeEng()
	if errors.Is(err, engine.ErrNotDeployed) {
		return exitcode.With(exitcode.Error, fmt.Errorf("%s is not deployed (nothing to destroy)", c.ID))
	}
	if err != nil {
		return err
	}
	if len(protected) > 0 && !opts.ReleaseProtected {
		return exitcode.With(exitcode.Error, fmt.Errorf("refusing to destroy %s: its stateful resources are protected:\n  %s\n"+
			"to delete them (and their data; Aurora writes a final snapshot %s-final-<UTC time>), rerun with --release-protected",
			c.ID, strings.Join(protected, "\n  "), c.ID))
	}
	if !opts.Global.Yes {
		if !opts.IO.CanPrompt() {
			return exitcode.With(exitcode.Error, fmt.Errorf("destroying %s needs confirmation: pass --yes", c.ID))
		}
		fmt.Fprintf(opts.IO.ErrOut, "This destroys every resource of %s (%s, %s). Type the cell id to confirm: ", c.ID, c.Region, c.CIDR())
		line, _ := bufio.NewReader(opts.IO.In).ReadString('\n')
		if strings.TrimSpace(line) != c.ID {
			return exitcode.With(exitcode.Error, errors.New("not confirmed; nothing was destroyed"))
		}
	}
	if len(protected) > 0 {
		fmt.Fprintf(opts.IO.ErrOut, "%s: lifting protection of %d resource(s)\n", c.ID, len(protected))
		c.Releasing = true
		res, err := runOperation(ctx, opts.Factory, fl, engine.OpUp, []string{c.ID}, engine.RunOptions{})
		if err != nil {
			if res != nil {
				_ = printResult(opts.Factory, res)
			}
			return fmt.Errorf("lifting protection failed, nothing was destroyed: %w", err)
		}
	}
	res, err := runOperation(ctx, opts.Factory, fl, engine.OpDestroy, []string{c.ID}, engine.RunOptions{})
	if res != nil {
		if perr := printResult(opts.Factory, res); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}
