package pgtest

import (
	"os/exec"
	"strings"
	"testing"
)

// While one test holds the lock no other session gets it; it is released
// when that test's cleanups are done.
func TestLockIsHeldForTheWholeTest(t *testing.T) {
	var srv Server
	try := func() string {
		out, err := exec.Command("psql", append(srv.Args("postgres"), "-c", "SELECT pg_try_advisory_lock(74616)")...).CombinedOutput()
		if err != nil {
			t.Fatalf("psql: %v %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	t.Run("holder", func(t *testing.T) {
		srv = Lock(t)
		if got := try(); got != "f" {
			t.Errorf("another session took the lock while a test held it (%s)", got)
		}
		t.Cleanup(func() {
			if got := try(); got != "f" {
				t.Errorf("the lock was released before the test's cleanups ran (%s)", got)
			}
		})
	})
	if srv.Host == "" {
		return // skipped: no server
	}
	if got := try(); got != "t" {
		t.Errorf("the lock is still held after the test ended (%s)", got)
	}
}
