package stack

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/internal/stackrun"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// upReport is an up over two cells and the router: one cell succeeded
// after repairing an interrupted run, one failed, the router waited.
func upReport() *apply.Report {
	res := &runplan.Result{Operation: stackrun.OpUp, Stacks: []*stackrun.Result{
		{Name: "cell-a", Result: stackrun.Succeeded, Changes: stackrun.Changes{Create: 70, Same: 2}, Duration: 12340 * time.Millisecond,
			Outputs: map[string]any{"albDnsName": "cell-a-alb-1.us-east-1.elb.amazonaws.com", "dbSecretArn": "[secret]"},
			Notes:   []string{"an earlier run was interrupted with 2 operation(s) in flight"},
			Timing:  stackrun.Timing{Setup: 0.1, Repair: 0.2, Engine: 11.9, Finish: 0.1}},
		{Name: "cell-b", Result: stackrun.Failed, Changes: stackrun.Changes{Create: 9}, Duration: 4200 * time.Millisecond,
			Err:             errors.New("aws:rds/cluster:Cluster cell-b-db: InjectedFault"),
			FailedResources: []string{"aws:rds/cluster:Cluster cell-b-db", "aws:ec2/eip:Eip cell-b-nat-eip"}},
		{Name: "router", Result: stackrun.Skipped, Err: &stackrun.Blocked{Reason: runplan.RouterBlocked}},
	}}
	return &apply.Report{Plan: runplan.ForStacks(stackrun.OpUp, []string{"cell-a", "cell-b", "router"}, runplan.BuildOptions{Parallel: 4}), Result: res}
}

func previewReport() *apply.Report {
	res := &runplan.Result{Operation: stackrun.OpPreview, Stacks: []*stackrun.Result{
		{Name: "cell-a", Result: stackrun.Succeeded, Changes: stackrun.Changes{Same: 71}, Duration: time.Second},
		{Name: "cell-b", Result: stackrun.Succeeded, Changes: stackrun.Changes{Update: 1, Replace: 1, Same: 69}, Duration: 2 * time.Second,
			// As the engine reports them: a replacement is three steps
			// (each with the loss warning), one resource.
			Planned: []stackrun.Change{
				{Op: "update", Type: "aws:ecs/service:Service", Name: "cell-b-service", Diffs: []string{"desiredCount"}},
				{Op: "create-replacement", Type: "aws:elasticache/replicationGroup:ReplicationGroup", Name: "cell-b-cache", Diffs: []string{"engine", "nodeType"}, Replace: []string{"engine"},
					Warning: cacheLoss},
				{Op: "replace", Type: "aws:elasticache/replicationGroup:ReplicationGroup", Name: "cell-b-cache", Diffs: []string{"engine", "nodeType"}, Replace: []string{"engine"},
					Warning: cacheLoss},
				{Op: "delete-replaced", Type: "aws:elasticache/replicationGroup:ReplicationGroup", Name: "cell-b-cache", Warning: cacheLoss},
			}},
		{Name: "cell-c", Result: stackrun.Failed, Err: errors.New("boom | bad\nsecond line"), Duration: time.Second},
		{Name: "router", Result: stackrun.Skipped, Err: stackrun.ErrNotDeployed},
	}}
	return &apply.Report{Plan: runplan.ForStacks(stackrun.OpPreview, []string{"cell-a", "cell-b", "cell-c", "router"}, runplan.BuildOptions{Parallel: 4}), Result: res}
}

const cacheLoss = "replaces a protected resource — the cache and its data; pulumi refuses it during the up, after changing other resources"

