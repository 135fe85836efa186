// Package deploy is `cellctl deploy`: the gated form of `up`, wave by wave.
package deploy

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/deploy"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/deployview"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// Options are the inputs of `cellctl deploy`.
type Options struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	// Env wires the deploy to the engine and the cloud; events receives
	// the engine's progress of every stack run.
	Env   func(ctx context.Context, fl *fleet.Fleet, events func(stackrun.Event)) (*deploy.Env, func(), error)
	Cloud string
	// Output is the -o name, for the checks that depend on it (markdown
	// is the dry run's); rendering goes through View.
	Output string
	View   render.View[Report]

	// Options are the deploy's (and, within them, the executor's), set
	// from the flags here and passed on whole.
	deploy.Options
	// Yes skips the confirmation asked at a terminal (--yes).
	Yes bool
}

// NewCmdDeploy builds `cellctl deploy`.
func NewCmdDeploy(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Fleet: f.DesiredFleet, Env: f.DeployEnv}
	cmd := &cobra.Command{
		Use:   "deploy",
		Short: "Roll the fleet's desired state out wave by wave, behind health gates",
		Long: `Deploy the fleet repository's desired state (baseline + stack files; --image
overrides the image) to the cells wave by wave, as stacks/waves.yaml says:
each wave's changed cells update in parallel (max_parallel), then bake while
the gate reads their alarms and metrics through CloudWatch. On a breach the
wave is rolled back to the configuration each cell ran before it (read from
its stack, not the repository) and deploy exits 3 naming the cell, signal,
reading and threshold. Earlier waves keep the new version; later waves are
untouched. The router stack goes last.

The rollout's record and lock live in the Pulumi backend: rerunning the same
deploy continues it; a second rollout is refused with exit 4 naming the
holder (--abandon ID breaks a dead holder's lock). --through WAVE stops after
that wave; --wave WAVE runs only that wave (its earlier waves must have
passed). Every run ends with the table cell → wave → image → state.`,
		Example: `  cellctl deploy --image app:v2 --dry-run
  cellctl deploy --image app:v2
  cellctl deploy --image app:v2 --through canary
  cellctl deploy --image app:v2 --wave wave-1
  cellctl deploy --abandon r-0123456789ab
  cellctl deploy --cloud sim --image app:v2 --bake-scale 0.01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cloud, opts.Output = f.Global.Cloud, f.Global.Output
			opts.Yes = f.Global.Yes
			var err error
			if opts.View, err = render.Pick(f.Global.Output, formats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return deployRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Image, "image", "", "image every cell gets in this rollout (default: the repository's)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print per wave what changes, the gate, exposure and expected time; change nothing")
	fl.StringVar(&opts.Through, "through", "", "stop after this wave (exit 0); a later run continues")
	fl.StringVar(&opts.Wave, "wave", "", "run only this wave (every earlier wave of the rollout must have passed)")
	_ = cmd.RegisterFlagCompletionFunc("through", f.CompleteWaves)
	_ = cmd.RegisterFlagCompletionFunc("wave", f.CompleteWaves)
	fl.BoolVar(&opts.Rebake, "rebake", false, "bake again waves that already passed")
	fl.BoolVar(&opts.Retry, "retry", false, "try again the wave a halted rollout stopped at")
	fl.StringVar(&opts.Abandon, "abandon", "", "break the lock of this rollout id (its holder is dead) and exit")
	fl.BoolVar(&opts.ToPrevious, "to-previous", false, "ship again the images of the completed rollout before the latest one, through the waves (what cellctl rollout undo runs)")
	cmdutil.BakeScaleVar(fl, &opts.BakeScale, "multiply every bake, poll and stage delay (rehearsals on --cloud sim only)")
	return cmd
}

// Report is what a deploy shows: what it did (or would do), and whether
// it was asked only to abandon a dead rollout's lock.
type Report struct {
	Abandon bool
	Result  *deploy.Result
}

var formats = []render.Format[Report]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r Report) error {
		out, s := io.Out, render.Out(io)
		switch res := r.Result; {
		case r.Abandon:
			if res.Abandoned != "" {
				fmt.Fprintf(out, "abandoned %s; rerun the same deploy to continue the rollout\n", res.Abandoned)
			}
		case res.Description != nil:
			fmt.Fprint(out, deployview.Describe(s, res.Description))
		case res.Outcome != nil:
			fmt.Fprintf(out, "rollout %s: %s\n", res.Outcome.Record.ID, res.Outcome.Record.State)
			fmt.Fprintln(out, deployview.Table(s, res.Outcome.Summary))
		}
		return nil
	}},
	{Name: render.FormatJSON, Render: func(io *iostreams.IOStreams, r Report) error {
		switch res := r.Result; {
		case r.Abandon:
			return render.JSON(io.Out, map[string]string{"abandoned": res.Abandoned})
		case res.Description != nil:
			return render.JSON(io.Out, res.Description)
		case res.Outcome != nil:
			return render.JSON(io.Out, res.Outcome)
		}
		return nil
	}},
	// Markdown is the dry run as a PR comment (deployRun refuses it
	// without --dry-run); an abandon is told as text.
	{Name: render.FormatMarkdown, Render: func(io *iostreams.IOStreams, r Report) error {
		switch res := r.Result; {
		case r.Abandon:
			if res.Abandoned != "" {
				fmt.Fprintf(io.Out, "abandoned %s; rerun the same deploy to continue the rollout\n", res.Abandoned)
			}
		case res.Description != nil:
			fmt.Fprint(io.Out, deployview.Markdown(res.Description))
		}
		return nil
	}},
}

// InterruptNotice is what deploy's first Ctrl-C does: the cell updates in
// flight finish, and a migration task in flight is not waited for (up to
// its timeout) — it runs on in ECS, the record names it, and the rerun
// follows it instead of starting another.
const InterruptNotice = cmdutil.StacksInFlight + "; a migration task in flight keeps running without cellctl waiting for it: the rollout's record names it, and rerunning the same deploy follows it to its end"

// OptionsFor is a deploy's options as f's global flags set them, for a
// command that runs a deploy of its own (`cellctl rollout resume|abort`).
func OptionsFor(f *cmdutil.Factory) (*Options, error) {
	o := &Options{IO: f.IO, Fleet: f.DesiredFleet, Env: f.DeployEnv, Cloud: f.Global.Cloud, Output: f.Global.Output, Yes: f.Global.Yes}
	var err error
	o.View, err = render.Pick(f.Global.Output, formats...)
	return o, err
}

// Run runs a deploy as Options say: `cellctl deploy`, and `cellctl
// rollout resume|abort` (which set ID, Resume or Abort).
func Run(ctx context.Context, o *Options) error { return deployRun(ctx, o) }

func deployRun(ctx context.Context, o *Options) error {
	if o.BakeScale != 0 {
		if o.Cloud != cmdutil.CloudSim {
			return fmt.Errorf("--bake-scale is for rehearsals on the simulated cloud (--cloud sim); on %s the gate bakes as waves.yaml says", o.Cloud)
		}
		if !(o.BakeScale > 0 && o.BakeScale <= 1) {
			return fmt.Errorf("--bake-scale %g: allowed is more than 0 and at most 1", o.BakeScale)
		}
	}
	if o.Output == render.FormatMarkdown && !o.DryRun {
		return errors.New("-o markdown is for the dry run (a PR comment): add --dry-run")
	}
	if o.Through != "" && o.Wave != "" {
		return errors.New("--through and --wave cannot be combined: --wave runs one wave")
	}
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	// Live redrawing only on a terminal with colour: piped (CI) or
	// NO_COLOR, one plain line per step.
	display := deployview.NewDisplay(o.IO)
	defer display.Close()
	// Said from here on when the first Ctrl-C comes (main prints it).
	stop := cmdutil.Graceful(ctx, InterruptNotice).Done()
	env, done, err := o.Env(ctx, fl, display.Engine)
	if err != nil {
		return err
	}
	defer done()
	env.Progress = display
	confirm := cmdutil.Confirmation{IO: o.IO, Yes: o.Yes, Verb: "deploy"}
	env.Confirm = func(ctx context.Context, describe func() (*executor.Description, error)) error {
		return confirm.Ask(ctx, func() (string, error) {
			d, err := describe()
			if err != nil {
				return "", err
			}
			return deployview.Describe(render.Err(o.IO), d), nil
		})
	}
	// The rollout holds the fleet lock as the gated env's holder.
	do := o.Options
	do.Host, do.PID, do.Alive, do.Stop = env.Host, env.PID, env.Alive, stop
	res, err := deploy.Run(ctx, env, do)
	if res != nil {
		if verr := o.View.Render(o.IO, Report{Abandon: o.Abandon != "", Result: res}); verr != nil && err == nil {
			err = verr
		}
	}
	return err
}
