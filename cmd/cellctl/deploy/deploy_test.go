package deploy

import (
	"errors"

	"context"
	"github.com/cellctl/cellctl/internal/stackrun"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/deploy"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

func TestFlagsReachOptions(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Output = cmdutil.FormatTable
	var got *Options
	cmd := NewCmdDeploy(f, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--image", "app:v2", "--through", "canary", "--rebake", "--bake-scale", "0.01"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Image != "app:v2" || got.Through != "canary" || !got.Rebake || got.BakeScale != 0.01 {
		t.Errorf("options %+v", got)
	}
}

func TestBakeScaleIsRefusedOnAWS(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	called := false
	o := &Options{IO: io, Cloud: cmdutil.CloudAWS, Options: deploy.Options{BakeScale: 0.01},
		Fleet: func() (*fleet.Fleet, error) { called = true; return nil, nil }}
	err := deployRun(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "--bake-scale is for rehearsals on the simulated cloud") || called {
		t.Errorf("--bake-scale on aws: %v (fleet loaded: %v)", err, called)
	}
	o.Cloud, o.BakeScale = cmdutil.CloudSim, 2
	if err := deployRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), "at most 1") {
		t.Errorf("--bake-scale 2: %v", err)
	}
}

func TestThroughAndWaveTogetherAreRefused(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	o := &Options{IO: io, Cloud: cmdutil.CloudSim, Options: deploy.Options{Options: executor.Options{Through: "canary", Wave: "wave-1"}},
		Fleet: func() (*fleet.Fleet, error) { t.Fatal("fleet loaded"); return nil, nil }}
	if err := deployRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), "cannot be combined") {
		t.Errorf("--through with --wave: %v", err)
	}
}

func TestMarkdownOnlyForTheDryRun(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	o := &Options{IO: io, Cloud: cmdutil.CloudSim, Output: cmdutil.FormatMarkdown,
		Fleet: func() (*fleet.Fleet, error) { t.Fatal("fleet loaded"); return nil, nil }}
	if err := deployRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), "add --dry-run") {
		t.Errorf("-o markdown without --dry-run: %v", err)
	}
}

// -o picks the view once, when the flags are bound: an unsupported one is
// refused before anything runs.
func TestOutputPicksTheView(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	for _, o := range []string{cmdutil.FormatTable, cmdutil.FormatJSON, cmdutil.FormatMarkdown} {
		f.Global.Output = o
		var got *Options
		cmd := NewCmdDeploy(f, func(opts *Options) error { got = opts; return nil })
		cmd.SetArgs([]string{"--dry-run"})
		if err := cmd.Execute(); err != nil || got.View == nil || got.Output != o {
			t.Errorf("-o %s: %v, %+v", o, err, got)
		}
	}
	f.Global.Output = "yaml"
	cmd := NewCmdDeploy(f, func(*Options) error { t.Fatal("ran with -o yaml"); return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err == nil || err.Error() != `--output "yaml" is not supported here (allowed: table, json, markdown)` {
		t.Errorf("-o yaml: %v", err)
	}
}

// The abandon is told in its own words, in every format.
func TestAbandonIsShown(t *testing.T) {
	for _, tc := range []struct{ format, want string }{
		{cmdutil.FormatTable, "abandoned r-00000000000a; rerun the same deploy to continue the rollout\n"},
		{cmdutil.FormatJSON, "{\n  \"abandoned\": \"r-00000000000a\"\n}\n"},
	} {
		io, _, out, _ := iostreams.Test()
		v, err := render.Pick(tc.format, formats...)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Render(io, Report{Abandon: true, Result: &deploy.Result{Abandoned: "r-00000000000a"}}); err != nil || out.String() != tc.want {
			t.Errorf("-o %s: %v %q", tc.format, err, out.String())
		}
	}
}

// TestFleetAndWiringErrorsStopTheDeploy: a fleet that does not load, or an
// engine and cloud that cannot be wired, is the deploy's error, and no
// report is printed for a rollout that never started.
func TestFleetAndWiringErrorsStopTheDeploy(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	v, err := render.Pick(cmdutil.FormatTable, formats...)
	if err != nil {
		t.Fatal(err)
	}
	o := &Options{IO: io, Cloud: cmdutil.CloudSim, View: v,
		Fleet: func() (*fleet.Fleet, error) {
			return nil, errors.New("stacks/Pulumi.cell-a.yaml:4: cells:index: must be 0-255")
		}}
	if err := deployRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), "cells:index") {
		t.Errorf("fleet error: %v", err)
	}
	o.Fleet = func() (*fleet.Fleet, error) { return &fleet.Fleet{}, nil }
	o.Env = func(context.Context, *fleet.Fleet, func(stackrun.Event)) (*deploy.Env, func(), error) {
		return nil, nil, errors.New("pulumi: executable file not found in $PATH")
	}
	if err := deployRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), "pulumi: executable file not found") {
		t.Errorf("wiring error: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("a deploy that never started printed %q", out)
	}
}

// TestFirstInterruptSaysAMigrationTaskRunsOn: the notice main prints on
// the first Ctrl-C of a deploy says a migration in flight is not waited
// for, and that the rerun follows it.
func TestFirstInterruptSaysAMigrationTaskRunsOn(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	v, err := render.Pick(cmdutil.FormatTable, formats...)
	if err != nil {
		t.Fatal(err)
	}
	g, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := cmdutil.WithGraceful(context.Background(), g)
	var notice string
	o := &Options{IO: io, Cloud: cmdutil.CloudSim, View: v,
		Fleet: func() (*fleet.Fleet, error) { return &fleet.Fleet{}, nil },
		Env: func(ctx context.Context, _ *fleet.Fleet, _ func(stackrun.Event)) (*deploy.Env, func(), error) {
			notice, _ = cmdutil.GracefulNotice(ctx)
			return nil, nil, errors.New("stop here")
		}}
	_ = deployRun(ctx, o)
	for _, want := range []string{"finishing the stacks in flight", "migration task in flight keeps running", "rerunning the same deploy follows it"} {
		if !strings.Contains(notice, want) {
			t.Errorf("the first interrupt's notice %q does not say %q", notice, want)
		}
	}
}

// TestOptionsForRunsWithTheGlobalFlags: the deploy `rollout resume|abort`
// run takes -o and --yes from the global flags, and goes through the
// same run as `cellctl deploy` (here, an abandon shown as JSON).
func TestOptionsForRunsWithTheGlobalFlags(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Output, f.Global.Yes, f.Global.Cloud = cmdutil.FormatJSON, true, cmdutil.CloudSim
	o, err := OptionsFor(f)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Yes || o.Output != cmdutil.FormatJSON || o.Cloud != cmdutil.CloudSim {
		t.Fatalf("options %+v", o)
	}
	o.Fleet = func() (*fleet.Fleet, error) { return &fleet.Fleet{}, nil }
	o.Env = func(context.Context, *fleet.Fleet, func(stackrun.Event)) (*deploy.Env, func(), error) {
		return &deploy.Env{Abandon: func(_ context.Context, id string) (string, error) { return "deploy " + id, nil }}, func() {}, nil
	}
	o.Abandon = "r-0123456789ab"
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != `{
  "abandoned": "deploy r-0123456789ab"
}` {
		t.Errorf("stdout %q", got)
	}
}
