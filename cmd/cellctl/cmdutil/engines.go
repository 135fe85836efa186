package cmdutil

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// The factory's engine as each use case family takes it: the commands
// of a family wire these, never an adapter of their own.

// ApplyEngine is the engine of the stack verbs (up, preview, destroy).
func (f *Factory) ApplyEngine(fl *fleet.Fleet, events func(stackrun.Event)) (apply.Engine, error) {
	e, err := f.Engine(fl, events)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// RoutingEngine is the engine of the routing-table verbs (drain,
// undrain, migrate, cell add, retire).
func (f *Factory) RoutingEngine(fl *fleet.Fleet, events func(stackrun.Event)) (lifecycle.Engine, error) {
	e, err := f.Engine(fl, events)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// TableLoader loads the fleet's desired state for a routing-table verb
// (DesiredOf), from disk afresh on every call: the verbs change the
// repository between their steps. The fleet lock is taken first, so a
// table transition is judged on the table as it is while the verb holds
// the fleet (a no-op under --dry-run or once held).
func (f *Factory) TableLoader() func() (*fleet.Fleet, error) {
	load := f.TableLoaderWith()
	return func() (*fleet.Fleet, error) { return load(nil) }
}

// TableLoaderWith is TableLoader over the repository as it would be with
// files (relative to the fleet directory) holding the given contents,
// written nowhere (fleet.LoadWith): cell add judges the fleet with its new
// cell before it writes the cell's files.
func (f *Factory) TableLoaderWith() func(files map[string][]byte) (*fleet.Fleet, error) {
	return func(files map[string][]byte) (*fleet.Fleet, error) {
		dir, err := filepath.Abs(f.Global.Dir)
		if err != nil {
			return nil, err
		}
		fl, err := fleet.LoadWith(dir, files)
		if err != nil {
			return nil, fmt.Errorf("invalid fleet configuration in %s:\n%w", f.Global.Dir, err)
		}
		if err := f.HoldFleet(context.Background()); err != nil {
			return nil, err
		}
		// What the cells should run, not the repository alone: a retire
		// or an add deploys the router and cells with it.
		st, err := f.DesiredOf(fl)
		if err != nil {
			return nil, err
		}
		return st.Fleet, nil
	}
}
