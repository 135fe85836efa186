// Package routeview draws the routing reports: `cellctl route` (tenant
// routes, a table diff, a table check), `cellctl capacity` and
// `cellctl lanes`, as tables, JSON and pull-request markdown.
package routeview

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/routing"
	"github.com/cellctl/cellctl/router"
)

// RouteReport is the -o json document of `cellctl route TENANT…`.
type RouteReport struct {
	Version  int64         `json:"version"`
	Checksum string        `json:"checksum"`
	Routes   []TenantRoute `json:"routes"`
	// Served is which table each of the deployed router's distributions
	// serves (the fleet's table only; absent when it cannot be read, or
	// for a router deployed before it reported it).
	Served []ServedTable `json:"served,omitempty"`
	// Errors lists the tenant ids that are not valid; they have no route.
	Errors []TenantError `json:"errors,omitempty"`
}

// Placement is where one tenant goes in one version of the table.
type Placement struct {
	Bucket    int    `json:"bucket"`
	Cell      string `json:"cell"`                // the cell serving the tenant now
	Override  bool   `json:"override"`            // an override decided the cell, not the bucket
	State     string `json:"state"`               // "active", or "migrating" while the tenant moves
	Target    string `json:"target,omitempty"`    // where a migrating tenant is going
	WriteMode string `json:"writeMode,omitempty"` // what the edge does with a migrating tenant's writes
	// Lanes are the tenant's lanes in Cell (X-Cell-Lanes), from the fleet's
	// cells:lanes and cells:laneShardSize; absent with --table.
	Lanes []int `json:"lanes,omitempty"`
}

// TenantRoute is one tenant's route.
type TenantRoute struct {
	Tenant string `json:"tenant"`
	Placement
}

// TenantError is a tenant id the router refuses.
type TenantError struct {
	Tenant string `json:"tenant"`
	Error  string `json:"error"`
}

// RouteDiff is the -o json document of `cellctl route --diff OLD`: the
// router's DiffReport, plus the named tenants' moves when tenants are given.
type RouteDiff struct {
	router.DiffReport
	Tenants []TenantChange `json:"tenants,omitempty"`
	Errors  []TenantError  `json:"errors,omitempty"`
}

// TenantChange is one named tenant in both versions of the table.
type TenantChange struct {
	Tenant string    `json:"tenant"`
	Moves  bool      `json:"moves"` // its cell changes
	From   Placement `json:"from"`
	To     Placement `json:"to"`
}

// RoutesShown is the tenants' routes and the table they came from.
type RoutesShown struct {
	Report RouteReport
	Source string
}

// DiffShown is a table change and the two files compared.
type DiffShown struct {
	Diff              RouteDiff
	OldSource, Source string
}

// The views of `cellctl route`, one set per report.
var (
	RoutesFormats = []render.Format[*RoutesShown]{
		{Name: render.FormatTable, Render: printRoutes},
		render.JSONFormat(func(r *RoutesShown) any { return r.Report }),
		{Name: render.FormatMarkdown, Render: func(io *iostreams.IOStreams, r *RoutesShown) error {
			writeRoutesMarkdown(io.Out, r.Report, r.Source)
			return nil
		}},
	}
	DiffFormats = []render.Format[*DiffShown]{
		{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, d *DiffShown) error { printDiff(io, d); return nil }},
		render.JSONFormat(func(d *DiffShown) any { return d.Diff }),
		{Name: render.FormatMarkdown, Render: func(io *iostreams.IOStreams, d *DiffShown) error {
			writeDiffMarkdown(io.Out, d.Diff, d.OldSource, d.Source)
			return nil
		}},
	}
)

