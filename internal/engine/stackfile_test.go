package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The run started from base; pulumi and cellctl changed the workspace copy
// (salt, secret, and pulumi re-serialised it without the comment); the
// operator edited the repository's file meanwhile.
const (
	base     = "# cell b, owned by the payments team\nconfig:\n  cells:index: 2 # do not change\n  cells:image: app:1.0\n"
	workCopy = "config:\n  cells:image: app:1.0\n  cells:index: \"2\"\n  cells:originVerifySecret:\n    secure: v1:abc\nencryptionsalt: v1:salt\n"
)

func writeBackCase(t *testing.T, current string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "Pulumi.cell-b.yaml")
	if err := os.WriteFile(path, []byte(current), 0o640); err != nil {
		t.Fatal(err)
	}
	err := writeBackStackFile(path, filepath.Join(dir, "lock"), []byte(base), []byte(workCopy))
	got, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's own 0640", info.Mode().Perm())
	}
	return string(got), err
}

func TestWriteBackKeepsAnEditMadeDuringTheRun(t *testing.T) {
	edited := strings.Replace(base, "app:1.0", "app:2.0", 1) + "  cells:desiredCount: 4\n"
	got, err := writeBackCase(t, edited)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cells:image: app:2.0", "cells:desiredCount: 4", "secure: v1:abc", "encryptionsalt: v1:salt",
		"# cell b, owned by the payments team", "cells:index: 2 # do not change"} {
		if !strings.Contains(got, want) {
			t.Errorf("merged file lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "app:1.0") {
		t.Errorf("the stale copy's image came back:\n%s", got)
	}
}

func TestWriteBackNothingChangedWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "Pulumi.cell-b.yaml")
	edited := base + "  cells:desiredCount: 4\n"
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	// pulumi re-serialised the copy (order, comments) but changed no value.
	reserialised := "config:\n  cells:image: app:1.0\n  cells:index: \"2\"\n"
	if err := writeBackStackFile(path, filepath.Join(dir, "lock"), []byte(base), []byte(reserialised)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != edited {
		t.Fatalf("file rewritten:\n%s", got)
	}
}

func TestWriteBackConflictKeepsTheOperatorsValue(t *testing.T) {
	// The operator set the secret themselves while the run minted one:
	// theirs stays, and nothing of the run's (salt included) is written.
	edited := base + "  cells:originVerifySecret:\n    secure: v1:theirs\nencryptionsalt: v1:theirsalt\n"
	got, err := writeBackCase(t, edited)
	var ce *ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "config cells:originVerifySecret") {
		t.Fatalf("err = %v, want a conflict naming the key", err)
	}
	if got != edited {
		t.Fatalf("the file changed despite the conflict:\n%s", got)
	}
}

func TestWriteBackAlreadyApplied(t *testing.T) {
	// Another cellctl process stored the same values first.
	done := base + "  cells:originVerifySecret:\n    secure: v1:abc\nencryptionsalt: v1:salt\n"
	got, err := writeBackCase(t, done)
	if err != nil || got != done {
		t.Fatalf("err %v, file:\n%s", err, got)
	}
}

func TestWriteBackRefusesAnUnparsableFile(t *testing.T) {
	broken := "config:\n  cells:index: [2\n"
	got, err := writeBackCase(t, broken)
	if err == nil || !strings.Contains(err.Error(), "Pulumi.cell-b.yaml") || !strings.Contains(err.Error(), "encryptionsalt") {
		t.Fatalf("err = %v", err)
	}
	if got != broken {
		t.Fatalf("a file being edited was overwritten:\n%s", got)
	}
}

func TestReadOnlyWorkspaceWritesNothing(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "Pulumi.cell-b.yaml")
	cp := filepath.Join(dir, "copy.yaml")
	if err := os.WriteFile(repo, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, []byte(workCopy), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &workspace{stackFile: cp, repoFile: repo, base: []byte(base), lockPath: filepath.Join(dir, "lock")}
	if err := w.writeBack(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(repo); string(got) != base {
		t.Fatalf("a read-only run wrote the stack file:\n%s", got)
	}
	w.writable = true
	if err := w.writeBack(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(repo); !strings.Contains(string(got), "encryptionsalt: v1:salt") {
		t.Fatalf("a writable run's salt was not stored:\n%s", got)
	}
}
