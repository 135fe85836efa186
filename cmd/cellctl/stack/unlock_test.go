package stack

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/rollout"
)

type unlocker []engine.LockHolder

func (u unlocker) Unlock(context.Context, string, bool) ([]engine.LockHolder, error) { return u, nil }

func TestUnlockSaysWhatItRemoved(t *testing.T) {
	held := unlocker{{User: "ci", Host: "runner-1", PID: 42, Since: "2026-12-01T12:00:00Z", Stale: true}}
	for _, tc := range []struct {
		format string
		u      unlocker
		want   string
	}{
		{cmdutil.FormatTable, nil, "cell-a is not locked\n"},
		{cmdutil.FormatTable, held, "cell-a: removed the lock of pid 42 on runner-1 (ci, since 2026-12-01T12:00:00Z)\n"},
		{cmdutil.FormatJSON, nil, "{\n  \"stack\": \"cell-a\",\n  \"removed\": []\n}\n"},
	} {
		io, _, out, _ := iostreams.Test()
		v, err := render.Pick(tc.format, unlockFormats...)
		if err != nil {
			t.Fatal(err)
		}
		o := &UnlockOptions{IO: io, View: v, Stack: "cell-a", Fleet: func() (*fleet.Fleet, error) { return &fleet.Fleet{}, nil },
			Engine: func(*fleet.Fleet) (Unlocker, error) { return tc.u, nil }}
		if err := unlockRun(context.Background(), o); err != nil || out.String() != tc.want {
			t.Errorf("-o %s: %v %q, want %q", tc.format, err, out.String(), tc.want)
		}
	}
}

// countingUnlocker records whether unlock reached the engine.
type countingUnlocker struct{ calls *int }

func (u countingUnlocker) Unlock(context.Context, string, bool) ([]engine.LockHolder, error) {
	*u.calls++
	return nil, nil
}

// --force is refused while a process on this host holds the fleet lock (a
// live `up` whose pulumi holds the stack's lock: --force used to remove
// it); a fleet holder on another host cannot be checked, so --force goes
// ahead and says so; a dead one on this host is no obstacle.
func TestUnlockForceRefusesWhileALiveProcessHoldsTheFleet(t *testing.T) {
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no `true` to make a dead pid:", err)
	}
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		holder  *rollout.Holder
		refused string
		note    string
	}{
		{name: "a live up on this host", holder: &rollout.Holder{ID: "op-0123456789ab", Verb: "up", Host: host, PID: os.Getpid(), Started: started},
			refused: "--force refused: the fleet is held by up op-0123456789ab (host " + host},
		{name: "a rollout on another host", holder: &rollout.Holder{ID: "r-0123456789ab", Verb: "deploy", Host: "ci-7", PID: 42, Started: started},
			note: "note: the fleet is held by deploy r-0123456789ab (host ci-7, pid 42, started 2026-12-01T09:00:00Z) on another host; cellctl cannot check whether it still runs"},
		{name: "a killed rollout on this host", holder: &rollout.Holder{ID: "r-0123456789ab", Verb: "deploy", Host: host, PID: dead.Process.Pid, Started: started}},
		{name: "a free fleet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			io, _, _, errOut := iostreams.Test()
			v, _ := render.Pick(cmdutil.FormatTable, unlockFormats...)
			calls := 0
			o := &UnlockOptions{IO: io, View: v, Stack: "cell-a", Force: true, Fleet: func() (*fleet.Fleet, error) { return &fleet.Fleet{}, nil },
				Engine:      func(*fleet.Fleet) (Unlocker, error) { return countingUnlocker{&calls}, nil },
				FleetHolder: func(context.Context) (*rollout.Holder, error) { return tc.holder, nil }}
			err := unlockRun(context.Background(), o)
			if tc.refused != "" {
				var locked *outcome.LockedError
				if !errors.As(err, &locked) || !strings.Contains(err.Error(), tc.refused) || calls != 0 {
					t.Fatalf("err = %v (engine called %d times), want a LockedError with %q and no unlock", err, calls, tc.refused)
				}
				return
			}
			if err != nil || calls != 1 {
				t.Fatalf("err = %v, engine called %d times", err, calls)
			}
			if !strings.Contains(errOut.String(), tc.note) {
				t.Errorf("stderr %q lacks %q", errOut, tc.note)
			}
		})
	}
}
