package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// RefusedError is a stack change a safety gate stopped before the engine
// ran: nothing was changed. It unwraps to the gate's error (an isolation
// finding stays an outcome.FindingsError, exit 2).
type RefusedError struct {
	Stacks []string
	Err    error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Check runs every safety gate of the apply path, in order, over the
// changes reqs would make, and returns each stack's expected resource
// count for progress. It is the one gate function: up, preview, destroy's
// release and every Runner change pass it.
//
//  1. release protection: only a destroy lifts it (allowRelease);
//  2. offline render and isolation audit of the fleet exactly as the runs
//     will see it (each request's inputs applied: a rollback's recorded
//     configuration, a canary step's traffic split);
//  3. every account the stacks live in can be reached: each role they
//     assume is assumed once (an engine that is an AccessChecker);
//  4. a deployed cell's index, region and account are immutable;
//  5. a checkout older than the fleet is refused (behind.go): an up of
//     the router whose routing table is older than the deployed one's, an
//     up whose origin-verify secret a rotation has replaced;
//  6. quota preflight of the cells an up would create (env.QuotaCheck).
//
// The origin-verify secret is ensured when the change runs (execute,
// Runner), after every gate passed: a refused change writes nothing; the
// secret is compared with the rotation records again once it is in
// place.
func Check(ctx context.Context, env *Env, eng Engine, reqs []stackrun.Request, allowRelease bool) (map[string]int, error) {
	expected, _, err := check(ctx, env, reqs, allowRelease, func() (Engine, error) { return eng, nil })
	return expected, err
}

// check is Check connecting to the engine only once the offline gates
// passed (connect nil: a dry run, the deployed stacks are not read); it
// returns the engine it connected.
func check(ctx context.Context, env *Env, reqs []stackrun.Request, allowRelease bool, connect func() (Engine, error)) (map[string]int, Engine, error) {
	fl := env.Fleet
	var names, ups []string
	for _, r := range reqs {
		if r.Inputs.ReleaseProtection && (!allowRelease || r.Op != stackrun.OpUp) {
			return nil, nil, &RefusedError{Stacks: []string{r.Stack}, Err: fmt.Errorf("%s: only `cellctl destroy --release-protected` lifts the protection of a cell's stateful resources; refused, nothing was changed", r.Stack)}
		}
		if r.Op != stackrun.OpUp && r.Op != stackrun.OpPreview {
			continue
		}
		var err error
		if fl, err = r.Inputs.Fleet(fl, r.Stack); err != nil {
			return nil, nil, &RefusedError{Stacks: []string{r.Stack}, Err: err}
		}
		if !slices.Contains(names, r.Stack) {
			names = append(names, r.Stack)
		}
		if r.Op == stackrun.OpUp && !slices.Contains(ups, r.Stack) {
			ups = append(ups, r.Stack)
		}
	}
	expected := map[string]int{}
	if len(names) > 0 {
		names = fleet.InDeployOrder(names)
	}
	genv := *env
	genv.Fleet = fl
	if len(names) > 0 {
		var err error
		if expected, err = gate(ctx, &genv, names); err != nil {
			return nil, nil, &RefusedError{Stacks: names, Err: err}
		}
	}
	if connect == nil {
		return expected, nil, nil
	}
	eng, err := connect()
	if err != nil || eng == nil {
		return nil, nil, err
	}
	if a, ok := eng.(AccessChecker); ok && len(names) > 0 {
		if err := a.CheckAccess(ctx, genv.Fleet, names); err != nil {
			return nil, nil, &RefusedError{Stacks: names, Err: err}
		}
	}
	if r, ok := eng.(DeployedReader); ok {
		if err := immutable(ctx, &genv, r, names); err != nil {
			return nil, nil, &RefusedError{Stacks: names, Err: err}
		}
		if slices.Contains(ups, fleet.RouterStack) {
			if err := tableBehind(ctx, genv.Fleet, r); err != nil {
				return nil, nil, &RefusedError{Stacks: []string{fleet.RouterStack}, Err: err}
			}
		}
	}
	if err := originBehind(ctx, &genv, eng, ups); err != nil {
		return nil, nil, &RefusedError{Stacks: ups, Err: err}
	}
	if len(ups) > 0 && env.QuotaCheck != nil {
		if err := quotaPreflight(ctx, &genv, eng, ups); err != nil {
			return nil, nil, &RefusedError{Stacks: ups, Err: err}
		}
	}
	return expected, eng, nil
}

// Runner is the apply path for the changes the gated machines make one
// stack at a time — a rollout wave's update and rollback, a rotation
// phase, a canary step, a dry run's preview: a runplan.StackRunner whose
// every RunStack passes Check, then gets the fleet's origin-verify secret
// (an up), then runs on Next. A refused change returns a Skipped result
// whose Err is the *RefusedError: the stack was not touched.
type Runner struct {
	Env *Env
	// Engine reads what the gates read and ensures the origin secret.
	Engine Engine
	// Next runs a change that passed (a progress reporter around the
	// engine); nil: Engine.
	Next runplan.StackRunner

	mu      sync.Mutex
	checked map[string]bool
	secret  map[string]bool
	plugins bool
}

// Prepare checks every change of reqs at once before a gated machine
// starts — so a rollout refuses a fleet that fails the audit or renumbers
// a cell before its first wave, exactly as up does — and installs the
// provider plugin. The changes it passed are not checked again.
func (r *Runner) Prepare(ctx context.Context, reqs []stackrun.Request) error {
	if _, err := Check(ctx, r.Env, r.Engine, reqs, false); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range reqs {
		r.markLocked(q)
	}
	if !r.plugins {
		if err := r.Engine.PreparePlugins(ctx); err != nil {
			return err
		}
		r.plugins = true
	}
	return nil
}

// key identifies a change for the cache of checked ones: the stack, the
// operation and its inputs (a different recorded configuration or traffic
// split is a different change, checked anew).
func key(q stackrun.Request) string {
	in, _ := json.Marshal(struct {
		Cell    any
		Release bool
		Router  any
	}{q.Inputs.Cell, q.Inputs.ReleaseProtection, q.Inputs.Router})
	return q.Stack + "\x00" + string(q.Op) + "\x00" + string(in)
}

func (r *Runner) markLocked(q stackrun.Request) {
	if r.checked == nil {
		r.checked = map[string]bool{}
	}
	r.checked[key(q)] = true
}

// RunStack implements runplan.StackRunner.
func (r *Runner) RunStack(ctx context.Context, req stackrun.Request) *stackrun.Result {
	refused := func(err error) *stackrun.Result {
		var re *RefusedError
		if !errors.As(err, &re) {
			err = &RefusedError{Stacks: []string{req.Stack}, Err: err}
		}
		return &stackrun.Result{Name: req.Stack, Result: stackrun.Skipped, Err: err}
	}
	r.mu.Lock()
	done := r.checked[key(req)]
	plugins := r.plugins
	r.mu.Unlock()
	if !done {
		if _, err := Check(ctx, r.Env, r.Engine, []stackrun.Request{req}, false); err != nil {
			return refused(err)
		}
		r.mu.Lock()
		r.markLocked(req)
		r.mu.Unlock()
	}
	if !plugins {
		if err := r.Engine.PreparePlugins(ctx); err != nil {
			return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: err}
		}
		r.mu.Lock()
		r.plugins = true
		r.mu.Unlock()
	}
	if req.Op == stackrun.OpUp {
		if err := r.ensureSecret(ctx, req.Stack); err != nil {
			var re *RefusedError
			if errors.As(err, &re) {
				return refused(err)
			}
			return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: err}
		}
	}
	next := r.Next
	if next == nil {
		next = r.Engine
	}
	return next.RunStack(ctx, req)
}

