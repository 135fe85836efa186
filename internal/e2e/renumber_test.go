package e2e

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// TestRenumberDeployedCellRefused changes a deployed cell's cells:index:
// up and preview exit 1 before any engine run, say why and what to do
// instead, and the simulated cloud is exactly as it was.
func TestRenumberDeployedCellRefused(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	mustRun(t, dir, "up", "cell-c")
	c := simCloud(t, dir)
	before, err := c.Resources(sim.Filter{Stack: "cell-c"})
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
	for _, args := range [][]string{{"up", "cell-c"}, {"preview", "cell-c"}, {"up"}} {
		r := cellctl(t, dir, args...)
		if r.code != 1 {
			t.Fatalf("%v of a renumbered cell: want exit 1, got %s", args, r)
		}
		for _, want := range []string{"refused, nothing was run", "deployed as index 3 (10.3.0.0/16)", "add a new cell with cells:index 9"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, r)
			}
		}
	}
	after, err := c.Resources(sim.Filter{Stack: "cell-c"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("the cloud changed: %d resources before, %d after", len(before), len(after))
	}
	if others, _ := c.Resources(sim.Filter{Stack: "cell-a"}); len(others) != 0 {
		t.Fatalf("a full up ran cell-a despite the refusal: %d resources", len(others))
	}
}
