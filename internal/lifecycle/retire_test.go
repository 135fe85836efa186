package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router"
)

// Retire, after a drain: the cell leaves the routing table (a new
// version, the previous kept), its wave (the rest of waves.yaml byte for
// byte) and the repository (its stack file), and the fleet still loads.
func TestRetireRemovesADrainedCell(t *testing.T) {
	h := newHarness(t, 1)
	if _, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d", Now: true}); err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	wavesPath := filepath.Join(h.dir, "stacks", fleet.WavesFile)
	before, _ := os.ReadFile(wavesPath)
	fl, err := fleet.Load(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	version := fl.Routing.Version()
	done, err := Retire(fl, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 3 || !strings.Contains(done[0], "removed cell-d from stacks/routing.json") || !strings.Contains(done[2], "deleted stacks/Pulumi.cell-d.yaml") {
		t.Fatalf("steps: %q", done)
	}
	after, _ := os.ReadFile(wavesPath)
	want := strings.Replace(string(before), "cells: [cell-c, cell-d]", "cells: [cell-c]", 1)
	if string(after) != want || want == string(before) {
		t.Fatalf("waves.yaml:\n%s\nwant:\n%s", after, want)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "stacks", "Pulumi.cell-d.yaml")); !os.IsNotExist(err) {
		t.Fatalf("the stack file is still there: %v", err)
	}
	fl2, err := fleet.Load(h.dir)
	if err != nil {
		t.Fatalf("the retired fleet does not load: %v", err)
	}
	if fl2.Cell("cell-d") != nil || fl2.Routing.Version() != version+1 {
		t.Fatalf("cell-d still in the fleet, or version %d (want %d)", fl2.Routing.Version(), version+1)
	}
	if _, ok := fl2.Routing.Cell("cell-d"); ok {
		t.Fatal("cell-d is still in the routing table")
	}
	prev, err := router.Load(filepath.Join(h.dir, router.PreviousFile))
	if err != nil || prev.Version() != version {
		t.Fatalf("previous table: %v", err)
	}
}

// Refusals leave every file as it was; the messages are exact.
func TestRetireRefusals(t *testing.T) {
	h := newHarness(t, 1)
	fl, err := fleet.Load(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	table := h.tableBytes(t)
	if _, err := Retire(fl, "cell-d"); err == nil || err.Error() != "refusing to retire cell-d: it is active in routing.json with 256 bucket(s); drain it first (`cellctl drain cell-d`)" {
		t.Errorf("active cell: %v", err)
	}
	if _, err := Retire(fl, "cell-z"); err == nil || !strings.HasPrefix(err.Error(), `unknown cell "cell-z"`) {
		t.Errorf("unknown cell: %v", err)
	}
	// The only cell of its wave: which wave replaces it is the operator's call.
	if _, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-b", Now: true, MovePinned: true}); err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	fl, _ = fleet.Load(h.dir)
	table = h.tableBytes(t)
	if _, err := Retire(fl, "cell-b"); err == nil || err.Error() != `removing cell-b from stacks/waves.yaml: cell-b is the only cell of wave "wave-1"; remove the wave by hand` {
		t.Errorf("only cell of a wave: %v", err)
	}
	if h.tableBytes(t) != table {
		t.Error("a refused retire changed the routing table")
	}
	if _, err := os.Stat(filepath.Join(h.dir, "stacks", "Pulumi.cell-b.yaml")); err != nil {
		t.Errorf("a refused retire deleted the stack file: %v", err)
	}
}

func TestRemoveFromWaveBlockList(t *testing.T) {
	in := "waves:\n  - name: one\n    cells:\n      - cell-a\n      - cell-b # the big one\n  - name: two\n    cells: [cell-c, cell-d, cell-e]\n"
	out, wave, err := removeFromWave([]byte(in), "cell-a")
	if err != nil || wave != "one" || string(out) != "waves:\n  - name: one\n    cells:\n      - cell-b # the big one\n  - name: two\n    cells: [cell-c, cell-d, cell-e]\n" {
		t.Fatalf("%q %q %v", out, wave, err)
	}
	for cell, want := range map[string]string{"cell-c": "[cell-d, cell-e]", "cell-d": "[cell-c, cell-e]", "cell-e": "[cell-c, cell-d]"} {
		out, _, err := removeFromWave([]byte(in), cell)
		if err != nil || !strings.Contains(string(out), "cells: "+want+"\n") {
			t.Errorf("%s: %q %v", cell, out, err)
		}
	}
	if out, _, err := removeFromWave([]byte(in), "cell-x"); out != nil || err != nil {
		t.Errorf("a cell in no wave: %q %v", out, err)
	}
}
