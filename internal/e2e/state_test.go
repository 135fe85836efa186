package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// TestCorruptCheckpointNamed truncates a deployed stack's checkpoint:
// status and up exit 1 up front, name the file and how to recover, and
// touch nothing in the cloud; following the advice (the .bak pulumi kept,
// then up --refresh) brings the stack back.
func TestCorruptCheckpointNamed(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	mustRun(t, dir, "up", "cell-c")
	file := filepath.Join(dir, ".cellctl", "state", ".pulumi", "stacks", "cells", "cell-c.json")
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	c := simCloud(t, dir)
	before, _ := c.Resources(sim.Filter{Stack: "cell-c"})

	for _, args := range [][]string{{"status", "cell-c"}, {"up", "cell-c"}, {"preview", "cell-c"}} {
		r := cellctl(t, dir, args...)
		if r.code != 1 {
			t.Fatalf("%v on a truncated checkpoint: want exit 1, got %s", args, r)
		}
		out := r.stdout + r.stderr
		for _, want := range []string{"state of stack cell-c is corrupt", file, "truncated", file + ".bak", "cellctl up cell-c --refresh"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, r)
			}
		}
		if strings.Contains(out, "succeeded") {
			t.Errorf("%v reports a success on a corrupt state:\n%s", args, r)
		}
	}
	after, _ := c.Resources(sim.Filter{Stack: "cell-c"})
	if len(after) != len(before) {
		t.Fatalf("the cloud changed: %d resources before, %d after", len(before), len(after))
	}

	// The advice works.
	bak, err := os.ReadFile(file + ".bak")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bak, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "up", "cell-c", "--refresh")
	var again opResult
	decode(t, mustRun(t, dir, "up", "cell-c", "-o", "json"), &again)
	if ch := again.stack(t, "cell-c").Changes; ch.Create+ch.Update+ch.Delete+ch.Replace != 0 {
		t.Fatalf("not converged after restoring the backup: %+v", ch)
	}
}
