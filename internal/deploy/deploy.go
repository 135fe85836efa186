// Package deploy is the use case of `cellctl deploy`: it turns the fleet
// repository (waves.yaml, the desired cell configurations, an --image
// override) into a rollout plan and runs it with the rollout executor over
// the engine seam (one `up` per cell, its configuration as data), the gate
// evaluator over CloudWatch, and the rollout record and lock in the Pulumi
// backend. The command is thin; tests call Run with small fakes.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/internal/outcome"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"
	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/adapters/cellspec"
	"github.com/cellctl/cellctl/internal/adapters/engineupdater"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/internal/routercanary"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
)

// Env is what a deploy runs against: a gated change's surroundings
// (gated.Env; its router step runs over the same one) and what only a
// rollout needs. The executor takes the fleet lock as Options.Host, PID
// and Alive say (the command sets them from Env's).
type Env struct {
	gated.Env
	// Repository is the fleet as its stack files say (nil: Fleet). A cell
	// the rollout ships another image than its stack file names records
	// that file's image, so the desired state knows when a later commit
	// takes over (internal/desired).
	Repository *fleet.Fleet
	// Prepare checks every change the rollout may make before its first
	// wave — the apply path's gates (internal/apply.Runner.Prepare):
	// offline render and isolation audit, immutable index and region —
	// and readies the engine (provider plugin); nil: nothing to do.
	Prepare func(ctx context.Context, reqs []stackrun.Request) error
	// Abandon breaks the lock of a dead rollout; it returns a description
	// of the holder removed ("" when the lock was free).
	Abandon func(ctx context.Context, id string) (string, error)
	// Preview plans one cell's update to cfg without changing anything
	// (a Pulumi preview of its stack with cfg as its configuration) and
	// returns the resource changes; nil: the dry run lists the changed
	// settings only.
	Preview func(ctx context.Context, cell string, cfg spec.Cell) ([]stackrun.Change, error)
	// Confirm, when set, is asked once the fleet's lock is known free and
	// before the first write (the operator's yes at a terminal), with the
	// rollout's description (the dry run's, without its preview) to call
	// if it shows one; its error stops the deploy with nothing changed.
	Confirm  func(ctx context.Context, describe func() (*executor.Description, error)) error
	Progress executor.Progress
	// Holder reads who holds the fleet lock now (nil: nobody), so a deploy
	// refuses before Prepare writes anything (nil: not checked early).
	Holder func(ctx context.Context) (*executor.Holder, error)
	// Migrator runs each changed cell's schema migration (a one-off task
	// of the new image) before its update (nil: the fleet has none).
	Migrator executor.Migrator
	// Bootstrap puts a cell database's users and grants in place from its
	// stack's outputs as deployed — what up runs after each cell's up
	// (cmdutil.Factory.BootstrapCell) — and says what it did. A rollout
	// runs it where a cell's change needs it (bootstrap.go); nil: never.
	Bootstrap func(ctx context.Context, cell *fleet.Cell, outputs map[string]any) (string, error)
	// LastRun says whether a stack's last operation completed with
	// nothing pending (why not, otherwise): a cell already on the desired
	// configuration is skipped only then (nil: always).
	LastRun func(ctx context.Context, stack string) (ok bool, why string, err error)
}

// Options are the deploy command's choices.
type Options struct {
	// Options are the executor's: --through, --wave, --rebake, --retry,
	// the lock holder's host and pid, the liveness check and the stop
	// channel go to the run as the command set them (Router is set here).
	executor.Options
	// Image overrides every cell's image for this rollout.
	Image  string
	DryRun bool
	// Abandon breaks the lock of this rollout id and does nothing else.
	Abandon string
	// BakeScale multiplies every bake and poll (a rehearsal on the
	// simulated cloud); 0 or 1 keeps waves.yaml's.
	BakeScale float64
	// UpdateEstimate is one cell update's expected time for the dry run.
	UpdateEstimate time.Duration
	// RouterCanary shapes the router step: the router ships through its
	// staging distribution (internal/routercanary); BakeScale scales its
	// bakes too.
	RouterCanary routercanary.Options
	// ToPrevious ships the images of the completed rollout before the
	// latest completed one, through the waves (`cellctl rollout
	// undo`, `deploy --to-previous`); UndoTo names that rollout instead.
	ToPrevious bool
	UndoTo     string
}

