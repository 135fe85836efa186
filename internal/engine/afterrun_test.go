package engine

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	pworkspace "github.com/pulumi/pulumi/sdk/v3/go/common/workspace"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/internal/stackrun"
)

// countingCommand records the CLI commands that really ran.
type countingCommand struct {
	auto.PulumiCommand
	mu  sync.Mutex
	ran [][]string
}

func (c *countingCommand) Run(ctx context.Context, workdir string, stdin io.Reader, extraOut, extraErr []io.Writer,
	extraEnv []string, args ...string,
) (string, string, int, error) {
	c.mu.Lock()
	c.ran = append(c.ran, slices.Clone(args))
	c.mu.Unlock()
	return c.PulumiCommand.Run(ctx, workdir, stdin, extraOut, extraErr, extraEnv, args...)
}

func (c *countingCommand) verbs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, a := range c.ran {
		if len(a) >= 2 && a[0] == "stack" {
			out = append(out, a[0]+" "+a[1])
		} else if len(a) > 0 {
			out = append(out, a[0])
		}
	}
	return out
}

// outputsProgram exports plain values, nested values and secrets (one
// nested inside a map), and one resource-free change between runs.
func outputsProgram(ctx *pulumi.Context) error {
	ctx.Export("plain", pulumi.String("x"))
	ctx.Export("n", pulumi.Int(3))
	ctx.Export("nested", pulumi.Map{"a": pulumi.Array{pulumi.Int(1), pulumi.String("b")}})
	ctx.Export("secret", pulumi.ToSecret(pulumi.String("s3cr3t-value")))
	ctx.Export("nestedSecret", pulumi.Map{"inner": pulumi.ToSecret(pulumi.String("also-secret"))})
	return nil
}

