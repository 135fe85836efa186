// Package secret is `cellctl secret`: the fleet's origin-verify secret.
package secret

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/deploy"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/originsecret"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// NewCmdSecret builds `cellctl secret`.
func NewCmdSecret(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Manage the fleet's origin-verify secret (CloudFront → every cell's ALB)",
	}
	cmd.AddCommand(NewCmdRotate(f, nil))
	return cmd
}

// RotateOptions are the inputs of `cellctl secret rotate`.
type RotateOptions struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	Setup func(ctx context.Context, fl *fleet.Fleet, scale float64) (*originsecret.Rotator, func(), error)
	Cloud string
	View  render.View[RotateReport]

	Steps     int
	BakeScale float64
	DryRun    bool
	// Resume is `cellctl rollout resume s-…` (Continue): the one run
	// that continues a rotation an operator paused.
	Resume bool
}

// Continue runs the rotation under way for `cellctl rollout resume`
// (the composition root passes it: commands do not import each other),
// with the rehearsal's --bake-scale (0: none).
func Continue(ctx context.Context, f *cmdutil.Factory, scale float64) error {
	o := &RotateOptions{IO: f.IO, Fleet: f.DesiredFleet, Setup: setup(f), Cloud: f.Global.Cloud, BakeScale: scale, Resume: true}
	var err error
	if o.View, err = render.Pick(f.Global.Output, rotateFormats...); err != nil {
		return err
	}
	return rotateRun(ctx, o)
}

// RotateReport is what `secret rotate` shows: the record as the run left
// it, or the dry run's plan.
type RotateReport struct {
	Record *executor.Record
	Plan   *originsecret.Planned
}

var rotateFormats = []render.Format[RotateReport]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r RotateReport) error {
		var b strings.Builder
		if p := r.Plan; p != nil {
			todo := 0
			for _, st := range p.Steps {
				if st.Pending() {
					todo++
				}
			}
			what := "a new rotation"
			if p.Resumes {
				what = "resuming its record"
			}
			fmt.Fprintf(&b, "rotation %s (dry run: nothing changes): %s, %d of %d steps to run\n", p.ID, what, todo, len(p.Steps))
			for _, st := range p.Steps {
				if !st.Pending() {
					fmt.Fprintf(&b, "  %-18s %s\n", st.Name, st.State)
					continue
				}
				fmt.Fprintf(&b, "  %-18s %s; up %s; bake %s, poll %s\n", st.Name, st.Does, strings.Join(st.Stacks, ", "), st.Bake, st.Poll)
			}
			for _, n := range p.Notes {
				fmt.Fprintf(&b, "note: %s\n", n)
			}
		} else if rec := r.Record; rec != nil {
			fmt.Fprintf(&b, "rotation %s: %s\n", rec.ID, rec.State)
			for _, st := range rec.Steps {
				fmt.Fprintf(&b, "  %-18s %s\n", st.Name, st.State)
			}
		}
		_, err := fmt.Fprint(io.Out, b.String())
		return err
	}},
	{Name: render.FormatJSON, Render: func(io *iostreams.IOStreams, r RotateReport) error {
		if r.Plan != nil {
			return render.JSON(io.Out, r.Plan)
		}
		return render.JSON(io.Out, r.Record)
	}},
}

