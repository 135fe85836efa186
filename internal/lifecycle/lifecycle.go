// Package lifecycle is the use case behind the operator's levers on the
// fleet — `cellctl drain`, `undrain`, `migrate` and `cell add`: a routing
// table transition (package router) composed with the engine, in an order
// that never sends a tenant to a cell that cannot serve it, and that never
// publishes over a table someone else published meanwhile.
//
// Every change follows the same steps: load the table from disk, compare it
// with the version the deployed router serves (router.CheckDeployed),
// compute the transition, save it (router.SaveTable: atomic, refuses a lost
// update, keeps the previous table), then publish — an `up` of the router
// stack alone through the apply use case, with the fleet re-read from disk
// so the program bakes the table just saved — and read back the version the
// router now serves. Commands bind flags and render the Report; tests drive
// these functions with a fake engine.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router"
	"github.com/cellctl/cellctl/waves/executor"
)

// Engine is what the lifecycle needs of the engine: what apply needs to
// run the router's (or a new cell's) up, and the outputs of a deployed
// stack, from which the deployed router's table version is read.
type Engine interface {
	apply.Engine
	// DeployedOutputs returns a deployed stack's outputs (secrets
	// masked); stackrun.ErrNotDeployed when it was never deployed. The
	// engine's one reader of deployed outputs.
	DeployedOutputs(ctx context.Context, stack string) (map[string]any, error)
}

// Env is what a lifecycle command runs with.
type Env struct {
	// Load reads the fleet from disk. It is called again after every
	// change to the repository, so each publish runs the program over the
	// files as they are now.
	Load func() (*fleet.Fleet, error)
	// LoadWith reads the fleet as Load does, as it would be if each of
	// files (relative to the fleet directory) held the given contents,
	// writing nothing (fleet.LoadWith): cell add validates and gates the
	// fleet with the new cell before it writes a file.
	LoadWith func(files map[string][]byte) (*fleet.Fleet, error)
	// Engine connects to the engine for a fleet as loaded.
	Engine func(fl *fleet.Fleet) (Engine, error)
	// Parallel bounds the stacks rendered and run at once.
	Parallel int
	// Log receives one line per step (stderr).
	Log io.Writer
	// Events receives the runs' progress.
	Events func(stackrun.Event)
	// QuotaCheck, when set, checks that new cells fit the account's
	// quotas before they are created (apply's quota preflight; cell add).
	QuotaCheck func(ctx context.Context, fl *fleet.Fleet, newCells []string) error
	// Bootstrap runs the new cell database's users and grants after its
	// up (cell add; nil: none).
	Bootstrap func(ctx context.Context, cell *fleet.Cell, outputs map[string]any) error
	// Migrator runs a new cell's schema migration (cell add) after its up
	// and before it gets tenants: the one-off task a deploy's wave runs
	// (executor.Migrator; nil: the fleet runs no migrations).
	Migrator func(fl *fleet.Fleet, eng Engine) executor.Migrator
	// Record keeps a record in the backend's rollout records (cell add's
	// new cell: its image and its migration), where the desired state,
	// status and drift read every cell's; nil: a migration is refused,
	// since its schema would be known nowhere.
	Record func(ctx context.Context, rec *executor.Record) error
	// Records reads the backend's records (nil: none): cell add migrates
	// a new cell once the fleet's cells have a schema.
	Records func(ctx context.Context) ([]*executor.Record, error)
	// Stop, once closed, starts no new stack (the first Ctrl-C).
	Stop <-chan struct{}
	// Sleep waits d or until ctx is done; nil: a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Confirm, when set, is asked with what a change will do once it is
	// planned and before its first write (the operator's yes at a
	// terminal); its error stops the change with nothing written.
	Confirm func(ctx context.Context, p Proposal) error
}

// Proposal is what a lifecycle change will do, as its dry run shows it:
// the routing transitions it publishes, and cell add's steps before them.
type Proposal struct {
	Steps       []string
	Transitions []*router.Transition
}

