package rollout

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/gcerrors"
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
	key := RecordPrefix + "20261201T093000Z-1a2b3c.json"
	if _, err := s.ReadBucket().ReadAll(ctx, key); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("read of a pending backend: %v, want not found", err)
	}
	it := s.ReadBucket().List(nil)
	if obj, err := it.Next(ctx); obj != nil {
		t.Fatalf("list of a pending backend: %+v %v", obj, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("a read created %s (%v)", dir, err)
	}
	if err := s.Bucket().WriteAll(ctx, key, []byte("{}\n"), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	again, err := Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if got, err := again.ReadBucket().ReadAll(ctx, key); err != nil || string(got) != "{}\n" {
		t.Fatalf("the first write was not kept: %q %v", got, err)
	}
}
