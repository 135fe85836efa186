// Package cmdutil is what every cellctl command shares: the global flags,
// the Factory that hands commands their dependencies (built lazily, once
// per process), and the interrupt contract. Commands take narrow
// dependencies from it into their Options — a func for the fleet, one for
// the engine — so tests can give each command exactly what it needs.
package cmdutil

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
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
	Dir     string
	Backend string
	// SecretsProvider is --secrets-provider: the provider of a stack whose
	// file names none (engine.Options.SecretsProvider).
	SecretsProvider string
	Cloud           string
	Output          string
	Parallel        int
	NoColor         bool
	Yes             bool
}

// Factory hands commands their dependencies.
type Factory struct {
	IO     *iostreams.IOStreams
	Global *GlobalOptions

	fleetOnce sync.Once
	fleet     *fleet.Fleet
	fleetErr  error

	recordsOnce sync.Once
	records     []*executor.Record
	recordsErr  error
	notesOnce   sync.Once

	cloudOnce sync.Once
	cloud     *cloud.Bundle
	cloudErr  error

	// OpenLockStore opens the fleet lock's store (nil: the backend of the
	// fleet's engine); tests set it.
	OpenLockStore func(ctx context.Context) (*rollout.Store, error)
	lock          fleetLock
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

// Desired resolves what the fleet's cells should run: the repository
// plus what rollouts shipped and kept, from the rollout records in the
// backend (internal/desired). Every command that changes a cell takes its
// fleet from here, never from the repository alone: a rotation, a canary
// or an up after `deploy --image` must not ship the repository's older
// image. The pins are noted on stderr once per process, one line per rollout
// and image (desired.State.Notes), with how to commit them.
func (f *Factory) Desired() (*desired.State, error) {
	fl, err := f.Fleet()
	if err != nil {
		return nil, err
	}
	return f.DesiredOf(fl)
}

// DesiredOf is the desired state of a fleet loaded from the repository
// (the lifecycle commands reload it between their steps); the records are
// read once per process.
func (f *Factory) DesiredOf(fl *fleet.Fleet) (*desired.State, error) {
	f.recordsOnce.Do(func() { f.records, f.recordsErr = readRecords(fl.Dir, f.Global.Backend) })
	if f.recordsErr != nil {
		return nil, fmt.Errorf("reading what rollouts shipped (the rollout records in the backend), nothing was changed: %w", f.recordsErr)
	}
	st := desired.Resolve(fl, f.records)
	f.notesOnce.Do(func() {
		for _, n := range st.Notes() {
			fmt.Fprintln(f.IO.ErrLines(), "note: "+n)
		}
	})
	return st, nil
}

// Records reads the records of the fleet's backend once (rollouts, router
// canaries, rotations), read-only: `status` and `health` show an
// unfinished router canary from them. With records that do not read, it
// returns those that do and an error naming the others.
func (f *Factory) Records() ([]*executor.Record, error) {
	fl, err := f.Fleet()
	if err != nil {
		return nil, err
	}
	f.recordsOnce.Do(func() { f.records, f.recordsErr = readRecords(fl.Dir, f.Global.Backend) })
	return f.records, f.recordsErr
}

// readRecords lists the rollout records of the fleet's backend. A backend
// that is not a bucket (the Pulumi Cloud) holds none: deploy cannot keep
// its record there, so no rollout can have shipped anything.
func readRecords(dir, flag string) ([]*executor.Record, error) {
	url := engine.BackendURL(flag, dir)
	if !strings.HasPrefix(url, "file://") && !strings.HasPrefix(url, "s3://") {
		return nil, nil
	}
	ctx := context.Background()
	rs, err := rollout.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	return backend.New(rs).List(ctx)
}

// DesiredFleet is the desired state's fleet (Desired): the fleet every
// command that changes a cell runs with.
func (f *Factory) DesiredFleet() (*fleet.Fleet, error) {
	st, err := f.Desired()
	if err != nil {
		return nil, err
	}
	return st.Fleet, nil
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
		f.cloud, f.cloudErr = cloud.New(f.Global.Cloud, fl.Dir, fl.Project)
		// On aws, say where the calls go when a local emulator (or any
		// endpoint) stands in for AWS: once per command, on stderr.
		if f.cloudErr == nil && f.cloud.Kind == cloud.AWS {
			if note := cloud.EndpointNote(os.Environ(), fl.Endpoints()); note != "" {
				fmt.Fprintln(f.IO.ErrLines(), note)
			}
		}
	})
	return f.cloud, f.cloudErr
}

// Close releases what the factory started.
func (f *Factory) Close() {
	if f.lock.store != nil {
		_ = f.lock.store.Close()
	}
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
		fmt.Fprintln(f.IO.ErrLines(), "warning:", err)
	}
}

// Engine builds the engine for the fleet on the chosen cloud; events
// receive resource-level progress (nil: none).
//
// Under a mutating verb (Mutates) the first engine takes the fleet lock:
// every change the verb makes goes through an engine, so the lock is held
// before the first write, and a verb refused by its flags, its fleet or its
// arguments never touches the backend.
func (f *Factory) Engine(fl *fleet.Fleet, events func(stackrun.Event)) (*engine.Engine, error) {
	eng, err := f.newEngine(fl, events)
	if err != nil {
		return nil, err
	}
	if err := f.lockForEngine(context.Background()); err != nil {
		return nil, err
	}
	return eng, nil
}

func (f *Factory) newEngine(fl *fleet.Fleet, events func(stackrun.Event)) (*engine.Engine, error) {
	c, err := f.Cloud()
	if err != nil {
		return nil, err
	}
	return engine.New(engine.Options{
		Fleet:           fl,
		Backend:         f.Global.Backend,
		SecretsProvider: f.Global.SecretsProvider,
		Parallel:        f.Global.Parallel,
		Cloud:           c,
		Events:          events,
		Log:             f.IO.ErrLines(),
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

// graceful is the first interrupt's meaning: the context it cancels, and
// what the command that watches it does then (empty: no command watches
// it, so the first interrupt cancels outright).
type graceful struct {
	ctx context.Context
	mu  sync.Mutex
	say string
}

// WithGraceful returns ctx carrying g, the context the first interrupt
// cancels.
func WithGraceful(ctx context.Context, g context.Context) context.Context {
	return context.WithValue(ctx, gracefulKey{}, &graceful{ctx: g})
}

// Graceful returns a context that is cancelled on the first interrupt:
// stop starting new work, let work in flight finish. what is how the
// command tells the operator what it does then ("finishing the stacks in
// flight; no new stack starts").
func Graceful(ctx context.Context, what string) context.Context {
	if g, ok := ctx.Value(gracefulKey{}).(*graceful); ok {
		g.mu.Lock()
		g.say = what
		g.mu.Unlock()
		return g.ctx
	}
	return ctx
}

// GracefulNotice is what the command watching the first interrupt does
// then; ok is false when no command watches it.
func GracefulNotice(ctx context.Context) (what string, ok bool) {
	g, found := ctx.Value(gracefulKey{}).(*graceful)
	if !found {
		return "", false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.say, g.say != ""
}

// StacksInFlight is what the first interrupt does to a command that runs
// stacks.
const StacksInFlight = "finishing the stacks in flight; no new stack starts"
