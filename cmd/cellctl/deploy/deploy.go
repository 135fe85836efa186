// Package deploy is `cellctl deploy`: the gated form of `up`, wave by wave.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/deploy"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/executor/backend"
	"github.com/cellctl/cellctl/waves/gate"
)

// Options are the inputs of `cellctl deploy`.
type Options struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	// Env wires the deploy to the engine and the cloud; events receives
	// the engine's progress of every stack run.
	Env    func(ctx context.Context, fl *fleet.Fleet, events func(stackrun.Event)) (*deploy.Env, func(), error)
	Cloud  string
	Output string

	Image     string
	DryRun    bool
	Through   string
	Wave      string
	Rebake    bool
	Retry     bool
	Abandon   string
	BakeScale float64
}

// NewCmdDeploy builds `cellctl deploy`.
func NewCmdDeploy(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Fleet: f.DesiredFleet, Env: EnvOf(f)}
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
			if err := f.CheckOutput(cmdutil.FormatTable, cmdutil.FormatJSON, cmdutil.FormatMarkdown); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Image, "image", "", "image every cell gets in this rollout (default: the repository's)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print per wave what changes, the gate, exposure and expected time; change nothing")
	fl.StringVar(&opts.Through, "through", "", "stop after this wave (exit 0); a later run continues")
	fl.StringVar(&opts.Wave, "wave", "", "run only this wave (every earlier wave of the rollout must have passed)")
	fl.BoolVar(&opts.Rebake, "rebake", false, "bake again waves that already passed")
	fl.BoolVar(&opts.Retry, "retry", false, "try again the wave a halted rollout stopped at")
	fl.StringVar(&opts.Abandon, "abandon", "", "break the lock of this rollout id (its holder is dead) and exit")
	cmdutil.BakeScaleVar(fl, &opts.BakeScale, "multiply every bake and poll (rehearsals on --cloud sim only)")
	return cmd
}

// Run is the command's body.
func Run(ctx context.Context, o *Options) error {
	if o.BakeScale != 0 {
		if o.Cloud != cmdutil.CloudSim {
			return fmt.Errorf("--bake-scale is for rehearsals on the simulated cloud (--cloud sim); on %s the gate bakes as waves.yaml says", o.Cloud)
		}
		if !(o.BakeScale > 0 && o.BakeScale <= 1) {
			return fmt.Errorf("--bake-scale %g: allowed is more than 0 and at most 1", o.BakeScale)
		}
	}
	if o.Output == cmdutil.FormatMarkdown && !o.DryRun {
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
	display := deploy.NewDisplay(o.IO.ErrOut, o.IO.IsStderrTTY() && o.IO.ColorErr(), render.Err(o.IO))
	defer display.Close()
	env, done, err := o.Env(ctx, fl, display.Engine)
	if err != nil {
		return err
	}
	defer done()
	env.Progress = display
	host, _ := os.Hostname()
	res, err := deploy.Run(ctx, env, deploy.Options{
		Image: o.Image, DryRun: o.DryRun, Through: o.Through, Wave: o.Wave, Rebake: o.Rebake, Retry: o.Retry,
		Abandon: o.Abandon, BakeScale: o.BakeScale, Host: host, PID: os.Getpid(),
		Alive: func(h executor.Holder) bool { return rollout.ProcessAlive(h.PID) }, Stop: cmdutil.Graceful(ctx).Done(),
	})
	if verr := show(o, res); verr != nil && err == nil {
		err = verr
	}
	return err
}

func show(o *Options, res *deploy.Result) error {
	if res == nil {
		return nil
	}
	out := o.IO.Out
	s := render.Out(o.IO)
	switch {
	case o.Abandon != "":
		if o.Output == cmdutil.FormatJSON {
			return render.JSON(out, map[string]string{"abandoned": res.Abandoned})
		}
		if res.Abandoned != "" {
			fmt.Fprintf(out, "abandoned %s; rerun the same deploy to continue the rollout\n", res.Abandoned)
		}
	case res.Description != nil:
		switch o.Output {
		case cmdutil.FormatJSON:
			return render.JSON(out, res.Description)
		case cmdutil.FormatMarkdown:
			fmt.Fprint(out, markdown(res.Description))
			return nil
		}
		fmt.Fprint(out, describe(s, res.Description))
	case res.Outcome != nil:
		if o.Output == cmdutil.FormatJSON {
			return render.JSON(out, res.Outcome)
		}
		fmt.Fprintf(out, "rollout %s: %s\n", res.Outcome.Record.ID, res.Outcome.Record.State)
		fmt.Fprintln(out, deploy.Table(s, res.Outcome.Summary))
	}
	return nil
}

func describe(s *render.Styles, d *executor.Description) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rollout %s (dry run: nothing changes), expected %s\n", d.ID, d.Expected.Round(time.Second))
	for _, w := range d.Waves {
		fmt.Fprintf(&b, "\n%s  bake %s, poll %s, gate %s, on breach %s, expected %s\n", s.Bold(w.Name), w.Bake, w.Poll, w.Gate, w.OnBreach, w.Expected.Round(time.Second))
		if w.Exposure != nil && w.Cumulative != nil {
			fmt.Fprintf(&b, "  exposure: %.1f%% of buckets, %.1f%% of pinned tenants (cumulative %.1f%%, %.1f%%)\n",
				100*w.Exposure.Buckets, 100*w.Exposure.Pinned, 100*w.Cumulative.Buckets, 100*w.Cumulative.Pinned)
		}
		for _, c := range w.Cells {
			switch {
			case c.Error != "":
				fmt.Fprintf(&b, "  %s: %s\n", c.Cell, s.Bad(c.Error))
			case c.Unchanged:
				fmt.Fprintf(&b, "  %s: unchanged\n", c.Cell)
			default:
				fmt.Fprintf(&b, "  %s:\n", c.Cell)
				for _, ch := range c.Changes {
					fmt.Fprintf(&b, "    %s: %s → %s\n", ch.Key, ch.Old, ch.New)
				}
				if len(c.Resources) > 0 {
					fmt.Fprintf(&b, "    preview: %s\n", resourceCount(c.Resources))
					for _, r := range c.Resources {
						fmt.Fprintf(&b, "      %s\n", resourceLine(s, r))
					}
				}
			}
		}
	}
	return b.String()
}

