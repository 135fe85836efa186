package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rotationRecord reads the newest rotation record (kind secret-rotation,
// s-….json, among the rollout records) from the fleet's file backend.
func rotationRecord(t *testing.T, dir string) map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, ".cellctl", "state", ".cellctl", "rollouts", "s-*.json"))
	var newest map[string]any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // being replaced
		}
		var rec map[string]any
		if err := json.Unmarshal(data, &rec); err != nil {
			continue // a write in progress
		}
		if rec["kind"] != "secret-rotation" {
			t.Fatalf("%s is of kind %v", f, rec["kind"])
		}
		if newest == nil || rec["started"].(string) > newest["started"].(string) {
			newest = rec
		}
	}
	return newest
}

func stepState(rec map[string]any, name string) string {
	steps, _ := rec["steps"].([]any)
	for _, s := range steps {
		m, _ := s.(map[string]any)
		if m["name"] == name {
			st, _ := m["state"].(string)
			return st
		}
	}
	return ""
}

// TestSecretRotateNeverRefusesARequest rotates the origin-verify secret
// of the deployed demo fleet step by step on the simulated cloud and,
// after every step — and after a kill -9 during the router switch — reads
// the simulated cloud's deployed resources: the value each CloudFront
// origin sends must be one its cell's ALB rule accepts. A rollout holding
// the lock refuses the rotation; the killed rotation resumes from its
// record.
func TestSecretRotateNeverRefusesARequest(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const key, nextKey = "cells:originVerifySecret", "cells:originVerifySecretNext"
	cells := []string{"cell-a", "cell-b", "cell-c", "cell-d"}
	old := stackSecret(t, dir, "router", key)
	checkNoRefusal(t, dir, "before the rotation", cells)

	// A rollout holds the fleet: refused with exit 4, nothing changed.
	lock := filepath.Join(dir, ".cellctl", "state", ".cellctl", "locks", "rollout.json")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	holder := `{"rollout_id":"r-0123456789ab","host":"ci-runner-7","pid":4242,"started":"2026-12-01T10:00:00Z","nonce":"feedface"}`
	if err := os.WriteFile(lock, []byte(holder), 0o644); err != nil {
		t.Fatal(err)
	}
	before := stackFilesSum(t, dir)
	r := cellctl(t, dir, "secret", "rotate", "--bake-scale", "0.002")
	if r.code != 4 || !strings.Contains(r.stderr, "r-0123456789ab") {
		t.Fatalf("rotation while a rollout holds the lock: want exit 4 naming the rollout, got %s", r)
	}
	if stackFilesSum(t, dir) != before || rotationRecord(t, dir) != nil {
		t.Fatal("the refused rotation changed the stack files or wrote a record")
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}

	// Phase 1, one wave per run.
	for _, wave := range []string{"canary", "wave-1", "wave-2"} {
		mustRun(t, dir, "secret", "rotate", "--steps", "1", "--bake-scale", "0.002")
		if st := stepState(rotationRecord(t, dir), "accept/"+wave); st != "passed" {
			t.Fatalf("after one step: accept/%s is %q", wave, st)
		}
		checkNoRefusal(t, dir, "after accept/"+wave, cells)
	}
	next := stackSecret(t, dir, "cell-a", nextKey)
	if next == "" || next == old {
		t.Fatal("phase 1 stored no distinct next value")
	}
	for _, c := range cells {
		acc := originView(t, dir).Accepts[c]
		if len(acc) != 2 || acc[0] != fingerprintOf(old) || acc[1] != fingerprintOf(next) {
			t.Fatalf("%s accepts %v after phase 1, want the current and the next value", c, acc)
		}
	}

	// Phase 2, killed while the router switches.
	cmd := command(dir, "secret", "rotate", "--bake-scale", "0.002")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the router switch to start", 3*time.Minute, func() bool {
		return stepState(rotationRecord(t, dir), "switch/router") == "updating"
	})
	time.Sleep(1500 * time.Millisecond) // inside the router's update
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	waitPulumiGone(t, dir)
	checkNoRefusal(t, dir, "after a kill -9 during the router switch", cells)

	// The rerun takes over the dead rotation's lock and resumes.
	r = mustRun(t, dir, "secret", "rotate", "--steps", "1", "--bake-scale", "0.002")
	if !strings.Contains(r.stderr, "resuming") {
		t.Errorf("the rerun did not resume the rotation:\n%s", r)
	}
	if st := stepState(rotationRecord(t, dir), "switch/router"); st != "passed" {
		t.Fatalf("after the resume switch/router is %q:\n%s", st, r)
	}
	checkNoRefusal(t, dir, "after switch/router", cells)
	if v := originView(t, dir); v.Sends["cell-a"] != fingerprintOf(next) {
		t.Fatal("the router does not send the next value after the switch")
	}

	// Phase 3; the run of the last step finishes the record (a later
	// `secret rotate` would start the next rotation).
	for _, wave := range []string{"canary", "wave-1", "wave-2"} {
		r = mustRun(t, dir, "-o", "json", "secret", "rotate", "--steps", "1", "--bake-scale", "0.002")
		checkNoRefusal(t, dir, "after drop/"+wave, cells)
	}
	var rec struct {
		Finished *time.Time `json:"finished"`
	}
	decode(t, r, &rec)
	if rec.Finished == nil {
		t.Fatalf("the rotation did not finish:\n%s", r)
	}
	v := originView(t, dir)
	for _, c := range cells {
		if acc := v.Accepts[c]; len(acc) != 1 || acc[0] != fingerprintOf(next) {
			t.Errorf("%s accepts %v at the end, want only the new value", c, acc)
		}
		if stackSecret(t, dir, c, key) != next || stackSecret(t, dir, c, nextKey) != "" {
			t.Errorf("%s's stack file does not hold just the new value", c)
		}
	}
	if stackSecret(t, dir, "router", key) != next {
		t.Error("the router's stack file does not hold the new value")
	}
}

// waitPulumiGone waits until no pulumi process works in the fleet's
// state: the killed cellctl's pulumi children finish on their own.
func waitPulumiGone(t *testing.T, dir string) {
	t.Helper()
	waitFor(t, "the killed rotation's pulumi processes to exit", 2*time.Minute, func() bool {
		out, _ := exec.Command("pgrep", "-f", "pulumi").Output()
		for _, pid := range strings.Fields(string(out)) {
			env, err := os.ReadFile(filepath.Join("/proc", pid, "environ"))
			if err == nil && strings.Contains(string(env), filepath.Join(dir, ".cellctl")) {
				return false
			}
		}
		return true
	})
}
