package edge

import (
	"testing"

	"github.com/cellctl/cellctl/router"
)

// The lifecycle transitions, seen from the edge: after a drain no golden
// tenant is sent to the drained cell (except a tenant still pinned there),
// and a migrating tenant's writes get 503 while its reads go to the source.
func TestEdgeAfterDrainAndMigrate(t *testing.T) {
	table := demoTable(t)
	s := table.Spec()
	s.Overrides = nil // nothing pinned to cell-d
	table, err := router.New(s)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := router.DrainCell(table, "cell-d", router.DrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRouter(tr.To, demoOrigins, "X-Tenant-Id")
	if err != nil {
		t.Fatal(err)
	}
	tenants := goldenTenants(t)
	sentBefore := 0
	for _, tenant := range tenants {
		if table.Route(tenant).Cell == "cell-d" {
			sentBefore++
		}
		out := r.Evaluate(Request{Method: "GET", Headers: [][2]string{{"X-Tenant-Id", tenant}}})
		if out.Kind != KindForward {
			continue // an invalid golden id
		}
		if out.Cell == "cell-d" || out.Origin == demoOrigins["cell-d"] {
			t.Fatalf("after the drain, %q is still sent to cell-d", tenant)
		}
		if want := tr.To.Route(tenant).Cell; out.Cell != want {
			t.Fatalf("%q: edge sends it to %s, the table says %s", tenant, out.Cell, want)
		}
	}
	if sentBefore == 0 {
		t.Fatal("no golden tenant was on cell-d before the drain: the test proves nothing")
	}
	// Migrate a tenant to another cell.
	tenant := "tenant-0001"
	src := tr.To.Route(tenant).Cell
	dst := "cell-b"
	if src == dst {
		dst = "cell-c"
	}
	mig, err := router.StartMigration(tr.To, tenant, dst)
	if err != nil {
		t.Fatal(err)
	}
	r, err = NewRouter(mig.To, demoOrigins, "X-Tenant-Id")
	if err != nil {
		t.Fatal(err)
	}
	hdr := [][2]string{{"X-Tenant-Id", tenant}}
	if out := r.Evaluate(Request{Method: "POST", Headers: hdr}); out.Kind != KindWriteRejected || out.Status != 503 || out.RetryAfter != RetryAfterSeconds {
		t.Errorf("a write while migrating: %+v, want 503 with Retry-After", out)
	}
	if out := r.Evaluate(Request{Method: "GET", Headers: hdr}); out.Kind != KindForward || out.Cell != src {
		t.Errorf("a read while migrating: %+v, want forwarded to %s", out, src)
	}
	fin, err := router.FinishMigration(mig.To, tenant)
	if err != nil {
		t.Fatal(err)
	}
	r, err = NewRouter(fin.To, demoOrigins, "X-Tenant-Id")
	if err != nil {
		t.Fatal(err)
	}
	if out := r.Evaluate(Request{Method: "POST", Headers: hdr}); out.Kind != KindForward || out.Cell != dst {
		t.Errorf("a write after the migration: %+v, want forwarded to %s", out, dst)
	}
}