// stateText is a placement's state for people: where a migrating tenant
// goes and whether its writes are refused meanwhile.
func stateText(p Placement) string {
	if p.State != string(router.OverrideMigrating) {
		return p.State
	}
	s := "migrating to " + p.Target
	if p.WriteMode == string(router.WriteRejectWith503) {
		s += " (writes get 503)"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func printRoutes(io *iostreams.IOStreams, shown *RoutesShown) error {
	report, source := shown.Report, shown.Source
	if len(report.Routes) == 0 {
		return nil
	}
	s := render.Out(io)
	rows := make([][]string, 0, len(report.Routes))
	lanes := hasLanes(report)
	for _, r := range report.Routes {
		state := stateText(r.Placement)
		if r.State == string(router.OverrideMigrating) {
			state = s.Warn(state)
		}
		row := []string{r.Tenant, strconv.Itoa(r.Bucket), r.Cell, yesNo(r.Override), state}
		if lanes {
			row = append(row, router.FormatLanes(r.Lanes))
		}
		rows = append(rows, row)
	}
	headers := []string{"TENANT", "BUCKET", "CELL", "OVERRIDE", "STATE"}
	if lanes {
		headers = append(headers, "LANES")
	}
	fmt.Fprint(io.Out, s.Table(headers, rows))
	fmt.Fprintf(io.Out, "\nrouting table version %d %s (%s)\n", report.Version, report.Checksum, source)
	for _, sv := range report.Served {
		line := servedText(sv)
		if !sv.Current {
			line = s.Warn(line)
		}
		fmt.Fprintln(io.Out, line)
	}
	return nil
}

func writeRoutesMarkdown(w io.Writer, report RouteReport, source string) {
	fmt.Fprintf(w, "### Tenant routes, routing table v%d (`%s`)\n\n", report.Version, source)
	lanes := hasLanes(report)
	headers := []string{"Tenant", "Bucket", "Cell", "Override", "State"}
	if lanes {
		headers = append(headers, "Lanes")
	}
	rows := make([][]string, 0, len(report.Routes))
	for _, r := range report.Routes {
		row := []string{r.Tenant, strconv.Itoa(r.Bucket), render.MarkdownCode(r.Cell), yesNo(r.Override), stateText(r.Placement)}
		if lanes {
			row = append(row, router.FormatLanes(r.Lanes))
		}
		rows = append(rows, row)
	}
	fmt.Fprint(w, render.MarkdownTable(headers, rows))
	for _, e := range report.Errors {
		fmt.Fprintf(w, "\n**Invalid:** %s\n", render.MarkdownEscape(e.Error))
	}
}

// pct prints a share as a percentage, keeping small moves visible.
// pct is a share as the routing reports print it.
var pct = routing.Pct

// diffSummary is the headline of a diff: version, buckets and tenants moved.
func diffSummary(d RouteDiff) (version, buckets, tenants string) {
	version = fmt.Sprintf("%d → %d", d.FromVersion, d.ToVersion)
	switch {
	case d.ToVersion < d.FromVersion:
		version += " (went down: versions only go up)"
	case !d.VersionOK:
		version += fmt.Sprintf(" (the table changed but the version did not go up: set it to %d)", d.FromVersion+1)
	case !d.Changed:
		version += " (no routing change)"
	}
	if d.Rebucketed {
		est := ""
		if d.Estimated {
			est = ", estimated"
		}
		buckets = fmt.Sprintf("bucket count changed %d → %d: every tenant is rehashed; %s of the hash space moves%s", d.FromBuckets, d.ToBuckets, pct(d.MovedBucketShare), est)
	} else {
		buckets = fmt.Sprintf("%d of %d (%s)", d.MovedBuckets, d.FromBuckets, pct(d.MovedBucketShare))
	}
	tenants = fmt.Sprintf("%s of tenants routed by hash; %d overridden tenant(s)", pct(d.HashedTenantShare), len(d.OverriddenTenantsMoved))
	return version, buckets, tenants
}

func overrideText(o router.Override) string {
	s := "pinned to " + o.Cell
	if o.State == router.OverrideMigrating {
		s = o.Cell + ", migrating to " + o.Target
		if o.WriteMode != "" {
			s += " (" + string(o.WriteMode) + ")"
		}
	}
	return s
}

// cellChangeText says what changed about a cell in both versions.
func cellChangeText(c router.CellChange) string {
	var parts []string
	if c.FromState != c.ToState {
		parts = append(parts, fmt.Sprintf("state %s → %s", c.FromState, c.ToState))
	}
	if c.FromWeight != c.ToWeight {
		parts = append(parts, fmt.Sprintf("weight %d → %d", c.FromWeight, c.ToWeight))
	}
	if c.FromBuckets != c.ToBuckets {
		parts = append(parts, fmt.Sprintf("buckets %d → %d", c.FromBuckets, c.ToBuckets))
	}
	return strings.Join(parts, ", ")
}

// diffSections are the diff's detail tables, shared by the terminal and
// markdown views: title, headers, rows.
type diffSection struct {
	title   string
	headers []string
	rows    [][]string
}

func diffSections(d RouteDiff) []diffSection {
	var out []diffSection
	if len(d.Moves) > 0 {
		sec := diffSection{title: "Moves", headers: []string{"FROM", "TO", "BUCKETS", "SHARE"}}
		for _, m := range d.Moves {
			n := strconv.Itoa(m.Buckets)
			if d.Rebucketed {
				n = "-"
			}
			sec.rows = append(sec.rows, []string{m.From, m.To, n, pct(m.Share)})
		}
		out = append(out, sec)
	}
	if n := len(d.CellsAdded) + len(d.CellsRemoved) + len(d.CellsChanged); n > 0 {
		sec := diffSection{title: "Cells", headers: []string{"CELL", "CHANGE"}}
		for _, c := range d.CellsAdded {
			sec.rows = append(sec.rows, []string{c, "added"})
		}
		for _, c := range d.CellsRemoved {
			sec.rows = append(sec.rows, []string{c, "removed"})
		}
		for _, c := range d.CellsChanged {
			sec.rows = append(sec.rows, []string{c.Cell, cellChangeText(c)})
		}
		out = append(out, sec)
	}
	if len(d.CapacitiesChanged) > 0 || d.LoadChanged {
		out = append(out, capacitySection(d.DiffReport))
	}
	if n := len(d.OverridesAdded) + len(d.OverridesRemoved) + len(d.OverridesChanged); n > 0 {
		sec := diffSection{title: "Overrides", headers: []string{"TENANT", "CHANGE", "BEFORE", "AFTER"}}
		for _, o := range d.OverridesAdded {
			sec.rows = append(sec.rows, []string{o.Tenant, "added", "-", overrideText(o)})
		}
		for _, o := range d.OverridesRemoved {
			sec.rows = append(sec.rows, []string{o.Tenant, "removed", overrideText(o), "-"})
		}
		for _, o := range d.OverridesChanged {
			sec.rows = append(sec.rows, []string{o.Tenant, "changed", overrideText(o.From), overrideText(o.To)})
		}
		out = append(out, sec)
	}
	if len(d.OverriddenTenantsMoved) > 0 {
		sec := diffSection{title: "Overridden tenants that move", headers: []string{"TENANT", "FROM", "TO"}}
		for _, m := range d.OverriddenTenantsMoved {
			sec.rows = append(sec.rows, []string{m.Tenant, m.From, m.To})
		}
		out = append(out, sec)
	}
	if len(d.Tenants) > 0 {
		sec := diffSection{title: "Tenants", headers: []string{"TENANT", "BUCKET", "CELL", "MOVES", "STATE"}}
		for _, t := range d.Tenants {
			bucket := strconv.Itoa(t.From.Bucket)
			if t.To.Bucket != t.From.Bucket {
				bucket += " → " + strconv.Itoa(t.To.Bucket)
			}
			cell := t.From.Cell
			if t.Moves {
				cell += " → " + t.To.Cell
			}
			state := stateText(t.From)
			if st := stateText(t.To); st != state {
				state += " → " + st
			}
			sec.rows = append(sec.rows, []string{t.Tenant, bucket, cell, yesNo(t.Moves), state})
		}
		out = append(out, sec)
	}
	return out
}

func printDiff(io *iostreams.IOStreams, shown *DiffShown) {
	d, oldSource, source := shown.Diff, shown.OldSource, shown.Source
	s := render.Out(io)
	w := io.Out
	version, buckets, tenants := diffSummary(d)
	if !d.VersionOK {
		version = s.Bad(version)
	}
	fmt.Fprintf(w, "%s → %s\n", oldSource, source)
	fmt.Fprintf(w, "version:        %s\n", version)
	fmt.Fprintf(w, "buckets moved:  %s\n", buckets)
	fmt.Fprintf(w, "tenants moved:  %s\n", tenants)
	for _, sec := range diffSections(d) {
		fmt.Fprintf(w, "\n%s\n", s.Bold(sec.title))
		fmt.Fprint(w, s.Table(sec.headers, sec.rows))
	}
}

func writeDiffMarkdown(w io.Writer, d RouteDiff, oldSource, source string) {
	version, buckets, tenants := diffSummary(d)
	icon := "✅"
	if !d.VersionOK {
		icon = "❌"
	}
	fmt.Fprintf(w, "### cellctl route --diff: routing table v%d → v%d\n\n", d.FromVersion, d.ToVersion)
	fmt.Fprintf(w, "Comparing `%s` with `%s`.\n\n", oldSource, source)
	fmt.Fprintf(w, "- **Version:** %s %s\n", icon, render.MarkdownEscape(version))
	fmt.Fprintf(w, "- **Buckets moved:** %s\n", render.MarkdownEscape(buckets))
	fmt.Fprintf(w, "- **Tenants moved:** %s\n", render.MarkdownEscape(tenants))
	for _, sec := range diffSections(d) {
		fmt.Fprintf(w, "\n#### %s\n\n", sec.title)
		heads := make([]string, len(sec.headers))
		for i, h := range sec.headers {
			heads[i] = strings.ToUpper(h[:1]) + strings.ToLower(h[1:])
		}
		fmt.Fprint(w, render.MarkdownTable(heads, sec.rows))
	}
	for _, e := range d.Errors {
		fmt.Fprintf(w, "\n**Invalid:** %s\n", render.MarkdownEscape(e.Error))
	}
}

// hasLanes reports whether the routes carry lanes (not with --table).
func hasLanes(report RouteReport) bool {
	for _, r := range report.Routes {
		if len(r.Lanes) > 0 {
			return true
		}
	}
	return false
}
