package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/rollout"
)

func lockFactory(t *testing.T) (*Factory, *rollout.Store, *bytes.Buffer) {
	t.Helper()
	io, _, _, errOut := iostreams.Test()
	f := NewFactory(io)
	url := "file://" + filepath.ToSlash(t.TempDir())
	s, err := rollout.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.OpenLockStore = func(ctx context.Context) (*rollout.Store, error) { return rollout.Open(ctx, url) }
	t.Cleanup(f.Close)
	return f, s, errOut
}

func verbCmd(f *Factory, ran *int, inner func(*cobra.Command) error) *cobra.Command {
	c := &cobra.Command{Use: "up", RunE: func(c *cobra.Command, _ []string) error {
		// A verb's first engine takes the lock (Factory.Engine); this fake
		// verb builds none, so it takes the lock the way Engine does.
		if err := f.lockForEngine(c.Context()); err != nil {
			return err
		}
		*ran++
		if inner != nil {
			return inner(c)
		}
		return nil
	}}
	c.Flags().Bool("dry-run", false, "")
	AddOverrideFlag(c)
	return Mutates(f, c, "up")
}

// With a rollout holding the fleet, a mutating verb is refused with exit 4
// naming the holder and runs nothing; its --dry-run still runs; the
// override runs it, logged and recorded.
func TestMutatingVerbRefusedWhileTheFleetIsHeld(t *testing.T) {
	f, s, errOut := lockFactory(t)
	ctx := context.Background()
	held := rollout.Holder{ID: "r-0123456789ab", Verb: "deploy", Host: "ci-7", PID: 4242, Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Nonce: "n1"}
	if _, err := s.Acquire(ctx, held); err != nil {
		t.Fatal(err)
	}
	ran := 0
	cmd := verbCmd(f, &ran, nil)
	cmd.SetArgs(nil)
	err := cmd.ExecuteContext(ctx)
	var le *outcome.LockedError
	if !errors.As(err, &le) || ran != 0 {
		t.Fatalf("err %v (ran %d), want a LockedError and nothing run", err, ran)
	}
	for _, want := range []string{"deploy r-0123456789ab", "host ci-7", "pid 4242", "started 2026-12-01T09:00:00Z", "cellctl deploy --abandon r-0123456789ab"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	cmd = verbCmd(f, &ran, nil)
	cmd.SetArgs([]string{"--dry-run"})
	if err := cmd.ExecuteContext(ctx); err != nil || ran != 1 {
		t.Fatalf("--dry-run while held: %v (ran %d)", err, ran)
	}
	cmd = verbCmd(f, &ran, nil)
	cmd.SetArgs([]string{"--" + OverrideFlag})
	if err := cmd.ExecuteContext(ctx); err != nil || ran != 2 {
		t.Fatalf("override: %v (ran %d)", err, ran)
	}
	if !strings.Contains(errOut.String(), "EMERGENCY OVERRIDE") || !strings.Contains(errOut.String(), "r-0123456789ab") {
		t.Errorf("the override was not logged:\n%s", errOut)
	}
	if h, _ := s.Holder(ctx); h == nil || h.Nonce != "n1" {
		t.Errorf("the override changed the lock: %v", h)
	}
}

// A free fleet is locked for the verb's run, released after; a verb run
// inside another in the same process shares the hold (no self-deadlock).
func TestMutatingVerbHoldsTheLockAndNestsWithoutDeadlock(t *testing.T) {
	f, s, _ := lockFactory(t)
	ctx := context.Background()
	ran := 0
	cmd := verbCmd(f, &ran, func(c *cobra.Command) error {
		h, err := s.Holder(ctx)
		if err != nil || h == nil || h.Verb != "up" || !strings.HasPrefix(h.ID, "op-") {
			t.Errorf("during the run the lock is %v %v", h, err)
		}
		release, err := f.LockFleet(ctx, "cell add", false)
		if err != nil {
			return err
		}
		release()
		if h2, _ := s.Holder(ctx); h2 == nil || h2.Nonce != h.Nonce {
			t.Errorf("the nested release gave the lock up: %v", h2)
		}
		return nil
	})
	if err := cmd.ExecuteContext(ctx); err != nil || ran != 1 {
		t.Fatalf("run: %v (ran %d)", err, ran)
	}
	if h, _ := s.Holder(ctx); h != nil {
		t.Errorf("lock still held by %v after the verb", h)
	}
}

// A verb killed on this host leaves the fleet lock behind: the next verb
// takes it over (its process is provably gone and it keeps no record to
// resume), saying so. A dead rollout's lock is never taken over: the
// rollout is resumed or abandoned by its own verb.
func TestADeadVerbsLockIsTakenOverButADeadRolloutsIsNot(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` to make a dead pid:", err)
	}
	host, _ := os.Hostname()
	for _, tc := range []struct {
		verb     string
		takeOver bool
	}{{"drain", true}, {"up", true}, {"deploy", false}, {"secret rotate", false}} {
		f, s, errOut := lockFactory(t)
		ctx := context.Background()
		held := rollout.Holder{ID: "op-0123456789ab", Verb: tc.verb, Host: host, PID: dead.Process.Pid, Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Nonce: "n-" + tc.verb}
		if _, err := s.Acquire(ctx, held); err != nil {
			t.Fatal(err)
		}
		ran := 0
		cmd := verbCmd(f, &ran, nil)
		cmd.SetArgs(nil)
		err := cmd.ExecuteContext(ctx)
		var le *outcome.LockedError
		switch {
		case tc.takeOver && (err != nil || ran != 1 || !strings.Contains(errOut.String(), "taking over its fleet lock")):
			t.Errorf("%s: a dead verb's lock must be taken over: %v (ran %d) %s", tc.verb, err, ran, errOut)
		case !tc.takeOver && (!errors.As(err, &le) || ran != 0):
			t.Errorf("%s: a dead rollout's lock must refuse (exit 4): %v (ran %d)", tc.verb, err, ran)
		}
	}
}
