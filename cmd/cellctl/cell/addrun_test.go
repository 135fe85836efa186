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

// runAdd runs `cellctl cell add` through its command with an engine that
// must not be needed (a dry run deploys nothing) unless engine is given.
func runAdd(t *testing.T, output string, engine func(*fleet.Fleet, func(stackrun.Event)) (lc.Engine, error), args ...string) (string, string, error, bool) {
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
				return nil, errors.New("no engine in this test")
			}
			return engine(fl, ev)
		}
		o.QuotaCheck = func(context.Context, *fleet.Fleet, []string) error {
			t.Error("the quota of a cell that is not created was checked")
			return nil
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
	if engineAsked {
		t.Error("a dry run connected to the engine")
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
		StackFile string `json:"stack_file"`
		DryRun    bool   `json:"dry_run"`
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := repoFiles(t, "../../../stacks")
			stdout, _, err, _ := runAdd(t, "table", nil, tc.args...)
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
