package routercmd

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/edge"
	"github.com/cellctl/cellctl/stacks"
)

const repoRoot = "../../.."

// packageDriver loads the package in a fresh node process, as a Lambda
// cold start does, and answers a GET and a POST for every tenant.
const packageDriver = `
const dir = process.argv[1];
const { handler } = require(dir + '/index.js');
if (handler.loadError) { console.error(handler.loadError.message); process.exit(1); }
const tenants = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const ev = (method, tenant) => ({ Records: [{ cf: { request: { method, uri: '/', querystring: '', clientIp: '203.0.113.9',
  headers: { 'x-tenant-id': [{ key: 'X-Tenant-Id', value: tenant }] },
  origin: { custom: { domainName: 'placeholder.invalid', customHeaders: {}, port: 443, protocol: 'https', path: '', readTimeout: 30, keepaliveTimeout: 5, sslProtocols: ['TLSv1.2'] } } } } }] });
(async () => {
  const out = [];
  for (const t of tenants) {
    const answer = async (m) => {
      const r = await handler(ev(m, t));
      if (r.status) return { status: r.status };
      return { origin: r.origin.custom.domainName, cell: r.headers['x-cell-id'][0].value, lanes: r.headers['x-cell-lanes'] ? r.headers['x-cell-lanes'][0].value : '' };
    };
    out.push({ get: await answer('GET'), post: await answer('POST') });
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`

type nodeAnswer struct {
	Status string `json:"status"`
	Origin string `json:"origin"`
	Cell   string `json:"cell"`
	Lanes  string `json:"lanes"`
}

func goldenTenantIDs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "routing", "golden_tenants.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		Tenant string `json:"tenant"`
	}
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.Tenant
	}
	return ids
}

// `cellctl router package DIR` writes the package the router stack ships;
// it loads in a fresh node and answers every golden tenant id as Go's
// model of the handler decides — for the fleet's table and for a table in
// the seeds' shape given with --table.
func TestPackageLoadsInNodeAndAnswersTheGoldenVectors(t *testing.T) {
	fl, err := fleet.Load(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	tenants := goldenTenantIDs(t)
	for _, tc := range []struct{ name, table string }{
		{"the fleet's table", ""},
		{"the seed's example", filepath.Join(repoRoot, "testdata", "routing", "seed", "example.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "edge")
			var out bytes.Buffer
			view, _ := render.Pick(render.FormatJSON, packageFormats...)
			o := &PackageOptions{IO: &iostreams.IOStreams{Out: &out, ErrOut: &out}, Fleet: func() (*fleet.Fleet, error) { return fl, nil }, View: view, OutDir: dir, TablePath: tc.table}
			if err := packageRun(o); err != nil {
				t.Fatal(err)
			}
			var rep PackageReport
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Files) != 6 || rep.ImageBytes == 0 || rep.NeededMemoryMB == 0 {
				t.Fatalf("report %s: %v", out.String(), err)
			}

			table := fl.Routing
			if tc.table != "" {
				if table, err = router.Load(tc.table); err != nil {
					t.Fatal(err)
				}
			}
			if rep.Checksum != table.Checksum() || rep.Version != table.Version() {
				t.Errorf("report names v%d %s, the table is v%d %s", rep.Version, rep.Checksum, table.Version(), table.Checksum())
			}
			// The files are exactly what the router program ships.
			opts, err := stacks.EdgeOptions(fl, table)
			if err != nil {
				t.Fatal(err)
			}
			want, err := edge.PackageWith(table, rep.Origins, opts)
			if err != nil {
				t.Fatal(err)
			}
			for name, content := range want {
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || string(got) != content {
					t.Errorf("%s differs from edge.PackageWith's (%v)", name, err)
				}
			}

			model, err := edge.NewRouterWith(table, rep.Origins, opts)
			if err != nil {
				t.Fatal(err)
			}
			in, _ := json.Marshal(tenants)
			cmd := exec.Command("node", "-e", packageDriver, dir)
			cmd.Stdin = bytes.NewReader(in)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, stderr.String())
			}
			var answers []struct{ Get, Post nodeAnswer }
			if err := json.Unmarshal(stdout, &answers); err != nil || len(answers) != len(tenants) {
				t.Fatalf("node answered %d of %d tenants: %v", len(answers), len(tenants), err)
			}
			rejected := 0
			for i, tenant := range tenants {
				for _, c := range []struct {
					method string
					got    nodeAnswer
				}{{"GET", answers[i].Get}, {"POST", answers[i].Post}} {
					w := model.Evaluate(edge.Request{Method: c.method, Headers: [][2]string{{"X-Tenant-Id", tenant}}})
					switch w.Kind {
					case edge.KindForward:
						if c.got.Cell != w.Cell || c.got.Origin != w.Origin || c.got.Lanes != w.Lanes {
							t.Fatalf("%s %q: node %+v, Go %+v", c.method, tenant, c.got, w)
						}
					default:
						if c.got.Status != strconv.Itoa(w.Status) {
							t.Fatalf("%s %q: node %+v, Go %+v", c.method, tenant, c.got, w)
						}
						if w.Kind == edge.KindWriteRejected {
							rejected++
						}
					}
				}
			}
			if tc.table != "" && rejected == 0 {
				t.Error("no write of a migrating tenant was rejected")
			}
		})
	}
}

func TestPackageRefusesADirectoryWithOtherFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := writePackage(dir, map[string]string{"config.json": "{}"})
	if err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("writePackage into a directory with other files: %v", err)
	}
}
