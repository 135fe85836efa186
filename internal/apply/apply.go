// Package apply is the use case behind `cellctl up`, `preview` and
// `destroy`: choose the stacks, render them offline (a program error or an
// isolation violation stops everything before the cloud is touched), build
// the run plan (internal/runplan), and — unless it is a dry run — make
// sure the provider plugin and the fleet's origin-verify secret are in
// place, run the plan against the engine and report. Commands bind flags
// to Options and render the Report; the rollout executor calls the same
// functions.
package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// Engine is what applying needs of the engine; internal/engine implements
// it over the pulumi CLI, tests with small fakes.
type Engine interface {
	runplan.StackRunner
	// PreparePlugins installs the provider plugin once, before stacks
	// fan out.
	PreparePlugins(ctx context.Context) error
	// EnsureOriginVerifySecret gives the stacks the fleet's origin-verify
	// secret and returns the stack files it changed.
	EnsureOriginVerifySecret(ctx context.Context, stacks []string) ([]string, error)
	// Protected lists a deployed stack's protected resources ("type
	// name"); stackrun.ErrNotDeployed when it was never deployed.
	Protected(ctx context.Context, stack string) ([]string, error)
}

// Env is what a use case runs with.
type Env struct {
	Fleet *fleet.Fleet
	// Engine connects to the engine. It is called only when the run needs
	// it: never for a dry run of up or preview, never when a gate fails.
	Engine func() (Engine, error)
	// Parallel bounds how many stacks run (and render) at once.
	Parallel int
	// Log receives notes for the operator (stderr).
	Log io.Writer
	// Events receives progress (each stack's start and finish; the engine
	// sends resource-level events itself).
	Events func(stackrun.Event)
	// Stop, once closed, starts no new stack (the first Ctrl-C).
	Stop <-chan struct{}
	// QuotaCheck, when set, runs before an up with the selected cells (and
	// the router, by its stack name) that were never deployed; its error
	// stops the run before anything is created (quota.go).
	QuotaCheck func(ctx context.Context, newCells []string) error
	// Bootstrap, when set, runs after each cell's up succeeded, with the
	// stack's outputs as deployed: the cell database's one-time users and
	// grants, from the control plane (idempotent, so every up runs it). A
	// failure fails the cell's step.
	Bootstrap func(ctx context.Context, cell *fleet.Cell, outputs map[string]any) error
	// Records reads the backend's records afresh, for the comparison of
	// the origin-verify secret with what the newest rotation shipped
	// (behind.go); nil: the engine's backend is read.
	Records func(ctx context.Context) ([]*executor.Record, error)
	// Confirm, when set, is asked with the plan an up will run once every
	// gate passed and before its first write (the operator's yes at a
	// terminal); its error stops the run with nothing changed.
	Confirm func(ctx context.Context, p *runplan.Plan) error
}

func (env *Env) log() io.Writer {
	if env.Log == nil {
		return io.Discard
	}
	return env.Log
}

// Report is what a use case did: the plan, and its result unless it was
// a dry run (or a gate stopped it before the engine ran).
type Report struct {
	Plan   *runplan.Plan
	Result *runplan.Result
	// DryRun: the plan was described, not run.
	DryRun bool
}

// Options select what up or preview does.
type Options struct {
	// Cells names the cells to act on; Router adds the router. Neither:
	// every cell, then the router.
	Cells  []string
	Router bool
	// Refresh refreshes each stack from the cloud before an up.
	Refresh bool
	// DryRun renders, checks and plans, and stops there.
	DryRun bool
}

// Up deploys the selected stacks.
func Up(ctx context.Context, env *Env, o Options) (*Report, error) {
	return run(ctx, env, stackrun.OpUp, o)
}

// Preview asks the engine what an up would change in each selected stack.
func Preview(ctx context.Context, env *Env, o Options) (*Report, error) {
	o.Refresh = false
	return run(ctx, env, stackrun.OpPreview, o)
}

