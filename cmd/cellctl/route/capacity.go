package route

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/routeview"
	"github.com/cellctl/cellctl/router"
)

// CapacityOptions are the inputs of `cellctl capacity`.
type CapacityOptions struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	// Dir is the fleet directory as given (--dir), for messages.
	Dir string
	// View renders the report in the -o format.
	View render.View[*CapacityDoc]
	// TablePath reads the routing table from this file instead of the
	// fleet's stacks/routing.json.
	TablePath string
	// LoadPath is a CSV of tenant,load or bucket,load to measure by
	// instead of the table's own per-bucket load.
	LoadPath string
}

// NewCmdCapacity builds `cellctl capacity`.
func NewCmdCapacity(f *cmdutil.Factory, runF func(*CapacityOptions) error) *cobra.Command {
	opts := &CapacityOptions{IO: f.IO, Fleet: f.Fleet}
	cmd := &cobra.Command{
		Use:   "capacity",
		Short: "Show each cell's load against its capacity, worst first",
		Long: `Show, per cell of the routing table: the buckets it owns and the share of
tenants they hold, the tenants pinned to it, its load, its capacity and the
share of its capacity in use — the most loaded cell first.

A cell's capacity is the load it is tested to carry ("capacity" in
stacks/routing.json); without one it is derived from its weight: twice its
weighted share of the fleet's load (marked *). The load is the table's own
per-bucket load ("load" in routing.json, one unit per bucket by default),
or the file given with --load: a CSV whose header is "tenant,load" or
"bucket,load" (e.g. request counts exported from the edge's logs). Tenants
are folded onto buckets with the router's own hash; a tenant with an
override counts in its override's cell.

Exits 2 when a cell carries more than its capacity.`,
		Example: `  cellctl capacity
  cellctl capacity --load requests-last-hour.csv
  cellctl capacity --table testdata/routing/capacity/table.json -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = f.Global.Dir
			var err error
			if opts.View, err = render.Pick(f.Global.Output, routeview.CapacityFormats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return capacityRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.TablePath, "table", "", "routing table file to use instead of the fleet's stacks/"+fleet.RoutingFile)
	cmd.Flags().StringVar(&opts.LoadPath, "load", "", "CSV of tenant,load or bucket,load to measure by (default: the table's own load)")
	return cmd
}

func capacityRun(opts *CapacityOptions) error {
	table, source, err := currentTable(&RouteOptions{IO: opts.IO, Fleet: opts.Fleet, Dir: opts.Dir, TablePath: opts.TablePath})
	if err != nil {
		return err
	}
	var load *router.LoadFigures
	if opts.LoadPath != "" {
		data, err := os.ReadFile(opts.LoadPath)
		if err != nil {
			return fmt.Errorf("cannot read the load file: %w", err)
		}
		if load, err = router.FoldLoad(table, opts.LoadPath, data); err != nil {
			return fmt.Errorf("invalid load file %s:\n%w", opts.LoadPath, err)
		}
	}
	report, err := router.Capacity(table, load)
	if err != nil {
		return err
	}
	if err := opts.View.Render(opts.IO, &CapacityDoc{Table: source, CapacityReport: report}); err != nil {
		return err
	}
	if err := report.OverCapacityError(); err != nil {
		return outcome.Findings(err)
	}
	return nil
}
