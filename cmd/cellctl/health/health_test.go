package health

import (
	"bytes"
	"context"
	"errors"
	"github.com/cellctl/cellctl/internal/fleet"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/health"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

func factory(output string) *cmdutil.Factory {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir, f.Global.Output, f.Global.Cloud, f.Global.Parallel = "../../..", output, cmdutil.CloudSim, 2
	return f
}

func TestHealthFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdHealth(factory(cmdutil.FormatJSON), func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"cell-b", "c", "--since", "1h"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Since != time.Hour || len(got.Cells) != 2 || got.View == nil || got.Outputs == nil || got.Reader == nil {
		t.Fatalf("options %+v", got)
	}
	for _, tc := range []struct {
		output string
		args   []string
		want   string
	}{
		{cmdutil.FormatTable, []string{"--since", "10s"}, "--since 10s: must be at least 1m"},
		{cmdutil.FormatTable, []string{"--watch", "--interval", "0s"}, "--interval 0s: must be at least 1s"},
		{cmdutil.FormatJSON, []string{"--watch"}, "use -o json without --watch"},
		{cmdutil.FormatMarkdown, nil, `--output "markdown" is not supported here (allowed: table, json)`},
	} {
		ran := false
		cmd := NewCmdHealth(factory(tc.output), func(*Options) error { ran = true; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil || ran || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: ran %v, error %v; want %q", tc.args, ran, err, tc.want)
		}
	}
}

type quietCW struct{}

func (quietCW) Alarms(_ context.Context, names []string) (map[string]awsapi.Alarm, error) {
	out := map[string]awsapi.Alarm{}
	for _, n := range names {
		out[n] = awsapi.Alarm{Name: n, State: "OK"}
	}
	return out, nil
}

func (quietCW) MetricData(_ context.Context, qs []awsapi.Query, start, end time.Time) (map[string]awsapi.Series, error) {
	out := map[string]awsapi.Series{}
	for _, q := range qs {
		v := map[string]float64{"requests": 600, "p99": 0.1, "healthy": 2, "unhealthy": 0}[q.ID]
		s := awsapi.Series{ID: q.ID}
		if q.ID != "target5xx" && q.ID != "elb5xx" {
			s.Points = []awsapi.Point{{Time: end.Add(-time.Minute), Value: v}}
		}
		out[q.ID] = s
	}
	return out, nil
}

// The demo fleet, every cell healthy except one never deployed: exit 2,
// the undeployed cell first; unknown cells are refused by name.
func TestHealthRun(t *testing.T) {
	f := factory(cmdutil.FormatTable)
	io, _, stdout, _ := iostreams.Test()
	view, _ := render.Pick(cmdutil.FormatTable, formats...)
	o := &Options{IO: io, Fleet: f.Fleet, View: view, Since: 15 * time.Minute, Now: time.Now,
		Outputs: func(_ context.Context, stacks []string) (map[string]Deployed, error) {
			out := map[string]Deployed{}
			for _, s := range stacks {
				if s != "cell-d" {
					out[s] = Deployed{Outputs: map[string]any{"albArnSuffix": "app/" + s + "/1", "targetGroupArnSuffix": "targetgroup/" + s + "/2"}}
				}
			}
			return out, nil
		},
		Reader: func(context.Context, fleet.Access) (health.Reader, error) { return quietCW{}, nil }}
	err := healthRun(context.Background(), o)
	if exitcode.Of(err) != exitcode.Findings {
		t.Fatalf("exit %d (%v), want 2", exitcode.Of(err), err)
	}
	rows := strings.Split(stdout.String(), "\n")
	if !strings.HasPrefix(rows[2], "cell-d") || !strings.Contains(rows[2], "not deployed") {
		t.Errorf("cell-d must come first:\n%s", stdout.String())
	}

	o.Cells = []string{"cell-zz"}
	if err := healthRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), "not in the fleet: cell-zz (cells: cell-a, cell-b, cell-c, cell-d)") {
		t.Errorf("unknown cell: %v", err)
	}
	o.Cells = []string{"a", "b", "c"}
	stdout.Reset()
	if err := healthRun(context.Background(), o); err != nil {
		t.Errorf("three healthy cells: %v\n%s", err, stdout.String())
	}
	o.Outputs = func(context.Context, []string) (map[string]Deployed, error) {
		return nil, errors.New("backend unreachable")
	}
	if err := healthRun(context.Background(), o); err == nil || exitcode.Of(err) != exitcode.Error {
		t.Errorf("unreadable backend: %v", err)
	}
}

