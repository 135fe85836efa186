package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryMutatingVerbRefusedWhileTheFleetIsHeld: with a rollout holding
// the fleet lock (a holder written where deploy writes it), every verb
// that changes the fleet exits 4 naming the holder's id, verb, host, pid
// and start, and writes nothing (fleet, backend and simulator checksummed);
// read-only verbs still run. Cheap: nothing is deployed, the lock refuses
// before any engine run.
func TestEveryMutatingVerbRefusedWhileTheFleetIsHeld(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	lock := filepath.Join(dir, ".cellctl", "state", ".cellctl", "locks", "rollout.json")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	holder := `{"id":"r-0123456789ab","verb":"deploy","host":"ci-runner-7","pid":4242,"started":"2026-12-01T10:00:00Z","nonce":"feedface"}`
	if err := os.WriteFile(lock, []byte(holder), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeSums(t, dir)
	for _, args := range [][]string{
		{"up"}, {"up", "--router"}, {"destroy", "cell-d", "--yes"}, {"destroy", "cell-d", "--retire", "--yes"},
		{"drain", "cell-d"}, {"drain", "cell-d", "--now"}, {"undrain", "cell-d"}, {"migrate", "acme", "--to", "cell-c"},
		{"cell", "add"}, {"router", "canary"}, {"secret", "rotate"}, {"deploy", "--image", "app:9.9.9"}, {"sim", "reset"},
	} {
		r := cellctl(t, dir, args...)
		if r.code != 4 {
			t.Errorf("cellctl %s: exit %d, want 4\n%s", strings.Join(args, " "), r.code, r)
			continue
		}
		for _, want := range []string{"r-0123456789ab", "deploy", "ci-runner-7", "4242", "2026-12-01T10:00:00Z"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("cellctl %s: the refusal does not name %q:\n%s", strings.Join(args, " "), want, r.stderr)
			}
		}
		if diff := diffSums(before, treeSums(t, dir)); len(diff) > 0 {
			t.Fatalf("refused cellctl %s wrote:\n  %s", strings.Join(args, " "), strings.Join(diff, "\n  "))
		}
	}
	for _, args := range [][]string{{"plan"}, {"route", "acme"}, {"capacity"}, {"lanes"}, {"rollout", "list"}, {"up", "--dry-run"}, {"drain", "cell-d", "--dry-run"},
		{"cell", "add", "--dry-run"}, {"secret", "rotate", "--dry-run"}, {"router", "canary", "--dry-run"}} {
		if r := cellctl(t, dir, args...); r.code == 4 {
			t.Errorf("read-only cellctl %s was refused by the lock:\n%s", strings.Join(args, " "), r)
		}
		if diff := diffSums(before, treeSums(t, dir)); len(diff) > 0 {
			t.Fatalf("read-only cellctl %s wrote:\n  %s", strings.Join(args, " "), strings.Join(diff, "\n  "))
		}
	}
}