func run(ctx context.Context, env *Env, op stackrun.Operation, o Options) (*Report, error) {
	names, err := SelectStacks(env.Fleet, o.Cells, o.Router)
	if err != nil {
		return nil, err
	}
	reqs := make([]stackrun.Request, len(names))
	for i, n := range names {
		reqs[i] = stackrun.Request{Stack: n, Op: op, Refresh: o.Refresh}
	}
	connect := env.Engine
	if o.DryRun {
		connect = nil
	}
	expected, eng, err := check(ctx, env, reqs, false, connect)
	if err != nil {
		return nil, err
	}
	bo := runplan.BuildOptions{Parallel: env.Parallel, Refresh: o.Refresh, Expected: expected}
	if op == stackrun.OpUp && env.Bootstrap != nil {
		bo.After = func(st *runplan.Stack) *runplan.Task {
			if st.Stack == fleet.RouterStack {
				return nil
			}
			cell := st.Stack
			return &runplan.Task{Name: "bootstrap the database users of " + cell,
				Run: func(ctx context.Context) error {
					dr, ok := eng.(DeployedReader)
					if !ok {
						return errors.New("the engine cannot read the cell's outputs")
					}
					outs, err := dr.DeployedOutputs(ctx, cell)
					if err != nil {
						return fmt.Errorf("reading %s's outputs: %w", cell, err)
					}
					c := env.Fleet.Cell(cell)
					if c == nil {
						return fmt.Errorf("%s is not a cell of the fleet", cell)
					}
					return env.Bootstrap(ctx, c, outs)
				}}
		}
	}
	p := runplan.ForStacks(op, names, bo)
	rep := &Report{Plan: p, DryRun: o.DryRun}
	if o.DryRun {
		return rep, nil
	}
	if op == stackrun.OpUp && env.Confirm != nil {
		if err := env.Confirm(ctx, p); err != nil {
			return nil, err
		}
	}
	rep.Result, err = execute(ctx, env, eng, p)
	return rep, err
}

// SelectStacks resolves the stacks a command acts on, in deploy order:
// the named cells (and the router when asked or named), or every cell then
// the router.
func SelectStacks(fl *fleet.Fleet, cells []string, router bool) ([]string, error) {
	for _, c := range cells {
		if c == fleet.RouterStack {
			router = true
			continue
		}
		if fl.Cell(c) == nil {
			return nil, fmt.Errorf("unknown cell %q (cells of this fleet: %v)", c, fl.CellIDs())
		}
	}
	var names []string
	for _, c := range cells {
		if c != fleet.RouterStack && !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	if len(cells) == 0 && !router {
		names = fl.CellIDs()
		router = fl.Router != nil
	}
	if router {
		if fl.Router == nil {
			return nil, fmt.Errorf("the fleet has no router stack (%s/Pulumi.router.yaml)", fl.StackDir)
		}
		names = append(names, fleet.RouterStack)
	}
	return fleet.InDeployOrder(names), nil
}

// gate renders the stacks offline — a program that fails, or cells that
// are not isolated, stop the run before anything changes — and returns
// each stack's expected resource count for progress.
func gate(ctx context.Context, env *Env, names []string) (map[string]int, error) {
	// The whole fleet is rendered when it has a router: a change to one
	// stack can break a path another stack's policy decides (a grant in
	// the router's bucket policy, a key a cell's role must use).
	render := names
	if env.Fleet.Router != nil {
		render = nil
	}
	report, err := plan.Render(ctx, env.Fleet, plan.Options{Stacks: render, Parallel: env.Parallel})
	if err != nil {
		return nil, fmt.Errorf("the program fails offline, nothing was changed:\n%w", err)
	}
	if err := plan.RefuseBrokenPaths(report, env.Fleet); err != nil {
		return nil, err
	}
	if !report.Isolation.OK {
		var lines []string
		for _, v := range report.Isolation.Violations {
			lines = append(lines, v.String())
		}
		return nil, &outcome.FindingsError{Count: len(lines),
			Err: fmt.Errorf("the isolation audit failed, nothing was changed (see `cellctl plan`):\n  %s", strings.Join(lines, "\n  "))}
	}
	expected := map[string]int{}
	for _, s := range report.Stacks {
		if !slices.Contains(names, s.Name) {
			continue
		}
		// Progress counts the cloud resources the engine reports.
		expected[s.Name] = s.CloudResources()
	}
	return expected, nil
}

// execute prepares the engine for the plan and runs it.
func execute(ctx context.Context, env *Env, eng Engine, p *runplan.Plan) (*runplan.Result, error) {
	if err := eng.PreparePlugins(ctx); err != nil {
		return nil, err
	}
	var deploys []string
	for _, s := range p.Stacks() {
		// A preview writes nothing: the engine gives its workspace the
		// secret without storing it in the stack file.
		if s.Op == stackrun.OpUp && !slices.Contains(deploys, s.Stack) {
			deploys = append(deploys, s.Stack)
		}
	}
	if len(deploys) > 0 {
		changed, err := eng.EnsureOriginVerifySecret(ctx, deploys)
		if err != nil {
			return nil, err
		}
		if len(changed) > 0 {
			fmt.Fprintf(env.log(), "stored the fleet's origin-verify secret (encrypted) in %s — commit these files\n", strings.Join(changed, ", "))
		}
		if err := originBehind(ctx, env, eng, deploys); err != nil {
			return nil, &RefusedError{Stacks: deploys, Err: err}
		}
	}
	return p.Run(ctx, eng, runplan.Options{Events: env.Events, Stop: env.Stop})
}
