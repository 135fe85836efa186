package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/sim"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/router/edge"
)

// TestFleetLifecycle walks the demo fleet through its life on the
// simulated cloud: a first up with an injected failure in one cell, the
// repair, an idempotent rerun, a one-cell config change seen by preview
// only for that cell, the router's published table, status, and the
// refusal to destroy a routed cell.
func TestFleetLifecycle(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)

	// An injected create failure in cell-c fails that cell only.
	mustRun(t, dir, "sim", "fault", "add", "--cell", "cell-c", "--type", "rds/cluster", "--op", "create")
	r := cellctl(t, dir, "up", "-o", "json")
	if r.code != 1 {
		t.Fatalf("up with a fault in cell-c: want exit 1, got %s", r)
	}
	var first opResult
	decode(t, r, &first)
	for _, c := range []string{"cell-a", "cell-b", "cell-d"} {
		if s := first.stack(t, c); s.Result != "succeeded" || s.Changes.Create == 0 {
			t.Errorf("%s: %+v", c, s)
		}
	}
	failed := first.stack(t, "cell-c")
	if failed.Result != "failed" || !strings.Contains(failed.Error, "InjectedFault") || !strings.Contains(failed.Error, "cell-c-db") {
		t.Errorf("cell-c must fail naming the injected fault and the resource: %+v", failed)
	}
	if !strings.Contains(strings.Join(failed.FailedResources, " "), "aws:rds/cluster:Cluster") {
		t.Errorf("cell-c failed resources: %v", failed.FailedResources)
	}
	if s := first.stack(t, "router"); s.Result != "skipped" {
		t.Errorf("router must wait for its cells: %+v", s)
	}
	if !strings.Contains(r.stderr, "cell-c") {
		t.Errorf("stderr should report cell-c's failure:\n%s", r.stderr)
	}

	// The fault was consumed: a rerun converges and brings up the router.
	var second opResult
	decode(t, mustRun(t, dir, "up", "-o", "json"), &second)
	for _, s := range second.Stacks {
		if s.Result != "succeeded" {
			t.Fatalf("second up: %+v", s)
		}
	}
	if s := second.stack(t, "cell-c"); s.Changes.Create == 0 {
		t.Errorf("cell-c should have created its remaining resources: %+v", s.Changes)
	}
	if s := second.stack(t, "router"); s.Changes.Create == 0 || s.Outputs["distributionDomain"] == nil {
		t.Errorf("router: %+v", s)
	}
	// The simulator refuses a policy on the primary's create, as CloudFront
	// does: the router's first up succeeds only by creating the primary
	// without it and attaching it in a second pass.
	if s := second.stack(t, "router"); s.Outputs["attachedDeploymentPolicyId"] == "" ||
		s.Outputs["attachedDeploymentPolicyId"] != s.Outputs["continuousDeploymentPolicyId"] ||
		!strings.Contains(strings.Join(s.Notes, " "), "attached the policy in a second update") {
		t.Errorf("router's first up did not attach its continuous deployment policy after creating the primary: outputs %v, notes %v", s.Outputs, s.Notes)
	}

	// A third up changes nothing.
	var third opResult
	decode(t, mustRun(t, dir, "up", "-o", "json"), &third)
	for _, s := range third.Stacks {
		c := s.Changes
		if s.Result != "succeeded" || c.Create+c.Update+c.Delete+c.Replace != 0 {
			t.Errorf("idempotent up changed %s: %+v", s.Name, s)
		}
	}

	checkRouterFunction(t, dir)

	// A refresh of a healthy cell settles: AWS's answers read back as the
	// program's inputs (ElastiCache users included), so nothing updates.
	for i := 0; i < 2; i++ {
		var refreshed opResult
		decode(t, mustRun(t, dir, "up", "cell-a", "--refresh", "-o", "json"), &refreshed)
		if s := refreshed.stack(t, "cell-a"); s.Result != "succeeded" || s.Changes.Update+s.Changes.Replace+s.Changes.Create+s.Changes.Delete != 0 {
			t.Errorf("up --refresh #%d of a healthy cell-a changed something: %+v", i+1, s)
		}
	}

	// A config change in one cell shows in that cell's preview only.
	stackFile := filepath.Join(dir, "stacks", "Pulumi.cell-b.yaml")
	data, err := os.ReadFile(stackFile)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "config:\n", "config:\n  cells:desiredCount: 5\n", 1)
	if err := os.WriteFile(stackFile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	var preview opResult
	decode(t, mustRun(t, dir, "preview", "-o", "json"), &preview)
	for _, s := range preview.Stacks {
		changes := s.Changes.Create + s.Changes.Update + s.Changes.Delete + s.Changes.Replace
		if s.Name == "cell-b" {
			if s.Changes.Update == 0 {
				t.Errorf("cell-b preview shows no update: %+v", s)
			}
			continue
		}
		if changes != 0 {
			t.Errorf("%s changed though only cell-b's config did: %+v", s.Name, s.Changes)
		}
	}
	md := mustRun(t, dir, "preview", "cell-b", "-o", "markdown").stdout
	if !regexp.MustCompile("(?m)^\\|`cell-b` *\\|").MatchString(md) || !strings.Contains(md, "cell-b-service") || !strings.Contains(md, "desiredCount") {
		t.Errorf("markdown preview:\n%s", md)
	}

	// status lists every cell with its image and resource count.
	var status struct {
		Stacks []struct {
			Name       string `json:"name"`
			Index      *int   `json:"index"`
			CIDR       string `json:"cidr"`
			Deployed   bool   `json:"deployed"`
			LastResult string `json:"lastResult"`
			Image      string `json:"image"`
			Resources  int    `json:"resources"`
		} `json:"stacks"`
	}
	decode(t, mustRun(t, dir, "status", "-o", "json"), &status)
	if len(status.Stacks) != 5 {
		t.Fatalf("status: %+v", status)
	}
	for _, s := range status.Stacks[:4] {
		if !s.Deployed || s.LastResult != "succeeded" || s.Image != "registry.example.com/shop/api:1.4.2" || s.Resources < 60 || s.Index == nil {
			t.Errorf("status of %s: %+v", s.Name, s)
		}
	}

	// A cell that still serves tenants is never destroyed.
	r = cellctl(t, dir, "destroy", "cell-a", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to destroy cell-a: tenants are still routed to it") {
		t.Fatalf("destroy of a routed cell: %s", r)
	}
	cloud, err := sim.Open(filepath.Join(dir, ".cellctl", "sim"))
	if err != nil {
		t.Fatal(err)
	}
	if rs, _ := cloud.Resources(sim.Filter{Stack: "cell-a", Type: "aws:ec2/vpc:Vpc"}); len(rs) != 1 {
		t.Fatalf("cell-a's VPC must still exist after a refused destroy, found %d", len(rs))
	}
}

