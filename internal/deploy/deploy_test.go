package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/gate"
)

func demoFleet(t *testing.T) *fleet.Fleet {
	t.Helper()
	dir, _ := filepath.Abs("../..")
	fl, err := fleet.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

// cloud is a fake fleet: each cell's stack outputs, as an up leaves them.
type cloud struct {
	mu      sync.Mutex
	outputs map[string]map[string]any
	ups     []stackrun.Request
	bad     map[string]bool // images whose cells serve 5xx
}

func (c *cloud) deploy(t *testing.T, s spec.Cell) {
	enc, err := spec.EncodeDeployed(s)
	if err != nil {
		t.Fatal(err)
	}
	c.outputs[s.ID] = map[string]any{spec.DeployedOutput: enc, "image": s.Image,
		"albArnSuffix": "app/" + s.ID, "targetGroupArnSuffix": "targetgroup/" + s.ID,
		"alarmNames": map[string]any{"5xx": "cellctl-" + s.ID + "-5xx-rate", "p99": "cellctl-" + s.ID + "-p99-latency", "unhealthy": "cellctl-" + s.ID + "-unhealthy-tasks"}}
}

func (c *cloud) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ups = append(c.ups, req)
	if req.Inputs.Cell != nil {
		enc, _ := spec.EncodeDeployed(*req.Inputs.Cell)
		c.outputs[req.Stack][spec.DeployedOutput] = enc
		c.outputs[req.Stack]["image"] = req.Inputs.Cell.Image
	}
	return &stackrun.Result{Name: req.Stack, Result: stackrun.Succeeded, Changes: stackrun.Changes{Update: 1}}
}

func (c *cloud) Outputs(_ context.Context, stack string) (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outputs[stack], nil
}

func (c *cloud) image(cell string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, _ := c.outputs[cell]["image"].(string)
	return s
}

// AlarmStates: every alarm exists and is OK (the metrics decide).
func (c *cloud) AlarmStates(_ context.Context, names []string) (map[string]gate.AlarmState, error) {
	out := map[string]gate.AlarmState{}
	for _, n := range names {
		out[n] = gate.AlarmState{Name: n, State: "OK"}
	}
	return out, nil
}

// MetricData answers from the image each load balancer's cell runs.
func (c *cloud) MetricData(_ context.Context, q gate.MetricQuery) ([]gate.Series, error) {
	var out []gate.Series
	for _, m := range q.Metrics {
		cell := strings.TrimPrefix(m.Dimensions["LoadBalancer"], "app/")
		bad := c.bad[c.image(cell)]
		v := 0.0
		switch m.Name {
		case "RequestCount":
			v = 600
		case "HTTPCode_Target_5XX_Count":
			if bad {
				v = 18
			}
		case "TargetResponseTime":
			v = 0.12
		case "HealthyHostCount":
			v = 2
		}
		out = append(out, gate.Series{ID: m.ID, Timestamps: []time.Time{q.Start}, Values: []float64{v}, Complete: true})
	}
	return out, nil
}

func env(t *testing.T, fl *fleet.Fleet, c *cloud) *Env {
	return &Env{Env: gated.Env{
		Fleet: fl, Runner: c, Outputs: c.Outputs,
		Reader: func(context.Context, fleet.Access) (gate.Reader, error) { return c, nil },
		Store:  backend.New(rollout.NewStore(memblob.OpenBucket(nil))),
	}}
}

func TestPlanScalesBakesAndOverridesTheImage(t *testing.T) {
	fl := demoFleet(t)
	p, _, err := Plan(fl, nil, "app:v9", 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Waves) != len(fl.Waves.Waves) {
		t.Fatalf("waves %d", len(p.Waves))
	}
	for i, w := range p.Waves {
		if want := time.Duration(float64(fl.Waves.Waves[i].Bake) * 0.01); w.Bake != want {
			t.Errorf("wave %s bake %s, want %s", w.Name, w.Bake, want)
		}
	}
	for id, cfg := range p.Desired {
		if cfg.Image != "app:v9" {
			t.Errorf("%s desired image %s", id, cfg.Image)
		}
	}
	if fl.Waves.Waves[0].Bake != 30*time.Minute {
		t.Errorf("the fleet's own waves were changed: %s", fl.Waves.Waves[0].Bake)
	}
}

