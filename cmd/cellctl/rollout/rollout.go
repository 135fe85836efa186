// Package rollout is `cellctl rollout status|list`: the records of the
// gated changes in the Pulumi backend — `cellctl deploy`'s rollouts,
// `cellctl router canary`'s canaries and `cellctl secret rotate`'s
// rotations (one record type).
package rollout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/adapters/backend"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/deployview"
	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

// Records reads rollout records.
type Records interface {
	Load(ctx context.Context, id string) (*executor.Record, error)
	List(ctx context.Context) ([]*executor.Record, error)
}

// Store opens the record store in the backend; done closes it.
type Store func(ctx context.Context) (Records, func(), error)

// ListOptions are the inputs of `cellctl rollout list`.
type ListOptions struct {
	IO    *iostreams.IOStreams
	Store Store
	View  render.View[Listing]
}

// StatusOptions are the inputs of `cellctl rollout status`.
type StatusOptions struct {
	IO    *iostreams.IOStreams
	Store Store
	View  render.View[*executor.Record]
	// ID is the record to show; "": the latest.
	ID string
}

// Listing is what `rollout list` shows: the records that read, newest
// first, and those that do not.
type Listing struct {
	Records    []*executor.Record
	Unreadable []backend.Unreadable
}

var listFormats = []render.Format[Listing]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, l Listing) error {
		rows := [][]string{}
		for _, r := range l.Records {
			rows = append(rows, []string{r.ID, kind(r), string(r.State), stamp(r.Started), stamp(r.Updated), where(r), r.Holder.Host})
		}
		for _, u := range l.Unreadable {
			rows = append(rows, []string{u.ID, "-", "unreadable", "-", "-", "-", "-"})
		}
		_, err := fmt.Fprintln(io.Out, render.Out(io).Table([]string{"ID", "KIND", "STATE", "STARTED", "UPDATED", "AT", "HOST"}, rows))
		return err
	}},
	render.JSONFormat(func(l Listing) any {
		if l.Records == nil {
			return []*executor.Record{}
		}
		return l.Records
	}),
}

var statusFormats = []render.Format[*executor.Record]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r *executor.Record) error {
		writeStatus(io.Out, render.Out(io), r)
		return nil
	}},
	render.JSONFormat(func(r *executor.Record) any { return r }),
}

// NewCmdRollout builds `cellctl rollout` and its subcommands; deploy runs
// the deploys of `rollout resume` and `abort`.
func NewCmdRollout(f *cmdutil.Factory, deploy Deployer) *cobra.Command {
	cmd := &cobra.Command{Use: "rollout", Short: "Show and steer the recorded gated changes: rollouts (deploy), router canaries, secret rotations"}
	cmd.AddCommand(NewCmdStatus(f, nil), NewCmdList(f, nil), NewCmdHistory(f, nil),
		NewCmdPause(f, deploy, nil), NewCmdResume(f, deploy, nil), NewCmdAbort(f, deploy, nil), NewCmdApprove(f, deploy, nil), NewCmdUndo(f, deploy, nil))
	return cmd
}

// NewCmdStatus builds `cellctl rollout status`.
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	o := &StatusOptions{IO: f.IO, Store: storeOf(f)}
	return &cobra.Command{
		Use:               "status [ID]",
		ValidArgsFunction: f.CompleteRecords,
		Short:             "Show one record (default: the latest): a rollout's waves and cells, a canary's phases, a rotation's steps, states, gate readings",
		Args:              cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if o.View, err = render.Pick(f.Global.Output, statusFormats...); err != nil {
				return err
			}
			o.ID = ""
			if len(args) > 0 {
				o.ID = args[0]
			}
			if runF != nil {
				return runF(o)
			}
			return statusRun(c.Context(), o)
		},
	}
}

// NewCmdList builds `cellctl rollout list`.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	o := &ListOptions{IO: f.IO, Store: storeOf(f)}
	return &cobra.Command{
		Use:   "list",
		Short: "List the recorded rollouts, router canaries and rotations, newest first",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			var err error
			if o.View, err = render.Pick(f.Global.Output, listFormats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return listRun(c.Context(), o)
		},
	}
}

