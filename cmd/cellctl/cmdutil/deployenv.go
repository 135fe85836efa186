package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/adapters/ecsmigrator"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/deploy"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/gate"
)

// DeployEnv wires a gated change (a rollout, a router canary, a secret
// rotation) to the factory's engine, cloud bundle and the rollout store in
// the engine's Pulumi backend: the one gated.Env they share (with this
// process as the fleet lock's holder), in a deploy's. done closes the
// store.
func (f *Factory) DeployEnv(ctx context.Context, fl *fleet.Fleet, events func(stackrun.Event)) (env *deploy.Env, done func(), err error) {
	eng, err := f.Engine(fl, events)
	if err != nil {
		return nil, nil, err
	}
	bundle, err := f.Cloud()
	if err != nil {
		return nil, nil, err
	}
	rs, err := rollout.Open(ctx, eng.Backend())
	if err != nil {
		return nil, nil, err
	}
	store := backend.New(rs)
	// The repository's own fleet beside the desired one (fl): the plan
	// records which images it ships over the stack files'.
	repo, err := f.Fleet()
	if err != nil {
		_ = rs.Close()
		return nil, nil, err
	}
	var mu sync.Mutex
	readers := map[fleet.Access]gate.Reader{}
	// Every stack change of the rollout (a wave's update and
	// rollback, the router canary's steps, the dry run's previews)
	// goes through the apply path: its gates, then the engine with
	// the display's progress.
	runner := &apply.Runner{
		Env:    &apply.Env{Fleet: fl, Parallel: f.Global.Parallel, Log: f.IO.ErrLines()},
		Engine: eng,
		Next: &deploy.ReportingRunner{Runner: eng, Events: events, Expected: func(ctx context.Context, stack string) int {
			st, err := eng.Status(ctx, []string{stack})
			if err != nil || len(st) != 1 || st[0] == nil {
				return 0 // unknown: the display counts without a total
			}
			return st[0].Resources
		}},
	}
	host, _ := os.Hostname()
	// The one gated env: a deploy, its router step, `router canary` and
	// `secret rotate` all run over it.
	shared := gated.Env{
		Fleet:   fl,
		Runner:  runner,
		Outputs: func(ctx context.Context, stack string) (map[string]any, error) { return outputs(ctx, eng, stack) },
		// The router canary's dry run says when a step runs the unlink
		// sequence (the engine decides it from the router's state).
		LinkedChange: eng.RouterLinkedChange,
		Reader: func(ctx context.Context, a fleet.Access) (gate.Reader, error) {
			mu.Lock()
			defer mu.Unlock()
			if r, ok := readers[a]; ok {
				return r, nil
			}
			t, err := bundle.TargetOf(ctx, a)
			if err != nil {
				return nil, err
			}
			cw, err := awsapi.NewCloudWatch(ctx, t)
			if err != nil {
				return nil, err
			}
			r := &deploy.CloudWatchReader{CW: cw}
			readers[a] = r
			return r, nil
		},
		Store: store,
		Log:   f.IO.ErrLines(),
		// This process in the fleet lock, and the lock's one liveness
		// check of a holder on this host.
		Host:  host,
		PID:   os.Getpid(),
		Alive: func(h executor.Holder) bool { return rollout.ProcessAlive(h.PID) },
	}
	env = &deploy.Env{
		Env:        shared,
		Repository: repo,
		Prepare:    runner.Prepare,
		Preview: func(ctx context.Context, cell string, cfg spec.Cell) ([]stackrun.Change, error) {
			res, err := apply.Apply(ctx, runner, stackrun.Request{Stack: cell, Op: stackrun.OpPreview, Inputs: stackrun.Inputs{Cell: &cfg}})
			if err != nil {
				return nil, err
			}
			return res.Planned, nil
		},
		Holder: rs.Holder,
		LastRun: func(ctx context.Context, stack string) (bool, string, error) {
			st, err := eng.Status(ctx, []string{stack})
			if err != nil || len(st) != 1 || st[0] == nil {
				return false, "", fmt.Errorf("reading %s's last update: %w", stack, err)
			}
			return lastRun(st[0])
		},
		Abandon: func(ctx context.Context, id string) (string, error) {
			return abandon(ctx, rs, store, id)
		},
	}
	env.Migrator = migrator(fl, bundle, env.Outputs)
	env.Bootstrap = f.BootstrapCell
	return env, func() { _ = rs.Close() }, nil
}

