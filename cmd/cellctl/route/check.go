package route

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/cellctl/cellctl/internal/diag"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/safefile"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/edge"
)

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
	checked, err := edge.CheckTableFile(path, data, check)
	if err == nil {
		t := checked.Table
		report.Valid = true
		report.Version, report.Checksum, report.GeneratedAt = t.Version(), t.Checksum(), t.GeneratedAt()
		report.Cells = len(t.CellIDs())
		report.Overrides = len(t.Overrides())
		report.ImageBytes, report.PackageBytes = checked.ImageBytes, checked.PackageBytes
		report.NeededMemoryMB, report.MemoryMB = checked.NeededMemoryMB, checked.MemoryMB
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
	c.Origins = map[string]string{}
	for _, cell := range fl.Cells {
		if cell.FleetDomain != "" {
			c.Origins[cell.ID] = cell.DNSName()
		}
	}
	if fl.Router != nil {
		c.TenantHeader = fl.Router.TenantHeader
		c.TenantFrom = fl.Router.TenantFrom
		c.TenantHostDomains = edge.HostDomainsOf(fl.Router.ViewerDomains)
		c.MemoryMB = fl.Router.EdgeMemoryMB
		c.Lanes = lanes
	}
	return c
}