// EnvOf wires a deploy to the factory's engine, cloud bundle and the
// rollout store in the engine's Pulumi backend.
func EnvOf(f *cmdutil.Factory) func(ctx context.Context, fl *fleet.Fleet, events func(stackrun.Event)) (*deploy.Env, func(), error) {
	return func(ctx context.Context, fl *fleet.Fleet, events func(stackrun.Event)) (*deploy.Env, func(), error) {
		eng, err := f.Engine(fl, events)
		if err != nil {
			return nil, nil, err
		}
		bundle, err := f.Cloud()
		if err != nil {
			return nil, nil, err
		}
		rs, err := rollout.Open(ctx, eng.Backend())
		if err != nil {
			return nil, nil, err
		}
		store := backend.New(rs)
		// The repository's own fleet beside the desired one (fl): the plan
		// records which images it ships over the stack files'.
		repo, err := f.Fleet()
		if err != nil {
			_ = rs.Close()
			return nil, nil, err
		}
		var mu sync.Mutex
		readers := map[string]gate.Reader{}
		// Every stack change of the rollout (a wave's update and
		// rollback, the router canary's steps, the dry run's previews)
		// goes through the apply path: its gates, then the engine with
		// the display's progress.
		gated := &apply.Runner{
			Env:    &apply.Env{Fleet: fl, Parallel: f.Global.Parallel, Log: f.IO.ErrOut},
			Engine: eng,
			Next: &deploy.ReportingRunner{Runner: eng, Events: events, Expected: func(ctx context.Context, stack string) int {
				st, err := eng.Status(ctx, []string{stack})
				if err != nil || len(st) != 1 || st[0] == nil {
					return 0 // unknown: the display counts without a total
				}
				return st[0].Resources
			}},
		}
		env := &deploy.Env{
			Fleet:      fl,
			Repository: repo,
			Runner:     gated,
			Outputs:    func(ctx context.Context, stack string) (map[string]any, error) { return outputs(ctx, eng, stack) },
			Prepare:    gated.Prepare,
			Reader: func(ctx context.Context, region string) (gate.Reader, error) {
				mu.Lock()
				defer mu.Unlock()
				if r, ok := readers[region]; ok {
					return r, nil
				}
				t, err := bundle.Target(ctx, region)
				if err != nil {
					return nil, err
				}
				cw, err := awsapi.NewCloudWatch(ctx, t)
				if err != nil {
					return nil, err
				}
				r := &deploy.CloudWatchReader{CW: cw}
				readers[region] = r
				return r, nil
			},
			Preview: func(ctx context.Context, cell string, cfg spec.Cell) ([]stackrun.Change, error) {
				res, err := apply.Apply(ctx, gated, stackrun.Request{Stack: cell, Op: stackrun.OpPreview, Inputs: stackrun.Inputs{Cell: &cfg}})
				if err != nil {
					return nil, err
				}
				return res.Planned, nil
			},
			Store:  store,
			Holder: rs.Holder,
			LastRun: func(ctx context.Context, stack string) (bool, string, error) {
				st, err := eng.Status(ctx, []string{stack})
				if err != nil || len(st) != 1 || st[0] == nil {
					return false, "", fmt.Errorf("reading %s's last update: %w", stack, err)
				}
				return lastRun(st[0])
			},
			Abandon: func(ctx context.Context, id string) (string, error) {
				return abandon(ctx, rs, store, id)
			},
			Log: f.IO.ErrOut,
		}
		return env, func() { _ = rs.Close() }, nil
	}
}

