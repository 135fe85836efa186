package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/sim"
	"github.com/cellctl/cellctl/stacks"
)

// SimDir is where the simulated cloud of a fleet lives.
func SimDir(fl *fleet.Fleet) string { return filepath.Join(fl.Dir, engine.StateDir, "sim") }

// Engine builds the engine for the fleet and the chosen cloud. With
// --cloud sim every stack gets its own simulated AWS provider, attached
// to the real Pulumi engine through PULUMI_DEBUG_PROVIDERS.
func (f *Factory) Engine(ctx context.Context, fl *fleet.Fleet, events func(engine.Event), expected map[string]int) (*engine.Engine, func(), error) {
	g := f.Global
	opts := engine.Options{
		Fleet:             fl,
		Program:           stacks.Program(fl),
		Backend:           g.Backend,
		Parallel:          g.Parallel,
		Events:            events,
		Log:               f.IO.ErrOut,
		ExpectedResources: expected,
	}
	if g.Cloud == CloudSim {
		dir := SimDir(fl)
		opts.Offline = true
		opts.AllowDemoPassphrase = g.Backend == "" && os.Getenv("PULUMI_BACKEND_URL") == ""
		opts.Attach = func(ctx context.Context, stack string) (*engine.Attachment, error) {
			srv, err := sim.Start(ctx, sim.Options{Dir: dir, Stack: stack})
			if err != nil {
				return nil, err
			}
			return &engine.Attachment{
				Env:   map[string]string{"PULUMI_DEBUG_PROVIDERS": srv.DebugProviders()},
				Close: func() error { srv.Stop(); return nil },
			}, nil
		}
		opts.ResolvePending = func(ctx context.Context, stack string, urns []string) (map[string]string, error) {
			cloud, err := sim.Open(dir)
			if err != nil {
				return nil, err
			}
			live, err := cloud.Resources(sim.Filter{Stack: stack})
			if err != nil {
				return nil, err
			}
			want := map[string]bool{}
			for _, u := range urns {
				want[u] = true
			}
			found := map[string]string{}
			for _, r := range live {
				if want[r.URN] {
					found[r.URN] = r.ID
				}
			}
			return found, nil
		}
	}
	eng, err := engine.New(opts)
	if err != nil {
		return nil, nil, err
	}
	return eng, func() {}, nil
}
