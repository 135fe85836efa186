package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadWith: a fleet loaded with a new stack file and a changed
// waves.yaml has the new cell in its wave, writes nothing, and an error in
// the new file names that file and line.
func TestLoadWith(t *testing.T) {
	waves, err := os.ReadFile("../../stacks/waves.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(waves), "cells: [cell-c, cell-d]", "cells: [cell-c, cell-d, cell-e]", 1)
	fl, err := LoadWith("../..", map[string][]byte{
		"stacks/Pulumi.cell-e.yaml": []byte("config:\n  cells:index: 9\n"),
		"stacks/waves.yaml":         []byte(edited),
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := fl.Cell("cell-e"); c == nil || c.Index != 9 || c.File != "stacks/Pulumi.cell-e.yaml" {
		t.Fatalf("cell-e = %+v", c)
	}
	if fl.Waves.WaveOf("cell-e") < 0 || len(fl.Cells) != 5 {
		t.Fatalf("cells %v, cell-e in wave %d", fl.CellIDs(), fl.Waves.WaveOf("cell-e"))
	}
	if _, err := os.Stat(filepath.Join("../../stacks", "Pulumi.cell-e.yaml")); err == nil {
		t.Fatal("LoadWith wrote the file")
	}
	_, err = LoadWith("../..", map[string][]byte{"stacks/Pulumi.cell-e.yaml": []byte("config:\n  cells:index: 9\n  cells:taskCpu: lots\n")})
	if err == nil || !strings.Contains(err.Error(), "stacks/Pulumi.cell-e.yaml:3") {
		t.Fatalf("an error in the new file: %v", err)
	}
}
