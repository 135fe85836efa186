package stack

import (
	"context"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
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