func (r *Runner) ensureSecret(ctx context.Context, stack string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secret[stack] {
		return nil
	}
	changed, err := r.Engine.EnsureOriginVerifySecret(ctx, []string{stack})
	if err != nil {
		return err
	}
	if len(changed) > 0 {
		fmt.Fprintf(r.Env.log(), "stored the fleet's origin-verify secret (encrypted) in %s — commit these files\n", strings.Join(changed, ", "))
	}
	if err := originBehind(ctx, r.Env, r.Engine, []string{stack}); err != nil {
		return &RefusedError{Stacks: []string{stack}, Err: err}
	}
	if r.secret == nil {
		r.secret = map[string]bool{}
	}
	r.secret[stack] = true
	return nil
}

// Apply runs one change through the apply path and reads its result: the
// typed error of a refusal (*RefusedError), of a lock (outcome.Locked),
// or of the engine; the result itself when the stack ran.
func Apply(ctx context.Context, runner runplan.StackRunner, req stackrun.Request) (*stackrun.Result, error) {
	res := runner.RunStack(ctx, req)
	switch {
	case res == nil:
		return nil, fmt.Errorf("%s %s: the engine returned no result", req.Op, req.Stack)
	case res.Err != nil:
		return res, fmt.Errorf("%s %s: %w", req.Op, req.Stack, res.Err)
	case res.Result != stackrun.Succeeded:
		return res, fmt.Errorf("%s %s: %s", req.Op, req.Stack, res.Result)
	}
	return res, nil
}
