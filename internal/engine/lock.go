package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/rollout"
)

// lockLine matches the lock holders pulumi lists for a file backend:
// "  <path>: created by user@host (pid 123) at 2026-11-30T05:00:00Z".
var lockLine = regexp.MustCompile(`created by (\S*)@(\S*) \(pid (\d+)\) at (\S+)`)

// LockHolder is the process holding a stack lock.
type LockHolder struct {
	User, Host string
	PID        int
	Since      string
	// Stale is set when the holder ran on this machine and is gone;
	// Running when it runs on this machine now. A holder on another host
	// is neither: cellctl cannot check a process there.
	Stale, Running bool
}

// holderOnThisHost fills in whether h, read from a lock, is stale or
// running, by its pid when it ran on this machine.
func holderOnThisHost(h LockHolder) LockHolder {
	host, _ := os.Hostname()
	if h.Host == host && h.PID > 0 {
		h.Running = rollout.ProcessAlive(h.PID)
		h.Stale = !h.Running
	}
	return h
}

// lockHolders parses the holders out of a lock conflict error.
func lockHolders(msg string) []LockHolder {
	var out []LockHolder
	for _, m := range lockLine.FindAllStringSubmatch(msg, -1) {
		pid, _ := strconv.Atoi(m[3])
		out = append(out, holderOnThisHost(LockHolder{User: m[1], Host: m[2], PID: pid, Since: m[4]}))
	}
	return out
}

// explain turns a lock conflict into what the operator must do: wait for a
// live holder, or remove a stale lock left by a killed process.
func (e *Engine) explain(ctx context.Context, w *workspace, stack string, err error) error {
	msg := cleanErr(err).Error()
	holders := lockHolders(msg)
	if len(holders) == 0 {
		return fmt.Errorf("another operation holds the stack's lock; wait for it to finish (%s)", firstLine(msg))
	}
	h := holders[0]
	if h.Stale {
		return fmt.Errorf("the stack is locked by pid %d on %s since %s, which is no longer running: the lock is stale "+
			"(a killed cellctl or pulumi leaves one behind); remove it with `cellctl unlock %s` and rerun", h.PID, h.Host, h.Since, stack)
	}
	return fmt.Errorf("another operation holds the stack's lock (%s@%s, pid %d, since %s); wait for it to finish, "+
		"or if that process is gone, `cellctl unlock %s`", h.User, h.Host, h.PID, h.Since, stack)
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

// Unlock removes a stack's locks. It refuses while a holder runs on this
// machine, force or not: that lock is a live pulumi's (killing its lock
// mid-update lets a second update interleave with it). Unless force is set
// it also refuses a holder on another host, whose process cannot be
// checked from here. Every error leaves the stack locked, so each is an
// outcome.LockedError.
func (e *Engine) Unlock(ctx context.Context, stack string, force bool) ([]LockHolder, error) {
	holders, err := e.unlock(ctx, stack, force)
	if err != nil {
		return holders, outcome.Locked(stack, err)
	}
	return holders, nil
}

func (e *Engine) unlock(ctx context.Context, stack string, force bool) ([]LockHolder, error) {
	holders, inspectable, err := e.currentLocks(ctx, stack)
	if err != nil {
		return nil, err
	}
	if inspectable && len(holders) == 0 {
		return nil, nil
	}
	if !inspectable && !force {
		return nil, fmt.Errorf("cellctl cannot inspect locks on %s; if you are sure no operation runs on %s, use --force", e.backend, stack)
	}
	for _, h := range holders {
		if h.Running {
			return holders, fmt.Errorf("%s is locked by pid %d on this host (%s, since %s), which is still running: the lock is that "+
				"process's own, so it is not removed, --force or not; wait for it to finish (or stop it), then rerun if a lock is left", stack, h.PID, h.User, h.Since)
		}
	}
	if !force {
		for _, h := range holders {
			if !h.Stale {
				return holders, fmt.Errorf("%s is locked by pid %d on %s (%s), which may still be running: cellctl cannot check a process "+
					"on another host; wait for it, or use --force if you are sure it is gone", stack, h.PID, h.Host, h.User)
			}
		}
	}
	w, err := e.open(ctx, stack, false, readOnly, nil)
	if err != nil {
		return holders, err
	}
	defer w.close()
	if err := w.stack.Cancel(ctx); err != nil {
		return holders, cleanErr(err)
	}
	return holders, nil
}

// currentLocks reads the lock files of a file backend. Other backends
// cannot be inspected here; they report no holders and need --force.
func (e *Engine) currentLocks(_ context.Context, stack string) ([]LockHolder, bool, error) {
	root, ok := strings.CutPrefix(e.backend, "file://")
	if !ok {
		return nil, false, nil
	}
	dir := filepath.Join(filepath.FromSlash(root), ".pulumi", "locks", "organization", e.opts.Fleet.Project, stack)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, true, err
	}
	var out []LockHolder
	for _, en := range entries {
		if en.IsDir() || !strings.HasSuffix(en.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, en.Name()))
		if err != nil {
			continue
		}
		var l struct {
			Pid       int       `json:"pid"`
			Username  string    `json:"username"`
			Hostname  string    `json:"hostname"`
			Timestamp time.Time `json:"timestamp"`
		}
		if json.Unmarshal(data, &l) != nil {
			continue
		}
		out = append(out, holderOnThisHost(LockHolder{User: l.Username, Host: l.Hostname, PID: l.Pid, Since: l.Timestamp.Format(time.RFC3339)}))
	}
	return out, true, nil
}
