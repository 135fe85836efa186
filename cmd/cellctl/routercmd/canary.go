// Package routercmd is `cellctl router …`: shipping the router stack.
package routercmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/deploy"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/routercanary"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/signal"
)

// CanaryOptions are the inputs of `cellctl router canary`.
type CanaryOptions struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	Env   func(ctx context.Context, fl *fleet.Fleet, events func(stackrun.Event)) (*deploy.Env, func(), error)
	Cloud string
	View  render.View[CanaryReport]

	DryRun    bool
	Canary    routercanary.Options
	Max5xx    string
	MaxErrors string
	BakeScale float64
}

// NewCmdRouter builds `cellctl router`.
func NewCmdRouter(f *cmdutil.Factory, runF func(*CanaryOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "router",
		Short: "Ship the router stack (CloudFront + Lambda@Edge) through its staging distribution",
	}
	cmd.AddCommand(NewCmdCanary(f, runF))
	cmd.AddCommand(NewCmdPackage(f, nil))
	return cmd
}

// NewCmdCanary builds `cellctl router canary`.
func NewCmdCanary(f *cmdutil.Factory, runF func(*CanaryOptions) error) *cobra.Command {
	o := &CanaryOptions{IO: f.IO, Fleet: f.DesiredFleet, Env: f.DeployEnv}
	cmd := &cobra.Command{
		Use:   "canary",
		Short: "Canary the router's edge function on the staging distribution, then promote it or discard it",
		Long: `Publish the router stack's current program (stacks/routing.json, the edge
handler, the cells' origins) as a canary: the new edge function version runs
first on the CloudFront staging distribution, for requests carrying the
smoke header (aws-cf-cd-cellctl-canary: <token>, printed), then for --weight
of all viewers (at most 15 %, CloudFront's cap; sessions sticky). Each phase
bakes while the gate reads the staging distribution's 5xxErrorRate and the
function's LambdaExecutionError/LambdaValidationError (AWS/CloudFront,
us-east-1): above a threshold, unreadable, or with fewer requests than the
phase's minimum, the canary is discarded — the staging distribution goes
back to what the primary runs, the primary is never touched — and the
command exits 3. Otherwise the primary takes the canaried version.

Only the edge function version is canaried: distribution settings (origins,
viewer domains) apply to both distributions at once. ` + "`cellctl deploy`" + ` runs the
same canary as its router step; ` + "`cellctl up router`" + ` is the ungated form.
When the router's inputs and deployed outputs are those the last shipped
canary recorded, there is nothing to change: no engine runs.

The canary's record (.cellctl/rollouts/c-….json in the Pulumi backend;
` + "`cellctl rollout list`" + `) is saved before and after every step, and the canary
holds the fleet lock until it is finished: a canary stopped by Ctrl-C or
kill -9 is shown by ` + "`cellctl status`" + ` and ` + "`cellctl health`" + `, refuses every other
change, and the next ` + "`cellctl router canary`" + ` continues it (or finishes its
revert). --discard reverts an unfinished canary to the primary's version;
with no canary in flight it says there is nothing to discard and changes
nothing (no engine run, no record).

--dry-run prints the route the canary would take — a new canary, the
unfinished one continued, or nothing to change — and its phases in order,
each an up of the router stack with its bake; it takes no lock and
changes nothing.`,
		Example: `  cellctl router canary --dry-run
  cellctl router canary
  cellctl router canary --weight 0.10 --weight-bake 30m --max-5xx "<= 0.5%"
  cellctl router canary --discard
  cellctl --cloud sim router canary --bake-scale 0.01`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Cloud = f.Global.Cloud
			var err error
			if o.View, err = render.Pick(f.Global.Output, canaryFormats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return canaryRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&o.Canary.Weight, "weight", routercanary.DefaultWeight, "share of viewers the staging distribution receives in the weighted phase (more than 0, at most 0.15)")
	fl.DurationVar(&o.Canary.HeaderBake, "header-bake", routercanary.DefaultHeaderBake, "bake of the smoke (header) phase")
	fl.DurationVar(&o.Canary.WeightBake, "weight-bake", routercanary.DefaultWeightBake, "bake of the weighted phase")
	fl.DurationVar(&o.Canary.Poll, "poll", routercanary.DefaultPoll, "gate poll interval")
	fl.IntVar(&o.Canary.HeaderMinRequests, "header-min-requests", routercanary.DefaultHeaderMinRequests, "fewest smoke requests the header phase must see (fewer: inconclusive, discarded)")
	fl.IntVar(&o.Canary.WeightMinRequests, "weight-min-requests", routercanary.DefaultWeightMinRequests, "fewest requests the weighted phase must see")
	fl.IntVar(&o.Canary.IdleTTL, "sticky-idle", routercanary.DefaultIdleTTL, "session stickiness idle TTL, seconds (300–3600)")
	fl.IntVar(&o.Canary.MaximumTTL, "sticky-max", routercanary.DefaultMaximumTTL, "session stickiness maximum TTL, seconds (300–3600, at least --sticky-idle)")
	fl.StringVar(&o.Max5xx, "max-5xx", "<= 1%", "the staging distribution's 5xx rate threshold")
	fl.StringVar(&o.MaxErrors, "max-function-errors", "<= 0", "the edge function's error count threshold over a bake")
	fl.BoolVar(&o.Canary.Discard, "discard", false, "only revert the staging distribution to what the primary runs")
	fl.BoolVar(&o.DryRun, "dry-run", false, "print where the canary would start and its phases in order; change nothing")
	cmdutil.BakeScaleVar(fl, &o.BakeScale, "multiply bakes and poll (rehearsals on --cloud sim only)")
	return cmd
}

// Continue runs `cellctl router canary` for `cellctl rollout
// resume|abort` (the composition root passes it: commands do not import
// each other): the unfinished canary continued — the one run that
// continues a canary an operator paused — or, discard, reverted as
// --discard does; with the rehearsal's --bake-scale (0: none).
func Continue(ctx context.Context, f *cmdutil.Factory, discard bool, scale float64) error {
	o := &CanaryOptions{IO: f.IO, Fleet: f.DesiredFleet, Env: f.DeployEnv, Cloud: f.Global.Cloud, BakeScale: scale}
	var err error
	if o.View, err = render.Pick(f.Global.Output, canaryFormats...); err != nil {
		return err
	}
	o.Canary.Resume, o.Canary.Discard = !discard, discard
	return canaryRun(ctx, o)
}

func canaryRun(ctx context.Context, o *CanaryOptions) error {
	if err := o.thresholds(); err != nil {
		return err
	}
	if o.BakeScale != 0 {
		if o.Cloud != cmdutil.CloudSim {
			return fmt.Errorf("--bake-scale is for rehearsals on the simulated cloud (--cloud sim); on %s the canary bakes as its flags say", o.Cloud)
		}
		if !(o.BakeScale > 0 && o.BakeScale <= 1) {
			return fmt.Errorf("--bake-scale %g: allowed is more than 0 and at most 1", o.BakeScale)
		}
		o.Canary = o.Canary.WithDefaults().Scaled(o.BakeScale)
	}
	if err := o.Canary.WithDefaults().Validate(); err != nil {
		return err
	}
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	if fl.Router == nil {
		return fmt.Errorf("%s: the fleet has no router stack (Pulumi.router.yaml)", fl.Dir)
	}
	env, done, err := o.Env(ctx, fl, nil)
	if err != nil {
		return err
	}
	defer done()
	// The canary takes the fleet lock itself as the shared env's holder
	// (Host, PID, Alive), under its record's id (a canary left by a
	// killed run is resumed, its lock taken over once that process is
	// gone); the gates run once it holds the lock.
	rc := &routercanary.Env{Env: env.Env}
	rc.Log = o.IO.ErrLines()
	if env.Prepare != nil {
		rc.Prepare = func(ctx context.Context) error {
			// The apply path's gates over the whole fleet before the
			// first step, exactly as up checks it: a fleet that fails
			// the isolation audit or renumbers a cell is refused.
			var reqs []stackrun.Request
			for _, id := range fl.CellIDs() {
				reqs = append(reqs, stackrun.Request{Stack: id, Op: stackrun.OpPreview})
			}
			reqs = append(reqs, stackrun.Request{Stack: fleet.RouterStack, Op: stackrun.OpUp})
			return env.Prepare(ctx, reqs)
		}
	}
	if o.DryRun {
		// The same gates, then the route the run would take, read
		// without the lock.
		if rc.Prepare != nil {
			if err := rc.Prepare(ctx); err != nil {
				return err
			}
		}
		rt, err := routercanary.Plan(ctx, rc, o.Canary)
		if err != nil {
			return err
		}
		return o.View.Render(o.IO, CanaryReport{Route: rt})
	}
	res, err := routercanary.Run(ctx, rc, o.Canary)
	if res == nil || res.Outcome == "" && len(res.Steps) == 0 {
		return err
	}
	if verr := o.View.Render(o.IO, CanaryReport{Result: res}); verr != nil && err == nil {
		err = verr
	}
	if err == nil && res.Outcome == "" && res.Paused == nil {
		err = fmt.Errorf("router canary %s did not finish (it stopped in its %s phase); run `cellctl router canary` to continue it, or `cellctl router canary --discard`", res.ID, res.Phase)
	}
	return err
}

func (o *CanaryOptions) thresholds() error {
	for _, f := range []struct {
		flag, text string
		name       signal.Name
	}{{"--max-5xx", o.Max5xx, signal.EdgeErrorRate5xx}, {"--max-function-errors", o.MaxErrors, signal.EdgeFunctionErrors}} {
		if f.text == "" {
			continue
		}
		var sig signal.Signal
		for _, s := range signal.Edge {
			if s.Name == f.name {
				sig = s
			}
		}
		th, err := sig.Parse(f.text)
		if err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
		o.Canary.Thresholds.Set(f.name, th)
	}
	return nil
}

// CanaryReport is what `router canary` shows: what the canary did, or the
// dry run's route.
type CanaryReport struct {
	Result *routercanary.Result
	Route  *routercanary.Route
}

var canaryFormats = []render.Format[CanaryReport]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r CanaryReport) error {
		if r.Route != nil {
			_, err := fmt.Fprint(io.Out, describeRoute(r.Route))
			return err
		}
		res := r.Result
		s := render.Out(io)
		var rows [][]string
		for _, st := range res.Steps {
			verdict, reason := "-", ""
			if st.Decision != "" {
				verdict, reason = string(st.Decision), st.Reason
			}
			rows = append(rows, []string{string(st.Phase), verdict, reason})
		}
		if res.ID == "" {
			// Nothing was recorded (nothing to discard).
			fmt.Fprintf(io.Out, "router canary: %s\n", res.Outcome)
		} else {
			fmt.Fprintf(io.Out, "router canary: %s (%s)\n", res.Outcome, res.ID)
		}
		if res.Candidate != "" {
			fmt.Fprintf(io.Out, "primary before: %s\ncandidate:      %s\n", res.Primary, res.Candidate)
		}
		if res.Reason != "" {
			fmt.Fprintf(io.Out, "why:            %s\n", res.Reason)
		}
		if len(rows) > 0 {
			fmt.Fprint(io.Out, s.Table([]string{"PHASE", "VERDICT", "READING"}, rows))
		}
		return nil
	}},
	{Name: render.FormatJSON, Render: func(io *iostreams.IOStreams, r CanaryReport) error {
		if r.Route != nil {
			return render.JSON(io.Out, r.Route)
		}
		return render.JSON(io.Out, r.Result)
	}},
}

