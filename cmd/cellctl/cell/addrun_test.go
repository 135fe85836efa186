package cell

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	lc "github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// repoFiles lists the fleet repository's stack directory with contents, to
// prove a command left it as it was.
func repoFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// readEngine is the deployed demo fleet as a dry run's preflights read it
// (the router serves table version 1, no new cell is deployed); it refuses
// to change anything.
type readEngine struct{ t *testing.T }

func (e readEngine) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	e.t.Errorf("the engine ran %s %s", req.Op, req.Stack)
	return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: errors.New("not in this test")}
}
func (e readEngine) PreparePlugins(context.Context) error { return nil }
func (e readEngine) EnsureOriginVerifySecret(context.Context, []string) ([]string, error) {
	e.t.Error("the engine stored the origin-verify secret")
	return nil, nil
}
func (e readEngine) Protected(context.Context, string) ([]string, error) { return nil, nil }
func (e readEngine) DeployedOutputs(_ context.Context, stack string) (map[string]any, error) {
	if stack == fleet.RouterStack {
		return map[string]any{"tableVersion": float64(1)}, nil
	}
	return nil, stackrun.ErrNotDeployed
}

// runAdd runs `cellctl cell add` through its command with an engine that
// reads (readEngine) unless engine is given; quota, when set, is the quota
// preflight (nil: one that passes).
func runAdd(t *testing.T, output string, engine func(*fleet.Fleet, func(stackrun.Event)) (lc.Engine, error), args ...string) (string, string, error, bool) {
	return runAddQuota(t, output, engine, nil, args...)
}

func runAddQuota(t *testing.T, output string, engine func(*fleet.Fleet, func(stackrun.Event)) (lc.Engine, error), quota func(context.Context, *fleet.Fleet, []string) error, args ...string) (string, string, error, bool) {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir, f.Global.Output, f.Global.Parallel = "../../..", output, 1
	// Rollout records come from a backend of the test's own.
	f.Global.Backend = "file://" + filepath.ToSlash(t.TempDir())
	t.Cleanup(f.Close)
	engineAsked := false
	cmd := NewCmdAdd(f, func(o *AddOptions) error {
		o.Engine = func(fl *fleet.Fleet, ev func(stackrun.Event)) (lc.Engine, error) {
			engineAsked = true
			if engine == nil {
				return readEngine{t}, nil
			}
			return engine(fl, ev)
		}
		o.QuotaCheck = func(context.Context, *fleet.Fleet, []string) error { return nil }
		if quota != nil {
			o.QuotaCheck = quota
		}
		return addRun(context.Background(), o)
	})
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), errOut.String(), err, engineAsked
}

// A dry run says which cell, index and wave it would write and which
// buckets would move to it — and writes, deploys and publishes nothing.
func TestAddDryRunShowsTheMoveAndChangesNothing(t *testing.T) {
	before := repoFiles(t, "../../../stacks")
	stdout, stderr, err, engineAsked := runAdd(t, "table", nil, "cell-x", "--take", "64", "--dry-run")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !engineAsked {
		t.Error("a dry run did not read what the run's preflights read")
	}
	for _, want := range []string{"add cell-x: routing table version", "moved: 64 of 1024 buckets", "dry run: nothing was written, deployed or published"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "would write stacks/Pulumi.cell-x.yaml") || !strings.Contains(stderr, "would deploy cell-x") {
		t.Errorf("stderr does not say what would be written and deployed:\n%s", stderr)
	}
	if after := repoFiles(t, "../../../stacks"); len(after) != len(before) {
		t.Fatalf("a dry run changed the stack directory: %d files before, %d after", len(before), len(after))
	} else {
		for name, data := range before {
			if after[name] != data {
				t.Errorf("a dry run changed stacks/%s", name)
			}
		}
	}
}

// -o json is one document naming the cell, its index and its wave.
func TestAddDryRunJSON(t *testing.T) {
	stdout, stderr, err, _ := runAdd(t, "json", nil, "cell-x", "--index", "42", "--wave", "canary", "--dry-run")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var rep struct {
		Cell      string `json:"cell"`
		Index     int    `json:"index"`
		Wave      string `json:"wave"`
		StackFile string `json:"stackFile"`
		DryRun    bool   `json:"dryRun"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&rep); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout)
	}
	if rep.Cell != "cell-x" || rep.Index != 42 || rep.Wave != "canary" || rep.StackFile != "stacks/Pulumi.cell-x.yaml" {
		t.Fatalf("report = %+v", rep)
	}
}

// Refusals come before anything is written or deployed, and say why.
func TestAddRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a --take that is neither auto nor a number", []string{"cell-x", "--take", "lots", "--dry-run"}, "lots"},
		{"a cell the routing table already has", []string{"cell-a", "--dry-run"}, `cannot add "cell-a": it is already in the routing table`},
		{"an invalid cell id", []string{"Cell_X", "--dry-run"}, `cannot add "Cell_X"`},
		{"a wave that does not exist", []string{"cell-x", "--wave", "nope", "--dry-run"}, "nope"},
		{"the engine cannot be reached", []string{"cell-x"}, "no engine in this test"},
		{"the engine cannot be reached, dry run", []string{"cell-x", "--dry-run"}, "no engine in this test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := repoFiles(t, "../../../stacks")
			engine := func(*fleet.Fleet, func(stackrun.Event)) (lc.Engine, error) { return readEngine{t}, nil }
			if strings.HasPrefix(tc.name, "the engine cannot be reached") {
				engine = func(*fleet.Fleet, func(stackrun.Event)) (lc.Engine, error) {
					return nil, errors.New("no engine in this test")
				}
			}
			stdout, _, err, _ := runAdd(t, "table", engine, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if stdout != "" {
				t.Errorf("a refused add rendered a report:\n%s", stdout)
			}
			if after := repoFiles(t, "../../../stacks"); len(after) != len(before) {
				t.Fatal("a refused add changed the stack directory")
			}
		})
	}
}

// A quota refusal stops the add and its dry run alike, with the same
// error, before the new cell's stack file or the waves edit is written.
func TestAddQuotaRefusalWritesNothing(t *testing.T) {
	refusal := errors.New("refusing to create cell-x: vpc/L-F678F1CE in us-east-1: 4 used + 1 for the new cells = 5 > limit 4")
	var msgs []string
	for _, dry := range []bool{false, true} {
		before := repoFiles(t, "../../../stacks")
		args := []string{"cell-x"}
		if dry {
			args = append(args, "--dry-run")
		}
		stdout, _, err, _ := runAddQuota(t, "table", nil, func(_ context.Context, fl *fleet.Fleet, cells []string) error {
			if fl.Cell("cell-x") == nil || len(cells) != 1 || cells[0] != "cell-x" {
				t.Errorf("quota checked for %v over cells %v, want cell-x in the fleet", cells, fl.CellIDs())
			}
			return refusal
		}, args...)
		if !errors.Is(err, refusal) {
			t.Fatalf("dry run %v: err = %v", dry, err)
		}
		msgs = append(msgs, err.Error())
		if stdout != "" {
			t.Errorf("a refused add rendered a report:\n%s", stdout)
		}
		after := repoFiles(t, "../../../stacks")
		if len(after) != len(before) {
			t.Fatalf("dry run %v: a refused add changed the stack directory", dry)
		}
		for name, data := range before {
			if after[name] != data {
				t.Errorf("dry run %v: a refused add changed stacks/%s", dry, name)
			}
		}
	}
	if msgs[0] != msgs[1] {
		t.Errorf("the dry run refused otherwise than the run:\n%s\n%s", msgs[1], msgs[0])
	}
}
