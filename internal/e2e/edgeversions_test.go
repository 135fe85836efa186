package e2e

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/sim"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// edgeVersions lists the published versions of the router's edge
// function in the fleet's simulated cloud.
func edgeVersions(t *testing.T, dir string) []string {
	t.Helper()
	c, err := sim.Open(cloud.SimDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := c.Resources(store.Filter{Stack: "router", Type: "aws:lambda/function:Function"})
	if err != nil || len(fns) != 1 {
		t.Fatalf("the router's edge function: %v, %v", fns, err)
	}
	_, vs, err := c.FunctionVersions(fns[0].Region, fns[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.Version)
	}
	return out
}

// TestOldEdgeVersionsArePrunedAfterARouterChange: each routing-table
// change publishes an edge function version. After the router's up, the
// versions no distribution runs beyond cells:edgeVersionsKept are deleted
// through the Lambda API (the simulator's here), and the run says so.
func TestOldEdgeVersionsArePrunedAfterARouterChange(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	before := edgeVersions(t, dir)
	if len(before) == 0 {
		t.Fatal("the deployed router has no published version")
	}
	routerFile := filepath.Join(dir, "stacks", "Pulumi.router.yaml")
	data, err := os.ReadFile(routerFile)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "config:\n", "config:\n  cells:edgeVersionsKept: 1\n", 1)
	if edited == string(data) {
		t.Fatalf("%s has no config:", routerFile)
	}
	if err := os.WriteFile(routerFile, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	bumpTable(t, dir)
	r := cellctl(t, dir, "up", "--router")
	if r.code != 0 {
		t.Fatalf("up --router: %s", r)
	}
	after := edgeVersions(t, dir)
	if len(after) != 1 || after[0] == before[len(before)-1] {
		t.Fatalf("versions before %v, after the change %v: want only the new one", before, after)
	}
	if out := r.stdout + r.stderr; !strings.Contains(out, "old edge function version(s)") || !strings.Contains(out, "kept "+after[0]) {
		t.Errorf("the run does not report the pruning:\n%s", out)
	}
	// What the distributions run is still there to serve: the edge model
	// reads it (status shows the table the primary serves).
	if r := cellctl(t, dir, "status", "-o", "json"); r.code != 0 {
		t.Errorf("status after pruning: %s", r)
	}
	if !reflect.DeepEqual(edgeVersions(t, dir), after) {
		t.Error("status changed the versions")
	}
}
