package routeview

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/router"
)

// LanesReport is the -o json document of `cellctl lanes`.
type LanesReport struct {
	Cells []CellLanes `json:"cells"`
	// TenantsFile and TenantCount describe the --tenants list.
	TenantsFile string `json:"tenantsFile,omitempty"`
	TenantCount int    `json:"tenantCount,omitempty"`
}

// CellLanes is one cell's lane report.
type CellLanes struct {
	Cell       string `json:"cell"`
	LaneQueues bool   `json:"laneQueues"`
	// WhatIf is set when --lanes/--shard-size replaced the cell's layout.
	WhatIf bool `json:"whatIf,omitempty"`
	router.LaneReport
}

// LanesFormats are the views of `cellctl lanes`.
var LanesFormats = []render.Format[*LanesReport]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r *LanesReport) error { printLanes(io, *r); return nil }},
	render.JSONFormat(func(r *LanesReport) any { return r }),
}

func printLanes(io *iostreams.IOStreams, report LanesReport) {
	s := render.Out(io)
	w := io.Out
	rows := make([][]string, 0, len(report.Cells))
	for _, c := range report.Cells {
		layout := strconv.Itoa(c.Lanes)
		if c.WhatIf {
			layout += " (what if)"
		}
		rows = append(rows, []string{c.Cell, layout, strconv.Itoa(c.ShardSize), groupDigits(c.Shards), yesNo(c.LaneQueues),
			pct(c.Expected[0].Down) + " / " + pct(c.Expected[0].Degraded),
			pct(c.Expected[1].Down) + " / " + pct(c.Expected[1].Degraded)})
	}
	fmt.Fprint(w, s.Table([]string{"CELL", "LANES (M)", "SHARD (r)", "SHARDS C(M,r)", "LANE QUEUES", "1 LANE FAILS: DOWN / DEGRADED", "2 LANES FAIL: DOWN / DEGRADED"}, rows))
	if report.TenantsFile == "" {
		fmt.Fprintln(w, "\ndown: all of a tenant's lanes failed; degraded: at least one. Closed form; add --tenants FILE for a tenant list's exact figures.")
		return
	}
	for _, c := range report.Cells {
		fmt.Fprintf(w, "\n%s\n", s.Bold(fmt.Sprintf("%s: %s tenants of %s", c.Cell, tenantCount(c.Tenants), report.TenantsFile)))
		st := c.Tenants
		if st == nil {
			fmt.Fprintln(w, "no tenant of the list routes to this cell")
			continue
		}
		fmt.Fprintf(w, "distinct shards:      %s of %s (expected %.1f for %d random tenants)\n", groupDigits(uint64(st.DistinctShards)), groupDigits(c.Shards), st.ExpectedDistinctShards, st.Count)
		fmt.Fprintf(w, "largest shared shard: %d tenants on lanes %s (%s of the load): %s\n", st.LargestGroup.Size, router.FormatLanes(st.LargestGroup.Lanes),
			pct(share(st.LargestGroup.Load, st.Load)), strings.Join(st.LargestGroup.Tenants, ", "))
		frows := [][]string{}
		for _, f := range st.Failures {
			frows = append(frows, []string{strconv.Itoa(f.Failed),
				pct(f.Expected.Down), pct(f.WorstDown), pct(f.WorstDownLoad),
				pct(f.Expected.Degraded), pct(f.WorstDegraded), pct(f.WorstDegradedLoad), router.FormatLanes(f.WorstLanes)})
		}
		fmt.Fprint(w, s.Table([]string{"FAILED LANES", "DOWN EXPECTED", "DOWN WORST", "(LOAD)", "DEGRADED EXPECTED", "DEGRADED WORST", "(LOAD)", "WORST SET"}, frows))
		if len(st.Noisiest) == 0 {
			continue
		}
		nrows := [][]string{}
		for _, n := range st.Noisiest {
			nrows = append(nrows, []string{n.Tenant, strconv.FormatFloat(n.Load, 'g', -1, 64), router.FormatLanes(n.Lanes),
				fmt.Sprintf("%d (%s, expected %s)", n.Identical, pct(n.IdenticalShare), pct(n.ExpectedIdentical)),
				fmt.Sprintf("%d (%s, expected %s)", n.AnyLane, pct(n.AnyLaneShare), pct(n.ExpectedAnyLane)),
				pct(n.AnyLaneLoadShare)})
		}
		fmt.Fprintln(w)
		fmt.Fprint(w, s.Table([]string{"NOISIEST", "LOAD", "LANES", "SAME SHARD", "SHARE A LANE", "THEIR LOAD"}, nrows))
	}
}

func tenantCount(st *router.TenantLaneStats) string {
	if st == nil {
		return "0"
	}
	return groupDigits(uint64(st.Count))
}

func share(x, total float64) float64 {
	if total == 0 {
		return 0
	}
	return x / total
}

// groupDigits writes 2016 as 2,016.
func groupDigits(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
