package stackview

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/routercanary"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/component"
)

// CellStatus is one row of `cellctl status`.
type CellStatus struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Index  *int   `json:"index,omitempty"`
	CIDR   string `json:"cidr,omitempty"`
	Region string `json:"region"`
	// Account is the account the stack file declares ("" = the caller's
	// own).
	Account    string     `json:"account,omitempty"`
	Deployed   bool       `json:"deployed"`
	LastResult string     `json:"lastResult,omitempty"`
	LastOp     string     `json:"lastOperation,omitempty"`
	LastUpdate *time.Time `json:"lastUpdate,omitempty"`
	Image      string     `json:"image,omitempty"`
	Resources  int        `json:"resources"`
	PendingOps int        `json:"pendingOperations,omitempty"`
	Error      string     `json:"error,omitempty"`
	// Routing is the cell in stacks/routing.json: its state, its share of
	// buckets and tenants, its pinned tenants, its load against capacity
	// (absent for the router, or a cell the table does not name).
	Routing *router.CellCapacity `json:"routing,omitempty"`
	// TableVersion is, for the router, the routing table version its
	// primary distribution serves — not the router's tableVersion output,
	// which is the candidate's while a canary is unfinished (absent:
	// unknown).
	TableVersion *int64 `json:"tableVersion,omitempty"`
	// Canary is, for the router, a canary nobody finished: viewers may
	// reach its staging distribution.
	Canary *routercanary.Pending `json:"canary,omitempty"`
	// Served is, for the router, which routing table (version and
	// checksum) each of its distributions serves, and whether that is
	// stacks/routing.json's (Current).
	Served []ServedTable `json:"served,omitempty"`
	// Schema is, for a cell, its database schema as the rollout records
	// say (internal/desired): the version its last passed migration
	// reported, a later migration's failure, what its kept release
	// migrated it to, a rolled-back release that left its version in place,
	// and whether it needs an operator (absent: no migration ever ran in
	// it).
	Schema *desired.Schema `json:"schema,omitempty"`
}

// ServedTable is the table one distribution of the router serves.
type ServedTable struct {
	component.ServedTable
	Current bool `json:"current"`
}

// The views of `cellctl status`: a row per stack, or the rows as JSON.
var (
	StatusJSON  = render.JSONFormat(func(rows []CellStatus) any { return map[string]any{"stacks": rows} })
	StatusTable = render.Format[[]CellStatus]{Name: render.FormatTable, Render: writeStatusTable}
)

