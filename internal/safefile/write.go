package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Every file cellctl replaces — routing tables, waves.yaml, stack files,
// exported rules, the simulator's state — is replaced through write: a
// temporary file in the same directory, renamed over the path, so a
// reader or a crash sees the old content or the new one, never a mix.

// Write replaces path with data durably: the temporary file is synced
// before the rename and the directory after it.
func Write(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, true, nil)
}

// WriteUnsynced replaces path with data atomically but without fsync:
// every process sees the old or the new file, a power cut may lose the
// change. For state whose loss costs nothing (the simulated cloud's).
func WriteUnsynced(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, false, nil)
}

// WriteChecked is Write with a last check: before runs once the new
// content is complete on disk, just before the rename, and an error from
// it leaves path as it was (a compare-and-swap against a writer that takes
// no lock, such as an editor).
func WriteChecked(path string, data []byte, perm fs.FileMode, before func() error) error {
	return write(path, data, perm, true, before)
}

func write(path string, data []byte, perm fs.FileMode, durable bool, before func() error) (err error) {
	tmp, err := complete(path, data, perm, durable)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	if before != nil {
		if err = before(); err != nil {
			return err
		}
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if durable {
		if d, derr := os.Open(filepath.Dir(path)); derr == nil {
			// The rename is durable once the directory is: best effort,
			// as some filesystems refuse to sync a directory.
			_ = d.Sync()
			_ = d.Close()
		}
	}
	return nil
}

// complete writes data with perm to a new temporary file beside path and
// returns its name; nothing is left behind when it fails.
func complete(path string, data []byte, perm fs.FileMode, durable bool) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil && durable {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// Create makes path with data only if nothing is at path yet: the content
// is written to a temporary file and linked into place, so the file
// appears whole or not at all, and when processes race exactly one wins;
// the others get an error satisfying errors.Is(err, fs.ErrExist).
func Create(path string, data []byte, perm fs.FileMode) error {
	tmp, err := complete(path, data, perm, true)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	// link(2) fails with EEXIST when path exists: the filesystem decides
	// the race.
	return os.Link(tmp, path)
}
