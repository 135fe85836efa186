package routeview

import (
	"fmt"
	"io"
	"strconv"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/routing"
	"github.com/cellctl/cellctl/router"
)

// CapacityDoc is the -o json document of `cellctl capacity`.
type CapacityDoc struct {
	Table string `json:"table"` // the routing table file
	router.CapacityReport
}

// CapacityFormats are the views of `cellctl capacity`.
var CapacityFormats = []render.Format[*CapacityDoc]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, d *CapacityDoc) error {
		printCapacity(render.Out(io), io.Out, d.CapacityReport, d.Table)
		return nil
	}},
	render.JSONFormat(func(d *CapacityDoc) any { return d }),
}

func printCapacity(s *render.Styles, w io.Writer, r router.CapacityReport, source string) {
	rows := make([][]string, 0, len(r.Cells))
	anyDerived := false
	for _, c := range r.Cells {
		anyDerived = anyDerived || c.CapacityDefault
		rows = append(rows, []string{
			c.Cell, string(c.State), strconv.Itoa(c.Buckets), pct(c.TenantShare), strconv.Itoa(c.Pinned),
			strconv.FormatInt(c.Load, 10), routing.CapacityText(c.Capacity, c.CapacityDefault), routing.UsedText(s, c.Used),
		})
	}
	fmt.Fprint(w, s.Table([]string{"CELL", "STATE", "BUCKETS", "TENANTS", "PINNED", "LOAD", "CAPACITY", "USED"}, rows))
	fmt.Fprintf(w, "\nrouting table version %d (%s); load: %s, %d units in all\n", r.Version, source, r.LoadSource, r.TotalLoad)
	if anyDerived {
		fmt.Fprintln(w, "* derived from the weight (twice the cell's weighted share of the load); set \"capacity\" in routing.json once the cell is load-tested")
	}
}

// capacitySection is the part of `route --diff` about capacity data: it
// moves no tenant, but reviewers approve it like a route.
func capacitySection(d router.DiffReport) diffSection {
	sec := diffSection{title: "Capacity", headers: []string{"CELL", "CAPACITY"}}
	text := func(c int64) string {
		if c == 0 {
			return "derived"
		}
		return strconv.FormatInt(c, 10)
	}
	for _, c := range d.CapacitiesChanged {
		sec.rows = append(sec.rows, []string{c.Cell, text(c.From) + " → " + text(c.To)})
	}
	if d.LoadChanged {
		sec.rows = append(sec.rows, []string{"(all)", "per-bucket load changed"})
	}
	return sec
}
