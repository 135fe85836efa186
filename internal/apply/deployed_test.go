package apply

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/stackrun"
)

// deployedEngine is a fakeEngine whose stacks have deployed outputs.
type deployedEngine struct {
	fakeEngine
	outputs map[string]map[string]any
	readErr error
}

func (d *deployedEngine) DeployedOutputs(_ context.Context, stack string) (map[string]any, error) {
	if d.readErr != nil {
		return nil, d.readErr
	}
	if o, ok := d.outputs[stack]; ok {
		return o, nil
	}
	return nil, stackrun.ErrNotDeployed
}

func deployedEnv(t *testing.T, d *deployedEngine) *Env {
	env, _ := envFor(demoFleet(t), &d.fakeEngine)
	env.Engine = func() (Engine, error) { return d, nil }
	return env
}

func TestRenumberingADeployedCellIsRefusedBeforeAnyRun(t *testing.T) {
	d := &deployedEngine{}
	env := deployedEnv(t, d)
	b := env.Fleet.Cell("cell-b")
	// Deployed as index 9; the stack file now says cell-b's own index.
	d.outputs = map[string]map[string]any{
		"cell-a": {"index": float64(env.Fleet.Cell("cell-a").Index), "cidr": env.Fleet.Cell("cell-a").CIDR(), "region": env.Fleet.Cell("cell-a").Region},
		"cell-b": {"index": float64(9), "cidr": "10.9.0.0/16", "region": b.Region},
	}
	for _, run := range []func(context.Context, *Env, Options) (*Report, error){Up, Preview} {
		d.calls, d.runs = nil, nil
		_, err := run(context.Background(), env, Options{})
		if err == nil {
			t.Fatal("a renumbered deployed cell was not refused")
		}
		msg := err.Error()
		for _, want := range []string{"refused, nothing was run", "cell-b: " + b.File, "deployed as index 9 (10.9.0.0/16)",
			"set cells:index back to 9", "add a new cell", "migrate cell-b's tenants"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message lacks %q:\n%s", want, msg)
			}
		}
		if strings.Contains(msg, "cell-a:") {
			t.Errorf("cell-a is unchanged and not named:\n%s", msg)
		}
		if len(d.calls) != 0 {
			t.Fatalf("the engine ran despite the refusal: %v", d.calls)
		}
	}
}

func TestRegionChangeOfADeployedCellIsRefused(t *testing.T) {
	d := &deployedEngine{}
	env := deployedEnv(t, d)
	c := env.Fleet.Cell("cell-c")
	d.outputs = map[string]map[string]any{"cell-c": {"index": float64(c.Index), "cidr": c.CIDR(), "region": "ap-south-1"}}
	_, err := Up(context.Background(), env, Options{Cells: []string{"cell-c"}})
	if err == nil || !strings.Contains(err.Error(), "deployed in ap-south-1") || !strings.Contains(err.Error(), "set aws:region back to ap-south-1") {
		t.Fatalf("err = %v", err)
	}
	if len(d.calls) != 0 {
		t.Fatalf("the engine ran: %v", d.calls)
	}
}

func TestDeployedCheckFailsClosedAndPassesUnchanged(t *testing.T) {
	d := &deployedEngine{readErr: errors.New("backend unreachable")}
	env := deployedEnv(t, d)
	if _, err := Up(context.Background(), env, Options{Cells: []string{"cell-a"}}); err == nil || !strings.Contains(err.Error(), "backend unreachable") {
		t.Fatalf("an unreadable deployed stack must stop the run: %v", err)
	}
	d.readErr = nil
	a := env.Fleet.Cell("cell-a")
	d.outputs = map[string]map[string]any{"cell-a": {"index": float64(a.Index), "cidr": a.CIDR(), "region": a.Region}}
	rep, err := Up(context.Background(), env, Options{Cells: []string{"cell-a"}})
	if err != nil || names(rep.Result.Stacks) != "cell-a=succeeded" {
		t.Fatalf("an unchanged deployed cell runs: %v %+v", err, rep)
	}
}
