package apply

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// The gated machines' changes (a wave's update or rollback, a rotation
// phase, a canary step) pass the same gates as up, over what they deploy.
func TestRunnerGatesEveryChange(t *testing.T) {
	ctx := context.Background()
	d := &deployedEngine{}
	env := deployedEnv(t, d)
	a := env.Fleet.Cell("cell-a")
	d.outputs = map[string]map[string]any{
		"cell-a": {"index": float64(a.Index), "cidr": a.CIDR(), "region": a.Region},
	}
	r := &Runner{Env: env, Engine: d}

	// A recorded configuration that renumbers the deployed cell (the
	// inputs, not the repository, are checked): refused, nothing ran.
	moved := a.Cell
	moved.Index = 77
	res := r.RunStack(ctx, stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp, Inputs: stackrun.Inputs{Cell: &moved}})
	var refused *RefusedError
	if res.Result != stackrun.Skipped || !errors.As(res.Err, &refused) || !strings.Contains(res.Err.Error(), "deployed as index") {
		t.Fatalf("renumbering rollback: %+v", res)
	}
	if len(d.runs) != 0 {
		t.Fatalf("the engine ran despite the refusal: %v", d.runs)
	}

	// Only a destroy lifts protection.
	res = r.RunStack(ctx, stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp, Inputs: stackrun.Inputs{ReleaseProtection: true}})
	if res.Result != stackrun.Skipped || !errors.As(res.Err, &refused) {
		t.Fatalf("release through the runner: %+v", res)
	}

	// A change that passes runs once the plugin and the secret are there.
	res, err := Apply(ctx, r, stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp})
	if err != nil || res.Result != stackrun.Succeeded {
		t.Fatalf("a passing up: %+v, %v", res, err)
	}
	if got := strings.Join(d.calls, ","); got != "plugins,secret,run up cell-a" {
		t.Fatalf("calls = %s", got)
	}
}

// Prepare refuses a fleet that fails the isolation audit before anything
// runs, with up's finding (exit 2).
func TestRunnerPrepareRefusesAnIsolationViolation(t *testing.T) {
	d := &deployedEngine{}
	env := deployedEnv(t, d)
	env.Fleet.Cell("cell-b").Index = env.Fleet.Cell("cell-a").Index
	r := &Runner{Env: env, Engine: d}
	var reqs []stackrun.Request
	for _, id := range env.Fleet.CellIDs() {
		reqs = append(reqs, stackrun.Request{Stack: id, Op: stackrun.OpUp})
	}
	err := r.Prepare(context.Background(), reqs)
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "isolation audit failed") {
		t.Fatalf("Prepare over an isolation violation = %v", err)
	}
	if len(d.calls) != 0 {
		t.Fatalf("the engine was used: %v", d.calls)
	}
}