// confirm asks env.Confirm, when there is one.
func (env *Env) confirm(ctx context.Context, p Proposal) error {
	if env.Confirm == nil {
		return nil
	}
	return env.Confirm(ctx, p)
}

func (env *Env) logf(format string, args ...any) {
	if env.Log != nil {
		fmt.Fprintf(env.Log, format+"\n", args...)
	}
}

func (env *Env) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if env.Sleep != nil {
		return env.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Report is what a lifecycle command did (or, on a dry run, would do).
type Report struct {
	// Transitions in the order they were (or would be) saved.
	Transitions []*router.Transition `json:"transitions"`
	// DeployedVersion is the table version the deployed router served
	// before the command (0 with RouterDeployed false: never deployed).
	DeployedVersion int64 `json:"deployedVersion"`
	RouterDeployed  bool  `json:"routerDeployed"`
	// Published lists the table versions the router was published with.
	Published []int64 `json:"published"`
	// Stacks are the results of the runs the command made, in order.
	Stacks []*stackrun.Result `json:"-"`
	DryRun bool               `json:"dryRun"`
}

// tablePaths are where the fleet's routing table and the previous one live.
func tablePaths(fl *fleet.Fleet) (table, previous string) {
	return filepath.Join(fl.Dir, fl.StackDir, fleet.RoutingFile), filepath.Join(fl.Dir, router.PreviousFile)
}

// loadTable loads the fleet and its routing table.
func loadTable(env *Env) (*fleet.Fleet, *router.Table, error) {
	fl, err := env.Load()
	if err != nil {
		return nil, nil, err
	}
	if fl.Routing == nil {
		return nil, nil, fmt.Errorf("the fleet has no routing table (%s): nothing routes tenants yet", filepath.Join(fl.StackDir, fleet.RoutingFile))
	}
	return fl, fl.Routing, nil
}

// DeployedVersion reads the routing table version the deployed router
// serves from the router stack's outputs (tableVersion). deployed is false
// when the router stack was never deployed. A deployed router whose version
// cannot be read is an error: publishing blind could roll someone's change
// back.
func DeployedVersion(ctx context.Context, eng Engine) (version int64, deployed bool, err error) {
	outs, err := eng.DeployedOutputs(ctx, fleet.RouterStack)
	if errors.Is(err, stackrun.ErrNotDeployed) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("cannot read the deployed router's outputs to learn which table it serves: %w", err)
	}
	v, ok := outs["tableVersion"]
	if !ok {
		return 0, true, errors.New("the deployed router has no tableVersion output, so the table it serves is unknown; " +
			"its last update may have failed: run `cellctl up router` and then this command again")
	}
	switch n := v.(type) {
	case float64:
		if n == math.Trunc(n) && n >= 0 && n < 1<<53 {
			return int64(n), true, nil
		}
	case int:
		return int64(n), true, nil
	case int64:
		return n, true, nil
	}
	return 0, true, fmt.Errorf("the deployed router's tableVersion output is %v (%T), not a version number", v, v)
}

// base reads the deployed router's table version into rep and checks that
// local may be published over it.
func base(ctx context.Context, env *Env, eng Engine, local *router.Table, rep *Report) error {
	v, deployed, err := DeployedVersion(ctx, eng)
	if err != nil {
		return err
	}
	rep.DeployedVersion, rep.RouterDeployed = v, deployed
	if !deployed {
		env.logf("the router stack was never deployed: the local table (version %d) is the base", local.Version())
	} else {
		env.logf("the deployed router serves routing table version %d; stacks/%s is version %d", v, fleet.RoutingFile, local.Version())
	}
	return router.CheckDeployed(local, v)
}

