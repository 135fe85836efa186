package secret

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/originsecret"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
)

// TestRotateRefusesBadFlagsBeforeTheFleet: a bad --bake-scale or --steps
// is refused with what is allowed, before the fleet is read or anything
// is set up.
func TestRotateRefusesBadFlagsBeforeTheFleet(t *testing.T) {
	cases := []struct {
		o    RotateOptions
		want string
	}{
		{RotateOptions{Cloud: cmdutil.CloudAWS, BakeScale: 0.01}, "--bake-scale is for rehearsals on the simulated cloud (--cloud sim); on aws the gate bakes as waves.yaml says"},
		{RotateOptions{Cloud: cmdutil.CloudSim, BakeScale: 2}, "--bake-scale 2: allowed is more than 0 and at most 1"},
		{RotateOptions{Cloud: cmdutil.CloudSim, BakeScale: -0.5}, "--bake-scale -0.5: allowed is more than 0 and at most 1"},
		{RotateOptions{Cloud: cmdutil.CloudSim, Steps: -1}, "--steps -1: allowed is 0 (all) or more"},
	}
	for _, tc := range cases {
		io, _, _, _ := iostreams.Test()
		o := tc.o
		o.IO = io
		o.Fleet = func() (*fleet.Fleet, error) { t.Errorf("%s: read the fleet", tc.want); return nil, errors.New("no") }
		if err := rotateRun(context.Background(), &o); err == nil || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

// TestRotateStopsAtTheFirstFailure: a fleet that does not load, or a
// rotation that cannot be set up, is the command's error; nothing runs.
func TestRotateStopsAtTheFirstFailure(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	v, _ := render.Pick(cmdutil.FormatTable, rotateFormats...)
	o := &RotateOptions{IO: io, View: v, Cloud: cmdutil.CloudSim,
		Fleet: func() (*fleet.Fleet, error) { return nil, errors.New("stacks/waves.yaml:3: waves[0].cells: is empty") }}
	if err := rotateRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), "waves[0].cells") {
		t.Errorf("fleet error: %v", err)
	}
	o.Fleet = func() (*fleet.Fleet, error) { return &fleet.Fleet{}, nil }
	o.Setup = func(context.Context, *fleet.Fleet, float64) (*originsecret.Rotator, func(), error) {
		return nil, nil, errors.New("the fleet is held by rollout r-1")
	}
	if err := rotateRun(context.Background(), o); err == nil || err.Error() != "the fleet is held by rollout r-1" {
		t.Errorf("setup error: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("a failed rotation printed %q", out)
	}
}

// TestSetupNeedsWavesAndTheFleet: the rotation rides the fleet's waves,
// so a fleet without any is refused; a fleet whose repository cannot be
// read (no Pulumi.yaml) is refused, naming the file, before any record
// store is opened.
func TestSetupNeedsWavesAndTheFleet(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	if _, _, err := setup(f)(context.Background(), &fleet.Fleet{}, 0); err == nil || !strings.Contains(err.Error(), "the fleet has no waves") {
		t.Errorf("no waves: %v", err)
	}
	t.Chdir(t.TempDir())
	fl := &fleet.Fleet{Dir: t.TempDir(), Project: "cells", Waves: &waves.Plan{Waves: []waves.Wave{{Name: "canary", Cells: []string{"cell-a"}, Bake: waves.DefaultBake, Gate: waves.DefaultGate()}}}}
	c := &fleet.Cell{}
	c.ID = "cell-a"
	fl.Cells = append(fl.Cells, c)
	_, _, err := setup(f)(context.Background(), fl, 0)
	if err == nil {
		t.Fatal("set up a rotation without a repository")
	}
	if !strings.Contains(err.Error(), "Pulumi.yaml: file not found") {
		t.Errorf("without a repository: %v, want Pulumi.yaml named", err)
	}
}

// TestRotateViews: a resumed plan shows its done steps by state and only
// the pending ones with their stacks; the record after a run shows each
// step's state; -o json is the same data.
func TestRotateViews(t *testing.T) {
	plan := &originsecret.Planned{ID: "s-1", Resumes: true, Notes: []string{"cell-e joined wave rest: its accept step runs again"}, Steps: []originsecret.PlannedStep{
		{Name: "accept/canary", State: executor.WaveDone},
		{Name: "accept/rest", State: executor.WavePending, Does: "wave rest (cell-b, cell-e) accepts the current and the next value", Stacks: []string{"cell-b", "cell-e"}, Bake: 10 * time.Minute, Poll: 30 * time.Second},
	}}
	rec := &executor.Record{ID: "s-1", State: executor.HaltedState, Steps: []executor.StepRecord{{Name: "accept/canary", State: executor.WaveDone}, {Name: "accept/rest", State: executor.WaveRolledBack}}}
	render1 := func(format string, r RotateReport) string {
		io, _, out, _ := iostreams.Test()
		v, err := render.Pick(format, rotateFormats...)
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Render(io, r); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := "rotation s-1 (dry run: nothing changes): resuming its record, 1 of 2 steps to run\n" +
		"  accept/canary      passed\n" +
		"  accept/rest        wave rest (cell-b, cell-e) accepts the current and the next value; up cell-b, cell-e; bake 10m0s, poll 30s\n" +
		"note: cell-e joined wave rest: its accept step runs again\n"
	if got := render1(cmdutil.FormatTable, RotateReport{Plan: plan}); got != want {
		t.Errorf("plan table:\n%s\nwant:\n%s", got, want)
	}
	want = "rotation s-1: " + string(executor.HaltedState) + "\n  accept/canary      passed\n  accept/rest        " + string(executor.WaveRolledBack) + "\n"
	if got := render1(cmdutil.FormatTable, RotateReport{Record: rec}); got != want {
		t.Errorf("record table:\n%s\nwant:\n%s", got, want)
	}
	if got := render1(cmdutil.FormatJSON, RotateReport{Plan: plan}); !strings.Contains(got, `"resumes": true`) || !strings.Contains(got, `"accept/rest"`) {
		t.Errorf("plan json:\n%s", got)
	}
	if got := render1(cmdutil.FormatJSON, RotateReport{Record: rec}); !strings.Contains(got, `"id": "s-1"`) {
		t.Errorf("record json:\n%s", got)
	}
}
