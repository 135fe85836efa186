package engine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Every temporary file and directory a cellctl process makes (stack
// workspaces, scratch backends, the pulumi child's output) lives under one
// run directory, $TMPDIR/cellctl-run-*, whose owner file this process holds
// an flock on for as long as it lives. A kill -9 skips every defer and
// leaves the run directory behind, but the kernel drops the flock with the
// process: the next cellctl to start (any command) finds a run directory
// it can lock, knows its owner is dead, and removes it (SweepTemp). A live
// run's directory is never touched, so commands may run side by side.

const (
	runDirPrefix = "cellctl-run-"
	ownerFile    = ".owner"
)

var (
	tempOnce  sync.Once
	tempDir   string
	tempErr   error
	tempOwner *os.File
)

// TempRoot is this process's run directory, made on first use.
func TempRoot() (string, error) {
	tempOnce.Do(func() {
		dir, err := os.MkdirTemp("", runDirPrefix)
		if err != nil {
			tempErr = err
			return
		}
		f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_CREATE|os.O_RDWR, 0o600)
		if err == nil {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		}
		if err != nil {
			_ = os.RemoveAll(dir)
			tempErr = fmt.Errorf("temporary directory %s: %w", dir, err)
			return
		}
		fmt.Fprintf(f, "%d\n", os.Getpid())
		tempDir, tempOwner = dir, f
	})
	return tempDir, tempErr
}

// mkdirTemp makes a directory in this process's run directory.
func mkdirTemp(pattern string) (string, error) {
	root, err := TempRoot()
	if err != nil {
		return "", err
	}
	return os.MkdirTemp(root, pattern)
}

// RemoveTempRoot removes this process's run directory (at exit).
func RemoveTempRoot() {
	if tempDir == "" {
		return
	}
	_ = os.RemoveAll(tempDir)
	_ = tempOwner.Close()
}

// legacyTemp are the names earlier cellctl versions gave their temporary
// files and directories directly in $TMPDIR. The pulumi output files held
// plaintext (a `stack export --show-secrets`) and are removed on sight;
// no current cellctl makes any of these names.
var legacyTemp = []string{"cellctl-pulumi-stdout-", "cellctl-pulumi-stderr-"}

// SweepTemp removes what killed cellctl runs left in $TMPDIR: each run
// directory whose owner is gone, and the legacy pulumi output files. It
// returns what it removed; a leftover it could not remove is an error
// (it may hold plaintext state).
func SweepTemp() ([]string, error) {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(tmp, name)
		switch {
		case strings.HasPrefix(name, runDirPrefix) && e.IsDir():
			if path == tempDir || !ownerGone(path) {
				continue
			}
		case hasAnyPrefix(name, legacyTemp) && !e.IsDir():
		case e.Type().IsRegular() && isLeftImport(path):
		default:
			continue
		}
		if err := os.RemoveAll(path); err != nil {
			errs = append(errs, fmt.Errorf("removing %s, left by a killed cellctl: %w", path, err))
			continue
		}
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
}

// isLeftImport reports whether path is a deployment the Automation API's
// ImportStack wrote for `stack import --file` (earlier cellctl versions
// imported through it): a name of digits only (os.CreateTemp's pattern
// ""), an UntypedDeployment's JSON, and older than a minute so a live
// import of another program is left alone. It holds the stack's secrets in
// plaintext when its deployment came from a --show-secrets export.
func isLeftImport(path string) bool {
	name := filepath.Base(path)
	if name == "" || strings.Trim(name, "0123456789") != "" {
		return false
	}
	st, err := os.Stat(path)
	if err != nil || time.Since(st.ModTime()) < time.Minute {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 32)
	n, _ := io.ReadFull(f, head)
	return strings.HasPrefix(string(head[:n]), `{"version":`) && strings.Contains(string(head[:n]), `"deployment":`)
}

// ownerGone reports whether no live process holds the run directory's
// owner lock. A directory without an owner file is one whose process was
// killed between making it and locking it.
func ownerGone(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, ownerFile), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		// Its owner may be between MkdirTemp and locking: only an old
		// directory without an owner is a leftover.
		st, err := os.Stat(dir)
		return err == nil && time.Since(st.ModTime()) > time.Minute
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
