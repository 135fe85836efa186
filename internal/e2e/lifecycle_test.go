package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/edge"
)

// publishedConfig is the config.json of the edge function version the
// router stack published, read back from the simulated Lambda, with the
// routing image it names — what every edge would route with.
type publishedConfig struct {
	Version  int64             `json:"version"`
	Checksum string            `json:"checksum"`
	Origins  map[string]string `json:"origins"`
	image    *edge.Image
}

func readPublished(t *testing.T, dir string) publishedConfig {
	t.Helper()
	cfg, _ := readPublishedFiles(t, dir)
	return cfg
}

// readPublishedFiles also returns the files of the published function
// package (index.js, routing.js, config.json).
func readPublishedFiles(t *testing.T, dir string) (publishedConfig, map[string]string) {
	t.Helper()
	cloud := simCloud(t, dir)
	fns, err := cloud.Resources(sim.Filter{Stack: "router", Type: "aws:lambda/function:Function"})
	if err != nil || len(fns) != 1 {
		t.Fatalf("router function: %v %+v", err, fns)
	}
	version := fmt.Sprint(fns[0].Outputs["version"])
	files, err := cloud.FunctionCodeVersion(fns[0].Name, version)
	if err != nil {
		t.Fatalf("published version %s: %v", version, err)
	}
	var cfg publishedConfig
	if err := json.Unmarshal([]byte(files["config.json"]), &cfg); err != nil {
		t.Fatalf("config.json of version %s: %v", version, err)
	}
	if err := edge.CheckPackage(files); err != nil {
		t.Fatalf("the published package of version %s: %v", version, err)
	}
	if cfg.image, err = edge.ReadImage([]byte(files[edge.ImageFile])); err != nil {
		t.Fatalf("the routing image of version %s: %v", version, err)
	}
	return cfg, files
}

// edgeDriver runs the published handler under node: the route of every
// tenant given, and the answer to a POST and a GET for one tenant.
const edgeDriver = `
const fs = require('node:fs');
const { route, readPackage, compile } = require('./routing.js');
const { handler } = require('./index.js');
if (handler.loadError) throw handler.loadError;
const pkg = readPackage('.');
const rt = compile(pkg.cfg, pkg.image);
const tenants = JSON.parse(fs.readFileSync('tenants.json', 'utf8'));
const ev = (method, tenant) => ({ Records: [{ cf: { config: { eventType: 'origin-request' }, request: {
  clientIp: '203.0.113.9', method, uri: '/api/orders', querystring: '',
  headers: { 'x-tenant-id': [{ key: 'X-Tenant-Id', value: tenant }], host: [{ key: 'Host', value: 'shop.example.com' }] },
  origin: { custom: { customHeaders: { 'x-origin-verify': [{ key: 'X-Origin-Verify', value: 'sim' }] }, domainName: 'placeholder.invalid',
    keepaliveTimeout: 5, path: '', port: 443, protocol: 'https', readTimeout: 30, sslProtocols: ['TLSv1.2'] } } } } }] });
(async () => {
  // An array in the input's order, not an object: tenant ids such as
  // "__proto__" are not safe object keys.
  const routes = tenants.all.map((t) => route(rt, t).cell);
  const post = await handler(ev('POST', tenants.probe));
  const get = await handler(ev('GET', tenants.probe));
  const retry = post.headers && post.headers['retry-after'] ? post.headers['retry-after'][0].value : '';
  const domain = get.origin ? get.origin.custom.domainName : '';
  process.stdout.write(JSON.stringify({ routes, postStatus: String(post.status || ''), retryAfter: retry, getDomain: domain }));
})().catch((e) => { console.error(e); process.exit(1); });
`

type edgeAnswers struct {
	Routes     []string `json:"routes"`
	PostStatus string   `json:"postStatus"`
	RetryAfter string   `json:"retryAfter"`
	GetDomain  string   `json:"getDomain"`
}

func runEdge(t *testing.T, files map[string]string, tenants []string, probe string) edgeAnswers {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in, _ := json.Marshal(map[string]any{"all": tenants, "probe": probe})
	if err := os.WriteFile(filepath.Join(dir, "tenants.json"), in, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "driver.js"), []byte(edgeDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "driver.js")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node edge handler: %v\n%s", err, stderr)
	}
	var a edgeAnswers
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("node output: %v\n%s", err, out)
	}
	return a
}