// oldImage reads every cell as running an older image: each one changes.
type oldImage struct{}

func (oldImage) Current(context.Context, string) (executor.CellConfig, error) {
	return executor.CellConfig{Image: "app:old"}, nil
}

// --bake-scale scales a stage's delay as it scales its bake and poll, in
// the plan that runs and so in the dry run's estimate: the seed pipeline
// (delays of 10 and 30 minutes) used to say 55 minutes at 0.002, all but
// the cell updates its unscaled delays.
func TestBakeScaleScalesStageDelaysAndTheEstimate(t *testing.T) {
	fl := demoFleet(t)
	data, err := os.ReadFile("../../testdata/waves/seed/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if fl.Waves, err = waves.Parse("pipeline.yaml", data); err != nil {
		t.Fatal(err)
	}
	p, wp, err := Plan(fl, nil, "app:v9", 0.002)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 1200 * time.Millisecond, 3600 * time.Millisecond}
	for i, w := range p.Waves {
		if w.Delay != want[i] || wp.Waves[i].Delay != want[i] {
			t.Errorf("stage %s: delay %s (waves plan %s), want %s", w.Name, w.Delay, wp.Waves[i].Delay, want[i])
		}
	}
	if fl.Waves.Waves[2].Delay != 30*time.Minute {
		t.Errorf("the fleet's own stages were changed: %s", fl.Waves.Waves[2].Delay)
	}
	const update = 5 * time.Minute
	d, err := executor.Describe(context.Background(), oldImage{}, nil, nil, p, update)
	if err != nil {
		t.Fatal(err)
	}
	// Three stages of one round of updates each; the rest is the scaled
	// waits: a few seconds, not the 40 minutes of the unscaled delays.
	if waits := d.Expected - 3*update; waits < 0 || waits > 10*time.Second {
		t.Errorf("the dry run expects %s: %s of it waiting, want a few seconds", d.Expected, waits)
	}
}

func TestAStackWithoutItsDeployedSpecIsNotGuessed(t *testing.T) {
	fl := demoFleet(t)
	c := &cloud{outputs: map[string]map[string]any{"cell-a": {"image": "app:v1"}}}
	_, err := Updater(env(t, fl, c)).Current(context.Background(), "cell-a")
	if err == nil || !strings.Contains(err.Error(), "no deployedSpec output") {
		t.Errorf("a cell without deployedSpec: %v", err)
	}
	_, err = Updater(env(t, fl, c)).Current(context.Background(), "cell-b")
	if err == nil || !strings.Contains(err.Error(), "not deployed") {
		t.Errorf("an undeployed cell: %v", err)
	}
}