// TestPreviewCountsEachChangedResourceOnce: an image change of four cells
// (per cell the engine reports the task definition's replacement as three
// steps and the service's update) and the router's stack reference reads
// is 8 changes, 2 per cell: the markdown headline, each section's count
// and its rows agree, and the table lists the same rows.
func TestPreviewCountsEachChangedResourceOnce(t *testing.T) {
	td := "aws:ecs/taskDefinition:TaskDefinition"
	res := &runplan.Result{Operation: stackrun.OpPreview}
	var names []string
	for _, c := range []string{"cell-a", "cell-b", "cell-c", "cell-d"} {
		names = append(names, c)
		res.Stacks = append(res.Stacks, &stackrun.Result{Name: c, Result: stackrun.Succeeded, Changes: stackrun.Changes{Update: 1, Replace: 1, Same: 74},
			Planned: []stackrun.Change{
				{Op: "create-replacement", Type: td, Name: c + "-task", Diffs: []string{"containerDefinitions"}, Replace: []string{"containerDefinitions"}},
				{Op: "replace", Type: td, Name: c + "-task", Diffs: []string{"containerDefinitions"}, Replace: []string{"containerDefinitions"}},
				{Op: "update", Type: "aws:ecs/service:Service", Name: c + "-service", Diffs: []string{"taskDefinition"}},
				{Op: "delete-replaced", Type: td, Name: c + "-task"},
			}})
	}
	names = append(names, "router")
	res.Stacks = append(res.Stacks, &stackrun.Result{Name: "router", Result: stackrun.Succeeded, Changes: stackrun.Changes{Same: 23},
		Planned: []stackrun.Change{{Op: "read", Type: "pulumi:pulumi:StackReference", Name: "cell-a-outputs"}}})
	rep := &apply.Report{Plan: runplan.ForStacks(stackrun.OpPreview, names, runplan.BuildOptions{Parallel: 4}), Result: res}

	md := renderWith(t, false, markdownView, rep)
	if !strings.HasPrefix(md, "### cellctl preview: 8 change(s) across 5 stack(s)") {
		t.Errorf("headline:\n%s", md)
	}
	if n := strings.Count(md, "</code>: 2 change(s)</summary>"); n != 4 || strings.Contains(md, "<code>router</code>") {
		t.Errorf("want 4 sections of 2 changes and none for the router (its reads change nothing), got %d:\n%s", n, md)
	}
	row := regexp.MustCompile("(?m)^\\|(replace *\\|`" + regexp.QuoteMeta(td) + "`|update *\\|`aws:ecs/service:Service`)")
	if rows := len(row.FindAllString(md, -1)); rows != 8 || strings.Contains(md, "create-replacement") {
		t.Errorf("%d rows, want 8 (one per changed resource):\n%s", rows, md)
	}
	table := renderWith(t, false, previewTableView, rep)
	if n := strings.Count(table, "replace  "+td); n != 4 || strings.Contains(table, "delete-replaced") || strings.Contains(table, "StackReference") {
		t.Errorf("table rows:\n%s", table)
	}
}

func dryRunReport() *apply.Report {
	return &apply.Report{DryRun: true, Plan: runplan.ForStacks(stackrun.OpUp, []string{"cell-a", "cell-b", "router"},
		runplan.BuildOptions{Parallel: 4, Refresh: true, Expected: map[string]int{"cell-a": 72, "cell-b": 72, "router": 14}})}
}

func renderWith(t *testing.T, tty bool, view render.Format[*apply.Report], rep *apply.Report) string {
	t.Helper()
	io, _, out, _ := iostreams.Test()
	io.SetTTY(tty, tty, false)
	v, err := render.Pick(view.Name, view)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Render(io, rep); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestViewGoldens(t *testing.T) {
	for _, tc := range []struct {
		golden string
		tty    bool
		view   render.Format[*apply.Report]
		report *apply.Report
	}{
		{"up.table.golden", false, tableView, upReport()},
		{"up.table.tty.golden", true, tableView, upReport()},
		{"up.json.golden", false, jsonView, upReport()},
		{"preview.table.golden", false, previewTableView, previewReport()},
		{"preview.json.golden", false, jsonView, previewReport()},
		{"preview.markdown.golden", false, markdownView, previewReport()},
		{"up.dry-run.table.golden", false, tableView, dryRunReport()},
		{"up.dry-run.json.golden", false, jsonView, dryRunReport()},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			golden(t, tc.golden, renderWith(t, tc.tty, tc.view, tc.report))
		})
	}
}

// The JSON shape is the one documented before the error became typed: the
// error is its message.
func TestJSONKeepsTheErrorMessage(t *testing.T) {
	out := renderWith(t, false, jsonView, upReport())
	for _, want := range []string{`"error": "aws:rds/cluster:Cluster cell-b-db: InjectedFault"`,
		`"error": "not started: the router is updated only after all its cells succeed"`, `"seconds": 12.34`} {
		if !strings.Contains(out, want) {
			t.Errorf("json lacks %s:\n%s", want, out)
		}
	}
}

// A report without a result (a gate failed after the plan was built) shows
// nothing: the error says it all.
func TestNothingToShow(t *testing.T) {
	rep := &apply.Report{Plan: upReport().Plan}
	for _, v := range []render.Format[*apply.Report]{tableView, jsonView, markdownView} {
		if out := renderWith(t, false, v, rep); out != "" {
			t.Errorf("%s: %q", v.Name, out)
		}
	}
}

func testFactory(output string) *cmdutil.Factory {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir, f.Global.Output, f.Global.Parallel, f.Global.Cloud = "../../..", output, 3, cmdutil.CloudSim
	return f
}

func TestUpFlags(t *testing.T) {
	var got *UpOptions
	cmd := NewCmdUp(testFactory("json"), func(o *UpOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"cell-a", "cell-b", "--router", "--refresh", "--dry-run"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Cells, ",") != "cell-a,cell-b" || !got.Router || !got.Refresh || !got.DryRun || got.Parallel != 3 || got.View == nil {
		t.Fatalf("options = %+v", got)
	}
	cmd = NewCmdUp(testFactory("markdown"), func(o *UpOptions) error { t.Fatal("ran"); return nil })
	cmd.SetArgs(nil)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), `--output "markdown" is not supported here (allowed: table, json)`) {
		t.Fatalf("err = %v", err)
	}
}

