package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// cellImages is the image each cell runs, as its stack exports it and as
// the simulated cloud's ECS task definitions hold it.
func cellImages(t *testing.T, dir string) map[string]string {
	t.Helper()
	var status struct {
		Stacks []struct {
			Name  string `json:"name"`
			Kind  string `json:"kind"`
			Image string `json:"image"`
		} `json:"stacks"`
	}
	decode(t, mustRun(t, dir, "status", "-o", "json"), &status)
	cloud, err := sim.Open(filepath.Join(dir, ".cellctl", "sim"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range status.Stacks {
		if !strings.HasPrefix(s.Name, "cell-") {
			continue
		}
		out[s.Name] = s.Image
		// A cell in another account keeps its task definitions there.
		tds, _ := cloud.ResourcesOfEveryAccount(sim.Filter{Stack: s.Name, Type: "ecs/taskDefinition"})
		var live []string
		for _, td := range tds {
			raw, _ := json.Marshal(td.Inputs)
			if !strings.Contains(string(raw), s.Image) {
				live = append(live, string(raw))
			}
		}
		if len(tds) == 0 || len(live) > 0 {
			t.Errorf("%s exports image %s, but its task definitions (%d) are %v", s.Name, s.Image, len(tds), live)
		}
	}
	return out
}

// TestDeployGoodThenBadImage starts from the deployed demo fleet, rolls a good image
// through every wave, then a bad one (the simulator's health model makes
// it fail its 5xx and latency thresholds): the canary catches it, the
// canary is rolled back to the configuration it ran, later waves are
// untouched, and deploy exits 3 naming the cell, the signal and the
// reading. The gate reads the simulator through the aws-sdk-go-v2
// CloudWatch client, as it reads AWS.
func TestDeployGoodThenBadImage(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const good, bad = "registry.example.com/shop/api:2.0.0", "registry.example.com/shop/api:2.0.1-bad"

	// The dry run reads what each cell runs and changes nothing.
	r := mustRun(t, dir, "deploy", "--image", good, "--dry-run", "--bake-scale", "0.002")
	if !strings.Contains(r.stdout, "canary") || !strings.Contains(r.stdout, `image: "registry.example.com/shop/api:1.4.2" → "`+good+`"`) {
		t.Errorf("dry run:\n%s", r)
	}

	r = mustRun(t, dir, "deploy", "--image", good, "--bake-scale", "0.002")
	for _, cell := range []string{"cell-a", "cell-b", "cell-c", "cell-d"} {
		if !rowHas(r.stdout, cell, good, "new") {
			t.Errorf("good rollout: no row %s %s new:\n%s", cell, good, r)
		}
	}
	for cell, img := range cellImages(t, dir) {
		if img != good {
			t.Errorf("after the good rollout %s runs %s", cell, img)
		}
	}

	mustRun(t, dir, "sim", "health", "set", "--image", bad, "--error-rate", "3%", "--p99", "900ms")
	r = cellctl(t, dir, "deploy", "--image", bad, "--bake-scale", "0.002")
	if r.code != 3 {
		t.Fatalf("bad image: want exit 3, got %s", r)
	}
	t.Logf("the halted rollout:\n%s", r)
	if !strings.Contains(r.stderr, "halted at wave canary") || !strings.Contains(r.stderr, "cell-a") ||
		!(strings.Contains(r.stderr, "error_rate_5xx") || strings.Contains(r.stderr, "p99_latency_ms") || strings.Contains(r.stderr, "alarm ")) ||
		!strings.Contains(r.stderr, "rolled back") {
		t.Errorf("the halt must name wave, cell, signal and the rollback:\n%s", r)
	}
	if !rowHas(r.stdout, "cell-a", good, "rolled back") {
		t.Errorf("cell-a must be rolled back to %s:\n%s", good, r)
	}
	for _, cell := range []string{"cell-b", "cell-c", "cell-d"} {
		if !rowHas(r.stdout, cell, good, "untouched") {
			t.Errorf("%s must be untouched on %s:\n%s", cell, good, r)
		}
	}
	for cell, img := range cellImages(t, dir) {
		if img != good {
			t.Errorf("after the halted rollout %s runs %s, want %s", cell, img, good)
		}
	}

	// Both rollouts are on record in the backend.
	var list []struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	decode(t, mustRun(t, dir, "rollout", "list", "-o", "json"), &list)
	states := map[string]int{}
	for _, l := range list {
		states[l.State]++
	}
	if len(list) != 2 || states["complete"] != 1 || states["halted"] != 1 {
		t.Errorf("rollout list: %+v", list)
	}
	for _, l := range list {
		if l.State != "halted" {
			continue
		}
		// A halted rollout did not ship: its status exits 3.
		s := cellctl(t, dir, "rollout", "status", l.ID)
		if s.code != 3 || !strings.Contains(s.stdout, "halted") || !strings.Contains(s.stdout, "cell-a") {
			t.Errorf("rollout status %s:\n%s", l.ID, s)
		}
	}
}

// rowHas reports whether the table has a line with all of the fields.
func rowHas(table string, fields ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		ok := true
		for _, f := range fields {
			if !strings.Contains(line, f) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
