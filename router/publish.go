package router

import (
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/internal/safefile"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Publishing a routing table safely.
//
// Every command that changes stacks/routing.json goes through SaveTable:
// the file on disk must still be the table the command started from (so
// two commands on one checkout cannot lose each other's change), the
// previous table is kept in PreviousFile (so `cellctl route --diff` shows
// what the last change moved), and both files are written atomically.
// Before it publishes, the command compares the deployed router's table
// version with the table it started from (CheckDeployed), so a table
// someone else published meanwhile is never overwritten by an older one.

// PreviousFile is where SaveTable keeps the table a change replaced,
// relative to the fleet directory. It lives under .cellctl/ (local and
// ignored by git): in a pull request the previous version is the base
// branch's stacks/routing.json, on the operator's machine it is this file:
//
//	cellctl route --diff .cellctl/routing.previous.json
const PreviousFile = ".cellctl/routing.previous.json"

// SaveTable writes next to path in place of prev, keeping prev in
// previousPath. It refuses when next is not a successor of prev (see
// CheckSuccessor) or when the file at path is no longer prev. prev may be
// nil for a new file, which must not exist yet. The table written carries
// generated_at: the time of the save.
func SaveTable(path, previousPath string, prev, next *Table) error {
	next = next.Stamped(saveClock())
	if prev != nil {
		if err := CheckSuccessor(prev, next); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if next.Version() == prev.Version() {
			return fmt.Errorf("%s: nothing to save: the table is unchanged at version %d", path, prev.Version())
		}
	}
	data, err := os.ReadFile(path)
	switch {
	case prev == nil && err == nil:
		return fmt.Errorf("%s already exists; load it and change it instead of creating a new table", path)
	case prev == nil && errors.Is(err, fs.ErrNotExist):
		return safefile.Write(path, next.Marshal(), 0o644)
	case err != nil:
		return fmt.Errorf("cannot read %s before writing it: %w", path, err)
	}
	onDisk, err := Parse(path, data)
	if err != nil {
		return fmt.Errorf("%s changed since it was read and is no longer valid; fix it and run the command again:\n%w", path, err)
	}
	if !onDisk.Equal(prev) {
		return fmt.Errorf("%s changed since it was read (version %d on disk, version %d when read): another change was made meanwhile; run the command again on the new table", path, onDisk.Version(), prev.Version())
	}
	if previousPath != "" {
		if err := os.MkdirAll(filepath.Dir(previousPath), 0o755); err != nil {
			return fmt.Errorf("cannot keep the previous table: %w", err)
		}
		if err := safefile.Write(previousPath, prev.Marshal(), 0o644); err != nil {
			return fmt.Errorf("cannot keep the previous table: %w", err)
		}
	}
	return safefile.Write(path, next.Marshal(), 0o644)
}

// saveClock is the time SaveTable stamps (a variable so tests can fix it).
var saveClock = time.Now

// Stamped is the table with generated_at set to at (UTC, whole seconds).
func (t *Table) Stamped(at time.Time) *Table {
	s := t.Spec()
	s.GeneratedAt = at.UTC().Truncate(time.Second).Format(time.RFC3339)
	return compile(canonical(s))
}

// CheckDeployed compares the version of the table the deployed router
// serves (0: no router deployed yet) with local, the table a change starts
// from. A deployed version above local's means someone else published a
// newer table meanwhile: publishing a successor of local would roll their
// change back, so it is refused. A deployed version below local's is fine:
// local carries changes not yet published, and publishing includes them.
func CheckDeployed(local *Table, deployedVersion int64) error {
	switch {
	case deployedVersion < 0:
		return fmt.Errorf("the deployed router reports routing table version %d; versions are positive", deployedVersion)
	case deployedVersion > local.Version():
		return fmt.Errorf("the deployed router serves routing table version %d, newer than version %d here: someone else published a change meanwhile; update this checkout (git pull) and run the command again", deployedVersion, local.Version())
	}
	return nil
}
