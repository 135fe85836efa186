package route

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/safefile"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/edge"
)

// CheckReport is the -o json document of `cellctl route --check FILE`.
type CheckReport struct {
	File  string `json:"file"`
	Valid bool   `json:"valid"`
	// Version, Cells and Overrides describe a valid table.
	Version   int64 `json:"version,omitempty"`
	Cells     int   `json:"cells,omitempty"`
	Overrides int   `json:"overrides,omitempty"`
	// Fleet says whether the fleet's router settings and cells were
	// checked too (false outside a fleet repository).
	Fleet  bool     `json:"fleet"`
	Errors []string `json:"errors,omitempty"`
}

var checkFormats = []render.Format[*CheckReport]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r *CheckReport) error {
		if !r.Valid {
			return nil // the errors go to stderr, one per line
		}
		against := "its own rules and the edge handler's"
		if r.Fleet {
			against = "its own rules, the fleet's cells and router settings, and the edge handler's"
		}
		fmt.Fprintf(io.Out, "%s: routing table version %d is valid (%d cells, %d overrides), checked against %s\n",
			r.File, r.Version, r.Cells, r.Overrides, against)
		return nil
	}},
	render.JSONFormat(func(r *CheckReport) any { return r }),
	{Name: render.FormatMarkdown, Render: func(io *iostreams.IOStreams, r *CheckReport) error {
		if r.Valid {
			fmt.Fprintf(io.Out, "### cellctl route --check: ✅ `%s`\n\nRouting table version %d is valid (%d cells, %d overrides).\n", r.File, r.Version, r.Cells, r.Overrides)
			return nil
		}
		fmt.Fprintf(io.Out, "### cellctl route --check: ❌ `%s`\n\n", r.File)
		for _, e := range r.Errors {
			fmt.Fprintf(io.Out, "- %s\n", mdEscape(e))
		}
		return nil
	}},
}

// checkRun validates opts.CheckPath as the router stack would package it
// and the edge handler would load it; it writes nothing.
func checkRun(opts *RouteOptions) error {
	path := opts.CheckPath
	data, err := safefile.Read(path, router.MaxFileBytes)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		err = &diag.Error{File: path, Msg: "cannot read: " + err.Error()}
		return renderCheck(opts, &CheckReport{File: path}, err)
	}
	check := edge.TableCheck{}
	report := &CheckReport{File: path}
	if fl, ferr := opts.Fleet(); ferr == nil {
		check = checkAgainst(fl)
		report.Fleet = true
	} else if opts.IO != nil {
		fmt.Fprintf(opts.IO.ErrOut, "note: the fleet in %s did not load, so %s is checked without its cells and router settings\n", opts.Dir, path)
	}
	table, err := edge.CheckTableFile(path, data, check)
	if err == nil {
		report.Valid = true
		report.Version = table.Version()
		report.Cells = len(table.CellIDs())
		report.Overrides = len(table.Overrides())
	}
	return renderCheck(opts, report, err)
}

func renderCheck(opts *RouteOptions, report *CheckReport, err error) error {
	for _, e := range diag.Errors(err) {
		report.Errors = append(report.Errors, e.Error())
	}
	if rerr := opts.CheckView.Render(opts.IO, report); rerr != nil {
		return rerr
	}
	return err
}

// checkAgainst is what the fleet's router stack packages a table with.
func checkAgainst(fl *fleet.Fleet) edge.TableCheck {
	c := edge.TableCheck{FleetCells: []string{}}
	lanes := map[string]*router.Lanes{}
	for _, cell := range fl.Cells {
		c.FleetCells = append(c.FleetCells, cell.ID)
		if l, err := router.NewLanes(cell.Lanes, cell.LaneShardSize); err == nil {
			lanes[cell.ID] = l
		}
	}
	c.FleetFile = func(id string) string { return fl.StackDir + "/Pulumi." + id + ".yaml" }
	if fl.Router != nil {
		c.TenantHeader = fl.Router.TenantHeader
		c.TenantHostDomains = edge.HostDomainsOf(fl.Router.ViewerDomains)
		c.MemoryMB = fl.Router.EdgeMemoryMB
		c.Lanes = lanes
	}
	return c
}
