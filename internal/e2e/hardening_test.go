package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One cell's truncated simulated-cloud file used to fail every other cell
// (`up cell-a` failed on cell-b.json); like AWS, only cell-b's calls fail,
// and the file is left as it was.
func TestCorruptSimFileFailsOnlyItsCell(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	mustRun(t, dir, "up", "cell-b", "-y")
	shard := filepath.Join(dir, ".cellctl", "sim", "resources", "cells", "cell-b.json")
	data, err := os.ReadFile(shard)
	if err != nil {
		t.Fatal(err)
	}
	truncated := data[:len(data)/2]
	if err := os.WriteFile(shard, truncated, 0o644); err != nil {
		t.Fatal(err)
	}

	mustRun(t, dir, "up", "cell-a", "-y")

	// A no-change up of cell-b makes no call that reads its resources; a
	// refresh reads every one, and must fail rather than find them gone.
	r := cellctl(t, dir, "up", "cell-b", "--refresh", "-y")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "cell-b.json is corrupt") {
		t.Fatalf("up --refresh cell-b on a corrupt file must fail naming it: %s", r)
	}
	if after, _ := os.ReadFile(shard); !bytes.Equal(after, truncated) {
		t.Fatal("the corrupt file was rewritten")
	}
}
