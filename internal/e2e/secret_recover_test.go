package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A fresh clone (or uncommitted stack files) lacks the origin-verify
// secret and the salt cellctl's first up wrote. Minting a new value there
// would make every cell demand what CloudFront does not send. The value
// is recovered from the deployed state instead: the preview plans no
// change, the up changes nothing and writes the same value back, and a
// cell added to that clone gets the value CloudFront sends.
func TestSecretRecoveredFromDeployedState(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const key = "cells:originVerifySecret"
	want := stackSecret(t, dir, "router", key)
	if want == "" {
		t.Fatal("the first up stored no origin-verify secret")
	}
	stacks := []string{"cell-a", "cell-b", "cell-c", "cell-d", "router"}
	checkNoRefusal(t, dir, "after the first up", stacks[:4])

	// The clone: every stack file as committed.
	for _, s := range stacks {
		copyFile(t, filepath.Join(repoRoot, "stacks", "Pulumi."+s+".yaml"), filepath.Join(dir, "stacks", "Pulumi."+s+".yaml"))
		if stackSecret(t, dir, s, key) != "" {
			t.Fatalf("%s: the committed stack file holds the secret", s)
		}
	}
	before := stackFilesSum(t, dir)
	var prev opResult
	decode(t, mustRun(t, dir, "-o", "json", "preview"), &prev)
	for _, s := range stacks {
		c := prev.stack(t, s).Changes
		if c.Create+c.Update+c.Delete+c.Replace != 0 {
			t.Errorf("preview of %s plans changes %+v: a new secret was planned", s, c)
		}
	}
	if stackFilesSum(t, dir) != before {
		t.Error("the preview wrote the stack files")
	}

	// A cell added to the clone, deployed alone, gets the fleet's value.
	cellE := "# added after the first up\nconfig:\n  cells:index: 5\n"
	if err := os.WriteFile(filepath.Join(dir, "stacks", "Pulumi.cell-e.yaml"), []byte(cellE), 0o644); err != nil {
		t.Fatal(err)
	}
	wavesPath := filepath.Join(dir, "stacks", "waves.yaml")
	wv, _ := os.ReadFile(wavesPath)
	wv2 := strings.Replace(string(wv), "cells: [cell-c, cell-d]", "cells: [cell-c, cell-d, cell-e]", 1)
	if wv2 == string(wv) {
		t.Fatal("waves.yaml has no wave-2 line to extend")
	}
	if err := os.WriteFile(wavesPath, []byte(wv2), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "up", "cell-e", "-y")
	if got := stackSecret(t, dir, "cell-e", key); got != want {
		t.Error("cell-e got another origin-verify value than the fleet's")
	}
	for _, s := range stacks {
		if stackSecret(t, dir, s, key) != "" {
			t.Errorf("deploying cell-e wrote %s's stack file", s)
		}
	}
	if acc := originView(t, dir).Accepts["cell-e"]; len(acc) != 1 || acc[0] != fingerprintOf(want) {
		t.Errorf("cell-e's deployed ALB rule accepts %v, CloudFront sends %s", acc, fingerprintOf(want))
	}

	var up opResult
	decode(t, mustRun(t, dir, "-o", "json", "up", "-y"), &up)
	for _, s := range append(stacks, "cell-e") {
		c := up.stack(t, s).Changes
		if c.Create+c.Update+c.Delete+c.Replace != 0 {
			t.Errorf("up of %s changed %+v", s, c)
		}
		if got := stackSecret(t, dir, s, key); got != want {
			t.Errorf("%s: the stack file did not get the deployed value back", s)
		}
	}
	checkNoRefusal(t, dir, "after the up of the clone", stacks[:4])
}
