package route

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/router"
)

// routeFactory is a Factory over test buffers whose fleet is the demo
// fleet at the repository root.
func routeFactory(output string) (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	io, _, stdout, stderr := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir = "../../.."
	f.Global.Output = output
	f.Global.Cloud = cmdutil.CloudAWS
	f.Global.Parallel = 1
	return f, stdout, stderr
}

// runRoute runs routeRun as the command would, returning stdout, stderr
// and the command's error.
func runRoute(t *testing.T, output string, opts RouteOptions) (string, string, error) {
	t.Helper()
	f, stdout, stderr := routeFactory(output)
	opts.IO, opts.Fleet, opts.Dir = f.IO, f.Fleet, f.Global.Dir
	if err := opts.pickViews(output); err != nil {
		t.Fatal(err)
	}
	err := routeRun(&opts)
	return stdout.String(), stderr.String(), err
}

// oneJSON decodes stdout, which must hold exactly one JSON document.
func oneJSON(t *testing.T, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("-o json: stdout is not the documented JSON document: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("-o json: stdout holds more than one JSON document:\n%s", stdout)
	}
}

// demoTableV1 (testdata/routing/demo_v1.json) is the demo fleet's routing
// table as first committed: the diff tests pin exact counts against it,
// whatever the fleet's stacks/routing.json holds today.
const demoTableV1 = "../../../testdata/routing/demo_v1.json"