func TestGoodImageRollsThroughBadImageIsRolledBackAtTheCanary(t *testing.T) {
	fl := demoFleet(t)
	c := &cloud{outputs: map[string]map[string]any{}, bad: map[string]bool{"app:bad": true}}
	for _, cell := range fl.Cells {
		s := cell.Cell
		s.Image = "app:v1"
		// What runs differs from the repository in a setting: a rollback
		// must restore it, because it restores what ran, not the files.
		s.DesiredCount = 3
		c.deploy(t, s)
	}
	e := env(t, fl, c)
	ctx := context.Background()
	res, err := Run(ctx, e, Options{Image: "app:good", BakeScale: 0.0001, Options: executor.Options{Host: "h", PID: 1}})
	if err != nil {
		t.Fatalf("good rollout: %v", err)
	}
	for _, r := range res.Outcome.Summary {
		if r.Image != "app:good" || r.State != executor.StateNew {
			t.Errorf("good rollout row %+v", r)
		}
	}
	if last := c.ups[len(c.ups)-1]; last.Stack != fleet.RouterStack {
		t.Errorf("the router must go last, got %s", last.Stack)
	}

	c.ups = nil
	res, err = Run(ctx, e, Options{Image: "app:bad", BakeScale: 0.0001, Options: executor.Options{Host: "h", PID: 1}})
	var halted *executor.HaltedError
	if !errors.As(err, &halted) || exitcode.Of(err) != exitcode.Halted {
		t.Fatalf("bad rollout: %v (exit %d)", err, exitcode.Of(err))
	}
	if halted.Wave != "canary" || halted.Breach == nil || halted.Breach.Cell != "cell-a" || !halted.RolledBack ||
		!strings.Contains(err.Error(), "error_rate_5xx") || !strings.Contains(err.Error(), "3") {
		t.Errorf("halt: %v", err)
	}
	got, err := Updater(e).Current(ctx, "cell-a")
	if err != nil || got.Image != "app:good" {
		t.Fatalf("cell-a after rollback: %+v %v", got, err)
	}
	for _, cell := range []string{"cell-b", "cell-c", "cell-d"} {
		if c.image(cell) != "app:good" {
			t.Errorf("%s was touched: %s", cell, c.image(cell))
		}
	}
	for _, up := range c.ups {
		if up.Stack != "cell-a" {
			t.Errorf("the halted rollout updated %s", up.Stack)
		}
	}
	if n := len(c.ups); n != 2 || c.ups[1].Inputs.Cell.Image != "app:good" {
		t.Errorf("want the update and its rollback of cell-a, got %d ups", n)
	}
	rows := map[string]string{}
	for _, r := range res.Outcome.Summary {
		rows[r.Cell] = r.State + " " + r.Image
	}
	if rows["cell-a"] != executor.StateRolledBack+" app:good" || rows["cell-b"] != executor.StateUntouched+" app:good" {
		t.Errorf("summary %v", rows)
	}
}

func TestASecondRolloutIsRefusedWithExitFourNamingTheHolder(t *testing.T) {
	fl := demoFleet(t)
	c := &cloud{outputs: map[string]map[string]any{}}
	for _, cell := range fl.Cells {
		c.deploy(t, cell.Cell)
	}
	e := env(t, fl, c)
	ctx := context.Background()
	other := executor.Holder{ID: "r-0000000000aa", Verb: "deploy", Host: "ci-7", PID: 4242, Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Nonce: "n1"}
	if err := e.Store.Lock(ctx, other); err != nil {
		t.Fatal(err)
	}
	_, err := Run(ctx, e, Options{Image: "app:v2", BakeScale: 0.0001, Options: executor.Options{Host: "h", PID: 1}})
	if exitcode.Of(err) != exitcode.Locked || !strings.Contains(err.Error(), "r-0000000000aa") || !strings.Contains(err.Error(), "ci-7") || !strings.Contains(err.Error(), "4242") {
		t.Fatalf("second rollout: %v (exit %d)", err, exitcode.Of(err))
	}
	if len(c.ups) != 0 {
		t.Errorf("a refused rollout updated %d stacks", len(c.ups))
	}
}

// A deploy asks env.Confirm once the fleet's lock is known free and
// before its first write, able to describe the rollout as its dry run
// does; a no prepares, updates and records nothing.
func TestADeployIsConfirmedBeforeItsFirstWrite(t *testing.T) {
	fl := demoFleet(t)
	c := &cloud{outputs: map[string]map[string]any{}}
	for _, cell := range fl.Cells {
		s := cell.Cell
		s.Image = "app:v1"
		c.deploy(t, s)
	}
	e := env(t, fl, c)
	prepared := 0
	e.Prepare = func(context.Context, []stackrun.Request) error { prepared++; return nil }
	no := errors.New("not confirmed")
	var described *executor.Description
	e.Confirm = func(_ context.Context, describe func() (*executor.Description, error)) error {
		d, err := describe()
		if err != nil {
			return err
		}
		described = d
		return no
	}
	ctx := context.Background()
	if _, err := Run(ctx, e, Options{Image: "app:v2", BakeScale: 0.0001, Options: executor.Options{Host: "h", PID: 1}}); !errors.Is(err, no) {
		t.Fatalf("a no is the error: %v", err)
	}
	if described == nil || len(described.Waves) != 3 || described.Waves[0].Cells[0].Cell != "cell-a" {
		t.Fatalf("asked with %+v", described)
	}
	if prepared != 0 || len(c.ups) != 0 {
		t.Fatalf("a no prepared %d times and updated %d stacks", prepared, len(c.ups))
	}
	if _, err := e.Store.Load(ctx, described.ID); !errors.Is(err, executor.ErrNoRecord) {
		t.Fatalf("a no left a rollout record: %v", err)
	}
	e.Confirm = func(context.Context, func() (*executor.Description, error)) error { return nil }
	if _, err := Run(ctx, e, Options{Image: "app:v2", BakeScale: 0.0001, Options: executor.Options{Host: "h", PID: 1}}); err != nil || prepared != 1 || c.image("cell-d") != "app:v2" {
		t.Fatalf("a yes: %v, prepared %d, cell-d runs %s", err, prepared, c.image("cell-d"))
	}
}

