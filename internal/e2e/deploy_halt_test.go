package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// TestDeployInconclusiveGateHalts: the canary serves no traffic, so its
// bake cannot judge it; with on_inconclusive: halt (the demo fleet's) the
// rollout halts with exit 3 saying so, the canary keeps the new image
// (nothing breached, so nothing is rolled back) and no later wave starts;
// a later up keeps the canary there.
func TestDeployInconclusiveGateHalts(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const img = "registry.example.com/shop/api:6.0.0"
	mustRun(t, dir, "sim", "health", "set", "--cell", "cell-a", "--no-traffic")
	r := cellctl(t, dir, "deploy", "--image", img, "--bake-scale", "0.002")
	if r.code != 3 {
		t.Fatalf("an inconclusive canary: want exit 3, got %s", r)
	}
	if !strings.Contains(r.stderr, "halted at wave canary: inconclusive") || !strings.Contains(r.stderr, "cell-a") {
		t.Errorf("the halt must say the canary was inconclusive and name cell-a:\n%s", r.stderr)
	}
	rec := rolloutStatus(t, dir, rolloutID(t, r.stderr))
	if rec.State != "halted" || rec.waveStates() != "canary=halted wave-1=pending wave-2=pending" {
		t.Errorf("record: %s %s", rec.State, rec.waveStates())
	}
	if len(rec.Waves[0].Polls) == 0 {
		t.Errorf("the canary's polls must be on record")
	}
	if !rowHas(r.stdout, "cell-a", img) || !rowHas(r.stdout, "cell-b", baseImage, "untouched") {
		t.Errorf("final table:\n%s", r.stdout)
	}
	wantImages(t, dir, images(1, img, baseImage))

	// The halt holds the canary on the new image: an up of it keeps it
	// there, and its note says so and how to resolve the halt (before,
	// the up took cell-a back to the repository's image, exit 0).
	r = mustRun(t, dir, "up", "cell-a")
	for _, want := range []string{"note: cell-a runs " + img, "whose wave canary halted without a rollback (inconclusive",
		"`cellctl deploy --image " + img + " --retry`", "`cellctl deploy --image " + baseImage + "`"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("up after the halt: stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	wantImages(t, dir, images(1, img, baseImage))
}

// TestDeployUpdateFailureRollsBackWave: one cell of wave-2 fails its
// update (the simulated ECS refuses the service update once). Wave-2 is
// rolled back — cell-c, which updated fine, as well as cell-d — to the
// configuration each ran before the wave; the canary and wave-1 keep the
// new image; deploy exits 3 naming the cell and the failed update.
func TestDeployUpdateFailureRollsBackWave(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const img = "registry.example.com/shop/api:7.0.0"
	mustRun(t, dir, "sim", "fault", "add", "--cell", "cell-d", "--type", "ecs/service", "--op", "update", "--message", "deployment circuit breaker: tasks failed to start")
	r := cellctl(t, dir, "deploy", "--image", img, "--bake-scale", "0.002")
	if r.code != 3 {
		t.Fatalf("a failed update in wave-2: want exit 3, got %s", r)
	}
	if !strings.Contains(r.stderr, "halted at wave wave-2") || !strings.Contains(r.stderr, "cell-d") ||
		!strings.Contains(r.stderr, "update") || !strings.Contains(r.stderr, "rolled back") {
		t.Errorf("the halt must name wave-2, cell-d, the failed update and the rollback:\n%s", r.stderr)
	}
	rec := rolloutStatus(t, dir, rolloutID(t, r.stderr))
	if rec.State != "halted" || rec.waveStates() != "canary=passed wave-1=passed wave-2=rolled-back" {
		t.Errorf("record: %s %s", rec.State, rec.waveStates())
	}
	if b := rec.Waves[2].Breach; b == nil || b.Cell != "cell-d" || b.Signal != "update" {
		t.Errorf("wave-2's breach: %+v", b)
	}
	for _, c := range []string{"cell-c", "cell-d"} {
		if !rowHas(r.stdout, c, baseImage, "rolled back") {
			t.Errorf("%s must be rolled back to %s:\n%s", c, baseImage, r.stdout)
		}
	}
	for _, c := range []string{"cell-a", "cell-b"} {
		if !rowHas(r.stdout, c, img, "new") {
			t.Errorf("%s must keep %s:\n%s", c, img, r.stdout)
		}
	}
	wantImages(t, dir, images(2, img, baseImage))
}

// TestDeployConfigChangeRolledBackExactly: the rollout ships a change of
// settings, not of the image (the canary's task memory and desired count
// in its stack file). The canary breaches; the rollback puts back exactly
// what it ran — the ECS task definition and service as before, and a dry
// run of the original repository finds nothing to change.
func TestDeployConfigChangeRolledBackExactly(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	stackFile := filepath.Join(dir, "stacks", "Pulumi.cell-a.yaml")
	original, err := os.ReadFile(stackFile)
	if err != nil {
		t.Fatal(err)
	}
	cloud := simCloud(t, dir)
	taskDef := func() (memory, desired any) {
		// The service's task definition (the cell also has its
		// migration task's, cell-a-migrate-task).
		tds, _ := cloud.Resources(sim.Filter{Stack: "cell-a", Type: "ecs/taskDefinition", Name: "cell-a-task"})
		svcs, _ := cloud.Resources(sim.Filter{Stack: "cell-a", Type: "ecs/service"})
		if len(tds) != 1 || len(svcs) != 1 {
			t.Fatalf("cell-a has %d service task definitions and %d services", len(tds), len(svcs))
		}
		return tds[0].Inputs["memory"], svcs[0].Inputs["desiredCount"]
	}
	memBefore, countBefore := taskDef()

	// The up wrote the fleet's origin-verify secret at the end of the
	// file: the two settings go right under `config:`.
	changed := strings.Replace(string(original), "config:\n", "config:\n  cells:taskMemory: 2048\n  cells:desiredCount: 3\n", 1)
	if changed == string(original) {
		t.Fatalf("no config: line in cell-a's stack file:\n%s", original)
	}
	if err := os.WriteFile(stackFile, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, dir, "deploy", "--dry-run")
	if !strings.Contains(r.stdout, "cells:taskMemory: 1024 → 2048") || !strings.Contains(r.stdout, "cells:desiredCount: 2 → 3") || strings.Contains(r.stdout, "image:") {
		t.Errorf("the dry run must list the two settings by their keys, old → new, and no image change:\n%s", r.stdout)
	}
	// The preview of cell-a's update with the shipped configuration: the
	// task definition is replaced (memory forces it), the service updated.
	if !strings.Contains(r.stdout, "preview: ") || !strings.Contains(r.stdout, "aws:ecs/taskDefinition:TaskDefinition") || !strings.Contains(r.stdout, "aws:ecs/service:Service") {
		t.Errorf("the dry run must show the preview's resource changes:\n%s", r.stdout)
	}

	mustRun(t, dir, "sim", "health", "set", "--cell", "cell-a", "--error-rate", "4%")
	r = cellctl(t, dir, "deploy", "--bake-scale", "0.002")
	if r.code != 3 || !strings.Contains(r.stderr, "halted at wave canary") || !strings.Contains(r.stderr, "error_rate_5xx") {
		t.Fatalf("the canary must breach on its 5xx rate: %s", r)
	}
	rec := rolloutStatus(t, dir, rolloutID(t, r.stderr))
	if rec.waveStates() != "canary=rolled-back wave-1=pending wave-2=pending" {
		t.Errorf("record: %s", rec.waveStates())
	}
	c := rec.Waves[0].Cells[0]
	if c.Cell != "cell-a" || !strings.Contains(string(c.After), "2048") || strings.Contains(string(c.Before), "2048") {
		t.Errorf("cell-a's record: before %s, after %s", c.Before, c.After)
	}
	if mem, count := taskDef(); fmt.Sprint(mem) != fmt.Sprint(memBefore) || fmt.Sprint(count) != fmt.Sprint(countBefore) {
		t.Errorf("after the rollback cell-a's task memory is %v (was %v), desired count %v (was %v)", mem, memBefore, count, countBefore)
	}
	wantImages(t, dir, images(4, baseImage, baseImage))

	// The repository as it was: cell-a runs exactly that again.
	if err := os.WriteFile(stackFile, original, 0o644); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, dir, "deploy", "--dry-run")
	if strings.Contains(r.stdout, "→") || !strings.Contains(r.stdout, "cell-a: unchanged") {
		t.Errorf("cell-a must run exactly its configuration from before the rollout:\n%s", r.stdout)
	}
}
