package drift

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/desired"
	audit "github.com/cellctl/cellctl/internal/drift"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/stackrun"
)

func parse(t *testing.T, args ...string) (*DriftOptions, string, error) {
	t.Helper()
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Output, f.Global.Cloud, f.Global.Parallel = "table", "aws", 3
	var got *DriftOptions
	cmd := NewCmdDrift(f, func(o *DriftOptions) error { got = o; return nil })
	cmd.SetArgs(args)
	err := cmd.Execute()
	return got, f.Global.Cloud, err
}

// --cloud is both the cloud drift check and, with aws or sim, the cloud.
func TestDriftFlags(t *testing.T) {
	for _, c := range []struct {
		args   []string
		checks []audit.Kind
		cells  []string
		cloud  string
	}{
		{nil, audit.Kinds, nil, "aws"},
		{[]string{"--cloud"}, []audit.Kind{audit.KindCloud}, nil, "aws"},
		{[]string{"--cloud", "sim"}, audit.Kinds, nil, "sim"}, // the global flag, written as usual
		{[]string{"--cloud", "sim", "--cloud", "cell-b"}, []audit.Kind{audit.KindCloud}, []string{"cell-b"}, "sim"},
		{[]string{"--cloud=sim", "--skew", "--behind", "cell-a"}, []audit.Kind{audit.KindSkew, audit.KindBehind}, []string{"cell-a"}, "sim"},
		{[]string{"--behind", "--cloud"}, []audit.Kind{audit.KindBehind, audit.KindCloud}, nil, "aws"},
	} {
		o, cloud, err := parse(t, c.args...)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		checks := slices.Clone(o.Checks)
		slices.Sort(checks)
		want := slices.Clone(c.checks)
		slices.Sort(want)
		if !slices.Equal(checks, want) || !slices.Equal(o.Cells, c.cells) || cloud != c.cloud || o.Parallel != 3 {
			t.Errorf("%v: checks %v cells %v cloud %s; want %v %v %s", c.args, o.Checks, o.Cells, cloud, c.checks, c.cells, c.cloud)
		}
	}
	if _, _, err := parse(t, "sim"); err == nil || !strings.Contains(err.Error(), "--cloud sim") {
		t.Errorf("a bare sim is not a cell: %v", err)
	}
	if _, _, err := parse(t, "--cloud=azure"); err == nil {
		t.Error("--cloud=azure accepted")
	}
	o, _, err := parse(t, "--fail-on", "cloud,behind")
	if err != nil || !slices.Equal(o.FailOn, []audit.Kind{audit.KindCloud, audit.KindBehind}) {
		t.Errorf("--fail-on: %v %v", o, err)
	}
	if _, _, err := parse(t, "--fail-on", "skew,quota"); err == nil || !strings.Contains(err.Error(), "quota") {
		t.Errorf("--fail-on quota: %v", err)
	}
}

type fakeReaders struct{}

func (fakeReaders) SecretDigest(context.Context, string, string) (string, bool, error) {
	return "", false, nil
}
func (fakeReaders) DeployedOutputs(context.Context, string) (map[string]any, error) {
	return nil, stackrun.ErrNotDeployed
}
func (fakeReaders) RefreshDrift(_ context.Context, stack string) ([]engine.RefreshedResource, error) {
	if stack != "cell-b" {
		return nil, nil
	}
	return []engine.RefreshedResource{{URN: "urn:x", Type: "aws:ecs/service:Service", Name: "cell-b-service", State: engine.RefreshChanged,
		Changes: []engine.RefreshChange{{Path: "desiredCount", Old: "2", New: "7"}}}}, nil
}

// Findings exit 2 (a FindingsError) after the report; --fail-on another
// check turns the same report into exit 0.
func TestDriftRunFindings(t *testing.T) {
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	run := func(failOn []audit.Kind) (string, error) {
		io, _, out, _ := iostreams.Test()
		view, _ := render.Pick(render.FormatMarkdown, driftTable, driftJSON, driftMarkdown)
		err := driftRun(context.Background(), &DriftOptions{IO: io, View: view, Checks: []audit.Kind{audit.KindCloud}, FailOn: failOn,
			Desired: func() (*desired.State, error) { return desired.Resolve(fl, nil), nil },
			Readers: func(*fleet.Fleet) (Readers, error) { return fakeReaders{}, nil }})
		return out.String(), err
	}
	out, err := run(nil)
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || findings.Count != 1 {
		t.Fatalf("want one finding (exit 2): %v", err)
	}
	if !strings.Contains(out, "`2` → `7`") || !strings.Contains(out, "#### cell-b: 1 finding") {
		t.Errorf("markdown:\n%s", out)
	}
	if _, err := run([]audit.Kind{audit.KindSkew}); err != nil {
		t.Errorf("--fail-on skew ignores cloud findings: %v", err)
	}
}
