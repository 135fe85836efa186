package rollout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

// Steering is what the steering commands need of the record store: the
// records, and the operators' requests beside them.
type Steering interface {
	Records
	executor.Requests
}

// SteerStore opens the store the steering commands use; done closes it.
type SteerStore func(ctx context.Context) (Steering, func(), error)

// SteerOptions are the inputs of `cellctl rollout pause|resume|abort|approve`.
type SteerOptions struct {
	IO    *iostreams.IOStreams
	Store SteerStore
	View  render.View[Steered]
	// Deploy runs the deploy that resumes or aborts a rollout no process
	// is running (cmd/cellctl/deploy.Run with ID and Resume or Abort).
	Deploy Deployer

	ID        string
	Wave      string
	By        string
	BakeScale float64
	Now       func() time.Time
	// Live reports whether a record's run is alive (a process drives it);
	// default: liveRun.
	Live func(*executor.Record) bool
}

// Steered is what a steering command did.
type Steered struct {
	ID     string `json:"id"`
	Action string `json:"action"`
	// Requested: the request was left for the run driving the rollout
	// (it takes effect at its next step); false: this command ran it.
	Requested bool   `json:"requested"`
	Wave      string `json:"wave,omitempty"`
	By        string `json:"by"`
	At        string `json:"at"`
	Message   string `json:"message"`
}

var steerFormats = []render.Format[Steered]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, s Steered) error {
		_, err := fmt.Fprintln(io.Out, s.Message)
		return err
	}},
	render.JSONFormat(func(s Steered) any { return s }),
}