// Result is what a deploy leaves.
type Result struct {
	// Outcome is the run's record and final table (nil for a dry run or
	// an abandon, or when nothing started).
	Outcome *executor.Outcome
	// Description is the dry run.
	Description *executor.Description
	// Abandoned names the lock holder --abandon removed.
	Abandoned string
	// Undo is what an undo shipped: whose images.
	Undo *Undo `json:"undo,omitempty"`
}

// Desired is every cell's configuration from the fleet repository, with
// image replacing the image when set.
func Desired(fl *fleet.Fleet, image string) (map[string]executor.CellConfig, error) {
	out := map[string]executor.CellConfig{}
	for _, c := range fl.Cells {
		s := c.Cell
		if image != "" {
			s.Image = image
		}
		cfg, err := cellspec.FromSpec(s)
		if err != nil {
			return nil, err
		}
		out[c.ID] = cfg
	}
	return out, nil
}

// Plan builds the rollout plan: waves.yaml's waves, each cell's desired
// configuration, the exposure from routing.json, and bakes and polls
// multiplied by scale (when positive). repo, when set, is the fleet as
// the repository says: the plan records the repository's image of every
// cell it ships another image to (executor.Plan.Repository).
func Plan(fl, repo *fleet.Fleet, image string, scale float64) (executor.Plan, *waves.Plan, error) {
	if fl.Waves == nil || len(fl.Waves.Waves) == 0 {
		return executor.Plan{}, nil, fmt.Errorf("%s: the fleet has no waves; deploy rolls out wave by wave", fleet.WavesFile)
	}
	desired, err := Desired(fl, image)
	if err != nil {
		return executor.Plan{}, nil, err
	}
	wp := fl.Waves.Scaled(scale)
	inWave := map[string]bool{}
	for _, w := range wp.Waves {
		for _, c := range w.Cells {
			inWave[c] = true
		}
	}
	for id := range desired {
		if !inWave[id] {
			delete(desired, id) // not in any wave: deploy leaves it alone (Validate names wave cells without one)
		}
	}
	p := executor.Plan{Waves: wp.Waves, Desired: desired, Exposure: wp.Exposure(fl.Routing, waves.Estimate{})}
	if repo != nil {
		for id, cfg := range desired {
			if c := repo.Cell(id); c != nil && c.Image != cfg.Image {
				if p.Repository == nil {
					p.Repository = map[string]string{}
				}
				p.Repository[id] = c.Image
			}
		}
	}
	if err := p.Validate(); err != nil {
		return executor.Plan{}, nil, fmt.Errorf("%s: %w", fleet.WavesFile, err)
	}
	return p, wp, nil
}

// Updater is the executor's Updater over env: `up` of one cell with its
// configuration as data, and the configuration it runs read from its
// stack's deployedSpec output.
func Updater(env *Env) *engineupdater.Updater {
	return &engineupdater.Updater{
		Runner:  env.Runner,
		LastRun: env.LastRun,
		Deployed: func(ctx context.Context, cell string) (spec.Cell, error) {
			outs, err := env.Outputs(ctx, cell)
			if err != nil {
				return spec.Cell{}, fmt.Errorf("cell %s: reading its stack outputs: %w", cell, err)
			}
			if len(outs) == 0 {
				return spec.Cell{}, fmt.Errorf("cell %s is not deployed: new cells join the fleet through `cellctl up %s` first", cell, cell)
			}
			return spec.DecodeDeployed(cell, outs)
		},
	}
}