// A router canary nobody finished is a finding (exit 2) even when every
// cell is healthy: viewers may reach a staging distribution nothing
// watches. health names it, its phase and the command that finishes it.
func TestAnUnfinishedRouterCanaryIsAFinding(t *testing.T) {
	f := factory(cmdutil.FormatTable)
	io, _, stdout, _ := iostreams.Test()
	view, _ := render.Pick(cmdutil.FormatTable, formats...)
	routerOuts := map[string]any{"canaryPhase": "stable", "tableVersion": 3.0}
	var recs []*executor.Record
	o := &Options{IO: io, Fleet: f.Fleet, View: view, Since: 15 * time.Minute, Now: time.Now, Cells: []string{"a", "b", "c"},
		Outputs: func(_ context.Context, stacks []string) (map[string]Deployed, error) {
			out := map[string]Deployed{}
			for _, s := range stacks {
				out[s] = Deployed{Outputs: map[string]any{"albArnSuffix": "app/" + s + "/1", "targetGroupArnSuffix": "targetgroup/" + s + "/2"}}
			}
			out["router"] = Deployed{Outputs: routerOuts}
			return out, nil
		},
		Records: func() ([]*executor.Record, error) { return recs, nil },
		Reader:  func(context.Context, fleet.Access) (health.Reader, error) { return quietCW{}, nil }}
	if err := healthRun(context.Background(), o); err != nil {
		t.Fatalf("healthy cells, no canary: %v", err)
	}
	recs = []*executor.Record{{ID: "c-0123456789ab", Kind: executor.KindCanary, Updated: time.Now(),
		Canary: &executor.CanaryRecord{Phase: executor.CanaryHeader, PhaseSince: time.Now(), Candidate: "fn:2"}}}
	stdout.Reset()
	err := healthRun(context.Background(), o)
	if exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "c-0123456789ab is unfinished: header phase") {
		t.Fatalf("exit %d (%v), want 2 naming the canary", exitcode.Of(err), err)
	}
	if !strings.Contains(stdout.String(), "router canary c-0123456789ab is unfinished") || !strings.Contains(stdout.String(), "the router has a finding") {
		t.Errorf("the report does not show the canary:\n%s", stdout.String())
	}
	// No record, but the deployed router is mid-canary: still a finding.
	recs, routerOuts = nil, map[string]any{"canaryPhase": "weight", "stagingFunctionArn": "fn:2"}
	if err := healthRun(context.Background(), o); exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "unrecorded router canary") {
		t.Errorf("unrecorded canary: %v", err)
	}
}

// TestNoCredentialsIsTheOneError: when a cell's reader cannot be built for
// want of AWS credentials, every cell's would fail the same way: health
// returns that one error (exit 1) and prints no table of per-cell
// findings.
func TestNoCredentialsIsTheOneError(t *testing.T) {
	f := factory(cmdutil.FormatTable)
	io, _, stdout, _ := iostreams.Test()
	view, _ := render.Pick(cmdutil.FormatTable, formats...)
	noCreds := &awsapi.CredentialsError{Err: errors.New("no EC2 IMDS role found")}
	o := &Options{IO: io, Fleet: f.Fleet, View: view, Since: 15 * time.Minute, Now: time.Now,
		Outputs: func(_ context.Context, stacks []string) (map[string]Deployed, error) {
			out := map[string]Deployed{}
			for _, s := range stacks {
				out[s] = Deployed{Outputs: map[string]any{"albArnSuffix": "app/" + s + "/1", "targetGroupArnSuffix": "targetgroup/" + s + "/2"}}
			}
			return out, nil
		},
		Reader: func(context.Context, fleet.Access) (health.Reader, error) { return nil, noCreds }}
	err := healthRun(context.Background(), o)
	if !errors.Is(err, noCreds) || exitcode.Of(err) != exitcode.Error {
		t.Fatalf("err = %v (exit %d), want the credentials error, exit 1", err, exitcode.Of(err))
	}
	if stdout.Len() != 0 {
		t.Errorf("printed a table beside the error:\n%s", stdout.String())
	}
	// --watch: the first reading ends the watch, undrawn, with the error.
	o.Watch, o.Interval = true, time.Hour
	done := make(chan error, 1)
	go func() { done <- healthRun(context.Background(), o) }()
	select {
	case err := <-done:
		if !errors.Is(err, noCreds) || stdout.Len() != 0 {
			t.Fatalf("--watch: err = %v, stdout %q", err, stdout.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("--watch kept watching without credentials")
	}
}
