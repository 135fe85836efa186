package e2e

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// Issue 38 item 7. A deployed cell's account is where its data lives. Moving
// cell-c's stack file to another account (a role there that trusts the
// caller, so nothing else stops it) is refused by up, preview and deploy
// before anything runs, naming the supported move; nothing is created in
// the new account and cell-c is as it was.
func TestMoveDeployedCellToAnotherAccountRefused(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	mustRun(t, dir, "sim", "account", "role", secondAccount, "cellctl-deploy", "--trust", "123456789012")
	mustRun(t, dir, "sim", "--account", secondAccount, "zone", "add", "Z0B22223333444CELLS0", "b.cells.example.com")
	home := simCloud(t, dir)
	before, err := home.Resources(sim.Filter{Stack: "cell-c"})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "stacks", "Pulumi.cell-c.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(data), "config:\n", "config:\n"+
		"  cells:account: \""+secondAccount+"\"\n"+
		"  aws:assumeRole:\n    roleArn: "+deployRole+"\n    sessionName: cellctl\n", 1)
	if moved == string(data) {
		t.Fatalf("cell-c's stack file has no config block:\n%s", data)
	}
	if err := os.WriteFile(file, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"up", "cell-c"},
		{"preview", "cell-c"},
		{"deploy", "--image", "registry.example.com/shop/api:1.5.0", "--bake-scale", "0.002"},
	} {
		r := cellctl(t, dir, args...)
		if r.code != 1 {
			t.Fatalf("%v of a cell moved to another account: want exit 1, got %s", args, r)
		}
		for _, want := range []string{"refused, nothing was run", "deployed in account 123456789012", "account " + secondAccount, "add a new cell"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", args, want, r.stderr)
			}
		}
	}
	second, err := home.Account(secondAccount)
	if err != nil {
		t.Fatal(err)
	}
	if rs, _ := second.Resources(sim.Filter{}); len(rs) != 0 {
		t.Errorf("the refused moves created %d resources in the new account", len(rs))
	}
	after, err := home.Resources(sim.Filter{Stack: "cell-c"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("cell-c changed: %d resources before, %d after", len(before), len(after))
	}
}
