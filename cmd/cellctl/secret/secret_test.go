package secret

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/adapters/backend/backendtest"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/originsecret"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
)

func TestRotateFlagsReachOptions(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Output, f.Global.Cloud = cmdutil.FormatJSON, cmdutil.CloudSim
	var got *RotateOptions
	cmd := NewCmdRotate(f, func(o *RotateOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--dry-run", "--steps", "2", "--bake-scale", "0.01"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.DryRun || got.Steps != 2 || got.BakeScale != 0.01 || got.View == nil || got.Cloud != cmdutil.CloudSim {
		t.Errorf("options %+v", got)
	}
	f.Global.Output = cmdutil.FormatMarkdown
	cmd = NewCmdRotate(f, func(*RotateOptions) error { t.Fatal("ran with -o markdown"); return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err == nil || err.Error() != `--output "markdown" is not supported here (allowed: table, json)` {
		t.Errorf("-o markdown: %v", err)
	}
}

// untouchable is an engine a dry run must never use: every call fails the
// test (the dry run reads the records only).
type untouchable struct{ t *testing.T }

func (u untouchable) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	u.t.Errorf("dry run: ran %s %s", req.Op, req.Stack)
	return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed}
}
func (u untouchable) EnsureOriginVerifySecret(context.Context, []string) ([]string, error) {
	u.t.Error("dry run: ensured the origin secret")
	return nil, nil
}
func (u untouchable) StackSecret(stack, key string) (string, bool, error) {
	u.t.Errorf("dry run: read %s's %s", stack, key)
	return "", false, nil
}
func (u untouchable) SetStackSecrets(_ context.Context, stack string, _ map[string]*string) (string, error) {
	u.t.Errorf("dry run: wrote %s's stack file", stack)
	return "", nil
}
func (u untouchable) DeployedOriginSecret(_ context.Context, stack string) (*engine.DeployedOrigin, error) {
	u.t.Errorf("dry run: read %s's deployed secret", stack)
	return &engine.DeployedOrigin{}, nil
}

func dryRun(t *testing.T, format string) (string, *backendtest.Store) {
	t.Helper()
	io, _, out, _ := iostreams.Test()
	fl := &fleet.Fleet{Project: "cells", Router: &fleet.Router{}}
	for _, id := range []string{"cell-a", "cell-b"} {
		c := &fleet.Cell{}
		c.ID = id
		fl.Cells = append(fl.Cells, c)
	}
	st := backendtest.New()
	v, err := render.Pick(format, rotateFormats...)
	if err != nil {
		t.Fatal(err)
	}
	o := &RotateOptions{IO: io, View: v, DryRun: true, Cloud: cmdutil.CloudSim,
		Fleet: func() (*fleet.Fleet, error) { return fl, nil },
		Setup: func(context.Context, *fleet.Fleet, float64) (*originsecret.Rotator, func(), error) {
			return &originsecret.Rotator{Env: gated.Env{Fleet: fl, Host: "ci-1", PID: 7}, Engine: untouchable{t}, Store: st, Waves: []executor.Wave{
				{Name: "canary", Cells: []string{"cell-a"}, Bake: 5 * time.Minute, Gate: waves.Gate{Poll: 30 * time.Second}},
				{Name: "rest", Cells: []string{"cell-b"}, Bake: 10 * time.Minute, Gate: waves.Gate{Poll: 30 * time.Second}},
			}}, func() {}, nil
		}}
	if err := rotateRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return out.String(), st
}

// `secret rotate --dry-run` prints the rotation's steps in order, each
// with what it does, the stacks it deploys and its bake; it takes no lock,
// saves no record and touches no stack.
func TestRotateDryRunChangesNothing(t *testing.T) {
	out, st := dryRun(t, cmdutil.FormatTable)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		"(dry run: nothing changes): a new rotation, 5 of 5 steps to run",
		"  accept/canary      wave canary (cell-a) accepts the current and the next value; up cell-a; bake 5m0s, poll 30s",
		"  accept/rest        wave rest (cell-b) accepts the current and the next value; up cell-b; bake 10m0s, poll 30s",
		"  switch/router      the router's CloudFront origins send the next value; up router; bake 5m0s, poll 30s",
		"  drop/canary        wave canary (cell-a) stops accepting the old value; up cell-a; bake 5m0s, poll 30s",
		"  drop/rest          wave rest (cell-b) stops accepting the old value; up cell-b; bake 10m0s, poll 30s",
	}
	if len(lines) != len(want) || !strings.HasPrefix(lines[0], "rotation s-") || !strings.HasSuffix(lines[0], want[0]) {
		t.Fatalf("dry run:\n%s", out)
	}
	for i := 1; i < len(want); i++ {
		if lines[i] != want[i] {
			t.Errorf("line %d: %q, want %q", i, lines[i], want[i])
		}
	}
	if h := st.Held(t); h != nil {
		t.Errorf("the dry run left the fleet lock held: %+v", h)
	}
	if recs := st.Records(t, executor.KindRotation); len(recs) != 0 {
		t.Errorf("the dry run saved %d records", len(recs))
	}

	out, _ = dryRun(t, cmdutil.FormatJSON)
	var p originsecret.Planned
	if err := json.Unmarshal([]byte(out), &p); err != nil || len(p.Steps) != 5 || p.Steps[2].Stacks[0] != fleet.RouterStack {
		t.Errorf("-o json: %v\n%s", err, out)
	}
}