// NewCmdRotate builds `cellctl secret rotate`.
func NewCmdRotate(f *cmdutil.Factory, runF func(*RotateOptions) error) *cobra.Command {
	opts := &RotateOptions{IO: f.IO, Fleet: f.DesiredFleet, Setup: setup(f)}
	cmd := &cobra.Command{
		Use:   "rotate",
		Short: "Replace the origin-verify secret in three gated phases, never refusing a request",
		Long: `Rotate the origin-verify secret CloudFront sends in X-Origin-Verify and every
cell's ALB requires, in three phases, each a gated deploy:

  1. accept  wave by wave (stacks/waves.yaml), every cell's ALB rule accepts the
             current and the next value; each wave bakes on its gate;
  2. switch  once every deployed cell accepts the next value (read from the
             deployed state), the router's origins send it; the bake covers
             every cell, and a breach puts the router back;
  3. drop    once the deployed router sends only the next value, wave by wave
             each cell stops accepting the old one.

Progress is recorded in the Pulumi backend beside the rollouts
(.cellctl/rollouts/s-….json; ` + "`cellctl rollout list`" + ` shows it), so a rotation
stopped at any point — Ctrl-C, kill -9, a halted gate — resumes when the
command is run again (a step that was baking continues its bake). It holds
the fleet lock: refused (exit 4) while a rollout or any other change runs,
and nothing else changes the fleet during it. The values are stored
encrypted in the stack files (commit them); the record holds no secret.
A breach exits 3; fix the cause and run it again to retry that step.

--dry-run prints the steps of the record the run would execute — a new
rotation's, or the one under way with the steps done — each with the
stacks it deploys and its bake; it takes no lock and writes nothing.`,
		Example: `  cellctl secret rotate --dry-run
  cellctl secret rotate
  cellctl --cloud sim secret rotate --bake-scale 0.002
  cellctl secret rotate --steps 1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cloud = f.Global.Cloud
			var err error
			if opts.View, err = render.Pick(f.Global.Output, rotateFormats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return rotateRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&opts.Steps, "steps", 0, "stop after this many steps (0: all); a later run continues")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the steps the rotation would run, the stacks each deploys and its bake; change nothing")
	cmdutil.BakeScaleVar(fl, &opts.BakeScale, "multiply every bake, poll and stage delay (rehearsals on --cloud sim only)")
	return cmd
}

func rotateRun(ctx context.Context, o *RotateOptions) error {
	if o.BakeScale != 0 {
		if o.Cloud != cmdutil.CloudSim {
			return fmt.Errorf("--bake-scale is for rehearsals on the simulated cloud (--cloud sim); on %s the gate bakes as waves.yaml says", o.Cloud)
		}
		if !(o.BakeScale > 0 && o.BakeScale <= 1) {
			return fmt.Errorf("--bake-scale %g: allowed is more than 0 and at most 1", o.BakeScale)
		}
	}
	if o.Steps < 0 {
		return fmt.Errorf("--steps %d: allowed is 0 (all) or more", o.Steps)
	}
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	rot, done, err := o.Setup(ctx, fl, o.BakeScale)
	if err != nil {
		return err
	}
	defer done()
	rot.Log = o.IO.ErrLines()
	if o.DryRun {
		// The record the run would execute, read without the lock.
		p, err := rot.Plan(ctx)
		if err != nil {
			return err
		}
		return o.View.Render(o.IO, RotateReport{Plan: p})
	}
	rec, err := rot.Run(ctx, originsecret.Options{Steps: o.Steps, Resume: o.Resume, Stop: cmdutil.Graceful(ctx, "finishing the step in flight; no new step starts").Done()})
	if errors.Is(err, originsecret.ErrPaused) {
		err = nil
	}
	if rec != nil {
		if verr := o.View.Render(o.IO, RotateReport{Record: rec}); verr != nil {
			return verr
		}
	}
	return err
}

// setup wires a rotation to the factory's engine, the deploy gate over
// CloudWatch, waves.yaml's waves, and the record and lock in the backend.
func setup(f *cmdutil.Factory) func(ctx context.Context, fl *fleet.Fleet, scale float64) (*originsecret.Rotator, func(), error) {
	return func(ctx context.Context, fl *fleet.Fleet, scale float64) (*originsecret.Rotator, func(), error) {
		plan, wp, err := deploy.Plan(fl, nil, "", scale)
		if err != nil {
			return nil, nil, err
		}
		env, doneEnv, err := f.DeployEnv(ctx, fl, nil)
		if err != nil {
			return nil, nil, err
		}
		eng, err := f.Engine(fl, nil)
		if err != nil {
			doneEnv()
			return nil, nil, err
		}
		rs, err := rollout.Open(ctx, eng.Backend())
		if err != nil {
			doneEnv()
			return nil, nil, err
		}
		// Every phase's up goes through the apply path; its gates run
		// over the whole fleet before the first phase writes anything.
		gated := &apply.Runner{Env: &apply.Env{Fleet: fl, Parallel: f.Global.Parallel, Log: f.IO.ErrLines()}, Engine: eng}
		// The shared gated env (the fleet, this process in the fleet
		// lock), with the rotation's own apply path: over the engine
		// that sets the secret's values in the stack files. A rotation
		// logs nothing: its report is the table of its steps.
		base := env.Env
		base.Runner, base.Log = gated, nil
		rot := &originsecret.Rotator{
			Env:    base,
			Waves:  plan.Waves,
			Engine: eng,
			Gate:   &deploy.RegionalGate{Fleet: fl, Plan: wp, Reader: env.Reader, Outputs: env.Outputs},
			Store:  backend.New(rs),
			Legacy: originsecret.LegacyStore{S: rs},
		}
		var reqs []stackrun.Request
		for _, st := range fl.StackNames() {
			reqs = append(reqs, stackrun.Request{Stack: st, Op: stackrun.OpUp})
		}
		if err := gated.Prepare(ctx, reqs); err != nil {
			_ = rs.Close()
			doneEnv()
			return nil, nil, err
		}
		return rot, func() { _ = rs.Close(); doneEnv() }, nil
	}
}