// route answers which cell the published image sends a tenant to, the
// way the edge handler does: override first, then the tenant's bucket.
func (c publishedConfig) route(tenant string) (cell string, rejectWrites bool) {
	r := c.image.Route(tenant)
	return r.Cell, r.RejectsWrites()
}

func goldenTenants(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "routing", "golden_tenants.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		Tenant string `json:"tenant"`
		Valid  bool   `json:"valid"`
	}
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		if v.Valid {
			out = append(out, v.Tenant)
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d golden tenants", len(out))
	}
	return out
}

// lifecycleReport is the -o json document of drain, undrain and migrate.
type lifecycleReport struct {
	Transitions []struct {
		Action       string `json:"action"`
		Cell         string `json:"cell"`
		ToVersion    int64  `json:"toVersion"`
		MovedBuckets int    `json:"movedBuckets"`
	} `json:"transitions"`
	Published []int64 `json:"published"`
}

// TestOperatorLifecycle walks one deployed demo fleet through the
// operator's levers: destroy refused while the cell is routed, an
// evacuation (drain --now) of a cell whose own stack fails every
// operation, the published function table read back from the simulated
// Lambda, a stale checkout refused, two operators publishing at once, a
// tenant migration, and an undrain.
func TestOperatorLifecycle(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	tablePath := filepath.Join(dir, "stacks", "routing.json")
	if cfg := readPublished(t, dir); cfg.Version != 1 {
		t.Fatalf("the first up published table version %d", cfg.Version)
	}
	stale, err := os.ReadFile(tablePath)
	if err != nil {
		t.Fatal(err)
	}
	golden := goldenTenants(t)

	// Retire is refused while the cell is routed.
	r := cellctl(t, dir, "destroy", "cell-d", "--yes")
	want := "refusing to destroy cell-d: tenants are still routed to it — cell-d is active in stacks/routing.json with 256 of 1024 buckets; " +
		"a cell is destroyed only once it is drained with no tenant pinned to it: run `cellctl drain cell-d` first"
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("destroy of an active cell: %s", r)
	}

	// The cell's own stack now fails every operation: it cannot be read
	// (refreshed) or updated.
	mustRun(t, dir, "sim", "fault", "add", "--cell", "cell-d", "--always", "--message", "cell-d is on fire")
	if r := cellctl(t, dir, "up", "cell-d", "--refresh"); r.code == 0 || !strings.Contains(r.stdout+r.stderr, "cell-d is on fire") {
		t.Fatalf("the injected fault must make cell-d's own stack fail: %s", r)
	}

	// Dry run: both steps shown, nothing written or published.
	r = mustRun(t, dir, "drain", "cell-d", "--now", "--dry-run")
	if !strings.Contains(r.stdout, "drain cell-d: routing table version 1 → 2") || !strings.Contains(r.stdout, "mark-drained cell-d: routing table version 2 → 3") ||
		!strings.Contains(r.stdout, "dry run: nothing was written or published") {
		t.Fatalf("dry run output: %s", r)
	}
	if data, _ := os.ReadFile(tablePath); string(data) != string(stale) {
		t.Fatal("drain --dry-run changed stacks/routing.json")
	}

	// Evacuate: the router is the only stack touched.
	r = mustRun(t, dir, "drain", "cell-d", "--now", "-o", "json")
	var rep lifecycleReport
	decode(t, r, &rep)
	if len(rep.Published) != 2 || rep.Published[0] != 2 || rep.Published[1] != 3 {
		t.Fatalf("drain --now published %v, want [2 3]: %s", rep.Published, r)
	}
	if len(rep.Transitions) != 2 || rep.Transitions[0].MovedBuckets != 256 {
		t.Fatalf("transitions: %+v", rep.Transitions)
	}
	if strings.Contains(r.stderr, "cell-d is on fire") {
		t.Fatalf("the drain touched cell-d's stack: %s", r)
	}
	cfg := readPublished(t, dir)
	if cfg.Version != 3 {
		t.Fatalf("the router's function serves table version %d, want 3", cfg.Version)
	}
	if _, ok := cfg.Origins["cell-d"]; ok {
		t.Fatalf("the drained cell still has an origin: %v", cfg.Origins)
	}
	counts := map[string]int{}
	for _, tenant := range golden {
		cell, _ := cfg.route(tenant)
		if cell == "cell-d" || cell == "" {
			t.Fatalf("the published table sends golden tenant %s to %q", tenant, cell)
		}
		counts[cell]++
	}
	t.Logf("golden tenants after the drain: %v", counts)
	mustRun(t, dir, "sim", "fault", "clear")

	// Retire: once drained, the guard lets the destroy through (dry run:
	// the cell is destroyed in TestDestroyDrainedCell).
	if r := cellctl(t, dir, "destroy", "cell-d", "--release-protected", "--dry-run"); r.code != 0 {
		t.Fatalf("destroy of a drained cell must pass the routing guard: %s", r)
	}

	// A stale checkout (version 1) may not publish over version 3.
	current, _ := os.ReadFile(tablePath)
	if err := os.WriteFile(tablePath, stale, 0o644); err != nil {
		t.Fatal(err)
	}
	r = cellctl(t, dir, "migrate", "initech", "--to", "cell-c")
	if want := "the deployed router serves routing table version 3, newer than version 1 here: someone else published a change meanwhile; update this checkout (git pull) and run the command again"; r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("a stale checkout must be refused: %s", r)
	}
	if data, _ := os.ReadFile(tablePath); string(data) != string(stale) {
		t.Fatal("the refused migrate changed stacks/routing.json")
	}
	if err := os.WriteFile(tablePath, current, 0o644); err != nil {
		t.Fatal(err)
	}

	// Two operators at once: one publishes, the other is refused.
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i, tenant := range []string{"initech", "umbrella"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = cellctl(t, dir, "migrate", tenant, "--to", "cell-c")
		}()
	}
	wg.Wait()
	var ok, refused []result
	for _, r := range results {
		if r.code == 0 {
			ok = append(ok, r)
		} else {
			refused = append(refused, r)
		}
	}
	if len(ok) != 1 || len(refused) != 1 {
		t.Fatalf("two concurrent publishes: want one done and one refused:\n%s\n%s", results[0], results[1])
	}
	// The fleet lock makes the second command refuse (exit 4), or, if the
	// first finished already, SaveTable or the deployed version does.
	if msg := refused[0].stderr; !strings.Contains(msg, "changes the fleet and waits for no one: the fleet is held by") &&
		!strings.Contains(msg, "is changing stacks/routing.json in this checkout; run this one again when it is done") &&
		!strings.Contains(msg, "another change was made meanwhile; run the command again on the new table") &&
		!strings.Contains(msg, "someone else published a change meanwhile") {
		t.Fatalf("the refused publish must say why: %s", refused[0])
	}
	t.Logf("the refused publish said: %s", refused[0].stderr)
	cfg = readPublished(t, dir)
	tb, err := router.Load(tablePath)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Version != tb.Version() || tb.Version() != 4 {
		t.Fatalf("after the race the router serves %d and the file is at %d, want 4 for both", cfg.Version, tb.Version())
	}
	mover := "initech"
	if _, migrating := tb.Override("initech"); !migrating {
		mover = "umbrella"
	}

	// The migrating tenant's writes are refused at the edge; finish moves
	// it to the target.
	source, reject := cfg.route(mover)
	if !reject || source == "cell-c" {
		t.Fatalf("while migrating, %s must be served by its source with writes refused; got %s reject=%v", mover, source, reject)
	}
	// The published handler itself, under node, agrees with the table
	// read back: same cell for every golden tenant (none on the drained
	// cell), 503 + Retry-After for the migrating tenant's write, its read
	// sent to the source's ALB.
	cfg, files := readPublishedFiles(t, dir)
	answers := runEdge(t, files, golden, mover)
	if len(answers.Routes) != len(golden) {
		t.Fatalf("node routed %d of %d tenants", len(answers.Routes), len(golden))
	}
	for i, tenant := range golden {
		want, _ := cfg.route(tenant)
		if answers.Routes[i] != want || want == "cell-d" {
			t.Fatalf("node edge handler sends %s to %q, the published table to %q", tenant, answers.Routes[i], want)
		}
	}
	if answers.PostStatus != "503" || answers.RetryAfter == "" {
		t.Fatalf("a write of migrating %s: status %q, Retry-After %q", mover, answers.PostStatus, answers.RetryAfter)
	}
	if answers.GetDomain == "" || answers.GetDomain != cfg.Origins[source] {
		t.Fatalf("a read of migrating %s went to %q, want %s's ALB %q", mover, answers.GetDomain, source, cfg.Origins[source])
	}
	mustRun(t, dir, "migrate", mover, "--finish")
	cfg = readPublished(t, dir)
	if cell, reject := cfg.route(mover); cell != "cell-c" || reject || cfg.Version != 5 {
		t.Fatalf("after --finish %s → %s (reject=%v) at version %d, want cell-c at 5", mover, cell, reject, cfg.Version)
	}

	// Undrain: cell-d takes back the fewest buckets and gets its origin
	// back.
	decode(t, mustRun(t, dir, "undrain", "cell-d", "-o", "json"), &rep)
	if len(rep.Published) != 1 || rep.Published[0] != 6 || rep.Transitions[0].MovedBuckets != 256 {
		t.Fatalf("undrain: %+v", rep)
	}
	cfg = readPublished(t, dir)
	if _, ok := cfg.Origins["cell-d"]; !ok || cfg.Version != 6 {
		t.Fatalf("after the undrain cell-d has no origin at version %d: %v", cfg.Version, cfg.Origins)
	}

	// Add a cell: its stack comes up, then the published table gives it
	// buckets and an origin.
	r = mustRun(t, dir, "cell", "add", "-o", "json")
	var add struct {
		Cell      string   `json:"cell"`
		Index     int      `json:"index"`
		Wave      string   `json:"wave"`
		Steps     []string `json:"steps"`
		Published []int64  `json:"published"`
	}
	decode(t, r, &add)
	if add.Cell != "cell-e" || add.Index != 5 || add.Wave != "wave-2" || len(add.Published) != 1 || add.Published[0] != 7 {
		t.Fatalf("cell add: %+v\n%s", add, r)
	}
	if n := countLive(t, simCloud(t, dir), "cell-e", "aws:ecs/service:Service"); n != 1 {
		t.Fatalf("cell-e has %d ECS services", n)
	}
	// No manual step: cell add bootstrapped the new cell's database users
	// through the RDS Data API (TestMigrationSQLRunsOnPostgreSQL runs the
	// same statements on a real PostgreSQL).
	stmts, err := simCloud(t, dir).Statements("cell-e")
	if err != nil {
		t.Fatal(err)
	}
	var boot []string
	for _, st := range stmts {
		if st.Source == "data-api" && st.Error == "" {
			boot = append(boot, st.SQL)
		}
	}
	if all := strings.Join(boot, "\n"); !strings.Contains(all, "cellctl_app") || !strings.Contains(all, "cellctl_migrator") || !strings.Contains(all, "rds_iam") {
		t.Fatalf("cell add ran no bootstrap of cell-e's database users:\n%s", all)
	}
	waves, _ := os.ReadFile(filepath.Join(dir, "stacks", "waves.yaml"))
	if !strings.Contains(string(waves), "cells: [cell-c, cell-d, cell-e]") {
		t.Fatalf("waves.yaml:\n%s", waves)
	}
	cfg = readPublished(t, dir)
	if _, ok := cfg.Origins["cell-e"]; !ok || cfg.Version != 7 {
		t.Fatalf("the published table (version %d) has no origin for cell-e: %v", cfg.Version, cfg.Origins)
	}
	counts = map[string]int{}
	for _, tenant := range golden {
		cell, _ := cfg.route(tenant)
		counts[cell]++
	}
	if counts["cell-e"] == 0 {
		t.Fatalf("no golden tenant goes to the new cell: %v", counts)
	}
	t.Logf("golden tenants after cell add: %v", counts)
}
