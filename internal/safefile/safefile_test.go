package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "ok.json")
	os.WriteFile(ok, []byte("{}"), 0o644)
	if b, err := Read(ok, 2); err != nil || string(b) != "{}" {
		t.Fatalf("regular file: %q, %v", b, err)
	}
	var big *TooLargeError
	if _, err := Read(ok, 1); !errors.As(err, &big) || big.Limit != 1 || big.Size != 2 {
		t.Fatalf("over the limit: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	var odd *NotRegularError
	for path, kind := range map[string]string{fifo: "a named pipe (FIFO)", "/dev/zero": "a character device", dir: "a directory"} {
		_, err := Read(path, 1<<20)
		if !errors.As(err, &odd) || !strings.Contains(err.Error(), kind) {
			t.Errorf("%s: %v", path, err)
		}
		_, err = ReadFS(DirFS("/"), strings.TrimPrefix(path, "/"), 1<<20)
		if !errors.As(err, &odd) {
			t.Errorf("ReadFS %s: %v", path, err)
		}
	}
	// procfs reports size 0; the read itself is still capped.
	if _, err := Read("/proc/self/maps", 16); !errors.As(err, &big) {
		t.Errorf("/proc/self/maps over 16 bytes: %v", err)
	}
}