// lastRun judges a stack's status: its last operation completed and left
// nothing pending.
func lastRun(st *engine.StackStatus) (bool, string, error) {
	switch {
	case st.Error != "":
		return false, "", errors.New(st.Error)
	case st.PendingOps > 0:
		return false, fmt.Sprintf("an interrupted run left %d operation(s) pending in its state", st.PendingOps), nil
	case st.LastResult != "" && st.LastResult != "succeeded":
		return false, fmt.Sprintf("its last %s %s", st.LastKind, st.LastResult), nil
	}
	return true, "", nil
}

// outputs reads a stack's outputs with the engine's one reader
// (DeployedOutputs); nil, nil: not deployed, as deploy.Env.Outputs says.
func outputs(ctx context.Context, eng *engine.Engine, stack string) (map[string]any, error) {
	outs, err := eng.DeployedOutputs(ctx, stack)
	if errors.Is(err, stackrun.ErrNotDeployed) {
		return nil, nil
	}
	return outs, err
}

// abandon breaks a dead holder's fleet lock — a rollout's, any other
// verb's, or one that cannot be parsed (id "unreadable"): the one way to
// clear the fleet lock. A holder on this host whose process still runs is
// not dead: that is refused.
func abandon(ctx context.Context, rs *rollout.Store, store *backend.Store, id string) (string, error) {
	host, _ := os.Hostname()
	if h, err := rs.Holder(ctx); err == nil && h != nil && h.ID == id && h.Host == host && rollout.ProcessAlive(h.PID) {
		return "", fmt.Errorf("%s is still running on this host (pid %d): stop it (Ctrl-C) instead of abandoning it", h, h.PID)
	}
	held, err := executor.Abandon(ctx, store, id, rollout.Me("deploy --abandon", "abandon-"+id, time.Now()))
	if held == nil {
		return "", err
	}
	return held.String(), err
}

// markdown is the dry run as one PR comment.
func markdown(d *executor.Description) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Rollout `%s` (dry run), expected %s\n\n", d.ID, d.Expected.Round(time.Second))
	b.WriteString("| wave | cell | changes | bake | gate | exposure (cumulative) |\n|---|---|---|---|---|---|\n")
	for _, w := range d.Waves {
		exposure := "-"
		if w.Exposure != nil && w.Cumulative != nil {
			exposure = fmt.Sprintf("%.1f%% buckets, %.1f%% pinned (%.1f%%, %.1f%%)", 100*w.Exposure.Buckets, 100*w.Exposure.Pinned, 100*w.Cumulative.Buckets, 100*w.Cumulative.Pinned)
		}
		for _, c := range w.Cells {
			var changes []string
			switch {
			case c.Error != "":
				changes = []string{"**cannot read:** " + c.Error}
			case c.Unchanged:
				changes = []string{"unchanged"}
			}
			for _, ch := range c.Changes {
				changes = append(changes, fmt.Sprintf("`%s`: %s → %s", ch.Key, ch.Old, ch.New))
			}
			if len(c.Resources) > 0 {
				changes = append(changes, "preview: "+resourceCount(c.Resources))
				for _, r := range c.Resources {
					changes = append(changes, "`"+resourceLine(render.NewStyles(io.Discard, false), r)+"`")
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", w.Name, c.Cell, mdCell(strings.Join(changes, "<br>")), w.Bake, mdCell(w.Gate), exposure)
		}
	}
	return b.String()
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// resourceCount is a preview's changes by operation ("2 to update, 1 to
// replace").
func resourceCount(rs []executor.ResourceChange) string {
	n := map[string]int{}
	var ops []string
	for _, r := range rs {
		if n[r.Op] == 0 {
			ops = append(ops, r.Op)
		}
		n[r.Op]++
	}
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%d to %s", n[op], op)
	}
	return strings.Join(parts, ", ")
}

// resourceLine is one planned resource change: "update
// aws:ecs/service:Service cell-a-svc (taskDefinition)".
func resourceLine(s *render.Styles, r executor.ResourceChange) string {
	line := r.Op + " " + r.Type + " " + r.Name
	if len(r.Diffs) > 0 {
		line += " (" + strings.Join(r.Diffs, ", ") + ")"
	}
	if len(r.Replace) > 0 {
		line += " replaced for " + strings.Join(r.Replace, ", ")
	}
	if r.Warning != "" {
		line += ": " + s.Warn(r.Warning)
	}
	return line
}