// TestAfterRunAnswersAsTheCLIDoes runs the same up, no-op up and destroy
// through the real CLI twice — once with afterRun in front, once without
// — and requires what cellctl reads (the masked outputs and the resource
// counts) to be equal, with the post-operation `stack output` and `stack
// history` calls answered from the event log instead of started.
func TestAfterRunAnswersAsTheCLIDoes(t *testing.T) {
	root, _ := filepath.Abs("../..")
	bin := filepath.Join(root, "bin", "pulumi")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/pulumi not built (make pulumi): the comparison needs the real CLI")
	}
	ctx := context.Background()
	cli, err := NewCommand(bin)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	backend := "file://" + filepath.Join(tmp, "state")
	if err := os.MkdirAll(filepath.Join(tmp, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	open := func(name string, cmd auto.PulumiCommand) auto.Stack {
		t.Helper()
		s, err := auto.UpsertStackInlineSource(ctx, name, "afterrun", outputsProgram,
			auto.Pulumi(cmd),
			auto.Project(pworkspace.Project{Name: "afterrun", Runtime: pworkspace.NewProjectRuntimeInfo("go", nil),
				Backend: &pworkspace.ProjectBackend{URL: backend}}),
			auto.SecretsProvider("passphrase"),
			auto.EnvVars(map[string]string{
				"PULUMI_SKIP_UPDATE_CHECK": "true",
				"PULUMI_CONFIG_PASSPHRASE": "afterrun-test",
				"PULUMI_HOME":              filepath.Join(tmp, "home"),
				"PULUMI_BACKEND_URL":       backend,
			}))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type seen struct {
		outputs map[string]any
		changes map[string]int
	}
	run := func(name string, cmd auto.PulumiCommand) []seen {
		t.Helper()
		s := open(name, cmd)
		// events: the channel the engine hands the SDK (tapped by afterRun
		// where it is the command, as engine.execute does).
		events := func() chan<- events.EngineEvent {
			ch := drain()
			if a, ok := cmd.(*afterRun); ok {
				return a.tap(ch)
			}
			return ch
		}
		var out []seen
		for range 2 { // a first up (create) and a no-op one (same)
			r, err := s.Up(ctx, optup.SuppressProgress(), optup.ShowSecrets(false), optup.EventStreams(events()))
			if err != nil {
				t.Fatalf("%s: up: %v", name, err)
			}
			out = append(out, seen{maskOutputs(r.Outputs), *r.Summary.ResourceChanges})
		}
		d, err := s.Destroy(ctx, optdestroy.SuppressProgress(), optdestroy.ShowSecrets(false), optdestroy.EventStreams(events()))
		if err != nil {
			t.Fatalf("%s: destroy: %v", name, err)
		}
		return append(out, seen{nil, *d.Summary.ResourceChanges})
	}

	plain := &countingCommand{PulumiCommand: cli}
	want := run("plain", plain)
	counted := &countingCommand{PulumiCommand: cli}
	got := run("answered", newAfterRun(counted))

	if !reflect.DeepEqual(got, want) {
		t.Errorf("answered from the event log:\n%v\nthe CLI's own answers:\n%v", got, want)
	}
	if s := want[0].outputs["secret"]; s != "[secret]" {
		t.Errorf("the CLI's masked secret output is %v", s)
	}
	wantRan := []string{"up", "stack output", "stack output", "stack history", "up", "stack output", "stack output", "stack history", "destroy", "stack history"}
	if !containsInOrder(plain.verbs(), wantRan) {
		t.Fatalf("the SDK no longer asks what afterRun answers; it ran %v", plain.verbs())
	}
	for _, v := range counted.verbs() {
		if v == "stack output" || v == "stack history" {
			t.Errorf("afterRun still started the CLI for %q; it ran %v", v, counted.verbs())
		}
	}
	if n := strings.Count(strings.Join(counted.verbs(), ","), "up"); n != 2 {
		t.Errorf("ups run: %d, want 2 (%v)", n, counted.verbs())
	}
}

func drain() chan events.EngineEvent {
	ch := make(chan events.EngineEvent)
	go func() {
		for range ch {
		}
	}()
	return ch
}

// containsInOrder: want is a subsequence of got.
func containsInOrder(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestAfterRunAnswersOnlyTheNextCalls: a command between the operation and
// the SDK's questions, another stack's question, a failed operation or one
// whose summary never came reaches the CLI.
func TestAfterRunAnswersOnlyTheNextCalls(t *testing.T) {
	stackOutputs := events.EngineEvent{EngineEvent: apitype.EngineEvent{ResOutputsEvent: &apitype.ResOutputsEvent{
		Metadata: apitype.StepEventMetadata{Op: "same", Type: "pulumi:pulumi:Stack",
			New: &apitype.StepEventStateMetadata{Type: "pulumi:pulumi:Stack", Outputs: map[string]any{"k": "v"}}}}}}
	summary := events.EngineEvent{EngineEvent: apitype.EngineEvent{SummaryEvent: &apitype.SummaryEvent{
		ResourceChanges: map[apitype.OpType]int{apitype.OpSame: 4}}}}
	fake := &scriptedCommand{}
	a := newAfterRun(fake)
	ctx := context.Background()
	up := []string{"up", "--yes", "--skip-preview", "--event-log", "tcp://localhost:1", "--stack", "s"}
	out := []string{"stack", "output", "--json", "--stack", "s"}
	shown := []string{"stack", "output", "--json", "--show-secrets", "--stack", "s"}
	hist := []string{"stack", "history", "--json", "--page-size", "1", "--page", "1", "--stack", "s"}
	call := func(args []string) string {
		o, _, _, err := a.Run(ctx, t.TempDir(), nil, nil, nil, nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	// operate runs an up whose events are evs, as the SDK does: the CLI
	// runs while the events stream, and the channel closes afterwards.
	operate := func(evs ...events.EngineEvent) {
		sink := drain()
		in := a.tap(sink)
		for _, ev := range evs {
			in <- ev
		}
		call(up)
		close(in)
	}

	operate(stackOutputs, summary)
	if o := call(out); o != `{"k":"v"}` {
		t.Errorf("outputs answered %q", o)
	}
	if o := call(shown); o != `{"k":"v"}` {
		t.Errorf("shown outputs answered %q", o)
	}
	if o := call(hist); !strings.Contains(o, `"resourceChanges":{"same":4}`) || !strings.Contains(o, `"kind":"update"`) {
		t.Errorf("history answered %q", o)
	}
	if n := fake.count(); n != 1 {
		t.Errorf("the CLI ran %d times, want only the up", n)
	}

	operate(stackOutputs, summary)
	call([]string{"stack", "select", "--stack", "s"}) // something else first
	call(out)
	if n := fake.count(); n != 4 {
		t.Errorf("after another command the outputs must come from the CLI: ran %d, want 4", n)
	}

	operate(stackOutputs, summary)
	call([]string{"stack", "output", "--json", "--stack", "other"})
	if n := fake.count(); n != 6 {
		t.Errorf("another stack's outputs must come from the CLI: ran %d, want 6", n)
	}

	fake.fail = true
	operate(stackOutputs, summary)
	fake.fail = false
	call(hist)
	if n := fake.count(); n != 8 {
		t.Errorf("after a failed up the history must come from the CLI: ran %d, want 8", n)
	}

	operate(summary) // no stack outputs event
	call(out)
	if n := fake.count(); n != 10 {
		t.Errorf("outputs never streamed must come from the CLI: ran %d, want 10", n)
	}

	call(up) // not tapped
	call(hist)
	if n := fake.count(); n != 12 {
		t.Errorf("after an operation whose events were not observed the CLI must answer: ran %d, want 12", n)
	}
}

type scriptedCommand struct {
	auto.PulumiCommand
	mu   sync.Mutex
	n    int
	fail bool
}

func (s *scriptedCommand) Run(context.Context, string, io.Reader, []io.Writer, []io.Writer, []string, ...string) (string, string, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.fail {
		return "", "boom", 1, nil
	}
	return "{}", "", 0, nil
}

func (s *scriptedCommand) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// An operation on a stack the file backend holds starts no `pulumi stack
// select` (afterRun answers it: the CLI could only succeed, and nothing
// reads the selection); a stack the backend lacks is still selected, and
// so created, by the CLI.
func TestHeldStackIsNotSelectedByTheCLI(t *testing.T) {
	fe := newFakeEngine(t)
	ctx := context.Background()
	if res := fe.RunStack(ctx, stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp}); res.Result != stackrun.Succeeded {
		t.Fatalf("first up of cell-a: %s %v", res.Result, res.Err)
	}
	first := strings.Join(fe.cli.calledVerbs(), ",")
	if !strings.HasPrefix(first, "stack select,stack init,") {
		t.Fatalf("a stack the backend lacks must be selected and created by the CLI; ran %s", first)
	}
	for _, op := range []stackrun.Operation{stackrun.OpUp, stackrun.OpPreview, stackrun.OpRefresh, stackrun.OpDestroy} {
		before := len(fe.cli.calledVerbs())
		if res := fe.RunStack(ctx, stackrun.Request{Stack: "cell-a", Op: op}); res.Result != stackrun.Succeeded {
			t.Fatalf("%s of cell-a: %s %v", op, res.Result, res.Err)
		}
		ran := fe.cli.calledVerbs()[before:]
		if slices.Contains(ran, "stack select") || len(ran) == 0 || ran[0] != string(op) {
			t.Errorf("%s of a stack the backend holds ran %v, want the operation first and no stack select", op, ran)
		}
	}
}
