package rollout

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFileBackendCreatedOnFirstWrite: reading the store of a file backend
// whose directory does not exist (a dry run on a fresh clone) creates
// nothing; the first write creates the directory and is kept.
func TestFileBackendCreatedOnFirstWrite(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	if all, err := s.List(ctx); err != nil || len(all) != 0 {
		t.Fatalf("list: %v %v", all, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a read created %s (%v)", dir, err)
	}
	r := &Record{ID: "20261201T093000Z-1a2b3c", State: Running}
	if err := s.Put(ctx, r); err != nil {
		t.Fatal(err)
	}
	s.Close()
	again, err := Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got, err := again.Get(ctx, r.ID); err != nil || got.State != Running {
		t.Fatalf("the first write was not kept: %+v %v", got, err)
	}
}