// checkRouterFunction compares the published edge function's config with
// what the Go side renders from stacks/routing.json and the cells' ALBs.
func checkRouterFunction(t *testing.T, dir string) {
	t.Helper()
	cloud, err := sim.Open(filepath.Join(dir, ".cellctl", "sim"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := cloud.Resources(sim.Filter{Stack: "router", Type: "aws:lambda/function:Function"})
	if err != nil || len(fns) != 1 {
		t.Fatalf("router function: %v %+v", err, fns)
	}
	if fns[0].Region != "us-east-1" {
		t.Errorf("Lambda@Edge must be in us-east-1, got %s", fns[0].Region)
	}
	files, err := cloud.FunctionCode(fns[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	table, err := router.Load(filepath.Join(dir, "stacks", "routing.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Each cell's origin is its own name (<id>.<fleetDomain>), the alias
	// record the cell created for its ALB.
	origins := map[string]string{}
	records, err := cloud.Resources(sim.Filter{Type: "aws:route53/record:Record"})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range records {
		if rec.Stack != "router" && rec.Outputs["type"] == "A" {
			origins[rec.Stack] = rec.Outputs["fqdn"].(string)
		}
	}
	if len(origins) != 4 {
		t.Fatalf("cell DNS records: %v", origins)
	}
	// Each cell's lane layout, as the router stack bakes it in.
	fl, err := fleet.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	lanes := map[string]*router.Lanes{}
	for _, id := range table.CellIDs() {
		c := fl.Cell(id)
		lanes[id] = router.MustLanes(c.Lanes, c.LaneShardSize)
	}
	// The demo router's viewer domains are app.example.com and
	// *.app.example.com: the Host names a tenant only under the wildcard.
	wantFiles, err := edge.PackageWith(table, origins, edge.Options{TenantHeader: "X-Tenant-Id", TenantHostDomains: []string{"app.example.com"}, Lanes: lanes})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte(wantFiles[edge.ConfigFile])
	if files[edge.ImageFile] != wantFiles[edge.ImageFile] {
		t.Fatalf("the published function's routing image is not stacks/routing.json's (%d bytes, want %d)", len(files[edge.ImageFile]), len(wantFiles[edge.ImageFile]))
	}
	if files["lanes.js"] == "" {
		t.Error("the published function has no lanes.js")
	}
	if files["config.json"] != string(want) {
		t.Fatalf("the published function does not carry stacks/routing.json:\n got %s\nwant %s", files["config.json"], want)
	}
	var cfg struct {
		Version int64 `json:"version"`
	}
	if err := json.Unmarshal(want, &cfg); err != nil || cfg.Version != table.Version() {
		t.Fatalf("config version %d, table version %d (%v)", cfg.Version, table.Version(), err)
	}
}

// TestDestroyDrainedCell destroys a cell the routing table no longer
// routes to: the protected stateful resources stop a plain destroy with a
// message saying how to release them; --release-protected lifts the
// protection (and Aurora's deletion protection) and the cell is gone.
func TestDestroyDrainedCell(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	tablePath := filepath.Join(dir, "stacks", "routing.json")
	table, err := router.Load(tablePath)
	if err != nil {
		t.Fatal(err)
	}
	drained, err := router.Drain(table, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	if err := drained.WriteFile(tablePath); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "up", "cell-d")
	cloud := simCloud(t, dir)
	if n := countLive(t, cloud, "cell-d", ""); n == 0 {
		t.Fatal("cell-d did not come up")
	}

	r := cellctl(t, dir, "destroy", "cell-d", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "protected") || !strings.Contains(r.stderr, "--release-protected") ||
		!strings.Contains(r.stderr, "aws:rds/cluster:Cluster cell-d-db") {
		t.Fatalf("a plain destroy must stop at the protected resources and say how to release them: %s", r)
	}
	if n := countLive(t, cloud, "cell-d", "aws:rds/cluster:Cluster"); n != 1 {
		t.Fatalf("the refused destroy touched the database (%d clusters)", n)
	}

	r = cellctl(t, dir, "destroy", "cell-d", "--yes", "--release-protected", "-o", "json")
	if r.code != 0 {
		t.Fatalf("destroy --release-protected: %s", r)
	}
	if n := countLive(t, cloud, "cell-d", ""); n != 0 {
		live, _ := cloud.Resources(sim.Filter{Stack: "cell-d"})
		t.Fatalf("%d resources of cell-d remain: %+v", n, live)
	}
	var status struct {
		Stacks []struct {
			Resources int `json:"resources"`
		} `json:"stacks"`
	}
	decode(t, mustRun(t, dir, "status", "cell-d", "-o", "json"), &status)
	if status.Stacks[0].Resources != 0 {
		t.Fatalf("status still counts %d resources", status.Stacks[0].Resources)
	}

	// The final snapshot outlives the cell, under a name of this release:
	// recreating the cell and destroying it again does not collide with it
	// (DBClusterSnapshotAlreadyExists).
	snaps, err := cloud.Snapshots()
	if err != nil || len(snaps) != 1 || !strings.HasPrefix(snaps[0].Identifier, "cells-cell-d-final-") || snaps[0].Region != "us-west-2" {
		t.Fatalf("final snapshots after the destroy: %+v %v", snaps, err)
	}
	time.Sleep(1100 * time.Millisecond) // a release is named to the second
	mustRun(t, dir, "up", "cell-d")
	if r := cellctl(t, dir, "destroy", "cell-d", "--yes", "--release-protected"); r.code != 0 {
		t.Fatalf("second destroy of the recreated cell: %s", r)
	}
	if snaps, _ := cloud.Snapshots(); len(snaps) != 2 || snaps[0].Identifier == snaps[1].Identifier {
		t.Fatalf("final snapshots after the second destroy: %+v", snaps)
	}

	// Retire: the stack is empty, so the cell leaves routing.json, its wave
	// and the repository, and the fleet still plans.
	r = cellctl(t, dir, "destroy", "cell-d", "--yes", "--retire")
	if r.code != 0 || !strings.Contains(r.stderr, "removed cell-d from stacks/routing.json") || !strings.Contains(r.stderr, "deleted stacks/Pulumi.cell-d.yaml") {
		t.Fatalf("destroy --retire of a destroyed cell: %s", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "stacks", "Pulumi.cell-d.yaml")); !os.IsNotExist(err) {
		t.Fatalf("the stack file outlived the retire: %v", err)
	}
	if t2, err := router.Load(tablePath); err != nil {
		t.Fatal(err)
	} else if _, ok := t2.Cell("cell-d"); ok || t2.Version() != drained.Version()+1 {
		t.Fatalf("routing.json after the retire: version %d, still names cell-d: %v", t2.Version(), ok)
	}
	mustRun(t, dir, "plan")
}