// Run runs the deploy.
func Run(ctx context.Context, env *Env, o Options) (*Result, error) {
	if o.Abandon != "" {
		if env.Abandon == nil {
			return nil, errors.New("--abandon: the rollout store cannot break locks")
		}
		who, err := env.Abandon(ctx, o.Abandon)
		return &Result{Abandoned: who}, err
	}
	repo := env.Repository
	if repo == nil {
		repo = env.Fleet
	}
	fl := env.Fleet
	var undo *Undo
	if o.ToPrevious || o.UndoTo != "" {
		if o.Image != "" {
			return nil, errors.New("--image and an undo cannot be combined: the undo ships the images an earlier rollout shipped")
		}
		var err error
		if undo, err = undoOf(ctx, env, o.UndoTo); err != nil {
			return nil, err
		}
		fl = withImages(env.Fleet, undo.Images)
	}
	plan, wp, err := Plan(fl, repo, o.Image, o.BakeScale)
	if err != nil {
		return nil, err
	}
	if o.Resume && o.ID != "" && plan.ID() != o.ID {
		// Resume continues exactly the rollout that started: the same
		// waves, bakes and configurations make the same id.
		return nil, fmt.Errorf("rollout %s is not what the repository describes now (that is rollout %s): waves.yaml's waves or the stack files changed since it started; check out what it started from, or abort it (`cellctl rollout abort %s`)",
			o.ID, plan.ID(), o.ID)
	}
	up := Updater(env)
	describe := func() (*executor.Description, error) {
		est := o.UpdateEstimate
		if est <= 0 {
			est = waves.DefaultCellUpdate
		}
		d, err := executor.Describe(ctx, up, env.Migrator, env.bootstrapper(), plan, est)
		if d != nil {
			nameSettings(d, env.Fleet)
		}
		return d, err
	}
	if o.DryRun {
		d, err := describe()
		if err == nil && env.Preview != nil {
			err = previewCells(ctx, env.Preview, plan, d)
		}
		return &Result{Description: d, Undo: undo}, err
	}
	// Prepare writes (the origin-verify secret into stack files, the
	// backend's stacks): a fleet another run holds is refused first, with
	// nothing written. The executor takes the lock itself below.
	if env.Holder != nil {
		h, err := env.Holder(ctx)
		if err != nil {
			return nil, err
		}
		if h != nil && h.ID != plan.ID() && h.ID != o.ID {
			var held *executor.LockedError
			if env.Store != nil {
				held = executor.HeldBy(ctx, env.Store, *h)
			} else {
				held = &executor.LockedError{Holder: *h}
			}
			return nil, outcome.Locked("", held)
		}
	}
	if env.Confirm != nil && o.Abort == nil {
		// An abort ships only what the cells ran before: the rollout's
		// description is not what it would do (`rollout abort` is the ask).
		if err := env.Confirm(ctx, describe); err != nil {
			return nil, err
		}
	}
	if env.Prepare != nil {
		// Every update the waves will make, as they will make it (the
		// configuration given as data), and the router's: a fleet that
		// fails the isolation audit or renumbers a cell is refused before
		// the first wave, exactly as up refuses it.
		var reqs []stackrun.Request
		for _, w := range plan.Waves {
			for _, c := range w.Cells {
				s, err := cellspec.ToSpec(plan.Desired[c])
				if err != nil {
					return nil, err
				}
				reqs = append(reqs, stackrun.Request{Stack: c, Op: stackrun.OpUp, Inputs: stackrun.Inputs{Cell: &s}})
			}
		}
		if env.Fleet.Router != nil {
			reqs = append(reqs, stackrun.Request{Stack: fleet.RouterStack, Op: stackrun.OpUp})
		}
		if err := env.Prepare(ctx, reqs); err != nil {
			return nil, err
		}
	}
	ex := &executor.Executor{
		Updater:  up,
		Migrator: env.Migrator,
		Gate:     &RegionalGate{Fleet: env.Fleet, Plan: wp, Reader: env.Reader, Outputs: env.Outputs},
		Store:    env.Store,
		Clock:    env.Clock,
		Progress: env.Progress,

		Bootstrapper: env.bootstrapper(),
	}
	opts := o.Options
	opts.BakeScale = o.BakeScale
	if env.Fleet.Router != nil {
		co := o.RouterCanary.WithDefaults().Scaled(o.BakeScale)
		opts.Router = func(ctx context.Context, j *executor.Journal) error {
			if err := checkTable(ctx, env); err != nil {
				return err
			}
			// The router step is a canary kept in the rollout's record,
			// under the rollout's lock; with nothing to change it runs no
			// engine.
			_, err := routercanary.Run(ctx, &routercanary.Env{Env: env.Env, Journal: j}, co)
			return err
		}
	}
	if undo != nil && env.Progress != nil {
		env.Progress.Event(executor.Event{Kind: executor.Note, Message: fmt.Sprintf("undo: shipping the images rollout %s shipped, through the waves", undo.From)})
	}
	out, err := ex.Run(ctx, plan, opts)
	return &Result{Outcome: out, Undo: undo}, err
}

