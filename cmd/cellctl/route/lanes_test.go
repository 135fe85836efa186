package route

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/routeview"
	"github.com/cellctl/cellctl/router"
)

func runLanes(t *testing.T, output string, opts LanesOptions) (string, error) {
	t.Helper()
	f, stdout, _ := routeFactory(output)
	opts.IO, opts.Fleet = f.IO, f.Fleet
	if opts.Noisiest == 0 {
		opts.Noisiest = 5
	}
	var err error
	if opts.View, err = render.Pick(output, routeview.LanesFormats...); err != nil {
		t.Fatal(err)
	}
	err = lanesRun(&opts)
	return stdout.String(), err
}

func TestNewCmdLanesFlags(t *testing.T) {
	f, _, _ := routeFactory(cmdutil.FormatTable)
	var got *LanesOptions
	cmd := NewCmdLanes(f, func(o *LanesOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"cell-b", "--tenants", "t.csv", "--lanes", "64", "--shard-size", "3", "--noisiest", "2"})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Cell != "cell-b" || got.TenantsPath != "t.csv" || got.Lanes != 64 || got.ShardSize != 3 || got.Noisiest != 2 {
		t.Errorf("options %+v", got)
	}
	for _, args := range [][]string{{"a", "b"}, {"--lanes", "-1"}} {
		cmd := NewCmdLanes(f, func(o *LanesOptions) error { t.Fatal("ran"); return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// The README's numbers, reproduced: M = 8, r = 2 (the demo fleet's
// default) gives 28 shards and 3.6 %; M = 64, r = 2 gives 2,016 and 0.05 %.
func TestLanesReproducesTheReadmeNumbers(t *testing.T) {
	out, err := runLanes(t, cmdutil.FormatTable, LanesOptions{Cell: "cell-a"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "cell-a  8          2          28             no           0.0% / 25.0%                   3.6% / 46.4%") {
		t.Errorf("cellctl lanes cell-a:\n%s", out)
	}
	out, err = runLanes(t, cmdutil.FormatTable, LanesOptions{Cell: "cell-a", Lanes: 64, ShardSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "64 (what if)") || !strings.Contains(out, "2,016") || !strings.Contains(out, "0.05% / 6.2%") {
		t.Errorf("cellctl lanes cell-a --lanes 64:\n%s", out)
	}
}

func TestLanesJSONWithTenants(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tenants.csv")
	var b strings.Builder
	b.WriteString("tenant,load\n")
	for i := 0; i < 4000; i++ {
		load := "1"
		if i == 7 {
			load = "5000"
		}
		b.WriteString(fmt.Sprintf("org-%04d,%s\n", i, load))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runLanes(t, cmdutil.FormatJSON, LanesOptions{TenantsPath: path, Noisiest: 1})
	if err != nil {
		t.Fatal(err)
	}
	var rep LanesReport
	oneJSON(t, out, &rep)
	f, _, _ := routeFactory(cmdutil.FormatJSON)
	fl, _ := f.Fleet()
	if len(rep.Cells) != len(fl.Cells) || rep.TenantCount != 4000 {
		t.Fatalf("%d cells, %d tenants", len(rep.Cells), rep.TenantCount)
	}
	total := 0
	for _, c := range rep.Cells {
		if c.Tenants == nil {
			t.Fatalf("%s: no tenant stats", c.Cell)
		}
		total += c.Tenants.Count
		if c.Shards != 28 || len(c.Tenants.Failures) != 2 || c.Tenants.DistinctShards != 28 {
			t.Errorf("%s: %+v", c.Cell, c.LaneReport)
		}
		// Each tenant is counted in the cell the routing table sends it to.
		for _, n := range c.Tenants.Noisiest {
			if r := fl.Routing.Route(n.Tenant); r.Cell != c.Cell {
				t.Errorf("%s is listed for %s but routes to %s", n.Tenant, c.Cell, r.Cell)
			}
			lanes, _ := router.MustLanes(8, 2).Of(n.Tenant, nil)
			if router.FormatLanes(lanes) != router.FormatLanes(n.Lanes) {
				t.Errorf("%s: lanes %v, want %v", n.Tenant, n.Lanes, lanes)
			}
		}
	}
	if total != 4000 {
		t.Errorf("%d tenants across the cells, want all 4000", total)
	}
}

func TestLanesBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("acme,1\nglobex,lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts LanesOptions
		want string
	}{
		{LanesOptions{Cell: "cell-zz"}, `"cell-zz" is not a cell of this fleet`},
		{LanesOptions{TenantsPath: bad}, bad + `:2: load: must be a finite number ≥ 0, got "lots"`},
		{LanesOptions{TenantsPath: filepath.Join(dir, "missing.txt")}, "no such file"},
		{LanesOptions{Cell: "cell-a", Lanes: 256, ShardSize: 128}, "allowed shard sizes are 1-8 or 248-256"},
	} {
		_, err := runLanes(t, cmdutil.FormatTable, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.opts, err, c.want)
		}
		if exitcode.Of(err) != exitcode.Error {
			t.Errorf("%+v: exit code %d", c.opts, exitcode.Of(err))
		}
	}
}

// cellctl route shows each tenant's lanes in its serving cell (from the
// fleet's config); with --table there is no fleet config, so no lanes.
func TestRouteShowsLanes(t *testing.T) {
	f, _, _ := routeFactory(cmdutil.FormatJSON)
	fl, err := f.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	tenants := []string{"acme", "globex", "東京", "tenant-1", "tenant-2"}
	out, _, err := runRoute(t, cmdutil.FormatJSON, RouteOptions{Tenants: tenants})
	if err != nil {
		t.Fatal(err)
	}
	var rep RouteReport
	oneJSON(t, out, &rep)
	for i, r := range rep.Routes {
		c := fl.Cell(r.Cell)
		want, _ := router.MustLanes(c.Lanes, c.LaneShardSize).Of(tenants[i], nil)
		if router.FormatLanes(r.Lanes) != router.FormatLanes(want) || len(want) != c.LaneShardSize {
			t.Errorf("%s: lanes %v, want %v", tenants[i], r.Lanes, want)
		}
	}
	table, _, err := runRoute(t, cmdutil.FormatTable, RouteOptions{Tenants: tenants[:1]})
	if err != nil || !strings.Contains(table, "LANES") || !strings.Contains(table, router.FormatLanes(rep.Routes[0].Lanes)) {
		t.Errorf("table:\n%s (%v)", table, err)
	}
	md, _, err := runRoute(t, cmdutil.FormatMarkdown, RouteOptions{Tenants: tenants[:1]})
	if err != nil || !strings.Contains(md, "|Lanes|") || !regexp.MustCompile(`\|`+regexp.QuoteMeta(router.FormatLanes(rep.Routes[0].Lanes))+` *\|\n`).MatchString(md) {
		t.Errorf("markdown:\n%s (%v)", md, err)
	}
	_, path := writeTables(t, func(tb *router.Table) *router.Table { return tb })
	plain, _, err := runRoute(t, cmdutil.FormatTable, RouteOptions{TablePath: path, Tenants: tenants[:1]})
	if err != nil || strings.Contains(plain, "LANES") {
		t.Errorf("--table shows lanes:\n%s (%v)", plain, err)
	}
}
