package e2e

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// TestShippedImageHolds: after `deploy --image X` completes, the
// repository still names the old image (CI shipped X from a clean
// checkout). `up`, `drift --behind` and `secret rotate` hold the desired
// state — the repository plus what the rollout shipped — so no verb
// silently downgrades a cell, drift reports no cell behind, and each says
// what to commit. Before internal/desired, the rotation left every cell
// on the repository's image with exit 0.
func TestShippedImageHolds(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const shipped = "registry.example.com/shop/api:2.0.0"
	mustRun(t, dir, "deploy", "--image", shipped, "--bake-scale", "0.002")
	check := func(after string) {
		t.Helper()
		for cell, img := range cellImages(t, dir) {
			if img != shipped {
				t.Errorf("after %s %s runs %s, want %s (what the rollout shipped)", after, cell, img, shipped)
			}
		}
	}
	check("the rollout")

	r := mustRun(t, dir, "up")
	if !strings.Contains(r.stderr, "shipped by rollout") || !strings.Contains(r.stderr, "commit `cells:image: "+shipped+"`") {
		t.Errorf("up must say which cells a rollout pins and what to commit:\n%s", r)
	}
	check("up")

	r = cellctl(t, dir, "drift", "--behind")
	if r.code != 0 || strings.Contains(r.stdout, "behind") && strings.Contains(r.stdout, "cellctl up cell-") {
		t.Errorf("drift --behind after the rollout: want exit 0 and no cell behind, got %s", r)
	}

	mustRun(t, dir, "secret", "rotate", "--bake-scale", "0.002")
	check("secret rotate")
}

// TestGatedVerbsRefuseARenumberedCell: deploy, secret rotate and router
// canary pass the apply path's gates before they change anything, exactly
// as up does: a deployed cell whose cells:index changed is refused with
// exit 1 and the simulated cloud is untouched.
func TestGatedVerbsRefuseARenumberedCell(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	c := simCloud(t, dir)
	before, err := c.Resources(sim.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "stacks", "Pulumi.cell-c.yaml")
	data, _ := os.ReadFile(file)
	renumbered := strings.Replace(string(data), "cells:index: 3", "cells:index: 9", 1)
	if renumbered == string(data) {
		t.Fatalf("cell-c's stack file has no cells:index: 3:\n%s", data)
	}
	if err := os.WriteFile(file, []byte(renumbered), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"up"},
		{"deploy", "--image", "registry.example.com/shop/api:2.0.0", "--bake-scale", "0.002"},
		{"secret", "rotate", "--bake-scale", "0.002"},
		{"router", "canary", "--bake-scale", "0.01"},
	} {
		r := cellctl(t, dir, args...)
		if r.code != 1 {
			t.Errorf("%v of a fleet with a renumbered cell: want exit 1, got %s", args, r)
		}
		for _, want := range []string{"refused, nothing was run", "deployed as index 3 (10.3.0.0/16)"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, r)
			}
		}
	}
	after, err := c.Resources(sim.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("the cloud changed: %d resources before, %d after", len(before), len(after))
	}
}