func TestDestroyFlags(t *testing.T) {
	f := testFactory("table")
	f.Global.Yes = true
	var got *DestroyOptions
	cmd := NewCmdDestroy(f, func(o *DestroyOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"cell-d", "--release-protected", "--dry-run"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Cell != "cell-d" || !got.ReleaseProtected || !got.DryRun || !got.Yes {
		t.Fatalf("options = %+v", got)
	}
}

func TestPreviewFlags(t *testing.T) {
	var got *PreviewOptions
	cmd := NewCmdPreview(testFactory("markdown"), func(o *PreviewOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--router"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.Router || len(got.Cells) != 0 {
		t.Fatalf("options = %+v", got)
	}
}

// fakeEngine succeeds at everything but the stacks it is told to fail.
type fakeEngine struct {
	mu   sync.Mutex
	fail map[string]error
	runs []string
}

func (f *fakeEngine) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	f.mu.Lock()
	f.runs = append(f.runs, string(req.Op)+" "+req.Stack)
	f.mu.Unlock()
	if err := f.fail[req.Stack]; err != nil {
		return &stackrun.Result{Result: stackrun.Failed, Err: err}
	}
	return &stackrun.Result{Result: stackrun.Succeeded, Changes: stackrun.Changes{Same: 72}}
}
func (f *fakeEngine) PreparePlugins(context.Context) error { return nil }
func (f *fakeEngine) EnsureOriginVerifySecret(context.Context, []string) ([]string, error) {
	return nil, nil
}
func (f *fakeEngine) Protected(context.Context, string) ([]string, error) { return nil, nil }

func upOptions(t *testing.T, eng *fakeEngine, tty bool) (*UpOptions, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	io, _, out, errOut := iostreams.Test()
	io.SetTTY(tty, tty, false)
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := render.Pick(render.FormatTable, tableView, jsonView)
	return &UpOptions{IO: io, Fleet: func() (*fleet.Fleet, error) { return fl, nil }, View: v, Parallel: 1, Yes: true,
		Engine: func(*fleet.Fleet, func(stackrun.Event)) (apply.Engine, error) { return eng, nil }}, out, errOut
}

// At a terminal, up shows the plan its dry run prints and runs it only on
// a yes; a no changes nothing.
func TestUpAsksAtATerminal(t *testing.T) {
	for _, answer := range []string{"n\n", "y\n"} {
		eng := &fakeEngine{}
		opts, _, errOut := upOptions(t, eng, true)
		opts.Yes, opts.Cells = false, []string{"cell-b"}
		opts.IO.SetTTY(true, true, true)
		opts.IO.In = strings.NewReader(answer)
		err := upRun(context.Background(), opts)
		if !strings.HasPrefix(errOut.String(), "plan: up 1 stack\n  up cell-b (81 resources)\nGo ahead? [y/N] ") {
			t.Fatalf("%q: the question shows the plan: %q", answer, errOut.String())
		}
		switch answer {
		case "n\n":
			if !errors.Is(err, cmdutil.ErrNotConfirmed) || len(eng.runs) > 0 {
				t.Fatalf("a no: %v, runs %v", err, eng.runs)
			}
		default:
			if err != nil || !slices.Equal(eng.runs, []string{"up cell-b"}) {
				t.Fatalf("a yes: %v, runs %v", err, eng.runs)
			}
		}
	}
}

// With no terminal and no --yes, up is refused once its change passed
// every check, before the engine runs anything; bad input says so first.
func TestUpWithNoTerminalNeedsYes(t *testing.T) {
	eng := &fakeEngine{}
	opts, _, _ := upOptions(t, eng, false)
	opts.Yes, opts.Cells = false, []string{"cell-b"}
	err := upRun(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "cellctl up changes the fleet and asks first") || len(eng.runs) > 0 {
		t.Fatalf("%v, runs %v", err, eng.runs)
	}
	opts.Cells = []string{"cell-z"}
	if err := upRun(context.Background(), opts); err == nil || !strings.Contains(err.Error(), `unknown cell "cell-z"`) {
		t.Fatalf("bad input first: %v", err)
	}
}

// upRun through its narrow dependencies: the table on stdout, plain
// progress lines on a piped stderr, and the failure's typed error.
func TestUpRunPiped(t *testing.T) {
	eng := &fakeEngine{fail: map[string]error{"cell-c": outcome.Locked("cell-c", errors.New("another operation holds the stack's lock"))}}
	opts, out, errOut := upOptions(t, eng, false)
	err := upRun(context.Background(), opts)
	var locked *outcome.LockedError
	if !errors.As(err, &locked) || locked.Stack != "cell-c" {
		t.Fatalf("the lock conflict keeps its type up to main: %v", err)
	}
	if !strings.Contains(out.String(), "cell-c  failed") || !strings.Contains(out.String(), "router  skipped") {
		t.Fatalf("stdout:\n%s", out.String())
	}
	for _, want := range []string{"cell-a: up started\n", "cell-c: failed after"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	if strings.Contains(errOut.String(), "\x1b") {
		t.Fatalf("piped progress has escape codes: %q", errOut.String())
	}
}

// On a terminal the progress lines are redrawn in place.
func TestUpRunTTY(t *testing.T) {
	opts, _, errOut := upOptions(t, &fakeEngine{}, true)
	opts.Cells = []string{"cell-a"}
	if err := upRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if s := errOut.String(); !strings.Contains(s, "\x1b[2K") || strings.Contains(s, "up started") {
		t.Fatalf("a terminal redraws status lines: %q", s)
	}
}

func TestUpRunDryRunPrintsThePlan(t *testing.T) {
	eng := &fakeEngine{}
	opts, out, _ := upOptions(t, eng, false)
	opts.DryRun, opts.Cells = true, []string{"cell-b"}
	opts.Engine = func(*fleet.Fleet, func(stackrun.Event)) (apply.Engine, error) {
		t.Fatal("a dry run connects to no engine")
		return nil, nil
	}
	if err := upRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if out.String() != "plan: up 1 stack\n  up cell-b (81 resources)\ndry run: nothing was changed\n" {
		t.Fatalf("%q", out.String())
	}
}

func TestDestroyConfirm(t *testing.T) {
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	c := fl.Cell("cell-d")
	io, in, _, errOut := iostreams.Test()
	opts := &DestroyOptions{IO: io}
	if err := opts.confirm(c); err == nil || err.Error() != "destroying cell-d needs confirmation and there is no terminal to answer on: pass --yes (or set CELLCTL_SKIP_CONFIRMATIONS=true)" {
		t.Fatalf("no terminal, no --yes: %v", err)
	}
	io.SetTTY(false, true, true)
	in.WriteString("cell-x\n")
	if err := opts.confirm(c); err == nil || err.Error() != "not confirmed; nothing was destroyed" {
		t.Fatalf("wrong id: %v", err)
	}
	if !strings.Contains(errOut.String(), "Type the cell id to confirm") {
		t.Fatalf("prompt: %q", errOut.String())
	}
	in.WriteString("cell-d\n")
	if err := opts.confirm(c); err != nil {
		t.Fatal(err)
	}
	opts = &DestroyOptions{IO: io, Yes: true}
	if err := opts.confirm(c); err != nil {
		t.Fatal(err)
	}
}

// --detailed-exitcode: pending changes exit 2 with nothing more printed,
// none exit 0, an error stays exit 1.
func TestPreviewDetailedExitCode(t *testing.T) {
	none := &apply.Report{Result: &runplan.Result{Operation: stackrun.OpPreview, Stacks: []*stackrun.Result{
		{Name: "cell-a", Result: stackrun.Succeeded, Changes: stackrun.Changes{Same: 71}},
		{Name: "router", Result: stackrun.Succeeded, Changes: stackrun.Changes{Same: 23},
			Planned: []stackrun.Change{{Op: "read", Type: "pulumi:pulumi:StackReference", Name: "cell-a-outputs"}}},
	}}}
	if err := pending(none, nil); exitcode.Of(err) != exitcode.OK {
		t.Errorf("no change: %v (exit %d), want 0", err, exitcode.Of(err))
	}
	changed := &apply.Report{Result: &runplan.Result{Operation: stackrun.OpPreview, Stacks: []*stackrun.Result{
		{Name: "cell-a", Result: stackrun.Succeeded, Changes: stackrun.Changes{Same: 71}},
		{Name: "cell-b", Result: stackrun.Succeeded, Changes: stackrun.Changes{Update: 1, Replace: 1, Same: 69}},
	}}}
	err := pending(changed, nil)
	if exitcode.Of(err) != exitcode.Findings || !outcome.Silent(err) {
		t.Errorf("changes pending: %v (exit %d), want a silent exit 2", err, exitcode.Of(err))
	}
	failed := errors.New("cell-c: boom")
	if err := pending(changed, failed); exitcode.Of(err) != exitcode.Error {
		t.Errorf("a failed preview: exit %d, want 1", exitcode.Of(err))
	}
	var got *PreviewOptions
	cmd := NewCmdPreview(testFactory("table"), func(o *PreviewOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--detailed-exitcode"})
	if err := cmd.Execute(); err != nil || !got.DetailedExitCode {
		t.Fatalf("flag: %v %+v", err, got)
	}
}