func storeOf(f *cmdutil.Factory) Store {
	return func(ctx context.Context) (Records, func(), error) {
		fl, err := f.Fleet()
		if err != nil {
			return nil, nil, err
		}
		// The records live in the engine's backend, whichever it is.
		eng, err := f.Engine(fl, nil)
		if err != nil {
			return nil, nil, err
		}
		rs, err := rollout.Open(ctx, eng.Backend())
		if err != nil {
			return nil, nil, err
		}
		return backend.New(rs), func() { _ = rs.Close() }, nil
	}
}

func listRun(ctx context.Context, o *ListOptions) error {
	s, done, err := o.Store(ctx)
	if err != nil {
		return err
	}
	defer done()
	// A damaged record hides no other: list what reads, then name what
	// does not (and exit 1 for it).
	recs, err := s.List(ctx)
	var bad *backend.UnreadableError
	if err != nil && !errors.As(err, &bad) {
		return err
	}
	l := Listing{Records: recs}
	if bad != nil {
		l.Unreadable = bad.Records
	}
	if verr := o.View.Render(o.IO, l); verr != nil {
		return verr
	}
	return err
}

// statusRun shows one record (the latest when no id is given).
func statusRun(ctx context.Context, o *StatusOptions) error {
	s, done, err := o.Store(ctx)
	if err != nil {
		return err
	}
	defer done()
	var r *executor.Record
	if o.ID != "" {
		if r, err = s.Load(ctx, o.ID); err != nil {
			return err
		}
	} else {
		recs, err := s.List(ctx)
		var bad *backend.UnreadableError
		if err != nil && !errors.As(err, &bad) {
			return err
		}
		if bad != nil {
			// The latest may be the one that does not read: say so
			// rather than present an older rollout as the latest.
			return fmt.Errorf("which rollout is the latest is unknown: %w; name one (`cellctl rollout status ID`, ids in `cellctl rollout list`)", bad)
		}
		if len(recs) == 0 {
			return fmt.Errorf("nothing is recorded in this backend yet (no rollout, router canary or rotation)")
		}
		r = recs[0]
	}
	if err := o.View.Render(o.IO, r); err != nil {
		return err
	}
	// A script asking whether a change shipped reads the exit code: a
	// halted or aborted change did not (3, as deploy's own).
	switch r.State {
	case executor.HaltedState, executor.Aborted:
		return outcome.Halted("", fmt.Errorf("%s %s is %s", kind(r), r.ID, r.State))
	}
	return nil
}

