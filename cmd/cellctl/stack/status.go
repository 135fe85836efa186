package stack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/routercanary"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/component"
	"github.com/cellctl/cellctl/waves/executor"
)

// StatusReader reads what the backend knows about stacks.
type StatusReader interface {
	Status(ctx context.Context, names []string) ([]*engine.StackStatus, error)
}

// StatusOptions are the inputs of `cellctl status`.
type StatusOptions struct {
	IO     *iostreams.IOStreams
	Fleet  func() (*fleet.Fleet, error)
	Engine func(fl *fleet.Fleet) (StatusReader, error)
	// Records reads the records in the backend (nil: none), read-only:
	// an unfinished router canary and the primary's table come from them.
	Records func() ([]*executor.Record, error)
	View    render.View[[]CellStatus]
	// Held says who holds the fleet lock and why ("": nobody; nil: not
	// asked): a paused rollout holds the fleet between its steps.
	Held func(ctx context.Context) (string, error)
	// Output is the -o name: the hold is said on stderr beside JSON.
	Output string

	Cells []string
}

// NewCmdStatus builds `cellctl status`.
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f.IO, Fleet: f.Fleet, Engine: func(fl *fleet.Fleet) (StatusReader, error) { return f.Engine(fl, nil) }, Records: f.Records, Held: f.FleetHeld}
	cmd := &cobra.Command{
		Use:               "status [cell...]",
		ValidArgsFunction: f.CompleteCells,
		Short:             "Show each stack's deployment (last update, image, resources) and each cell's routing (state, buckets, pinned tenants, load)",
		Example: `  cellctl status
  cellctl status -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cells, opts.Output = args, f.Global.Output
			var err error
			if opts.View, err = render.Pick(f.Global.Output, statusTable, statusJSON); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return statusRun(cmd.Context(), opts)
		},
	}
	return cmd
}

func statusRun(ctx context.Context, opts *StatusOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	names, err := apply.SelectStacks(fl, opts.Cells, false)
	if err != nil {
		return err
	}
	eng, err := opts.Engine(fl)
	if err != nil {
		return err
	}
	sts, err := eng.Status(ctx, names)
	if err != nil {
		return err
	}
	routing := map[string]router.CellCapacity{}
	if fl.Routing != nil {
		rep, err := router.Capacity(fl.Routing, nil)
		if err != nil {
			return err
		}
		for _, c := range rep.Cells {
			routing[c.Cell] = c
		}
	}
	var recs []*executor.Record
	var recsErr error
	if opts.Records != nil {
		recs, recsErr = opts.Records()
	}
	rows := make([]CellStatus, 0, len(sts))
	var unreadable []string
	// What the records say each schema is, judged against what the fleet
	// shipped and kept — the desired state every verb uses.
	schemas := desired.Resolve(fl, recs).Schemas
	for _, st := range sts {
		row := cellStatus(fl, st)
		if sc, ok := schemas[st.Name]; ok && row.Kind != "router" {
			row.Schema = &sc
		}
		if c, ok := routing[st.Name]; ok {
			row.Routing = &c
		}
		if row.Kind == "router" && st.Deployed {
			row.Canary = routercanary.Unfinished(recs, st.Outputs)
			if v, ok := routercanary.PrimaryTable(recs, st.Outputs); ok {
				row.TableVersion = &v
			}
			for _, sv := range component.ReadServedTables(st.Outputs) {
				current := fl.Routing != nil && sv.Known && sv.Version == fl.Routing.Version() && sv.Checksum == fl.Routing.Checksum()
				row.Served = append(row.Served, ServedTable{ServedTable: sv, Current: current})
			}
		}
		rows = append(rows, row)
		if st.Error != "" {
			unreadable = append(unreadable, st.Name+": "+st.Error)
		}
	}
	if err := opts.View.Render(opts.IO, rows); err != nil {
		return err
	}
	var lockErr error
	if opts.Held != nil {
		// Who holds the fleet goes below the table, or to stderr beside
		// JSON (whose shape is the rows); unreadable, it is a problem.
		var held string
		held, lockErr = opts.Held(ctx)
		if held != "" {
			w := opts.IO.Out
			if opts.Output != "" && opts.Output != render.FormatTable {
				w = opts.IO.ErrOut
			}
			fmt.Fprintf(w, "\nfleet: %s\n", held)
		}
	}
	// A stack whose state cannot be read is not "fine": the report shows
	// why, and the exit code says so. A record that does not read may be
	// the unfinished canary's: said too, but not counted as a stack.
	var problems []string
	if len(unreadable) > 0 {
		problems = append(problems, fmt.Sprintf("%d stack(s) could not be read:\n%s", len(unreadable), strings.Join(unreadable, "\n")))
	}
	if recsErr != nil {
		problems = append(problems, "the rollout records in the backend could not be read: "+recsErr.Error())
	}
	if lockErr != nil {
		problems = append(problems, "the fleet lock could not be read: "+lockErr.Error())
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

func cellStatus(fl *fleet.Fleet, st *engine.StackStatus) CellStatus {
	r := CellStatus{Name: st.Name, Deployed: st.Deployed, LastResult: st.LastResult, LastOp: st.LastKind,
		LastUpdate: st.LastUpdate, Resources: st.Resources, PendingOps: st.PendingOps, Error: st.Error}
	if c := fl.Cell(st.Name); c != nil {
		idx := c.Index
		r.Kind, r.Index, r.CIDR, r.Region, r.Account = "cell", &idx, c.CIDR(), c.Region, c.Access().Account
	} else if st.Name == fleet.RouterStack && fl.Router != nil {
		r.Kind, r.Region, r.Account = "router", fl.Router.Region, fl.Router.Access().Account
	}
	if img, ok := st.Outputs["image"].(string); ok {
		r.Image = img
	}
	return r
}
