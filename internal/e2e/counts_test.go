package e2e

import (
	"fmt"
	"regexp"
	"testing"
)

// TestOneStackOneResourceCount: a stack's resource count is one number
// in every command — the cloud's resources (not the stack, the cell's
// component, providers or stack references). It was 81, 82 or 83 for one
// cell: status and `sim resources` counted 81, plan and up's progress 82
// (the component), up's summary 83 (the stack too); the router 21, 25,
// 26 or 27.
func TestOneStackOneResourceCount(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	var status struct {
		Stacks []struct {
			Name      string `json:"name"`
			Resources int    `json:"resources"`
		} `json:"stacks"`
	}
	decode(t, mustRun(t, dir, "status", "-o", "json"), &status)
	counted := map[string]int{}
	for _, s := range status.Stacks {
		counted[s.Name] = s.Resources
	}
	plan := cellctl(t, dir, "plan") // its exit code is its audits'; the table is what counts here
	for _, stack := range []string{"cell-a", "cell-d", "router"} {
		want := counted[stack]
		if want == 0 {
			t.Fatalf("status counts no resources for %s", stack)
		}
		var live struct {
			Resources []any `json:"resources"`
		}
		decode(t, mustRun(t, dir, "sim", "resources", "--cell", stack, "-o", "json"), &live)
		if len(live.Resources) != want {
			t.Errorf("%s: status counts %d, sim resources lists %d", stack, want, len(live.Resources))
		}
		if row := regexp.MustCompile(`(?m)^` + stack + `\s.*?\s[a-z]{2}-[a-z]+-\d\s+(\d+)\s`).FindStringSubmatch(plan.stdout); row == nil {
			t.Errorf("plan has no %s row:\n%s", stack, plan.stdout)
		} else if row[1] != fmt.Sprint(want) {
			t.Errorf("%s: status counts %d, plan %s:\n%s", stack, want, row[1], plan.stdout)
		}
	}
	up := mustRun(t, dir, "up", "cell-a", "-o", "json")
	var res opResult
	decode(t, up, &res)
	if c := res.stack(t, "cell-a").Changes; c.Same != counted["cell-a"] || c.Create+c.Update+c.Delete+c.Replace != 0 {
		t.Errorf("a no-op up of cell-a counts %+v, want same %d (status's count)", c, counted["cell-a"])
	}
	if m := regexp.MustCompile(`cell-a: \d+/(\d+) resources`).FindStringSubmatch(up.stderr); m != nil && m[1] != fmt.Sprint(counted["cell-a"]) {
		t.Errorf("up's progress counts %s resources for cell-a, status %d", m[1], counted["cell-a"])
	}
}