func writeStatus(w io.Writer, s *render.Styles, r *executor.Record) {
	fmt.Fprintf(w, "%s %s: %s (started %s by %s, updated %s)\n", kind(r), r.ID, r.State, stamp(r.Started), r.Holder.Host, stamp(r.Updated))
	if r.Halt != nil {
		fmt.Fprintf(w, "halted: %s\n", r.Halt.String())
	}
	if r.Error != "" {
		fmt.Fprintf(w, "last error: %s\n", r.Error)
	}
	if p := r.Paused; p != nil {
		fmt.Fprintf(w, "paused by %s at %s; it holds the fleet: `cellctl rollout resume %s` continues it, `cellctl rollout abort %s` rolls it back\n", p.By, stamp(p.At), r.ID, r.ID)
	}
	if a := r.Aborted; a != nil {
		fmt.Fprintf(w, "aborted by %s at %s\n", a.By, stamp(a.At))
	}
	if r.Router != "" {
		fmt.Fprintf(w, "router: %s\n", r.Router)
	}
	if c := r.Canary; c != nil {
		writeCanary(w, s, c)
	}
	for _, st := range r.Steps {
		writeStep(w, s, st)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if !r.ShipsCells() {
		return
	}
	for _, wr := range r.Waves {
		fmt.Fprintf(w, "\n%s  %s, %d poll(s)\n", s.Bold(wr.Name), wr.State, len(wr.Polls))
		if a := wr.Approval; a != nil {
			fmt.Fprintf(w, "  approved by %s at %s\n", a.By, stamp(a.At))
		} else if wr.State == executor.WaveWaiting {
			fmt.Fprintf(w, "  %s\n", s.Warn(fmt.Sprintf("waits for an approval: `cellctl rollout approve %s`", r.ID)))
		}
		for _, c := range wr.Cells {
			before, after := "-", "-"
			if c.Before != nil {
				before = c.Before.Image
			}
			if c.After.Image != "" {
				after = c.After.Image
			}
			fmt.Fprintf(w, "  %s  %s  %s → %s\n", c.Cell, c.State, before, after)
			writeMigration(w, s, "migration", c.Migration)
			writeMigration(w, s, "rollback migration", c.RollbackMigration)
		}
		if wr.Breach != nil {
			fmt.Fprintf(w, "  breach: %s\n", wr.Breach.String())
		}
		if sc := wr.SchemaCheck; sc != nil {
			writeStep(w, s, *sc)
		}
		if n := len(wr.Polls); n > 0 {
			fmt.Fprintf(w, "  last poll: %s\n", lastPoll(wr.Polls[n-1]))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, deployview.Table(s, executor.Summarize(r, nil)))
}

// writeMigration shows a cell's migration task: its image and command,
// how it ended, and its last log line.
func writeMigration(w io.Writer, s *render.Styles, what string, m *executor.Migration) {
	if m == nil {
		return
	}
	if !m.OK() {
		// Failure names the task and its last log line itself.
		fmt.Fprintf(w, "    %s (%s, %s): %s\n", what, m.Image, strings.Join(m.Command, " "), s.Bad(m.Failure()))
		return
	}
	state := s.Good("exited 0")
	if m.SchemaVersion != "" {
		state += ", schema version " + m.SchemaVersion
	}
	fmt.Fprintf(w, "    %s: task %s (%s, %s): %s\n", what, orDash(m.TaskID()), m.Image, strings.Join(m.Command, " "), state)
	if l := m.LastLine(); l != "" {
		fmt.Fprintf(w, "      last log line: %s\n", l)
	}
}

// writeCanary shows a router canary: where it stands and its phases.
func writeCanary(w io.Writer, s *render.Styles, c *executor.CanaryRecord) {
	state := c.Outcome
	if state == "" {
		state = s.Warn("unfinished, " + c.Phase + " phase")
		if !c.PhaseSince.IsZero() {
			state += " since " + stamp(c.PhaseSince)
		}
	}
	fmt.Fprintf(w, "router canary: %s\n", state)
	if c.Reason != "" {
		fmt.Fprintf(w, "  why: %s\n", c.Reason)
	}
	if c.Primary != "" {
		fmt.Fprintf(w, "  primary %s (table %s), candidate %s (table %s), weight %g%%\n",
			c.Primary, version(c.PrimaryTable), orDash(c.Candidate), version(c.CandidateTable), 100*c.Weight)
	}
	for _, p := range c.Phases {
		writeStep(w, s, p)
	}
}

// writeStep shows one gated step (a rotation's, a canary's phase).
func writeStep(w io.Writer, s *render.Styles, st executor.StepRecord) {
	line := fmt.Sprintf("  %-18s %s, %d poll(s)", st.Name, st.State, len(st.Polls))
	if st.Decision != "" {
		line += ", " + string(st.Decision)
	}
	fmt.Fprintln(w, line)
	if st.Breach != nil {
		fmt.Fprintf(w, "    breach: %s\n", st.Breach.String())
	} else if st.Reason != "" {
		fmt.Fprintf(w, "    %s\n", st.Reason)
	}
	if st.Error != "" {
		fmt.Fprintf(w, "    error: %s\n", st.Error)
	}
	if n := len(st.Polls); n > 0 {
		fmt.Fprintf(w, "    last poll: %s\n", lastPoll(st.Polls[n-1]))
	}
}

func kind(r *executor.Record) string {
	switch r.Kind {
	case executor.KindCanary:
		return "router canary"
	case executor.KindRotation:
		return "rotation"
	case executor.KindCellAdd:
		return "cell add"
	}
	return "rollout"
}

func version(v int64) string {
	if v <= 0 {
		return "unknown"
	}
	return fmt.Sprint(v)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func lastPoll(p executor.Poll) string {
	var parts []string
	for _, v := range p.Verdicts {
		var rs []string
		for _, rd := range v.Readings {
			rs = append(rs, rd.Signal+" "+rd.Value)
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", v.Cell, v.Decision, strings.Join(rs, ", ")))
	}
	return strings.Join(parts, "; ")
}

// where is where a record stands: the first wave or step not passed, a
// canary's phase.
func where(r *executor.Record) string {
	for _, w := range r.Waves {
		if w.State != executor.WaveDone && w.State != executor.WaveUnchanged {
			return w.Name
		}
	}
	for _, st := range r.Steps {
		if st.State != executor.WaveDone {
			return st.Name
		}
	}
	if c := r.Canary; c.Unfinished() {
		return "router canary: " + c.Phase
	}
	return "-"
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
