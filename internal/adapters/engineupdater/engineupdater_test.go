package engineupdater

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/adapters/cellspec"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

type runner struct {
	got    []stackrun.Request
	answer func(req stackrun.Request) *stackrun.Result
}

func (r *runner) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	r.got = append(r.got, req)
	return r.answer(req)
}

func cell() spec.Cell {
	c := spec.Baseline()
	c.ID, c.Index, c.Region, c.Image = "cell-b", 2, "eu-west-1", "app:v1"
	return c
}

func TestApplyDeploysExactlyTheConfigurationGiven(t *testing.T) {
	r := &runner{answer: func(req stackrun.Request) *stackrun.Result {
		return &stackrun.Result{Name: req.Stack, Result: stackrun.Succeeded, Changes: stackrun.Changes{Update: 2, Same: 70}}
	}}
	u := &Updater{Runner: r}
	want := cell()
	want.AuroraInstances = 3
	cfg, _ := cellspec.FromSpec(want)
	res, err := u.Apply(context.Background(), "cell-b", cfg)
	if err != nil || res.Changed != 2 {
		t.Fatalf("Apply: %+v %v", res, err)
	}
	req := r.got[0]
	if req.Stack != "cell-b" || req.Op != stackrun.OpUp || req.Inputs.Cell == nil || !reflect.DeepEqual(*req.Inputs.Cell, want) {
		t.Errorf("request %+v, cell %+v", req, req.Inputs.Cell)
	}
	if _, err := u.Apply(context.Background(), "cell-c", cfg); !errors.Is(err, executor.ErrNotApplied) || len(r.got) != 1 {
		t.Errorf("cell-b's configuration applied to cell-c: %v", err)
	}
}

func TestALockedStackIsNotAppliedAndExitsFour(t *testing.T) {
	u := &Updater{Runner: &runner{answer: func(req stackrun.Request) *stackrun.Result {
		return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: outcome.Locked(req.Stack, errors.New("the stack is locked by pid 7"))}
	}}}
	cfg, _ := cellspec.FromSpec(cell())
	_, err := u.Apply(context.Background(), "cell-b", cfg)
	if !errors.Is(err, executor.ErrNotApplied) || exitcode.Of(err) != exitcode.Locked {
		t.Errorf("locked stack: %v (exit %d)", err, exitcode.Of(err))
	}
}

func TestAFailedUpIsAnUpdateFailure(t *testing.T) {
	u := &Updater{Runner: &runner{answer: func(req stackrun.Request) *stackrun.Result {
		return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: errors.New("ECS deployment circuit breaker triggered")}
	}}}
	cfg, _ := cellspec.FromSpec(cell())
	_, err := u.Apply(context.Background(), "cell-b", cfg)
	if err == nil || errors.Is(err, executor.ErrNotApplied) {
		t.Errorf("failed up: %v, want an update failure (a breach)", err)
	}
}

func TestCurrentIsTheDeployedSpec(t *testing.T) {
	u := &Updater{Deployed: func(_ context.Context, c string) (spec.Cell, error) { return cell(), nil }}
	got, err := u.Current(context.Background(), "cell-b")
	want, _ := cellspec.FromSpec(cell())
	if err != nil || !got.Equal(want) {
		t.Errorf("Current: %+v %v", got, err)
	}
	if _, err := (&Updater{}).Current(context.Background(), "cell-b"); err == nil {
		t.Errorf("Current without a deployed-config reader succeeded")
	}
}
