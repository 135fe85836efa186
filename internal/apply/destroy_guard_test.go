package apply

import (
	"context"
	"testing"

	"github.com/cellctl/cellctl/router"
)

// TestDestroyRequiresDrained: a cell is destroyed only once the routing
// table has it drained with no tenant pinned to it; the refusals are
// exact, and a refused destroy never reaches the engine.
func TestDestroyRequiresDrained(t *testing.T) {
	fl := demoFleet(t)
	draining, err := router.DrainCell(fl.Routing, "cell-d", router.DrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := router.DrainCell(fl.Routing, "cell-b", router.DrainOptions{Pinned: router.KeepPinned})
	if err != nil {
		t.Fatal(err)
	}
	drained, err := router.MarkDrained(draining.To, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cell  string
		table *router.Table
		want  string
	}{
		{"cell-d", fl.Routing, "refusing to destroy cell-d: tenants are still routed to it — cell-d is active in stacks/routing.json with 256 of 1024 buckets; " +
			"a cell is destroyed only once it is drained with no tenant pinned to it: run `cellctl drain cell-d` first"},
		{"cell-d", draining.To, "refusing to destroy cell-d: tenants are still routed to it — cell-d is draining in stacks/routing.json with 0 of 1024 buckets; " +
			"a cell is destroyed only once it is drained with no tenant pinned to it: run `cellctl drain cell-d` first"},
		{"cell-b", pinned.To, "refusing to destroy cell-b: tenants are still routed to it — cell-b is draining in stacks/routing.json with 0 of 1024 buckets and 1 tenant override(s) (acme); " +
			"a cell is destroyed only once it is drained with no tenant pinned to it: run `cellctl drain cell-b` first"},
	}
	for _, tc := range cases {
		eng := &fakeEngine{}
		f := *fl
		f.Routing = tc.table
		env, _ := envFor(&f, eng)
		_, err := Destroy(context.Background(), env, DestroyOptions{Cell: tc.cell})
		if err == nil || err.Error() != tc.want {
			t.Errorf("destroy %s:\n got %v\nwant %s", tc.cell, err, tc.want)
		}
		if len(eng.calls) != 0 {
			t.Errorf("a refused destroy used the engine: %v", eng.calls)
		}
	}
	// Drained: the guard lets it through to the engine (which reports
	// what is protected).
	eng := &fakeEngine{}
	f := *fl
	f.Routing = drained.To
	env, _ := envFor(&f, eng)
	if _, err := Destroy(context.Background(), env, DestroyOptions{Cell: "cell-d", DryRun: true}); err != nil {
		t.Fatalf("destroy of a drained cell: %v", err)
	}
	if len(eng.calls) == 0 || eng.calls[0] != "protected cell-d" {
		t.Fatalf("the drained cell's destroy must reach the engine, calls %v", eng.calls)
	}
}
