package e2e

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/quota"
	"github.com/cellctl/cellctl/internal/sim"
)

// TestShippedImageHolds: after `deploy --image X` completes, the
// repository still names the old image (CI shipped X from a clean
// checkout). `up`, `drift --behind` and `secret rotate` hold the desired
// state — the repository plus what the rollout shipped — so no verb
// silently downgrades a cell, drift reports no cell behind, and each says
// what to commit. Before internal/desired, the rotation left every cell
// on the repository's image with exit 0. On the deployed two-cell fleet:
// the claim is every cell's, wave by wave, so two waves of one cell each
// test it as the demo's three did, at half the engine runs.
func TestShippedImageHolds(t *testing.T) {
	t.Parallel()
	dir := deployedTwoCellFleet(t)
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

// TestAuditsAreGreenAfterTheDemo: `make demo`'s deploys — a good image
// shipped everywhere, a bad image halted and rolled back at the canary, a
// failing migration halted at the canary — leave a fleet that runs what
// it last shipped, so every audit is green: drift's skew and behind read
// that release (the image and each cell's schema) as the desired state,
// the canary's schema left by the rolled-back release is shown as what it
// is, never as a target. Before, drift exited 2 with 8 findings: every
// cell an image outlier against Pulumi.yaml's image, and cells b–d
// "behind" the rolled-back release's schema with advice to re-ship it.
func TestAuditsAreGreenAfterTheDemo(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const good, bad, badMigration = "registry.example.com/shop/api:1.5.0", "registry.example.com/shop/api:1.5.1-bad", "registry.example.com/shop/api:1.6.0"
	mustRun(t, dir, "deploy", "--image", good, "--bake-scale", "0.002")
	mustRun(t, dir, "sim", "health", "set", "--image", bad, "--error-rate", "3%", "--p99", "900ms")
	if r := cellctl(t, dir, "deploy", "--image", bad, "--bake-scale", "0.002"); r.code != 3 {
		t.Fatalf("the bad image: want exit 3 (halted at the canary), got %s", r)
	}
	mustRun(t, dir, "sim", "task", "set", "--image", badMigration, "--exit", "1", "--log", `ERROR: relation "orders" already exists`)
	if r := cellctl(t, dir, "deploy", "--image", badMigration, "--bake-scale", "0.002"); r.code != 3 {
		t.Fatalf("the failing migration: want exit 3 (halted at the canary), got %s", r)
	}
	wantImages(t, dir, images(4, good, good))

	for _, args := range [][]string{{"drift"}, {"drift", "--behind"}} {
		r := cellctl(t, dir, append(args, "-o", "json")...)
		var rep driftReport
		decode(t, r, &rep)
		if r.code != 0 || len(rep.Findings) != 0 {
			t.Errorf("%v after the demo: want exit 0 and no findings, got %s", args, r)
		}
		if n := strings.Count(r.stderr, "shipped by rollout"); n != 1 {
			t.Errorf("%v: the shipped release is noted %d times, want once:\n%s", args, n, r.stderr)
		}
		if !slices.ContainsFunc(rep.Notes, func(n string) bool {
			return strings.HasPrefix(n, "cell-a's schema is 1.5.1-bad, left in place by rollout") && strings.Contains(n, "not a target")
		}) {
			t.Errorf("%v: cell-a's schema must be shown as what the rolled-back release left: %q", args, rep.Notes)
		}
	}

	if r := cellctl(t, dir, "health"); r.code != 0 || !strings.Contains(r.stdout, "all 4 cells healthy") {
		t.Errorf("health after the demo: want exit 0, all healthy, got %s", r)
	}

	r := cellctl(t, dir, "quota", "-o", "json")
	var q quota.Report
	decode(t, r, &q)
	if r.code != 0 || q.Critical != 0 {
		t.Errorf("quota after the demo: want exit 0 and nothing critical, got %s", r)
	}
	for _, row := range q.Rows {
		if row.Finding() {
			t.Errorf("quota finding after the demo: %+v", row)
		}
	}

	r = cellctl(t, dir, "status")
	if r.code != 0 || !strings.Contains(r.stdout, "1.5.1-bad (left by rolled-back r-") || strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("status after the demo: want exit 0 and cell-a's schema as what the rolled-back release left, got %s", r)
	}
}
