package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadsOfAFreshCloudCreateNothing: opening and reading a simulated
// cloud that does not exist yet (a preview of a fresh clone) leaves no
// directory, lock or key behind; the first change creates them.
func TestReadsOfAFreshCloudCreateNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sim")
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := c.Resources(Filter{}); err != nil || len(rs) != 0 {
		t.Fatalf("resources of a fresh cloud: %v %v", rs, err)
	}
	if fs, err := c.Faults(); err != nil || len(fs) != 0 {
		t.Fatalf("faults of a fresh cloud: %v %v", fs, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a read created %s (%v)", dir, err)
	}
	if _, err := c.AddFault(Fault{Op: OpCreate}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{secretKeyFile, LockFile, controlFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("after the first change: %v", err)
		}
	}
}
