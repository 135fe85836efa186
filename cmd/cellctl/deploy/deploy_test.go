package deploy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/engine"
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
	o := &Options{IO: io, Cloud: cmdutil.CloudAWS, BakeScale: 0.01,
		Fleet: func() (*fleet.Fleet, error) { called = true; return nil, nil }}
	err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "--bake-scale is for rehearsals on the simulated cloud") || called {
		t.Errorf("--bake-scale on aws: %v (fleet loaded: %v)", err, called)
	}
	o.Cloud, o.BakeScale = cmdutil.CloudSim, 2
	if err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "at most 1") {
		t.Errorf("--bake-scale 2: %v", err)
	}
}

func TestThroughAndWaveTogetherAreRefused(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	o := &Options{IO: io, Cloud: cmdutil.CloudSim, Through: "canary", Wave: "wave-1",
		Fleet: func() (*fleet.Fleet, error) { t.Fatal("fleet loaded"); return nil, nil }}
	if err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "cannot be combined") {
		t.Errorf("--through with --wave: %v", err)
	}
}

func TestMarkdownOnlyForTheDryRun(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	o := &Options{IO: io, Cloud: cmdutil.CloudSim, Output: cmdutil.FormatMarkdown,
		Fleet: func() (*fleet.Fleet, error) { t.Fatal("fleet loaded"); return nil, nil }}
	if err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "add --dry-run") {
		t.Errorf("-o markdown without --dry-run: %v", err)
	}
}

func TestMarkdownDryRun(t *testing.T) {
	d := &executor.Description{ID: "r-00000000000a", Waves: []executor.WaveDescription{{Name: "canary", Bake: 30 * time.Minute, Gate: "error_rate_5xx < 0.5%",
		Cells: []executor.CellDescription{{Cell: "cell-a", Changes: []executor.Change{{Key: "image", Old: `"app:1"`, New: `"app:2"`}}}}}}}
	md := markdown(d)
	if !strings.Contains(md, "| canary | cell-a | `image`: \"app:1\" → \"app:2\" | 30m0s | error_rate_5xx < 0.5% |") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestDryRunShowsThePreviewsResourceChanges(t *testing.T) {
	d := &executor.Description{ID: "r-00000000000a", Waves: []executor.WaveDescription{{Name: "canary", Bake: 30 * time.Minute,
		Cells: []executor.CellDescription{{Cell: "cell-a", Changes: []executor.Change{{Key: "image", Old: `"app:1"`, New: `"app:2"`}},
			Resources: []executor.ResourceChange{
				{Op: "update", Type: "aws:ecs/service:Service", Name: "cell-a-svc", Diffs: []string{"taskDefinition"}},
				{Op: "replace", Type: "aws:ecs/taskDefinition:TaskDefinition", Name: "cell-a-task", Replace: []string{"containerDefinitions"}},
			}}}}}}
	md := markdown(d)
	if !strings.Contains(md, "preview: 1 to update, 1 to replace<br>`update aws:ecs/service:Service cell-a-svc (taskDefinition)`<br>`replace aws:ecs/taskDefinition:TaskDefinition cell-a-task replaced for containerDefinitions`") {
		t.Errorf("markdown:\n%s", md)
	}
	io, _, _, _ := iostreams.Test()
	txt := describe(render.Out(io), d)
	if !strings.Contains(txt, "    preview: 1 to update, 1 to replace\n      update aws:ecs/service:Service cell-a-svc (taskDefinition)\n") {
		t.Errorf("table:\n%s", txt)
	}
}

// A cell is skipped as unchanged only when its stack's last operation
// completed with nothing pending.
func TestLastRunJudgesTheStacksLastOperation(t *testing.T) {
	for _, tc := range []struct {
		st   engine.StackStatus
		ok   bool
		why  string
		fail bool
	}{
		{engine.StackStatus{LastKind: "update", LastResult: "succeeded"}, true, "", false},
		{engine.StackStatus{LastKind: "update", LastResult: "failed"}, false, "its last update failed", false},
		{engine.StackStatus{LastKind: "update", LastResult: "succeeded", PendingOps: 2}, false, "2 operation(s) pending", false},
		{engine.StackStatus{Error: "corrupt state"}, false, "", true},
	} {
		ok, why, err := lastRun(&tc.st)
		if ok != tc.ok || !strings.Contains(why, tc.why) || (err != nil) != tc.fail {
			t.Errorf("%+v: %v %q %v", tc.st, ok, why, err)
		}
	}
}
