package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesTheFile(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{"Write": Write, "WriteUnsynced": WriteUnsynced} {
		path := filepath.Join(t.TempDir(), "routing.json")
		if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := write(path, []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		fi, _ := os.Stat(path)
		if string(data) != "new" || fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: content %q mode %v", name, data, fi.Mode().Perm())
		}
		if err := write(filepath.Join(t.TempDir(), "missing", "x.json"), []byte("x"), 0o644); err == nil {
			t.Errorf("%s: writing into a missing directory succeeded", name)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) > 0 {
			t.Errorf("%s left temporary files: %v", name, left)
		}
	}
}

// TestWriteCheckedKeepsTheFileWhenTheCheckFails: the check runs with the
// new content complete, and its refusal leaves the old file and no
// temporary file behind.
func TestWriteCheckedKeepsTheFileWhenTheCheckFails(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "Pulumi.cell-a.yaml")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	changed := errors.New("changed meanwhile")
	err := WriteChecked(path, []byte("new"), 0o600, func() error {
		tmps, _ := filepath.Glob(filepath.Join(dir, ".Pulumi.cell-a.yaml.tmp-*"))
		if len(tmps) != 1 {
			t.Errorf("the check ran before the new content was on disk: %v", tmps)
		} else if data, _ := os.ReadFile(tmps[0]); string(data) != "new" {
			t.Errorf("the check ran before the new content was complete: %q", data)
		}
		return changed
	})
	if !errors.Is(err, changed) {
		t.Fatalf("WriteChecked returned %v, want the check's error", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("a refused check replaced the file: %q", data)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := WriteChecked(path, []byte("new"), 0o600, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "new" {
		t.Errorf("a passed check did not replace the file: %q", data)
	}
}

// TestCreateHasOneWinner: of many creators racing for one path exactly
// one succeeds, the others are told it exists, and the file holds the
// winner's content whole.
func TestCreateHasOneWinner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock.json")
	const n = 16
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) { errs <- Create(path, []byte{byte('a' + i)}, 0o600) }(i)
	}
	won := 0
	for i := 0; i < n; i++ {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, fs.ErrExist):
			t.Errorf("a losing creator got %v, want fs.ErrExist", err)
		}
	}
	data, _ := os.ReadFile(path)
	if won != 1 || len(data) != 1 {
		t.Errorf("%d creators won; the file holds %q", won, data)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
