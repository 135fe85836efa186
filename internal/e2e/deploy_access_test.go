package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// Someone takes s3:PutObject out of cell-a's live task policy by hand (the
// console, another tool): no plan or apply gate sees it — they judge the
// repository's render, which is intact — but on AWS every request of
// cell-a's app that writes its prefix now fails. The rehearsal shows it
// the same way: the simulator decides cell-a's serving paths against its
// live policies, cell-a answers 5xx, and a deploy of a new image halts at
// the canary (cell-a, stacks/waves.yaml), rolls the canary back and never
// touches the other cells. No timing luck: the simulator reports the
// current minute with full-minute values, so every poll of the scaled
// bake reads the 5xx.
func TestDeployHaltsAtTheCanaryWhenItsPrefixWriteIsDenied(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const running, next = "registry.example.com/shop/api:1.4.2", "registry.example.com/shop/api:2.0.0"
	for cell, img := range cellImages(t, dir) {
		if img != running {
			t.Fatalf("the deployed demo fleet runs %s on %s, want %s", img, cell, running)
		}
	}

	// The live policy, less s3:PutObject; edited as `sim edit` edits
	// (drift), the value a JSON string as the policy property is one.
	cloud, err := sim.Open(filepath.Join(dir, ".cellctl", "sim"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cloud.Resources(sim.Filter{Stack: "cell-a", Name: "cell-a-task-policy"})
	if err != nil || len(rs) != 1 {
		t.Fatalf("cell-a's task policy: %v %v", rs, err)
	}
	live, _ := rs[0].Outputs["policy"].(string)
	cut := strings.Replace(live, `"s3:PutObject",`, "", 1)
	if cut == live || strings.Contains(cut, "s3:PutObject") {
		t.Fatalf("cell-a's task policy grants s3:PutObject once in the list the cell template writes:\n%s", live)
	}
	value, _ := json.Marshal(cut)
	mustRun(t, dir, "sim", "edit", "cell-a", "cell-a-task-policy", "policy", string(value))

	// The rehearsal sees what AWS would: cell-a answers every request 5xx
	// and says why; the other cells serve as before.
	var show struct {
		Cells []struct {
			Stack  string   `json:"stack"`
			Source string   `json:"source"`
			Denied []string `json:"denied"`
			Now    struct {
				Requests  float64 `json:"requests"`
				Target5xx float64 `json:"target5xx"`
			} `json:"now"`
		} `json:"cells"`
	}
	decode(t, mustRun(t, dir, "sim", "health", "show", "-o", "json"), &show)
	for _, c := range show.Cells {
		denied := c.Now.Requests > 0 && c.Now.Target5xx == c.Now.Requests
		if want := c.Stack == "cell-a"; denied != want || (len(c.Denied) > 0) != want {
			t.Errorf("%s serves %v 5xx of %v requests, denied paths %q; want every request 5xx only on cell-a", c.Stack, c.Now.Target5xx, c.Now.Requests, c.Denied)
		}
		if c.Stack == "cell-a" && (len(c.Denied) != 1 || !strings.Contains(c.Denied[0], "cell-a/task-role s3:PutObject router/bucket/cells/cell-a/") ||
			!strings.Contains(c.Source, "access denied: s3:PutObject")) {
			t.Errorf("cell-a must name the write it cannot make: source %q, denied %q", c.Source, c.Denied)
		}
	}

	// The deploy passes the repository's gates (its render breaks no
	// path), updates the canary, reads its 5xx, halts and rolls back.
	r := cellctl(t, dir, "deploy", "--image", next, "--bake-scale", "0.002")
	if r.code != 3 {
		t.Fatalf("want exit 3 (halted at a breach), got %s", r)
	}
	t.Logf("the halted rollout:\n%s", r)
	for _, want := range []string{"halted at wave canary", "cell-a breached error_rate_5xx: 100%", "rolled back"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the halt must say %q:\n%s", want, r)
		}
	}
	if !rowHas(r.stdout, "cell-a", "canary", running, "rolled back") {
		t.Errorf("cell-a must be rolled back to %s:\n%s", running, r)
	}
	for _, cell := range []string{"cell-b", "cell-c", "cell-d"} {
		if !rowHas(r.stdout, cell, running, "untouched") {
			t.Errorf("%s must be untouched on %s:\n%s", cell, running, r)
		}
	}
	for cell, img := range cellImages(t, dir) {
		if img != running {
			t.Errorf("after the halted rollout %s runs %s, want %s", cell, img, running)
		}
	}
}