// The dry run previews each changed cell's update with the configuration
// the rollout ships (not the repository's stack file): the resource changes
// are listed under the cell; an unchanged cell is not previewed; a failed
// preview is the cell's error and the dry run's.
func TestDryRunPreviewsEachChangedCell(t *testing.T) {
	fl := demoFleet(t)
	c := &cloud{outputs: map[string]map[string]any{}}
	for _, cell := range fl.Cells {
		s := cell.Cell
		if cell.ID == "cell-b" {
			s.Image = "app:v2" // already what the rollout ships
		}
		c.deploy(t, s)
	}
	e := env(t, fl, c)
	var mu sync.Mutex
	previewed := map[string]string{}
	e.Preview = func(_ context.Context, cell string, cfg spec.Cell) ([]stackrun.Change, error) {
		mu.Lock()
		defer mu.Unlock()
		previewed[cell] = cfg.Image
		// The steps the engine reports for an image change: the task
		// definition's replacement is three steps, one resource.
		td := "aws:ecs/taskDefinition:TaskDefinition"
		return []stackrun.Change{
			{Op: "update", Type: "aws:ecs/service:Service", Name: cell + "-svc", Diffs: []string{"taskDefinition"}},
			{Op: "create-replacement", Type: td, Name: cell + "-task", Diffs: []string{"containerDefinitions"}, Replace: []string{"containerDefinitions"}},
			{Op: "replace", Type: td, Name: cell + "-task", Diffs: []string{"containerDefinitions"}, Replace: []string{"containerDefinitions"}},
			{Op: "read", Type: "pulumi:pulumi:StackReference", Name: "router-outputs"},
			{Op: "delete-replaced", Type: td, Name: cell + "-task"},
		}, nil
	}
	res, err := Run(context.Background(), e, Options{Image: "app:v2", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := previewed["cell-b"]; ok || len(previewed) != len(fl.Cells)-1 {
		t.Errorf("previewed %v: every changed cell, and not the unchanged cell-b", previewed)
	}
	for cell, img := range previewed {
		if img != "app:v2" {
			t.Errorf("%s previewed with image %q, want the rollout's app:v2", cell, img)
		}
	}
	for _, w := range res.Description.Waves {
		for _, cd := range w.Cells {
			if cd.Cell == "cell-b" {
				if !cd.Unchanged || cd.Resources != nil {
					t.Errorf("cell-b: %+v", cd)
				}
				continue
			}
			if len(cd.Resources) != 2 || cd.Resources[0].Name != cd.Cell+"-svc" || cd.Resources[1].Op != "replace" ||
				len(cd.Resources[1].Replace) != 1 || cd.Resources[1].Replace[0] != "containerDefinitions" {
				t.Errorf("%s resources %+v", cd.Cell, cd.Resources)
			}
		}
	}
	if len(c.ups) != 0 {
		t.Errorf("the dry run ran %d updates", len(c.ups))
	}

	e.Preview = func(_ context.Context, cell string, _ spec.Cell) ([]stackrun.Change, error) {
		if cell == "cell-c" {
			return nil, errors.New("the engine could not plan it")
		}
		return nil, nil
	}
	res, err = Run(context.Background(), e, Options{Image: "app:v2", DryRun: true})
	if err == nil || !strings.Contains(err.Error(), "cell cell-c: preview: the engine could not plan it") {
		t.Errorf("a failed preview: %v", err)
	}
	if res == nil || res.Description == nil {
		t.Fatal("the description is still returned, with the cell's error")
	}
}

// A dry run names a changed setting as the operator sets it: the
// configuration key in the fleet's namespace, not the recorded field.
func TestDryRunNamesSettingsByTheirKeys(t *testing.T) {
	fl := demoFleet(t)
	c := &cloud{outputs: map[string]map[string]any{}}
	for _, cell := range fl.Cells {
		s := cell.Cell
		s.TaskCPU, s.TaskMemory = 256, 512 // deployed before the repository's sizes
		c.deploy(t, s)
	}
	res, err := Run(context.Background(), env(t, fl, c), Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, cd := range res.Description.Waves[0].Cells {
		for _, ch := range cd.Changes {
			keys = append(keys, ch.Key)
		}
	}
	want := []string{fl.ConfigKey("taskCpu"), fl.ConfigKey("taskMemory")}
	if !slices.Equal(keys, want) {
		t.Fatalf("the canary's changes are named %v, want %v", keys, want)
	}
}

// TestADeployThatTurnsMigrationsOnBootstrapsEachCell: the demo fleet's
// repository runs migrations (cells:migrationCommand) and its cells were
// deployed without; the deploy that turns them on (the image kept)
// bootstraps each cell's database users from its stack's outputs as its
// update left them — the ones that run migrations, whose bootstrap has the
// migrator's user — and the dry run says so. Before, only up bootstrapped,
// and the next rollout's migration failed with role "cellctl_migrator"
// does not exist.
func TestADeployThatTurnsMigrationsOnBootstrapsEachCell(t *testing.T) {
	fl := demoFleet(t)
	if !fl.Cells[0].RunsMigrations() {
		t.Fatal("the demo fleet runs migrations")
	}
	c := &cloud{outputs: map[string]map[string]any{}}
	for _, cell := range fl.Cells {
		s := cell.Cell
		s.MigrationCommand = nil
		c.deploy(t, s)
	}
	e := env(t, fl, c)
	var mu sync.Mutex
	var boots []string
	e.Bootstrap = func(_ context.Context, cell *fleet.Cell, outs map[string]any) (string, error) {
		s, err := spec.DecodeDeployed(cell.ID, outs)
		if err != nil {
			return "", err
		}
		mu.Lock()
		defer mu.Unlock()
		boots = append(boots, fmt.Sprintf("%s migrations=%v", cell.ID, s.RunsMigrations()))
		return "database users and grants in place", nil
	}
	ctx := context.Background()
	dry, err := Run(ctx, e, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range dry.Description.Waves {
		for _, cd := range w.Cells {
			if cd.Bootstrap == nil || !cd.Bootstrap.AfterUpdate || !strings.Contains(cd.Bootstrap.Why, "turns migrations on") {
				t.Errorf("the dry run of %s: bootstrap %+v, want one after the update", cd.Cell, cd.Bootstrap)
			}
		}
	}
	if len(boots) != 0 {
		t.Fatalf("the dry run bootstrapped %v", boots)
	}
	if _, err := Run(ctx, e, Options{BakeScale: 0.0001, Options: executor.Options{Host: "h", PID: 1}}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(boots)
	var want []string
	for _, id := range fl.CellIDs() {
		want = append(want, id+" migrations=true")
	}
	if !slices.Equal(boots, want) {
		t.Errorf("bootstraps %v, want each cell once, from its stack as the update left it: %v", boots, want)
	}

	// A rollout that changes no migration setting and runs no migration
	// (no migrator) bootstraps nothing.
	boots = nil
	if _, err := Run(ctx, e, Options{Image: "app:v2", BakeScale: 0.0001, Options: executor.Options{Host: "h", PID: 1}}); err != nil {
		t.Fatal(err)
	}
	if len(boots) != 0 {
		t.Errorf("bootstraps %v: nothing needed them", boots)
	}
}