// writeTables writes demoTableV1 and edit(demoTableV1) to a temp dir and
// returns their paths (old, new).
func writeTables(t *testing.T, edit func(*router.Table) *router.Table) (string, string) {
	t.Helper()
	dir := t.TempDir()
	oldPath, newPath := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")
	data, err := os.ReadFile(demoTableV1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(oldPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := router.Load(oldPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := edit(old).WriteFile(newPath); err != nil {
		t.Fatal(err)
	}
	return oldPath, newPath
}

func TestNewCmdRouteFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		output  string
		want    RouteOptions
		wantErr string
	}{
		{name: "tenants", args: []string{"acme", "globex"}, want: RouteOptions{Tenants: []string{"acme", "globex"}}},
		{name: "another table", args: []string{"--table", "t.json", "acme"}, want: RouteOptions{Tenants: []string{"acme"}, TablePath: "t.json"}},
		{name: "diff alone", args: []string{"--diff", "old.json"}, want: RouteOptions{DiffPath: "old.json"}},
		{name: "diff with tenants", args: []string{"--diff", "old.json", "--table", "new.json", "acme"},
			want: RouteOptions{Tenants: []string{"acme"}, TablePath: "new.json", DiffPath: "old.json"}},
		{name: "markdown", args: []string{"--diff", "old.json"}, output: cmdutil.FormatMarkdown, want: RouteOptions{DiffPath: "old.json"}},
		{name: "nothing to do", args: nil, wantErr: "--diff"},
		{name: "unsupported output", args: []string{"acme"}, output: "yaml", wantErr: `--output "yaml" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			output := tt.output
			if output == "" {
				output = cmdutil.FormatTable
			}
			f, _, _ := routeFactory(output)
			var got *RouteOptions
			cmd := NewCmdRoute(f, func(o *RouteOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if got != nil {
					t.Fatal("the command ran despite the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got.Tenants) != fmt.Sprint(tt.want.Tenants) || got.TablePath != tt.want.TablePath || got.DiffPath != tt.want.DiffPath {
				t.Errorf("options = tenants %q table %q diff %q, want tenants %q table %q diff %q",
					got.Tenants, got.TablePath, got.DiffPath, tt.want.Tenants, tt.want.TablePath, tt.want.DiffPath)
			}
		})
	}
}

// The documented -o json shape, byte for byte (compacted).
func TestRouteJSONShape(t *testing.T) {
	f, _, _ := routeFactory(cmdutil.FormatJSON)
	fl, err := f.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runRoute(t, cmdutil.FormatJSON, RouteOptions{Tenants: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	if stderr != "" {
		t.Errorf("-o json wrote to stderr: %q", stderr)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(stdout)); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	c := fl.Cell("cell-b")
	lanes, _ := router.MustLanes(c.Lanes, c.LaneShardSize).Of("acme", nil)
	want := fmt.Sprintf(`{"version":%d,"checksum":%q,"routes":[{"tenant":"acme","bucket":%d,"cell":"cell-b","override":true,"state":"active","lanes":[%s]}]}`,
		fl.Routing.Version(), fl.Routing.Checksum(), router.BucketOf("acme", fl.Routing.Buckets()), router.FormatLanes(lanes))
	if compact.String() != want {
		t.Errorf("cellctl route acme -o json =\n%s\nwant\n%s", compact.String(), want)
	}
}

// cellctl route over the demo fleet says what the table's Route says:
// acme is pinned to cell-b, globex is migrating, others follow their bucket.
func TestRouteDemoFleetAgreesWithTheTable(t *testing.T) {
	f, _, _ := routeFactory(cmdutil.FormatJSON)
	fl, err := f.Fleet()
	if err != nil {
		t.Fatal(err)
	}
	tenants := []string{"acme", "globex", "müller-gmbh", "東京"}
	for i := 0; i < 50; i++ {
		tenants = append(tenants, fmt.Sprintf("tenant-%d", i))
	}
	stdout, _, err := runRoute(t, cmdutil.FormatJSON, RouteOptions{Tenants: tenants})
	if err != nil {
		t.Fatal(err)
	}
	var got RouteReport
	oneJSON(t, stdout, &got)
	if got.Version != fl.Routing.Version() || len(got.Routes) != len(tenants) || len(got.Errors) != 0 {
		t.Fatalf("version %d, %d routes, %d errors; want version %d, %d routes, no errors", got.Version, len(got.Routes), len(got.Errors), fl.Routing.Version(), len(tenants))
	}
	for i, r := range got.Routes {
		want := fl.Routing.Route(tenants[i])
		if r.Tenant != tenants[i] || r.Bucket != want.Bucket || r.Cell != want.Cell || r.Override != (want.Override != nil) {
			t.Errorf("route %q = %+v, want bucket %d cell %s override %v (router.Table.Route)", tenants[i], r, want.Bucket, want.Cell, want.Override != nil)
		}
	}
	acme, globex := got.Routes[0], got.Routes[1]
	if acme.Cell != "cell-b" || !acme.Override || acme.State != "active" || acme.Target != "" {
		t.Errorf("acme = %+v, want pinned to cell-b by an override, active", acme)
	}
	if globex.Cell != "cell-a" || !globex.Override || globex.State != "migrating" || globex.Target != "cell-c" || globex.WriteMode != "reject_with_503" {
		t.Errorf("globex = %+v, want served by cell-a while migrating to cell-c with writes rejected (503)", globex)
	}
	for _, r := range got.Routes[2:] {
		if r.Override || r.State != "active" || r.Target != "" || r.WriteMode != "" {
			t.Errorf("%s has no override but shows %+v", r.Tenant, r)
		}
	}
}

func TestRouteTableOutput(t *testing.T) {
	_, path := writeTables(t, func(tb *router.Table) *router.Table { return tb })
	tb, err := router.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := runRoute(t, cmdutil.FormatTable, RouteOptions{TablePath: path, Tenants: []string{"acme", "globex", "tenant-3"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `TENANT    BUCKET  CELL    OVERRIDE  STATE
acme      527     cell-b  yes       active
globex    558     cell-a  yes       migrating to cell-c (writes get 503)
tenant-3  1009    cell-d  no        active

routing table version 1 ` + tb.Checksum() + ` (` + path + `)
`
	if stdout != want {
		t.Errorf("cellctl route (piped) =\n%s\nwant\n%s", stdout, want)
	}
	if stderr != "" {
		t.Errorf("stderr: %q", stderr)
	}
}

// An invalid tenant id is reported by name with the rule it breaks; the
// valid tenants still print and the command exits 1.
func TestRouteInvalidTenant(t *testing.T) {
	tenants := []string{"acme", "bad tenant", "", "zero\u200bwidth"}
	stdout, _, err := runRoute(t, cmdutil.FormatJSON, RouteOptions{Tenants: tenants})
	if err == nil || exitcode.Of(err) != exitcode.Error {
		t.Fatalf("error %v (exit %d), want exit 1", err, exitcode.Of(err))
	}
	for _, want := range []string{`"bad tenant"`, "U+0020 (space)", "tenant id is empty", "U+200B (zero-width space)", router.TenantRule} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	var got RouteReport
	oneJSON(t, stdout, &got)
	if len(got.Routes) != 1 || got.Routes[0].Tenant != "acme" {
		t.Errorf("routes = %+v, want only acme", got.Routes)
	}
	if len(got.Errors) != 3 || got.Errors[0].Tenant != "bad tenant" || got.Errors[1].Tenant != "" || got.Errors[2].Tenant != "zero\u200bwidth" {
		t.Errorf("errors = %+v, want the three invalid ids in order", got.Errors)
	}

	stdout, _, err = runRoute(t, cmdutil.FormatTable, RouteOptions{Tenants: tenants})
	if err == nil || !strings.Contains(stdout, "acme") || strings.Contains(stdout, "bad tenant") {
		t.Errorf("table output with invalid ids: err %v, stdout\n%s\nwant acme's row and an error", err, stdout)
	}
}

// cellctl route agrees with the edge handler on every golden vector: the
// node tests hold the handler to golden_tenants.json, this holds the CLI.
func TestRouteAgreesWithEveryGoldenVector(t *testing.T) {
	data, err := os.ReadFile("../../../testdata/routing/golden_tenants.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Tenant    string `json:"tenant"`
		Valid     bool   `json:"valid"`
		Bucket    int    `json:"bucket"`
		Cell      string `json:"cell"`
		Override  bool   `json:"override"`
		State     string `json:"state"`
		Target    string `json:"target"`
		WriteMode string `json:"write_mode"`
	}
	if err := json.Unmarshal(data, &vectors); err != nil {
		t.Fatal(err)
	}
	tenants := make([]string, len(vectors))
	for i, v := range vectors {
		tenants[i] = v.Tenant
	}
	stdout, _, runErr := runRoute(t, cmdutil.FormatJSON, RouteOptions{TablePath: "../../../testdata/routing/golden_table.json", Tenants: tenants})
	var got RouteReport
	oneJSON(t, stdout, &got)
	routes := map[string]TenantRoute{}
	for _, r := range got.Routes {
		routes[r.Tenant] = r
	}
	refused := map[string]bool{}
	for _, e := range got.Errors {
		refused[e.Tenant] = true
	}
	if len(got.Routes)+len(got.Errors) != len(vectors) {
		t.Fatalf("%d routes + %d errors for %d tenants", len(got.Routes), len(got.Errors), len(vectors))
	}
	valid, invalid := 0, 0
	for _, v := range vectors {
		r, routed := routes[v.Tenant]
		if !v.Valid {
			invalid++
			if routed || !refused[v.Tenant] {
				t.Errorf("%q: the edge refuses it, cellctl route %s", v.Tenant, map[bool]string{true: "routes it", false: "does not report it"}[routed])
			}
			continue
		}
		valid++
		state := v.State
		if state == "" {
			state = "active"
		}
		if !routed || r.Bucket != v.Bucket || r.Cell != v.Cell || r.Override != v.Override || r.State != state || r.Target != v.Target || r.WriteMode != v.WriteMode {
			t.Errorf("%q: cellctl route says %+v, the golden vector %+v", v.Tenant, r, v)
		}
	}
	if valid < 2000 || invalid < 30 {
		t.Fatalf("only %d valid and %d invalid vectors checked", valid, invalid)
	}
	if runErr == nil || exitcode.Of(runErr) != exitcode.Error {
		t.Errorf("the golden file holds %d invalid ids: error %v, want exit 1", invalid, runErr)
	}
}

// Draining cell-d moves exactly its 256 buckets, split over the three
// other cells, and no overridden tenant.
func TestRouteDiffDrain(t *testing.T) {
	oldPath, newPath := writeTables(t, func(tb *router.Table) *router.Table {
		d, err := router.Drain(tb, "cell-d")
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
	stdout, _, err := runRoute(t, cmdutil.FormatJSON, RouteOptions{TablePath: newPath, DiffPath: oldPath})
	if err != nil {
		t.Fatal(err)
	}
	var d router.DiffReport
	oneJSON(t, stdout, &d)
	if d.FromVersion != 1 || d.ToVersion != 2 || !d.Changed || !d.VersionOK || d.Rebucketed {
		t.Errorf("header = v%d → v%d changed %v versionOK %v rebucketed %v; want v1 → v2, changed, version ok", d.FromVersion, d.ToVersion, d.Changed, d.VersionOK, d.Rebucketed)
	}
	if d.MovedBuckets != 256 || d.MovedBucketShare != 0.25 || d.HashedTenantShare != 0.25 {
		t.Errorf("moved %d buckets (%v), tenants %v; want 256 buckets, a quarter of buckets and tenants", d.MovedBuckets, d.MovedBucketShare, d.HashedTenantShare)
	}
	moves := fmt.Sprint(d.Moves)
	if want := "[{cell-d cell-a 86 0.083984375 [768-853]} {cell-d cell-b 85 0.0830078125 [854-938]} {cell-d cell-c 85 0.0830078125 [939-1023]}]"; moves != want {
		t.Errorf("moves = %s, want %s", moves, want)
	}
	if len(d.OverriddenTenantsMoved) != 0 || len(d.CellsAdded)+len(d.CellsRemoved) != 0 ||
		len(d.OverridesAdded)+len(d.OverridesRemoved)+len(d.OverridesChanged) != 0 {
		t.Errorf("a drain must not touch overrides or the cell list: %+v", d)
	}
	changed := fmt.Sprint(d.CellsChanged)
	if want := "[{cell-a active active 1 1 256 342} {cell-b active active 1 1 256 341} {cell-c active active 1 1 256 341} {cell-d active drained 1 1 256 0}]"; changed != want {
		t.Errorf("cells changed = %s, want %s", changed, want)
	}

	// The people's view says the same.
	stdout, _, err = runRoute(t, cmdutil.FormatTable, RouteOptions{TablePath: newPath, DiffPath: oldPath})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"version:        1 → 2\n",
		"buckets moved:  256 of 1024 (25.0%)\n",
		"tenants moved:  25.0% of tenants routed by hash; 0 overridden tenant(s)\n",
		"cell-d  cell-a  86       8.4%\n",
		"cell-d  cell-c  85       8.3%\n",
		"cell-d  state active → drained, buckets 256 → 0\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("cellctl route --diff does not print %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "Overrides") {
		t.Errorf("an Overrides section without override changes:\n%s", stdout)
	}

	stdout, _, err = runRoute(t, cmdutil.FormatMarkdown, RouteOptions{TablePath: newPath, DiffPath: oldPath})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"### cellctl route --diff: routing table v1 → v2\n",
		"- **Version:** ✅ 1 → 2\n",
		"- **Buckets moved:** 256 of 1024 (25.0%)\n",
		"|From  |To    |Buckets|Share|\n|------|------|-------|-----|\n|cell-d|cell-a|86     |8.4% |\n",
		"|cell-d|state active → drained, buckets 256 → 0|\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("-o markdown does not print %q:\n%s", want, stdout)
		}
	}
}

// Named tenants with --diff are shown in both versions.
func TestRouteDiffWithTenants(t *testing.T) {
	oldPath, newPath := writeTables(t, func(tb *router.Table) *router.Table {
		d, err := router.Drain(tb, "cell-d")
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
	// tenant-3 hashes to bucket 1009 (cell-d, then cell-c), tenant-31 to
	// 832 (cell-d, then cell-a), tenant-1 to 139 (cell-a throughout).
	tenants := []string{"acme", "tenant-3", "tenant-31", "tenant-1"}
	stdout, _, err := runRoute(t, cmdutil.FormatJSON, RouteOptions{TablePath: newPath, DiffPath: oldPath, Tenants: tenants})
	if err != nil {
		t.Fatal(err)
	}
	var d RouteDiff
	oneJSON(t, stdout, &d)
	if d.MovedBuckets != 256 {
		t.Errorf("with tenants named the report is still the whole diff: moved %d buckets, want 256", d.MovedBuckets)
	}
	got := map[string]string{}
	for _, c := range d.Tenants {
		got[c.Tenant] = fmt.Sprintf("%d %s→%s moves=%v", c.From.Bucket, c.From.Cell, c.To.Cell, c.Moves)
	}
	want := map[string]string{
		"acme":      "527 cell-b→cell-b moves=false",
		"tenant-3":  "1009 cell-d→cell-c moves=true",
		"tenant-31": "832 cell-d→cell-a moves=true",
		"tenant-1":  "139 cell-a→cell-a moves=false",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tenant moves = %v\nwant %v", got, want)
	}

	stdout, _, err = runRoute(t, cmdutil.FormatTable, RouteOptions{TablePath: newPath, DiffPath: oldPath, Tenants: tenants})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "tenant-3   1009    cell-d → cell-c  yes    active\n") {
		t.Errorf("the Tenants section does not show tenant-3 moving from cell-d to cell-c:\n%s", stdout)
	}
}

// Override changes are listed by tenant, and the overridden tenants whose
// cell changes are named exactly.
func TestRouteDiffOverrides(t *testing.T) {
	oldPath, newPath := writeTables(t, func(tb *router.Table) *router.Table {
		s := tb.Spec()
		s.Version = 2
		s.Overrides = []router.Override{
			// acme's pin is removed: it goes back to its bucket's cell.
			{Tenant: "globex", Cell: "cell-c", State: router.OverrideActive}, // migration finished
			{Tenant: "initech", Cell: "cell-a", State: router.OverrideActive},
		}
		n, err := router.New(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	})
	stdout, _, err := runRoute(t, cmdutil.FormatJSON, RouteOptions{TablePath: newPath, DiffPath: oldPath})
	if err != nil {
		t.Fatal(err)
	}
	var d router.DiffReport
	oneJSON(t, stdout, &d)
	if d.MovedBuckets != 0 || len(d.Moves) != 0 {
		t.Errorf("no bucket moved, but the report says %d: %+v", d.MovedBuckets, d.Moves)
	}
	if len(d.OverridesAdded) != 1 || d.OverridesAdded[0].Tenant != "initech" ||
		len(d.OverridesRemoved) != 1 || d.OverridesRemoved[0].Tenant != "acme" ||
		len(d.OverridesChanged) != 1 || d.OverridesChanged[0].Tenant != "globex" {
		t.Errorf("overrides added %+v removed %+v changed %+v; want initech added, acme removed, globex changed",
			d.OverridesAdded, d.OverridesRemoved, d.OverridesChanged)
	}
	// acme (bucket 527) falls back to cell-c; globex moves a → c; initech's
	// bucket cell decides whether its pin moves it.
	old, _ := router.Load(oldPath)
	var wantMoved []string
	for _, tenant := range []string{"acme", "globex", "initech"} {
		n, _ := router.Load(newPath)
		if from, to := old.Route(tenant).Cell, n.Route(tenant).Cell; from != to {
			wantMoved = append(wantMoved, tenant+" "+from+"→"+to)
		}
	}
	var gotMoved []string
	for _, m := range d.OverriddenTenantsMoved {
		gotMoved = append(gotMoved, m.Tenant+" "+m.From+"→"+m.To)
	}
	if fmt.Sprint(gotMoved) != fmt.Sprint(wantMoved) || !strings.Contains(fmt.Sprint(gotMoved), "acme cell-b→cell-c") || !strings.Contains(fmt.Sprint(gotMoved), "globex cell-a→cell-c") {
		t.Errorf("overridden tenants moved = %v, want %v", gotMoved, wantMoved)
	}

	stdout, _, err = runRoute(t, cmdutil.FormatTable, RouteOptions{TablePath: newPath, DiffPath: oldPath})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"buckets moved:  0 of 1024 (0.0%)",
		"initech  added    -",
		"acme     removed  pinned to cell-b",
		"globex   changed  cell-a, migrating to cell-c (reject_with_503)  pinned to cell-c",
		"Overridden tenants that move",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("cellctl route --diff does not print %q:\n%s", want, stdout)
		}
	}
}

func TestRouteDiffVersionNotRaised(t *testing.T) {
	oldPath, newPath := writeTables(t, func(tb *router.Table) *router.Table {
		d, err := router.Drain(tb, "cell-d")
		if err != nil {
			t.Fatal(err)
		}
		s := d.Spec()
		s.Version = 1
		n, err := router.New(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	})
	stdout, _, err := runRoute(t, cmdutil.FormatTable, RouteOptions{TablePath: newPath, DiffPath: oldPath})
	if exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "set it to 2") {
		t.Fatalf("a changed table with the same version must exit 2 (findings), got %v", err)
	}
	if !strings.Contains(stdout, "the table changed but the version did not go up: set it to 2") {
		t.Errorf("a changed table with the same version is not called out:\n%s", stdout)
	}
}

func TestRouteMissingTableFile(t *testing.T) {
	_, _, err := runRoute(t, cmdutil.FormatTable, RouteOptions{TablePath: filepath.Join(t.TempDir(), "nope.json"), Tenants: []string{"acme"}})
	if err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("error %v, want one naming the missing file", err)
	}
}
