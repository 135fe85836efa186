package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/router"
)

// execute runs the root command with args and returns stdout, stderr and
// the exit code main would use.
func execute(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	root := NewCmdRoot(NewFactory(io))
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.ExecuteContext(context.Background())
	if err != nil && !errors.Is(err, exitcode.ErrSilent) {
		errOut.WriteString("error: " + err.Error() + "\n")
	}
	return out.String(), errOut.String(), exitcode.Of(err)
}

func TestPlanFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := NewFactory(io)
	var got *PlanOptions
	cmd := NewCmdRoot(f)
	for _, c := range cmd.Commands() {
		if c.Name() == "plan" {
			cmd.RemoveCommand(c)
		}
	}
	cmd.AddCommand(NewCmdPlan(f, func(o *PlanOptions) error { got = o; return nil }))
	cmd.SetArgs([]string{"plan", "cell-a", "cell-b", "--resources", "-o", "json", "--parallel", "2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || strings.Join(got.Stacks, ",") != "cell-a,cell-b" || !got.Resources || got.Global.Output != "json" || got.Global.Parallel != 2 {
		t.Fatalf("options = %+v", got)
	}
}

func TestGlobalFlagValidation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "-o", "markdown"}, `--output "markdown" is not supported here (allowed: table, json)`},
		{[]string{"plan", "--cloud", "gcp"}, `--cloud "gcp" is not supported (allowed: aws, sim)`},
		{[]string{"plan", "--parallel", "0"}, "--parallel must be at least 1, got 0"},
		{[]string{"up", "cell-z", "--dir", "../.."}, `unknown cell "cell-z"`},
	} {
		_, stderr, code := execute(t, tc.args...)
		if code != exitcode.Error || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestPlanJSONIsOneDocument(t *testing.T) {
	stdout, stderr, code := execute(t, "plan", "--dir", "../..", "-o", "json", "cell-a")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Stacks    []map[string]any  `json:"stacks"`
		Isolation struct{ OK bool } `json:"isolation"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("stdout is not exactly one JSON document: %v\n%s", err, stdout)
	}
	if len(doc.Stacks) != 1 || doc.Stacks[0]["name"] != "cell-a" || !doc.Isolation.OK {
		t.Fatalf("doc = %+v", doc)
	}
}

func TestPlanTable(t *testing.T) {
	stdout, _, code := execute(t, "plan", "--dir", "../..")
	if code != 0 {
		t.Fatal(stdout)
	}
	for _, want := range []string{"cell-d  cell    4      10.4.0.0/16  us-west-2", "nat=per-az", "table v1, 1024 buckets, 2 overrides", "isolation: ok"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan table lacks %q:\n%s", want, stdout)
		}
	}
}

func TestBadFleetExitsOne(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := execute(t, "plan", "--dir", dir)
	if code != exitcode.Error || !strings.Contains(stderr, "Pulumi.yaml: file not found") {
		t.Fatalf("exit %d, %s", code, stderr)
	}
}

func TestSelectStacks(t *testing.T) {
	fl, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cells  []string
		router bool
		want   string
	}{
		{nil, false, "cell-a,cell-b,cell-c,cell-d,router"},
		{[]string{"cell-b"}, false, "cell-b"},
		{[]string{"cell-b", "cell-b"}, true, "cell-b,router"},
		{nil, true, "router"},
		{[]string{"router"}, false, "router"},
	} {
		got, err := selectStacks(fl, tc.cells, tc.router)
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("selectStacks(%v, %v) = %v, %v; want %s", tc.cells, tc.router, got, err, tc.want)
		}
	}
}

func TestRoutedToRefusesServingCells(t *testing.T) {
	fl, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	why, err := routedTo(fl, "cell-a")
	if err != nil || !strings.Contains(why, "cell-a is active in stacks/routing.json with 256 of 1024 buckets and 1 tenant override(s) (globex)") {
		t.Fatalf("why = %q, %v", why, err)
	}
	drained, err := router.Drain(fl.Routing, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	fl.Routing = drained
	if why, err := routedTo(fl, "cell-d"); err != nil || why != "" {
		t.Fatalf("a drained cell with no buckets or overrides must be destroyable: %q %v", why, err)
	}
}

func TestMarkdownPreview(t *testing.T) {
	res := &engine.Result{Operation: engine.OpPreview, Stacks: []*engine.StackResult{
		{Name: "cell-a", Result: engine.Succeeded, Changes: engine.Changes{Same: 71}},
		{Name: "cell-b", Result: engine.Succeeded, Changes: engine.Changes{Update: 1, Same: 70},
			Planned: []engine.Change{{Op: "update", Type: "aws:ecs/service:Service", Name: "cell-b-service", Diffs: []string{"desiredCount"}}}},
		{Name: "cell-c", Result: engine.Failed, Error: "boom | bad"},
	}}
	var b strings.Builder
	writeMarkdown(&b, res)
	want := "### cellctl preview: 1 change(s) across 3 stack(s)\n\n" +
		"| Stack | Result | Create | Update | Replace | Delete | Unchanged |\n" +
		"|---|---|---:|---:|---:|---:|---:|\n" +
		"| `cell-a` | ✅ no changes | 0 | 0 | 0 | 0 | 71 |\n" +
		"| `cell-b` | 📝 changes | 0 | 1 | 0 | 0 | 70 |\n" +
		"| `cell-c` | ❌ failed | 0 | 0 | 0 | 0 | 0 |\n" +
		"\n<details><summary><code>cell-b</code>: 1 change(s)</summary>\n\n" +
		"| Op | Type | Name | Changed properties |\n|---|---|---|---|\n" +
		"| update | `aws:ecs/service:Service` | `cell-b-service` | desiredCount |\n\n</details>\n" +
		"\n**`cell-c` failed:** boom \\| bad\n"
	if b.String() != want {
		t.Fatalf("markdown:\n%s\nwant:\n%s", b.String(), want)
	}
}