func newCmdSteer(f *cmdutil.Factory, deploy Deployer, runF func(*SteerOptions) error, use, short, long, example string,
	run func(context.Context, *SteerOptions) error, wave bool) *cobra.Command {
	o := &SteerOptions{IO: f.IO, Store: steerStoreOf(f), Deploy: deploy}
	cmd := &cobra.Command{
		Use:               use + " ID",
		Short:             short,
		Long:              long,
		Example:           example,
		ValidArgsFunction: f.CompleteRecords,
		Args:              cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if o.View, err = render.Pick(f.Global.Output, steerFormats...); err != nil {
				return err
			}
			o.ID = args[0]
			if runF != nil {
				return runF(o)
			}
			return run(c.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.By, "by", "", "who steers, as recorded (default: user@host; CI passes its actor)")
	if wave {
		cmd.Flags().StringVar(&o.Wave, "wave", "", "the wave to approve (default: the one waiting)")
	}
	if use == "resume" || use == "abort" {
		cmdutil.BakeScaleVar(cmd.Flags(), &o.BakeScale, "the --bake-scale to run it with (default: the one it started with, as its record says; rehearsals on --cloud sim only)")
	}
	return cmd
}

// NewCmdPause builds `cellctl rollout pause`.
func NewCmdPause(f *cmdutil.Factory, deploy Deployer, runF func(*SteerOptions) error) *cobra.Command {
	return newCmdSteer(f, deploy, runF, "pause", "Pause a rollout at its next step; it keeps the fleet until resumed or aborted",
		`Ask a rollout to pause. The run driving it finishes the step under way (a
cell's update; a bake stops at its next poll and keeps the time left) and
stops; the rollout keeps the fleet's lock, and every other run of it — CI's
next deploy job included — is refused (exit 4) naming who paused it, until
`+"`cellctl rollout resume ID`"+`. With no run driving it, the next run stops at once.
A router canary (c-…) or a secret rotation (s-…) pauses the same way, at
its next step boundary.`,
		"  cellctl rollout pause r-0123456789ab", pauseRun, false)
}

// NewCmdResume builds `cellctl rollout resume`.
func NewCmdResume(f *cmdutil.Factory, deploy Deployer, runF func(*SteerOptions) error) *cobra.Command {
	return newCmdSteer(f, deploy, runF, "resume", "Continue a paused, stopped or waiting rollout from its record",
		`Continue a rollout from its record: the deploy that started it, with its image,
from where it stopped (a paused bake bakes what was left). It is the one way
to continue a rollout an operator paused. waves.yaml and the stack files must
still describe the same rollout (otherwise it is refused: another rollout).
A router canary (c-…) or a secret rotation (s-…) is continued as
`+"`cellctl router canary`"+` or `+"`cellctl secret rotate`"+` would.`,
		"  cellctl rollout resume r-0123456789ab", resumeRun, false)
}

// NewCmdAbort builds `cellctl rollout abort`.
func NewCmdAbort(f *cmdutil.Factory, deploy Deployer, runF func(*SteerOptions) error) *cobra.Command {
	return newCmdSteer(f, deploy, runF, "abort", "Roll back every wave a rollout changed, last first, and release the fleet",
		`Abort a rollout: every wave its record says changed a cell is rolled back, last
wave first, each cell to the configuration it ran before the rollout (its
rollback migration first), and the fleet is released. A rollout a process is
driving is asked to abort and does it at its next step; one no process drives
(paused, stopped, waiting) is rolled back by this command. A run killed
mid-abort is finished by the next `+"`cellctl rollout abort ID`"+`. Rerunning the
aborted deploy is refused; `+"`deploy --retry`"+` starts it again. A router canary
(c-…) is reverted as `+"`cellctl router canary --discard`"+` does; a secret rotation
cannot be rolled back (it only goes forward) and is refused.`,
		"  cellctl rollout abort r-0123456789ab", abortRun, false)
}

// NewCmdApprove builds `cellctl rollout approve`.
func NewCmdApprove(f *cmdutil.Factory, deploy Deployer, runF func(*SteerOptions) error) *cobra.Command {
	return newCmdSteer(f, deploy, runF, "approve", "Approve the wave a rollout waits on (approve: true in waves.yaml)",
		`Approve a wave that waits for an approval (approve: true on the wave in
waves.yaml, or on a stage). The run waiting on it records who approved and
when, and goes on; if no run is waiting, `+"`cellctl rollout resume ID`"+` goes on.
From a terminal or CI's promote job (--by names the approver).`,
		"  cellctl rollout approve r-0123456789ab --wave prod --by \"$GITHUB_ACTOR\"", approveRun, true)
}

func steerStoreOf(f *cmdutil.Factory) SteerStore {
	open := storeOf(f)
	return func(ctx context.Context) (Steering, func(), error) {
		rs, done, err := open(ctx)
		if err != nil {
			return nil, nil, err
		}
		s, ok := rs.(Steering)
		if !ok {
			done()
			return nil, nil, errors.New("this backend's record store keeps no requests")
		}
		return s, done, nil
	}
}

// Deployer runs the deploy that resumes or aborts a rollout: `cellctl
// deploy` with the rollout's id and image, and Resume or Abort set. The
// composition root passes cmd/cellctl/deploy's (commands do not import
// each other).
type Deployer func(ctx context.Context, d DeployRequest) error

// DeployRequest is the deploy a rollout command runs — or, Kind a router
// canary or a secret rotation, the command that continues that change:
// `cellctl router canary` (Abort: its --discard), `cellctl secret rotate`.
type DeployRequest struct {
	// Kind is the record's ("": a rollout's deploy).
	Kind executor.Kind
	// ID and Image are the rollout's (resume, abort).
	ID, Image string
	Resume    bool
	Abort     *executor.Ask
	// UndoTo names the rollout an undo ships ("": the one before the
	// latest completed rollout).
	Undo   bool
	UndoTo string
	// BakeScale is the rehearsal's --bake-scale (0: none): a rollout
	// started scaled continues scaled (its id says so).
	BakeScale float64
	DryRun    bool
}

// scale is the --bake-scale to run the rollout's deploy with: the flag's,
// or the one the rollout recorded it started with.
func (o *SteerOptions) scale(r *executor.Record) float64 {
	if o.BakeScale != 0 {
		return o.BakeScale
	}
	return r.BakeScale
}

// ask is who steers, and when.
func (o *SteerOptions) ask() executor.Ask {
	by := o.By
	if by == "" {
		by = "unknown"
		if u, err := user.Current(); err == nil {
			by = u.Username
		}
		if h, err := os.Hostname(); err == nil {
			by += "@" + h
		}
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return executor.Ask{By: by, At: now().UTC()}
}

// live reports whether a process drives the record now: it says it runs
// (or waits for an approval), and its holder is not known to be gone.
func (o *SteerOptions) live(r *executor.Record) bool {
	if o.Live != nil {
		return o.Live(r)
	}
	return (r.State == executor.Running || r.State == executor.Waiting) && !r.Holder.GoneFromThisHost()
}

// steerable loads a rollout's record and checks it can be steered.
func steerable(ctx context.Context, s Steering, id, verb string) (*executor.Record, error) {
	r, err := s.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Kind == executor.KindCellAdd:
		return nil, fmt.Errorf("%s is a cell add: it has nothing to %s", id, verb)
	case verb == "approve" && !r.IsRollout():
		return nil, fmt.Errorf("%s is a %s: it has no waves waiting for an approval (approve: true is a rollout's)", id, noun(r))
	case verb == "abort" && r.Kind == executor.KindRotation:
		// A rotation has no way back (originsecret): its accept steps
		// are undone only by its drop steps, and once the router sends
		// the next value the old one is dropped from the cells. It never
		// refuses a request at any step, so stopped is safe as it stands.
		return nil, fmt.Errorf("%s is a secret rotation: it cannot be rolled back (a rotation only goes forward: the router may already send the next value, and cells may have dropped the old one), "+
			"and it refuses no request at any step, so it is safe where it stands; `cellctl rollout pause %s` holds it, `cellctl rollout resume %s` finishes it", id, id, id)
	}
	if !r.Unfinished() {
		next := "ship another rollout"
		switch {
		case r.Kind == executor.KindCanary:
			next = "`cellctl router canary` starts another"
		case r.Kind == executor.KindRotation:
			next = "`cellctl secret rotate` starts another"
		case r.State == executor.Complete:
			next = "`cellctl rollout undo` ships the rollout before it"
		}
		return nil, fmt.Errorf("%s %s is %s: nothing to %s (%s)", noun(r), id, r.State, verb, next)
	}
	return r, nil
}

// noun is what a steered record is called.
func noun(r *executor.Record) string {
	switch r.Kind {
	case executor.KindCanary:
		return "router canary"
	case executor.KindRotation:
		return "secret rotation"
	}
	return "rollout"
}

func pauseRun(ctx context.Context, o *SteerOptions) error {
	s, done, err := o.Store(ctx)
	if err != nil {
		return err
	}
	defer done()
	r, err := steerable(ctx, s, o.ID, "pause")
	if err != nil {
		return err
	}
	if r.Paused != nil {
		return fmt.Errorf("%s %s is already paused (by %s at %s); `cellctl rollout resume %s` continues it", noun(r), o.ID, r.Paused.By, stamp(r.Paused.At), o.ID)
	}
	a := o.ask()
	if err := s.Ask(ctx, o.ID, func(q *executor.Request) { q.Pause = &a }); err != nil {
		return err
	}
	msg := fmt.Sprintf("asked %s %s to pause: the run driving it stops after the step under way and keeps the fleet; `cellctl rollout status %s` shows it paused, `cellctl rollout resume %s` continues it", noun(r), o.ID, o.ID, o.ID)
	if !o.live(r) {
		msg = fmt.Sprintf("%s %s is %s with no run driving it: its next run stops at once and keeps the fleet, paused; `cellctl rollout resume %s` is the one that continues it", noun(r), o.ID, r.State, o.ID)
	}
	return o.View.Render(o.IO, Steered{ID: o.ID, Action: "pause", Requested: true, By: a.By, At: stamp(a.At), Message: msg})
}

func approveRun(ctx context.Context, o *SteerOptions) error {
	s, done, err := o.Store(ctx)
	if err != nil {
		return err
	}
	defer done()
	r, err := steerable(ctx, s, o.ID, "approve")
	if err != nil {
		return err
	}
	wave := o.Wave
	var waiting []string
	for _, w := range r.Waves {
		if w.State == executor.WaveWaiting {
			waiting = append(waiting, w.Name)
		}
	}
	switch {
	case wave == "" && len(waiting) == 0:
		return fmt.Errorf("rollout %s has no wave waiting for an approval (it is %s); name one with --wave to approve it ahead", o.ID, r.State)
	case wave == "":
		wave = waiting[0]
	default:
		found := false
		for _, w := range r.Waves {
			if w.Name == wave {
				found = true
				if w.Approval != nil {
					return fmt.Errorf("wave %s of rollout %s was approved by %s at %s already", wave, o.ID, w.Approval.By, stamp(w.Approval.At))
				}
			}
		}
		if !found {
			return fmt.Errorf("rollout %s has no wave %q (waves: %s)", o.ID, wave, waveNames(r))
		}
	}
	a := o.ask()
	if err := s.Ask(ctx, o.ID, func(q *executor.Request) {
		if q.Approve == nil {
			q.Approve = map[string]executor.Ask{}
		}
		q.Approve[wave] = a
	}); err != nil {
		return err
	}
	msg := fmt.Sprintf("approved wave %s of rollout %s: the run waiting on it goes on at its next look", wave, o.ID)
	if !o.live(r) {
		msg = fmt.Sprintf("approved wave %s of rollout %s; no run is waiting on it: `cellctl rollout resume %s` goes on", wave, o.ID, o.ID)
	}
	return o.View.Render(o.IO, Steered{ID: o.ID, Action: "approve", Requested: true, Wave: wave, By: a.By, At: stamp(a.At), Message: msg})
}

func resumeRun(ctx context.Context, o *SteerOptions) error {
	s, done, err := o.Store(ctx)
	if err != nil {
		return err
	}
	r, err := steerable(ctx, s, o.ID, "resume")
	done()
	if err != nil {
		return err
	}
	if o.live(r) {
		return fmt.Errorf("%s %s is %s: a run drives it (%s); nothing to resume", noun(r), o.ID, r.State, r.Holder)
	}
	return o.Deploy(ctx, DeployRequest{Kind: kindOf(r), ID: o.ID, Image: r.Image(), Resume: true, BakeScale: o.scale(r)})
}

func abortRun(ctx context.Context, o *SteerOptions) error {
	s, done, err := o.Store(ctx)
	if err != nil {
		return err
	}
	r, err := steerable(ctx, s, o.ID, "abort")
	if err != nil {
		done()
		return err
	}
	a := o.ask()
	if o.live(r) && r.Kind == executor.KindCanary {
		// A canary's run honours a pause, not an abort: the discard runs
		// once it stopped.
		done()
		return fmt.Errorf("router canary %s is %s: a run drives it (%s); `cellctl rollout pause %s` stops it at its next step, then `cellctl rollout abort %s` reverts it", o.ID, r.State, r.Holder, o.ID, o.ID)
	}
	if o.live(r) {
		err := s.Ask(ctx, o.ID, func(q *executor.Request) { q.Abort = &a })
		done()
		if err != nil {
			return err
		}
		return o.View.Render(o.IO, Steered{ID: o.ID, Action: "abort", Requested: true, By: a.By, At: stamp(a.At),
			Message: fmt.Sprintf("asked rollout %s to abort: the run driving it (%s) rolls back every wave it changed, last first, at its next step; `cellctl rollout status %s` shows it", o.ID, r.Holder, o.ID)})
	}
	done()
	err = o.Deploy(ctx, DeployRequest{Kind: kindOf(r), ID: o.ID, Image: r.Image(), Abort: &a, BakeScale: o.scale(r)})
	if errors.As(err, new(*executor.AbortedError)) {
		// The deploy exits 3 for a rollout that did not ship; for this
		// command the abort is what was asked, and it is done (the
		// deploy's report shows the record, aborted).
		return nil
	}
	return err
}

// kindOf is the kind a steering command passes on ("": a rollout).
func kindOf(r *executor.Record) executor.Kind {
	if r.IsRollout() {
		return ""
	}
	return r.Kind
}

func waveNames(r *executor.Record) string {
	out := ""
	for i, w := range r.Waves {
		if i > 0 {
			out += ", "
		}
		out += w.Name
	}
	return out
}

// UndoOptions are the inputs of `cellctl rollout undo`.
type UndoOptions struct {
	Deploy Deployer
	// To names the completed rollout whose images ship ("": the one
	// before the latest completed rollout).
	To        string
	BakeScale float64
	DryRun    bool
}

// NewCmdUndo builds `cellctl rollout undo`.
func NewCmdUndo(f *cmdutil.Factory, deploy Deployer, runF func(*UndoOptions) error) *cobra.Command {
	o := &UndoOptions{Deploy: deploy}
	cmd := &cobra.Command{
		Use:   "undo",
		Short: "Ship again the images of the rollout before the latest completed one, through the waves",
		Long: `Ship again what an earlier rollout shipped: the images of the completed rollout
before the latest completed one (--to ID names another), per cell, as a
rollout through the waves, with their bakes and gates (what ships names a
rollout: that rollout's record runs anew, its earlier run kept in each
wave's history) — the same as
` + "`cellctl deploy --to-previous`" + `. Undo ships images: a rollout whose other
settings differ from what the repository says now is refused, naming them
(revert those in the repository and deploy).`,
		Example: "  cellctl rollout undo --dry-run",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return o.Deploy(c.Context(), DeployRequest{Undo: true, UndoTo: o.To, BakeScale: o.BakeScale, DryRun: o.DryRun})
		},
	}
	cmd.Flags().StringVar(&o.To, "to", "", "the completed rollout whose images ship (default: the one before the latest)")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print per wave what the undo changes, as deploy --dry-run does; change nothing")
	cmdutil.BakeScaleVar(cmd.Flags(), &o.BakeScale, "multiply every bake, poll and stage delay (rehearsals on --cloud sim only)")
	return cmd
}