// describeRoute is the dry run as text: where the canary starts, then its
// phases in order.
func describeRoute(rt *routercanary.Route) string {
	var b strings.Builder
	start := map[string]string{
		routercanary.StartFresh:            "a new canary of the router's current program",
		routercanary.StartSameFunction:     "the edge function renders as when the version both distributions run was shipped: the router's other changes go to both in one update, nothing to canary",
		routercanary.StartFirstDeploy:      "the router has never served viewers: it is deployed ungated",
		routercanary.StartUnchanged:        "nothing to ship: the router's inputs and deployed outputs are those the last shipped canary recorded; no engine runs",
		routercanary.StartDiscard:          "--discard: the staging distribution is reverted",
		routercanary.StartNothingToDiscard: "--discard: nothing to discard (no canary in flight: the staging distribution runs what the primary runs); no engine runs, no record is written",
		routercanary.StartAgain:            "continuing canary " + rt.Record + ": its smoke phase runs again",
		routercanary.StartJudged:           "continuing canary " + rt.Record + ": its last phase was judged, the canary is discarded",
		routercanary.StartBake:             "continuing canary " + rt.Record + ": its bake goes on",
		routercanary.StartPromote:          "continuing canary " + rt.Record + ": its promotion is finished",
		routercanary.StartFinishRevert:     "continuing canary " + rt.Record + ": its revert is finished",
		routercanary.StartUnknown:          "canary " + rt.Record + " is in a phase this cellctl cannot continue: run `cellctl router canary --discard`",
	}[rt.Start]
	fmt.Fprintf(&b, "router canary (dry run: nothing changes): %s\n", start)
	if rt.Primary != "" {
		fmt.Fprintf(&b, "primary: %s\n", rt.Primary)
	}
	if rt.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", rt.Note)
	}
	for _, p := range rt.Phases {
		line := fmt.Sprintf("  %-10s ", p.Phase)
		if p.Update {
			line += "up " + p.Stack + ": "
		}
		line += p.Does
		if p.Bake > 0 {
			line += fmt.Sprintf("; bake %s, at least %d requests", p.Bake, p.MinRequests)
		}
		b.WriteString(line + "\n")
	}
	if len(rt.Phases) > 1 {
		b.WriteString("a breach, an unreadable gate or too few requests in a bake discards the canary (exit 3)\n")
	}
	return b.String()
}
