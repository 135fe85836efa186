package route

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/routeview"
	"github.com/cellctl/cellctl/router"
)

// RouteOptions are the inputs of `cellctl route`.
type RouteOptions struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	// Dir is the fleet directory as given (--dir), for messages.
	Dir string
	// RoutesView and DiffView render the two reports, in the -o format.
	RoutesView render.View[*RoutesShown]
	DiffView   render.View[*DiffShown]
	CheckView  render.View[*CheckReport]

	Tenants []string
	// TablePath reads the routing table from this file instead of the
	// fleet's stacks/routing.json.
	TablePath string
	// DiffPath is an older version of the table to compare with.
	DiffPath string
	// CheckPath is a table file to validate as the edge will (--check).
	CheckPath string
	// Deployed reads the deployed router stack's outputs (nil: not
	// read), from which the report says which table each distribution
	// serves.
	Deployed func(ctx context.Context) (map[string]any, error)
	ctx      context.Context
}

// NewCmdRoute builds `cellctl route`.
func NewCmdRoute(f *cmdutil.Factory, runF func(*RouteOptions) error) *cobra.Command {
	opts := &RouteOptions{IO: f.IO, Fleet: f.Fleet}
	opts.Deployed = func(ctx context.Context) (map[string]any, error) {
		fl, err := f.Fleet()
		if err != nil {
			return nil, err
		}
		eng, err := f.Engine(fl, nil)
		if err != nil {
			return nil, err
		}
		return eng.DeployedOutputs(ctx, fleet.RouterStack)
	}
	cmd := &cobra.Command{
		Use:   "route [tenant...]",
		Short: "Show which cell serves a tenant, or what a routing table change moves",
		Long: `Look tenants up in the routing table exactly as the edge function does:
the tenant's bucket (FNV-1a-64 of its id mod the table's bucket count), the
cell serving it, whether an override pinned it there, and its state
("active", or "migrating" with its target cell and write mode).

The table is the fleet's stacks/routing.json, or the file given with
--table (cellctl's shape, or the seeds' routing contract: version,
generated_at, default_cell, assignments[]). Invalid tenant ids are reported
one by one; the valid ones are still shown, and the command exits 1. With
the fleet's table, the report also says which table version and checksum
each of the deployed router's distributions serves, so a stale edge shows.

With --diff OLD.json, report what changes from OLD.json to the table: the
version change, how many buckets and what share of tenants move, from which
cell to which, and the cells and overrides added, removed or changed. Named
tenants are then shown in both versions. -o markdown prints a summary ready
to paste as a pull request comment.

With --check FILE, validate FILE the way it reaches the edge and write
nothing: the routing table's own rules (every problem as file:line: field:
what is allowed), then, inside a fleet repository, that it routes only to
the fleet's cells and fits the edge function's memory, and finally the
config.json the router stack would package from it, checked as the edge
handler checks it when it starts. Exits 1 on any problem.`,
		Example: `  cellctl route acme globex
  cellctl route acme -o json
  cellctl route --table testdata/routing/golden_table.json tenant-0042
  git show main:stacks/routing.json > /tmp/old.json
  cellctl route --diff /tmp/old.json -o markdown
  cellctl route --diff /tmp/old.json acme
  cellctl route --check stacks/routing.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Tenants = args
			if opts.CheckPath != "" && (len(args) > 0 || opts.DiffPath != "" || opts.TablePath != "") {
				return errors.New("--check FILE validates one table file: it takes no tenants, --diff or --table")
			}
			if len(args) == 0 && opts.DiffPath == "" && opts.CheckPath == "" {
				return errors.New("name at least one tenant, compare tables with --diff OLD.json, or validate one with --check FILE")
			}
			opts.Dir = f.Global.Dir
			opts.ctx = cmd.Context()
			if err := opts.pickViews(f.Global.Output); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return routeRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.TablePath, "table", "", "routing table file to use instead of the fleet's stacks/"+fleet.RoutingFile)
	cmd.Flags().StringVar(&opts.DiffPath, "diff", "", "older routing table file: report what changes from it to the current table")
	cmd.Flags().StringVar(&opts.CheckPath, "check", "", "validate this routing table file as the edge will load it; writes nothing")
	return cmd
}

func routeRun(opts *RouteOptions) error {
	if opts.CheckPath != "" {
		return checkRun(opts)
	}
	table, source, err := currentTable(opts)
	if err != nil {
		return err
	}
	if opts.DiffPath != "" {
		return routeDiffRun(opts, table, source)
	}
	report := RouteReport{Version: table.Version(), Checksum: table.Checksum(), Routes: []TenantRoute{}}
	var lanesOf func(cell, tenant string) []int
	if opts.TablePath == "" {
		if fl, err := opts.Fleet(); err == nil {
			lanesOf = fleetLaneOf(fl)
		}
		report.Served = servedTables(opts, table)
	}
	for _, tenant := range opts.Tenants {
		p, terr := place(table, tenant)
		if terr != nil {
			report.Errors = append(report.Errors, *terr)
			continue
		}
		if lanesOf != nil {
			p.Lanes = lanesOf(p.Cell, tenant)
		}
		report.Routes = append(report.Routes, TenantRoute{Tenant: tenant, Placement: p})
	}
	if err := opts.RoutesView.Render(opts.IO, &RoutesShown{Report: report, Source: source}); err != nil {
		return err
	}
	return tenantErrors(report.Errors)
}

// currentTable is the --table file, else the fleet's routing table.
func currentTable(opts *RouteOptions) (*router.Table, string, error) {
	if opts.TablePath != "" {
		t, err := router.Load(opts.TablePath)
		return t, opts.TablePath, err
	}
	fl, err := opts.Fleet()
	if err != nil {
		return nil, "", err
	}
	source := fl.StackDir + "/" + fleet.RoutingFile
	if fl.Routing == nil {
		return nil, "", fmt.Errorf("the fleet in %s has no %s; create it, or pass --table PATH", opts.Dir, source)
	}
	return fl.Routing, source, nil
}

// pickViews chooses both reports' views for the -o format, once.
func (opts *RouteOptions) pickViews(format string) error {
	var err error
	if opts.RoutesView, err = render.Pick(format, routeview.RoutesFormats...); err != nil {
		return err
	}
	if opts.DiffView, err = render.Pick(format, routeview.DiffFormats...); err != nil {
		return err
	}
	opts.CheckView, err = render.Pick(format, routeview.CheckFormats...)
	return err
}

// place routes tenant, or says why its id is refused.
func place(t *router.Table, tenant string) (Placement, *TenantError) {
	r := t.Route(tenant)
	if !r.Valid {
		msg := "invalid tenant id"
		if err := router.ValidTenant(tenant); err != nil {
			msg = err.Error()
		}
		return Placement{}, &TenantError{Tenant: tenant, Error: msg}
	}
	p := Placement{Bucket: r.Bucket, Cell: r.Cell, State: string(router.OverrideActive)}
	if o := r.Override; o != nil {
		p.Override = true
		p.State = string(o.State)
		if o.State == router.OverrideMigrating {
			p.Target, p.WriteMode = o.Target, string(o.WriteMode)
		}
	}
	return p, nil
}

// tenantErrors is the command's error when some tenant ids are invalid:
// every one of them, after the valid ones were printed.
func tenantErrors(errs []TenantError) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errors.New(errs[0].Error)
	}
	lines := make([]string, len(errs))
	for i, e := range errs {
		lines[i] = "  " + e.Error
	}
	return fmt.Errorf("%d tenant ids are invalid:\n%s", len(errs), strings.Join(lines, "\n"))
}

func routeDiffRun(opts *RouteOptions, table *router.Table, source string) error {
	old, err := router.Load(opts.DiffPath)
	if err != nil {
		return err
	}
	d := RouteDiff{DiffReport: router.Diff(old, table)}
	for _, tenant := range opts.Tenants {
		from, terr := place(old, tenant)
		if terr != nil {
			d.Errors = append(d.Errors, *terr)
			continue
		}
		to, _ := place(table, tenant) // validity does not depend on the table
		d.Tenants = append(d.Tenants, TenantChange{Tenant: tenant, Moves: from.Cell != to.Cell, From: from, To: to})
	}
	if err := opts.DiffView.Render(opts.IO, &DiffShown{Diff: d, OldSource: opts.DiffPath, Source: source}); err != nil {
		return err
	}
	if err := tenantErrors(d.Errors); err != nil {
		return err
	}
	// A change whose version did not go up is a finding: the edge function
	// would not be republished as a new routing version. CI fails on it.
	if err := router.CheckSuccessor(old, table); err != nil {
		return outcome.Findings(fmt.Errorf("%s: %w", source, err))
	}
	return nil
}