// migrator is the schema migration of fl's cells on ECS: a one-off task in
// each cell's cluster, from its account (its role) in the region the
// migration's configuration names. deploy's waves and cell add run it.
func migrator(fl *fleet.Fleet, bundle *cloud.Bundle, outs func(ctx context.Context, stack string) (map[string]any, error)) *ecsmigrator.Migrator {
	var runners sync.Map // fleet.Access → *awsapi.ECS
	return &ecsmigrator.Migrator{
		Outputs: outs,
		Runner: func(ctx context.Context, cell, region string) (ecsmigrator.TaskRunner, error) {
			a := fleet.Access{Region: region}
			if c := fl.Cell(cell); c != nil {
				a = c.Access().InRegion(region)
			}
			if r, ok := runners.Load(a); ok {
				return r.(*awsapi.ECS), nil
			}
			t, err := bundle.TargetOf(ctx, a)
			if err != nil {
				return nil, err
			}
			e, err := awsapi.NewECS(ctx, t)
			if err != nil {
				return nil, err
			}
			r, _ := runners.LoadOrStore(a, e)
			return r.(*awsapi.ECS), nil
		},
	}
}

// CellMigrator is the schema migration of a lifecycle verb's cells (cell
// add's new cell) over eng's outputs: the one deploy's waves run.
func (f *Factory) CellMigrator(fl *fleet.Fleet, eng lifecycle.Engine) executor.Migrator {
	bundle, err := f.Cloud()
	if err != nil {
		return failingMigrator{err}
	}
	return migrator(fl, bundle, func(ctx context.Context, stack string) (map[string]any, error) {
		outs, err := eng.DeployedOutputs(ctx, stack)
		if errors.Is(err, stackrun.ErrNotDeployed) {
			return nil, nil
		}
		return outs, err
	})
}

// failingMigrator plans as a migrator does but cannot run: the cloud it
// would run on did not open (the same error a run would meet first).
type failingMigrator struct{ err error }

func (m failingMigrator) Plan(req executor.MigrationRequest) executor.MigrationPlan {
	return (&ecsmigrator.Migrator{}).Plan(req)
}

func (m failingMigrator) Migrate(context.Context, executor.MigrationRequest, func(string)) (executor.Migration, error) {
	return executor.Migration{}, m.err
}

// KeepRecord saves a record (cell add's) among the rollout records of the
// fleet's backend, where the desired state, status and drift read them.
func (f *Factory) KeepRecord(ctx context.Context, rec *executor.Record) error {
	fl, err := f.Fleet()
	if err != nil {
		return err
	}
	url := engine.BackendURL(f.Global.Backend, fl.Dir)
	if !strings.HasPrefix(url, "file://") && !strings.HasPrefix(url, "s3://") {
		return fmt.Errorf("the backend %s keeps no cellctl records (only a file:// or s3:// backend does)", url)
	}
	rs, err := rollout.Open(ctx, url)
	if err != nil {
		return err
	}
	defer rs.Close()
	return backend.New(rs).Save(ctx, rec)
}

// lastRun judges a stack's status: its last operation completed and left
// nothing pending.
func lastRun(st *engine.StackStatus) (bool, string, error) {
	switch {
	case st.Error != "":
		return false, "", errors.New(st.Error)
	case st.PendingOps > 0:
		return false, fmt.Sprintf("an interrupted run left %d operation(s) pending in its state", st.PendingOps), nil
	case st.LastResult != "" && st.LastResult != "succeeded":
		return false, fmt.Sprintf("its last %s %s", st.LastKind, st.LastResult), nil
	}
	return true, "", nil
}

// outputs reads a stack's outputs with the engine's one reader
// (DeployedOutputs); nil, nil: not deployed, as deploy.Env.Outputs says.
func outputs(ctx context.Context, eng *engine.Engine, stack string) (map[string]any, error) {
	outs, err := eng.DeployedOutputs(ctx, stack)
	if errors.Is(err, stackrun.ErrNotDeployed) {
		return nil, nil
	}
	return outs, err
}

// abandon breaks a dead holder's fleet lock — a rollout's, any other
// verb's, or one that cannot be parsed (id "unreadable"): the one way to
// clear the fleet lock. A holder on this host whose process still runs is
// not dead: that is refused.
func abandon(ctx context.Context, rs *rollout.Store, store *backend.Store, id string) (string, error) {
	if h, err := rs.Holder(ctx); err == nil && h != nil && h.ID == id && h.RunningOnThisHost() {
		return "", fmt.Errorf("%s is still running on this host (pid %d): stop it (Ctrl-C) instead of abandoning it", h, h.PID)
	}
	held, err := executor.Abandon(ctx, store, id, rollout.Me("deploy --abandon", "abandon-"+id, time.Now()))
	if held == nil {
		return "", err
	}
	return held.String(), err
}