func writeStatusTable(io *iostreams.IOStreams, rows []CellStatus) error {
	s := render.Out(io)
	var table [][]string
	// The schema column is there once a migration ran in some cell.
	migrations := slices.ContainsFunc(rows, func(r CellStatus) bool { return r.Schema != nil })
	// Where each stack lives, when any lives in a declared account.
	accounts := slices.ContainsFunc(rows, func(r CellStatus) bool { return r.Account != "" })
	for _, r := range rows {
		index, cidr := "-", "-"
		if r.Index != nil {
			index, cidr = fmt.Sprint(*r.Index), r.CIDR
		}
		last, when := s.Dim("not deployed"), "-"
		if r.Deployed {
			last = r.LastOp + " " + r.LastResult
			switch r.LastResult {
			case "succeeded":
				last = s.Good(last)
			case "failed":
				last = s.Bad(last)
			}
			if r.LastUpdate != nil {
				when = r.LastUpdate.Format(time.RFC3339)
			}
		}
		if r.Error != "" {
			// The whole error goes to stderr, once; the table says in a
			// few words what failed (an AWS error's code).
			last = s.Bad("error: " + engine.ErrorSummary(r.Error))
		}
		image := r.Image
		if image == "" {
			image = "-"
		}
		routing, share, pinned, load := "-", "-", "-", "-"
		if c := r.Routing; c != nil {
			routing, share, pinned = string(c.State), fmt.Sprintf("%d (%.1f%%)", c.Buckets, 100*c.TenantShare), fmt.Sprint(c.Pinned)
			load = fmt.Sprintf("%d/%d (%.0f%%)", c.Load, c.Capacity, 100*c.Used)
			if c.State != router.CellActive {
				routing = s.Warn(routing)
			}
			if c.Over {
				load = s.Bad(load)
			}
		}
		row := []string{r.Name, index, cidr, r.Region, last, when, image, fmt.Sprint(r.Resources), routing, share, pinned, load}
		if accounts {
			row = slices.Insert(row, 3, fleet.Access{Account: r.Account}.AccountLabel())
		}
		if migrations {
			row = append(row, schemaCell(s, r.Schema))
		}
		table = append(table, row)
	}
	header := []string{"STACK", "INDEX", "CIDR", "REGION", "LAST UPDATE", "AT", "IMAGE", "RESOURCES", "ROUTING", "BUCKETS", "PINNED", "LOAD/CAPACITY"}
	if accounts {
		header = slices.Insert(header, 3, "ACCOUNT")
	}
	if migrations {
		header = append(header, "SCHEMA")
	}
	fmt.Fprint(io.Out, s.Table(header, table))
	for _, r := range rows {
		if r.Kind == "router" && r.Deployed {
			// Which table each distribution serves (servedTables); a
			// router deployed before that output says only the
			// primary's version, from its output or a canary's record.
			switch {
			case len(r.Served) > 0:
			case r.TableVersion != nil:
				fmt.Fprintf(io.Out, "%s: the primary distribution serves routing table version %d\n", r.Name, *r.TableVersion)
			case r.Canary != nil:
				fmt.Fprintf(io.Out, "%s: the routing table version the primary distribution serves is unknown (an unrecorded canary is in progress)\n", r.Name)
			}
			if c := r.Canary; c != nil {
				fmt.Fprintf(io.Out, "%s: %s\n", r.Name, s.Warn(c.String()))
			}
		}
		for _, sv := range r.Served {
			line := fmt.Sprintf("%s: the %s distribution serves routing table version %d %s", r.Name, sv.Distribution, sv.Version, sv.Checksum)
			switch {
			case !sv.Known && sv.Distribution == "primary" && r.TableVersion != nil:
				line = fmt.Sprintf("%s: the primary distribution runs an earlier edge function version (%s) serving routing table version %d, as the canary recorded", r.Name, sv.FunctionArn, *r.TableVersion)
			case !sv.Known:
				line = s.Warn(fmt.Sprintf("%s: the %s distribution runs an earlier edge function version (%s), not stacks/routing.json's table", r.Name, sv.Distribution, sv.FunctionArn))
			case sv.Current:
				line += " (stacks/routing.json)"
			default:
				line = s.Warn(line + " (stale: not stacks/routing.json's table; `cellctl up router` publishes it)")
			}
			fmt.Fprintln(io.Out, line)
		}
		if r.PendingOps > 0 {
			fmt.Fprintf(io.Out, "%s: %d operation(s) of an interrupted run are pending; the next `cellctl up` repairs them\n", r.Name, r.PendingOps)
		}
	}
	return nil
}

// schemaCell is a cell's schema version for the table: the version, what
// left it when a rolled-back release did (expand-only migrations stay by
// design: not a target, not a fault), and a schema that needs an operator
// in red (`cellctl drift --behind` says why).
func schemaCell(s *render.Styles, sc *desired.Schema) string {
	if sc == nil {
		return "-"
	}
	v := sc.Version
	if v == "" {
		v = "unknown"
	}
	if sc.Problem != "" {
		if sc.Ahead {
			return v + " " + s.Bad("(left by rolled-back "+sc.LeftBy+", unproven: cellctl drift --behind)")
		}
		if sc.Failed != "" {
			return v + " " + s.Bad("(migration failed in "+sc.FailedRollout+")")
		}
		return v + " " + s.Bad("(needs checking: cellctl drift --behind)")
	}
	var notes []string
	if sc.LeftBy != "" {
		notes = append(notes, "left by rolled-back "+sc.LeftBy)
	}
	if sc.FailedRolledBack {
		notes = append(notes, "migration failed in "+sc.FailedRollout+", rolled back")
	}
	if len(notes) > 0 {
		v += " (" + strings.Join(notes, "; ") + ")"
	}
	return v
}
