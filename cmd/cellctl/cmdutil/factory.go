// Package cmdutil is what every cellctl command shares: the global flags,
// the Factory that hands commands their dependencies (built lazily, once
// per process), and the interrupt contract. Commands take narrow
// dependencies from it into their Options — a func for the fleet, one for
// the engine — so tests can give each command exactly what it needs.
package cmdutil

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// Output formats (-o).
const (
	FormatTable    = render.FormatTable
	FormatJSON     = render.FormatJSON
	FormatMarkdown = render.FormatMarkdown
)

// Clouds (--cloud).
const (
	CloudAWS = cloud.AWS
	CloudSim = cloud.Sim
)

// GlobalOptions are the flags every command shares.
type GlobalOptions struct {
	Dir      string
	Backend  string
	Cloud    string
	Output   string
	Parallel int
	NoColor  bool
	Yes      bool
}

// Factory hands commands their dependencies.
type Factory struct {
	IO     *iostreams.IOStreams
	Global *GlobalOptions

	fleetOnce sync.Once
	fleet     *fleet.Fleet
	fleetErr  error

	cloudOnce sync.Once
	cloud     *cloud.Bundle
	cloudErr  error
}

// NewFactory returns a factory over io.
func NewFactory(io *iostreams.IOStreams) *Factory {
	return &Factory{IO: io, Global: &GlobalOptions{}}
}

// Fleet loads the fleet repository once.
func (f *Factory) Fleet() (*fleet.Fleet, error) {
	f.fleetOnce.Do(func() {
		dir, err := filepath.Abs(f.Global.Dir)
		if err != nil {
			f.fleetErr = err
			return
		}
		f.fleet, f.fleetErr = fleet.Load(dir)
		if f.fleetErr != nil {
			f.fleetErr = fmt.Errorf("invalid fleet configuration in %s:\n%w", f.Global.Dir, f.fleetErr)
		}
	})
	return f.fleet, f.fleetErr
}

// Cloud builds the cloud bundle of --cloud once, for the fleet's
// directory. Close releases what it started (the simulator's AWS API).
func (f *Factory) Cloud() (*cloud.Bundle, error) {
	f.cloudOnce.Do(func() {
		fl, err := f.Fleet()
		if err != nil {
			f.cloudErr = err
			return
		}
		f.cloud, f.cloudErr = cloud.New(f.Global.Cloud, fl.Dir)
	})
	return f.cloud, f.cloudErr
}

// Close releases what the factory started.
func (f *Factory) Close() {
	if f.cloud != nil {
		_ = f.cloud.Close()
	}
	// Last: the workspaces in it are closed by now.
	engine.RemoveTempRoot()
}

// SweepTemp removes what a killed cellctl left in $TMPDIR (see
// engine.SweepTemp); a leftover it cannot remove is a warning on stderr.
func (f *Factory) SweepTemp() {
	if _, err := engine.SweepTemp(); err != nil {
		fmt.Fprintln(f.IO.ErrOut, "warning:", err)
	}
}

// Engine builds the engine for the fleet on the chosen cloud; events
// receive resource-level progress (nil: none).
func (f *Factory) Engine(fl *fleet.Fleet, events func(stackrun.Event)) (*engine.Engine, error) {
	c, err := f.Cloud()
	if err != nil {
		return nil, err
	}
	return engine.New(engine.Options{
		Fleet:    fl,
		Backend:  f.Global.Backend,
		Parallel: f.Global.Parallel,
		Cloud:    c,
		Events:   events,
		Log:      f.IO.ErrOut,
	})
}

// Styles returns styles for stdout.
func (f *Factory) Styles() *render.Styles { return render.Out(f.IO) }

// ErrStyles returns styles for stderr.
func (f *Factory) ErrStyles() *render.Styles { return render.Err(f.IO) }

// CheckOutput rejects an -o value the command does not support.
func (f *Factory) CheckOutput(allowed ...string) error {
	if !slices.Contains(allowed, f.Global.Output) {
		return fmt.Errorf("--output %q is not supported here (allowed: %s)", f.Global.Output, strings.Join(allowed, ", "))
	}
	return nil
}

// SimDir is where the simulated cloud of a fleet lives.
func SimDir(fl *fleet.Fleet) string { return cloud.SimDir(fl.Dir) }

type gracefulKey struct{}

// WithGraceful returns ctx carrying g, the context the first interrupt
// cancels.
func WithGraceful(ctx context.Context, g context.Context) context.Context {
	return context.WithValue(ctx, gracefulKey{}, g)
}

// Graceful returns a context that is cancelled on the first interrupt:
// stop starting new work, let work in flight finish.
func Graceful(ctx context.Context) context.Context {
	if g, ok := ctx.Value(gracefulKey{}).(context.Context); ok {
		return g
	}
	return ctx
}