// undoOf reads the fleet's records and finds what an undo ships
// (Previous), refused when its settings are not the repository's now.
func undoOf(ctx context.Context, env *Env, to string) (*Undo, error) {
	lister, ok := env.Store.(executor.Lister)
	if !ok {
		return nil, errors.New("undo: this record store cannot list the rollouts")
	}
	recs, err := lister.List(ctx)
	if err != nil {
		// A record that does not read may be the rollout to undo to:
		// never guess which one is the previous.
		return nil, fmt.Errorf("undo: reading the rollouts: %w", err)
	}
	u, err := Previous(recs, to)
	if err != nil {
		return nil, err
	}
	desired, err := Desired(env.Fleet, "")
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.ID == u.From {
			return u, u.check(r, desired)
		}
	}
	return u, nil
}

// previewParallel bounds the previews a dry run runs at once: each is a
// pulumi process planning a whole cell stack.
const previewParallel = 4

// previewCells runs a preview of every changed cell's update and adds the
// resource changes it plans to the description. A preview that fails is
// the cell's error and the dry run's: a plan that cannot be checked is not
// one to approve.
// nameSettings names each setting a dry run changes as the operator
// sets it ("cells:taskCpu", not the recorded field TaskCPU).
func nameSettings(d *executor.Description, fl *fleet.Fleet) {
	for i := range d.Waves {
		for j := range d.Waves[i].Cells {
			changes := d.Waves[i].Cells[j].Changes
			for k := range changes {
				changes[k].Key = cellspec.SettingName(changes[k].Key, fl.ConfigKey)
			}
			sort.SliceStable(changes, func(a, b int) bool { return changes[a].Key < changes[b].Key })
		}
	}
}

func previewCells(ctx context.Context, preview func(context.Context, string, spec.Cell) ([]stackrun.Change, error), plan executor.Plan, d *executor.Description) error {
	var mu sync.Mutex
	var errs *multierror.Error
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(previewParallel)
	for wi := range d.Waves {
		for ci := range d.Waves[wi].Cells {
			cd := &d.Waves[wi].Cells[ci]
			if cd.Unchanged || cd.Error != "" {
				continue
			}
			g.Go(func() error {
				s, err := cellspec.ToSpec(plan.Desired[cd.Cell])
				var changes []stackrun.Change
				if err == nil {
					changes, err = preview(gctx, cd.Cell, s)
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					cd.Error = "preview: " + err.Error()
					errs = multierror.Append(errs, fmt.Errorf("cell %s: %s", cd.Cell, cd.Error))
					return nil
				}
				for _, c := range stackrun.ResourceChanges(changes) {
					cd.Resources = append(cd.Resources, executor.ResourceChange{Op: c.Op, Type: c.Type, Name: c.Name,
						Diffs: c.Diffs, Replace: c.Replace, Warning: c.Warning})
				}
				return nil
			})
		}
	}
	_ = g.Wait()
	return errs.ErrorOrNil()
}
