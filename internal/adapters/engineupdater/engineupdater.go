// Package engineupdater is the rollout executor's Updater over the engine
// seam: a cell's update is an `up` of its one stack with the configuration
// given as data (stackrun.Inputs.Cell), so a rollback deploys exactly the
// configuration recorded before the wave, not the repository's.
package engineupdater

import (
	"context"
	"errors"
	"fmt"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/adapters/cellspec"
	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// Updater adapts a StackRunner (internal/engine's pulumi-backed runner) to
// executor.Updater.
type Updater struct {
	Runner runplan.StackRunner
	// Deployed reads the configuration a cell stack runs as last deployed.
	// The engine does not offer this read yet; deploy must supply it (e.g.
	// from an output in which the cell stack exports its effective spec).
	Deployed func(ctx context.Context, cell string) (spec.Cell, error)
	// Refresh reconciles each stack with the cloud before its update.
	Refresh bool
	// LastRun says whether a cell stack's last operation completed with
	// nothing pending (executor.Settler); nil: every cell is settled.
	LastRun func(ctx context.Context, cell string) (bool, string, error)
}

// Settled implements executor.Settler.
func (u *Updater) Settled(ctx context.Context, cell string) (bool, string, error) {
	if u.LastRun == nil {
		return true, "", nil
	}
	return u.LastRun(ctx, cell)
}

// Current is the cell's configuration as last deployed.
func (u *Updater) Current(ctx context.Context, cell string) (executor.CellConfig, error) {
	if u.Deployed == nil {
		return executor.CellConfig{}, errors.New("reading a cell's deployed configuration is not wired")
	}
	s, err := u.Deployed(ctx, cell)
	if err != nil {
		return executor.CellConfig{}, err
	}
	return cellspec.FromSpec(s)
}

// Apply runs `up` of the cell's stack with cfg as its configuration. A
// stack that did not start — locked by another operation, or skipped — is
// reported as executor.ErrNotApplied (the cell is unchanged), keeping the
// engine's typed error so a lock still exits 4.
func (u *Updater) Apply(ctx context.Context, cell string, cfg executor.CellConfig) (executor.ApplyResult, error) {
	s, err := cellspec.ToSpec(cfg)
	if err != nil {
		return executor.ApplyResult{}, fmt.Errorf("%w: %w", executor.ErrNotApplied, err)
	}
	if s.ID != cell {
		return executor.ApplyResult{}, fmt.Errorf("%w: the configuration is cell %q's, not %q's", executor.ErrNotApplied, s.ID, cell)
	}
	res := u.Runner.RunStack(ctx, stackrun.Request{Stack: cell, Op: stackrun.OpUp, Refresh: u.Refresh, Inputs: stackrun.Inputs{Cell: &s}})
	switch {
	case res == nil:
		return executor.ApplyResult{}, fmt.Errorf("up %s: the engine returned no result", cell)
	case res.Locked(), res.Result == stackrun.Skipped:
		return executor.ApplyResult{}, fmt.Errorf("%w: up %s: %w", executor.ErrNotApplied, cell, res.Err)
	case res.Err != nil || res.Result == stackrun.Failed:
		if res.Err == nil {
			return executor.ApplyResult{}, fmt.Errorf("up %s failed", cell)
		}
		return executor.ApplyResult{}, fmt.Errorf("up %s: %w", cell, res.Err)
	}
	return executor.ApplyResult{Changed: res.Changes.Total()}, nil
}
