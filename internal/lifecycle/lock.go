package lifecycle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cellctl/cellctl/internal/fleet"
)

// LockFile serialises the commands that change the routing table in one
// checkout: router.SaveTable compares the file with the table the command
// read and then renames over it, and two processes can both pass the
// comparison before either renames. Held for the whole command (load →
// save → publish), it makes the second command refuse at once instead of
// saving a second "version N+1". Across checkouts the deployed router's
// version is the arbiter (see publish).
const LockFile = ".cellctl/routing.lock"

// lockTable takes the routing lock of the fleet, or says who holds it.
func lockTable(fl *fleet.Fleet) (unlock func(), err error) {
	path := filepath.Join(fl.Dir, LockFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who := strings.TrimSpace(string(holder))
			if who == "" {
				who = "another process"
			}
			return nil, fmt.Errorf("another cellctl command (%s) is changing stacks/%s in this checkout; run this one again when it is done", who, fleet.RoutingFile)
		}
		return nil, err
	}
	// Who holds it, for the message above; the flock is the lock.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d", os.Getpid())), 0)
	return func() {
		_ = f.Truncate(0)
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
