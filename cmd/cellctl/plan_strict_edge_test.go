package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/router"
)

// TestPlanStrictWithAMillionPinnedTenants: the demo fleet with a routing
// table of router.MaxOverrides overrides passes `cellctl plan --strict`
// with the edge function at cells:edgeMemoryMb: 128 — the loader's fit
// check, the router rendered under mocks with the real function package
// (the routing image built, checked as the edge checks it and read back
// against the table) and every AWS rule.
func TestPlanStrictWithAMillionPinnedTenants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and plans a table of a million overrides")
	}
	dir := t.TempDir()
	copyFile := func(rel string, edit func(string) string) {
		data, err := os.ReadFile(filepath.Join("../..", rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(edit(string(data))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	same := func(s string) string { return s }
	copyFile("Pulumi.yaml", same)
	entries, err := os.ReadDir("../../stacks")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".yaml") {
			copyFile("stacks/"+n, same)
		}
	}
	copyFile("stacks/Pulumi.router.yaml", func(s string) string {
		return strings.Replace(s, "config:\n", "config:\n  cells:edgeMemoryMb: 128\n", 1)
	})

	demo, err := router.Load("../../stacks/routing.json")
	if err != nil {
		t.Fatal(err)
	}
	s := demo.Spec()
	cells := demo.CellIDs()
	s.Overrides = make([]router.Override, router.MaxOverrides)
	for i := range s.Overrides {
		o := router.Override{Tenant: fmt.Sprintf("%08x-7d1e-4b2a-9f3c-%012x", uint32(i)*2654435761, i), Cell: cells[i%len(cells)], State: router.OverrideActive}
		if i%10 == 0 {
			o.State, o.Target, o.WriteMode = router.OverrideMigrating, cells[(i+1)%len(cells)], router.WriteRejectWith503
		}
		s.Overrides[i] = o
	}
	s.Version++
	table, err := router.New(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := table.WriteFile(filepath.Join(dir, "stacks", "routing.json")); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := cellctl(t, "plan", "--dir", dir, "--strict", "router")
	if code != 0 || !strings.Contains(stdout, "aws rules: ok") {
		t.Fatalf("plan --strict with %d overrides at 128 MB: exit %d\n%s\n%s", router.MaxOverrides, code, stdout, stderr)
	}
}
