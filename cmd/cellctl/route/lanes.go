package route

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/routeview"
	"github.com/cellctl/cellctl/router"
)

// LanesOptions are the inputs of `cellctl lanes`.
type LanesOptions struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	// View renders the report in the -o format.
	View render.View[*LanesReport]

	Cell        string
	TenantsPath string
	// Lanes and ShardSize replace the cells' own layout (what-if); 0
	// keeps it.
	Lanes     int
	ShardSize int
	Noisiest  int
}

// NewCmdLanes builds `cellctl lanes`.
func NewCmdLanes(f *cmdutil.Factory, runF func(*LanesOptions) error) *cobra.Command {
	opts := &LanesOptions{IO: f.IO, Fleet: f.Fleet}
	cmd := &cobra.Command{
		Use:   "lanes [cell]",
		Short: "Show each cell's shuffle-sharding lanes and what a lane failure costs",
		Long: `Each tenant uses r of its cell's M lanes (cells:lanes, cells:laneShardSize),
one of C(M, r) shards; the edge sends them as X-Cell-Lanes. A tenant is down
when all its lanes fail, degraded when one of them does.

Without --tenants: per cell, M, r, C(M, r) and the closed-form share of
tenants down and degraded when any 1 or 2 lanes fail.

With --tenants FILE (one tenant id a line, or CSV tenant,load): the tenants
are routed like the edge routes them, and for each cell's tenants the exact
figures are added — distinct shards used, the largest group on one identical
shard, the worst 1- and 2-lane failure over every such set (share of tenants
and of load), and the noisiest tenants' overlap with everyone else — next to
the closed form.

--lanes and --shard-size replace the layout to ask "what if".`,
		Example: `  cellctl lanes
  cellctl lanes cell-a --tenants tenants.csv
  cellctl lanes cell-a --lanes 64 --shard-size 2
  cellctl lanes --tenants tenants.txt -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Cell = args[0]
			}
			var err error
			if opts.View, err = render.Pick(f.Global.Output, routeview.LanesFormats...); err != nil {
				return err
			}
			if opts.Lanes < 0 || opts.ShardSize < 0 || opts.Noisiest < 0 {
				return errors.New("--lanes, --shard-size and --noisiest must not be negative")
			}
			if runF != nil {
				return runF(opts)
			}
			return lanesRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.TenantsPath, "tenants", "", "tenant list: one tenant id a line, or CSV tenant,load")
	cmd.Flags().IntVar(&opts.Lanes, "lanes", 0, "what if the cell had this many lanes (M)")
	cmd.Flags().IntVar(&opts.ShardSize, "shard-size", 0, "what if each tenant used this many lanes (r)")
	cmd.Flags().IntVar(&opts.Noisiest, "noisiest", 5, "how many of the highest-load tenants to detail")
	return cmd
}

func lanesRun(opts *LanesOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	cells := fl.Cells
	if opts.Cell != "" {
		c := fl.Cell(opts.Cell)
		if c == nil {
			return fmt.Errorf("%q is not a cell of this fleet (cells: %s)", opts.Cell, strings.Join(fl.CellIDs(), ", "))
		}
		cells = []*fleet.Cell{c}
	}
	report := LanesReport{Cells: []CellLanes{}}
	var byCell map[string][]router.TenantLoad
	if opts.TenantsPath != "" {
		data, err := os.ReadFile(opts.TenantsPath)
		if err != nil {
			return fmt.Errorf("--tenants: %w", err)
		}
		tenants, err := router.ParseTenantLoads(opts.TenantsPath, data)
		if err != nil {
			return fmt.Errorf("--tenants:\n%w", err)
		}
		report.TenantsFile, report.TenantCount = opts.TenantsPath, len(tenants)
		byCell = routeTenants(fl, tenants)
	}
	for _, c := range cells {
		m, r := c.Lanes, c.LaneShardSize
		if opts.Lanes > 0 {
			m = opts.Lanes
		}
		if opts.ShardSize > 0 {
			r = opts.ShardSize
		}
		l, err := router.NewLanes(m, r)
		if err != nil {
			return fmt.Errorf("%s: %w", c.ID, err)
		}
		report.Cells = append(report.Cells, CellLanes{
			Cell: c.ID, LaneQueues: c.LaneQueues, WhatIf: m != c.Lanes || r != c.LaneShardSize,
			LaneReport: l.Report(byCell[c.ID], opts.Noisiest),
		})
	}
	return opts.View.Render(opts.IO, &report)
}

// routeTenants groups a tenant list by the cell serving each tenant; a
// fleet without a routing table has one cell at most worth asking about,
// so every tenant counts for every cell.
func routeTenants(fl *fleet.Fleet, tenants []router.TenantLoad) map[string][]router.TenantLoad {
	out := map[string][]router.TenantLoad{}
	if fl.Routing == nil {
		for _, c := range fl.Cells {
			out[c.ID] = tenants
		}
		return out
	}
	for _, t := range tenants {
		if r := fl.Routing.Route(t.Tenant); r.Valid {
			out[r.Cell] = append(out[r.Cell], t)
		}
	}
	return out
}

// fleetLaneOf returns the lanes of a tenant in a fleet cell (nil for a
// cell the fleet does not define): what `cellctl route` shows.
func fleetLaneOf(fl *fleet.Fleet) func(cell, tenant string) []int {
	layouts := map[string]*router.Lanes{}
	return func(cell, tenant string) []int {
		l, ok := layouts[cell]
		if !ok {
			if c := fl.Cell(cell); c != nil {
				l, _ = router.NewLanes(c.Lanes, c.LaneShardSize) // the loader validated the pair
			}
			layouts[cell] = l
		}
		if l == nil {
			return nil
		}
		lanes, _ := l.Of(tenant, nil)
		return lanes
	}
}