// save writes tr.To over tr.From and says so.
func save(env *Env, fl *fleet.Fleet, tr *router.Transition) error {
	path, prev := tablePaths(fl)
	if err := router.SaveTable(path, prev, tr.From, tr.To); err != nil {
		return err
	}
	env.logf("saved %s: version %d → %d (%s %s%s); the previous table is in %s",
		filepath.Join(fl.StackDir, fleet.RoutingFile), tr.FromVersion, tr.ToVersion, tr.Action, tr.Cell, tenantText(tr), router.PreviousFile)
	return nil
}

func tenantText(tr *router.Transition) string {
	if tr.Tenant == "" {
		return ""
	}
	return ", tenant " + tr.Tenant
}

// PublishError is a publish that did not complete: the table is saved
// at Saved but the router may still serve an older one. Next says how to
// continue or undo.
type PublishError struct {
	Saved int64
	Next  string
	Err   error
}

func (e *PublishError) Error() string {
	return fmt.Sprintf("publishing the router failed: stacks/%s is saved at version %d, but the router does not serve it: %v\n%s",
		fleet.RoutingFile, e.Saved, e.Err, e.Next)
}

func (e *PublishError) Unwrap() error { return e.Err }

// publish runs `up` on the router stack alone, over the fleet as it is on
// disk now, and checks that the router then serves want. Before it runs it
// checks the deployed version again: another operator may have published
// since the command started.
//
// maxDeployed is the highest version the router may serve for this publish
// to go ahead: the version this change started from. A router serving
// more — even the same number as want — was published by someone else
// meanwhile (two checkouts can each make a "version N+1"), and publishing
// would replace their table.
func publish(ctx context.Context, env *Env, want *router.Table, maxDeployed int64, next string, rep *Report) error {
	fl, err := env.Load()
	if err != nil {
		return &PublishError{Saved: want.Version(), Next: next, Err: err}
	}
	eng, err := env.Engine(fl)
	if err != nil {
		return &PublishError{Saved: want.Version(), Next: next, Err: err}
	}
	if v, _, err := DeployedVersion(ctx, eng); err != nil {
		return &PublishError{Saved: want.Version(), Next: next, Err: err}
	} else if v > maxDeployed {
		return fmt.Errorf("the deployed router now serves routing table version %d, which this command did not publish: someone else published a change meanwhile. "+
			"stacks/%s holds this command's unpublished version %d (the table it replaced is in %s); "+
			"update this checkout to the published table (git pull) and run the command again", v, fleet.RoutingFile, want.Version(), router.PreviousFile)
	}
	env.logf("publishing the router with routing table version %d (cellctl up router)", want.Version())
	ar, err := apply.Up(ctx, &apply.Env{
		Fleet:    fl,
		Engine:   func() (apply.Engine, error) { return eng, nil },
		Parallel: env.Parallel,
		Log:      env.Log,
		Events:   env.Events,
		Stop:     env.Stop,
	}, apply.Options{Router: true})
	if ar != nil && ar.Result != nil {
		rep.Stacks = append(rep.Stacks, ar.Result.Stacks...)
		if err == nil {
			err = ar.Result.Err()
		}
	}
	if err != nil {
		return &PublishError{Saved: want.Version(), Next: next, Err: err}
	}
	v, _, err := DeployedVersion(ctx, eng)
	if err != nil {
		return &PublishError{Saved: want.Version(), Next: next, Err: err}
	}
	if v != want.Version() {
		return &PublishError{Saved: want.Version(), Next: next,
			Err: fmt.Errorf("after the update the router reports table version %d", v)}
	}
	rep.Published = append(rep.Published, v)
	env.logf("the router serves routing table version %d", v)
	return nil
}

// change is one table transition saved and published: the common tail of
// undrain and migrate, and each half of a drain.
func change(ctx context.Context, env *Env, fl *fleet.Fleet, tr *router.Transition, next string, rep *Report) error {
	if err := save(env, fl, tr); err != nil {
		return err
	}
	rep.Transitions = append(rep.Transitions, tr)
	return publish(ctx, env, tr.To, tr.FromVersion, next, rep)
}
