package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cellctl/cellctl/waves"
)

// SignalMigration: the cell's schema migration failed (a non-zero exit, a
// task that never started, a timeout, or a migration that could not be
// run at all). It is a failed update of that cell.
const SignalMigration = "migration"

// Migrator runs a cell's schema migration as a one-off task, inside the
// wave: before the cell's service moves to the new configuration (from the
// new image), and on a rollback (the rollback command, from the old image)
// before the service returns. The executor never interprets a
// configuration's settings: the Migrator says from them whether a change
// migrates, and how. It is optional on the Executor (nil: no cell
// migrates).
type Migrator interface {
	// Plan says what migration the change runs (a zero plan: none). It
	// reads nothing from the cloud: the dry run lists it.
	Plan(req MigrationRequest) MigrationPlan
	// Migrate runs the planned migration and waits for its task to stop.
	// A task that ran and exited non-zero is not an error: the Migration
	// says so (OK false). An error says the migration could not be run
	// or watched to its end; the Migration then holds what is known (the
	// task, when one was started). started, when a task has been started,
	// is called with its id before Migrate waits for it, so the record
	// names the task even if this run dies while it runs.
	Migrate(ctx context.Context, req MigrationRequest, started func(task string)) (Migration, error)
}

// Resumer is a Migrator that follows a task an earlier run started and
// never saw stop (Migration.Unfinished: that run was killed, or stopped
// waiting at the operator's first Ctrl-C) to its end, reading its result
// as Migrate would have; its timeout counts from running.Started. It is
// what keeps a rerun from starting a second migration on a database while
// the first still runs: with a Migrator that cannot resume, a rerun that
// finds such a task fails that cell's migration instead of running one.
type Resumer interface {
	Resume(ctx context.Context, req MigrationRequest, running Migration) (Migration, error)
}

// MigrationRequest is one cell's migration: the change from From to To.
// A forward migration runs To's image; a rollback (Rollback true) runs the
// rollback command with To's image — the configuration the cell returns
// to — after From's migration ran.
type MigrationRequest struct {
	Cell     string
	From, To CellConfig
	Rollback bool
	// Token is the idempotency token of the task's start (ECS RunTask's
	// clientToken), recorded before Migrate is called: given a token
	// again — a run died between starting the task and recording it — a
	// Migrator returns the task that token started instead of starting
	// another. "": the Migrator's own per-call token.
	Token string
	// Detach, when closed (the operator's first Ctrl-C), asks Migrate and
	// Resume to stop waiting for the task and leave it running: they
	// return the Migration naming the task and an error wrapping
	// ErrStopped, and a later run follows the task (Resumer). Plan
	// ignores it; nil: never.
	Detach <-chan struct{}
}

// MigrationPlan is what a migration runs; a zero plan: nothing.
type MigrationPlan struct {
	Image   string        `json:"image"`
	Command []string      `json:"command"`
	Timeout time.Duration `json:"timeout,omitempty"`
}

// None reports whether the plan runs nothing.
func (p MigrationPlan) None() bool { return len(p.Command) == 0 }

func (p MigrationPlan) String() string {
	s := fmt.Sprintf("%s (image %s)", strings.Join(p.Command, " "), p.Image)
	if p.Timeout > 0 {
		s += fmt.Sprintf(", timeout %s", p.Timeout)
	}
	return s
}

// Migration is one migration task as it ran, kept in the cell's record:
// the task, its exit code and the last lines of its log, and the schema
// version the task reported (its last `schema_version=<v>` line).
type Migration struct {
	Image   string   `json:"image"`
	Command []string `json:"command,omitempty"`
	// Token is the idempotency token its start was asked with, recorded
	// before the start (MigrationRequest.Token).
	Token string `json:"token,omitempty"`
	// Task is the task's ARN; TaskDefinition the revision it ran.
	Task           string `json:"task,omitempty"`
	TaskDefinition string `json:"taskDefinition,omitempty"`
	// ExitCode is the migration container's (nil: it never exited with a
	// code — it did not start, or was stopped).
	ExitCode      *int   `json:"exitCode,omitempty"`
	StopCode      string `json:"stopCode,omitempty"`
	StoppedReason string `json:"stoppedReason,omitempty"`
	// LastLines are the last lines of the task's log stream, oldest first.
	LastLines     []string `json:"lastLines,omitempty"`
	SchemaVersion string   `json:"schemaVersion,omitempty"`
	// TimedOut: cellctl stopped the task after its timeout.
	TimedOut bool      `json:"timedOut,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	Stopped  time.Time `json:"stopped,omitzero"`
	// Error is why cellctl could not run or watch the task.
	Error string `json:"error,omitempty"`
}

// Unfinished reports whether the migration's task was started and never
// seen to stop: the run that started it died or stopped waiting, so the
// task may still run. A rerun follows it (Resumer) before anything else
// runs on the cell's database.
func (m *Migration) Unfinished() bool {
	// An exit code, a stop code or a timeout says it stopped, whatever
	// Stopped says (a record an older cellctl or another verb wrote).
	return m != nil && m.Task != "" && m.Stopped.IsZero() && m.ExitCode == nil && m.StopCode == "" && !m.TimedOut
}

// Starting reports whether the migration's start was asked for (its token
// recorded) and its task never recorded: the run died in between, so a
// task may run that the record does not name. A rerun starts it with the
// same token, which gets that task back if there is one.
func (m *Migration) Starting() bool {
	return m != nil && m.Token != "" && m.Task == "" && m.Stopped.IsZero()
}

// NeverRan reports whether the migration's task is known never to have
// reached the database: ECS stopped it before its container started
// (stop code TaskFailedToStart, no exit code: "Stopped tasks errors",
// Amazon ECS Developer Guide), so the schema is as it was.
func (m *Migration) NeverRan() bool {
	return m != nil && m.ExitCode == nil && m.StopCode == "TaskFailedToStart"
}

// OK reports whether the migration ran to a zero exit.
func (m *Migration) OK() bool {
	return m != nil && m.Error == "" && !m.TimedOut && m.ExitCode != nil && *m.ExitCode == 0
}

// LastLine is the last line of the task's log ("" when none was read).
func (m *Migration) LastLine() string {
	if m == nil || len(m.LastLines) == 0 {
		return ""
	}
	return m.LastLines[len(m.LastLines)-1]
}

// TaskID is the last part of the task's ARN (what the console shows).
func (m *Migration) TaskID() string {
	if m == nil {
		return ""
	}
	return m.Task[strings.LastIndex(m.Task, "/")+1:]
}

// Failure says how a migration that is not OK failed, naming the task and
// its last log line.
func (m *Migration) Failure() string {
	if m == nil {
		return "no migration ran"
	}
	task := "the migration task"
	if m.Task != "" {
		task = "migration task " + m.TaskID()
	}
	var what string
	switch {
	case m.Error != "" && m.Task == "":
		what = "could not start: " + m.Error
	case m.Error != "":
		what = task + ": " + m.Error
	case m.TimedOut:
		what = task + " timed out and was stopped"
	case m.Unfinished():
		what = task + " was never seen to end (it may still run; rerunning the deploy follows it to its end)"
	case m.ExitCode != nil:
		what = fmt.Sprintf("%s exited %d", task, *m.ExitCode)
	default:
		what = task + " stopped without an exit code"
		if m.StopCode != "" {
			what += " (" + m.StopCode + ")"
		}
		if m.StoppedReason != "" {
			what += ": " + m.StoppedReason
		}
	}
	if l := m.LastLine(); l != "" {
		what += "; last log line: " + l
	}
	return what
}

// migrate runs the cell's forward migration before its update. It reports
// false when the migration failed (the cell's update failed: recorded)
// and when ctx ended while it ran (the cell is left to a rerun).
func (r *run) migrate(ctx context.Context, w Wave, wr *WaveRecord, cell string) bool {
	if r.ex.Migrator == nil {
		return true
	}
	r.j.mu.Lock()
	cr := wr.cell(cell)
	req := MigrationRequest{Cell: cell, To: cr.After.Clone()}
	if cr.Before != nil {
		req.From = cr.Before.Clone()
	}
	done := cr.Migration
	r.j.mu.Unlock()
	p := r.ex.Migrator.Plan(req)
	if p.None() {
		return true
	}
	keep := func(m *Migration) {
		r.j.mu.Lock()
		wr.cell(cell).Migration = m
		r.j.mu.Unlock()
	}
	fail := func(why string) bool {
		r.setCell(wr, cell, CellStateFailed, "migration failed: "+why)
		r.emit(Event{Kind: CellFailed, Wave: w.Name, Cell: cell, Message: why})
		_ = r.save(ctx)
		return false
	}
	if done.Unfinished() {
		// An earlier run started this cell's migration and never saw it
		// end: its task may still run, so it is followed, never doubled.
		m, stands, err := r.follow(ctx, w.Name, req, done, keep, r.save)
		switch {
		case ctx.Err() != nil:
			return false
		case errors.Is(err, ErrStopped):
			r.emit(Event{Kind: Note, Wave: w.Name, Cell: cell, Message: detachedMessage(cell, m)})
			return false
		case err != nil:
			return fail(err.Error())
		case stands && m.Image == p.Image && slices.Equal(m.Command, p.Command):
			if !m.OK() {
				return fail(m.Failure())
			}
			r.emit(Event{Kind: CellMigrated, Wave: w.Name, Cell: cell, Message: migratedMessage(cell, m) + " (the task an earlier run started)"})
			return true
		}
		// cellctl had given up on that task (and stopped it); it has
		// stopped now, so the migration runs again.
		done = m
	}
	if done.OK() && done.Image == p.Image && slices.Equal(done.Command, p.Command) {
		// A rerun after the migration passed and the update did not
		// finish: the schema is there, the service update is what is left.
		r.emit(Event{Kind: Note, Wave: w.Name, Cell: cell, Message: fmt.Sprintf("cell %s: its migration passed in an earlier run (task %s): not run again", cell, done.TaskID())})
		return true
	}
	if r.stopped() {
		// The operator asked to stop before this task started: none
		// starts (a rerun migrates the cell).
		return false
	}
	if done.Starting() && done.Image == p.Image && slices.Equal(done.Command, p.Command) {
		// The last run asked for the start and died before it learnt
		// the task: the same token gets that task back, if it started.
		req.Token = done.Token
	}
	r.emit(Event{Kind: CellMigrating, Wave: w.Name, Cell: cell, Message: fmt.Sprintf("cell %s: migrating: %s", cell, p)})
	m, err := r.runMigration(ctx, req, p, keep, r.save)
	if ctx.Err() != nil {
		return false
	}
	if errors.Is(err, ErrStopped) {
		r.emit(Event{Kind: Note, Wave: w.Name, Cell: cell, Message: detachedMessage(cell, m)})
		return false
	}
	if !m.OK() {
		return fail(m.Failure())
	}
	r.emit(Event{Kind: CellMigrated, Wave: w.Name, Cell: cell, Message: migratedMessage(cell, m)})
	return true
}

// rollbackMigration runs the cell's rollback command (from the image it
// returns to) when its forward migration ran, after that forward task has
// ended: never two tasks on one database. A rollback task an earlier run
// started and never saw end is followed instead of run again. It returns
// the failure to report ("" when it passed or nothing was to run), and
// ErrStopped when it stopped waiting for a task at the operator's request
// (the task runs on; a rerun follows it). save keeps the record that
// holds wr: this rollout's, or another's that settle finishes.
func (r *run) rollbackMigration(ctx context.Context, wave string, wr *WaveRecord, cell string, save func(context.Context) error) (string, error) {
	if r.ex.Migrator == nil {
		return "", nil
	}
	r.j.mu.Lock()
	cr := wr.cell(cell)
	fwd := cr.Migration
	fwdReq := MigrationRequest{Cell: cell, To: cr.After.Clone()}
	req := MigrationRequest{Cell: cell, From: cr.After.Clone(), Rollback: true}
	if cr.Before != nil {
		fwdReq.From = cr.Before.Clone()
		req.To = cr.Before.Clone()
	}
	done := cr.RollbackMigration
	r.j.mu.Unlock()
	if fwd.Unfinished() {
		r.emit(Event{Kind: Note, Wave: wave, Cell: cell, Message: fmt.Sprintf("cell %s: its migration task %s may still run: waiting for it to end before the rollback touches the database", cell, fwd.TaskID())})
		m, _, err := r.follow(ctx, wave, fwdReq, fwd, func(m *Migration) {
			r.j.mu.Lock()
			wr.cell(cell).Migration = m
			r.j.mu.Unlock()
		}, save)
		if errors.Is(err, ErrStopped) {
			r.emit(Event{Kind: Note, Wave: wave, Cell: cell, Message: detachedMessage(cell, m)})
			return "", err
		}
		if err != nil {
			return fmt.Sprintf("no rollback migration ran: its migration task %s could not be followed to its end (%v)", fwd.TaskID(), err), nil
		}
		fwd = m
	}
	ran := fwd != nil && (fwd.Task != "" || fwd.Error != "")
	if !ran || req.To.Image == "" {
		return "", nil
	}
	p := r.ex.Migrator.Plan(req)
	if p.None() || done.OK() {
		return "", nil
	}
	keep := func(m *Migration) {
		r.j.mu.Lock()
		wr.cell(cell).RollbackMigration = m
		r.j.mu.Unlock()
	}
	if done.Unfinished() {
		m, stands, err := r.follow(ctx, wave, req, done, keep, save)
		switch {
		case errors.Is(err, ErrStopped):
			r.emit(Event{Kind: Note, Wave: wave, Cell: cell, Message: detachedMessage(cell, m)})
			return "", err
		case err != nil:
			return "rollback migration failed: " + err.Error(), nil
		case m.OK():
			r.emit(Event{Kind: CellMigrated, Wave: wave, Cell: cell, Message: migratedMessage(cell, m) + " (the rollback task an earlier run started)"})
			return "", nil
		case stands:
			return "rollback migration failed: " + m.Failure(), nil
		}
		// Stopped by cellctl before it ended: it runs again.
	}
	if r.stopped() {
		return "", fmt.Errorf("cell %s's rollback migration was not started: %w", cell, ErrStopped)
	}
	if done.Starting() && done.Image == p.Image && slices.Equal(done.Command, p.Command) {
		req.Token = done.Token
	}
	r.emit(Event{Kind: CellMigrating, Wave: wave, Cell: cell, Message: fmt.Sprintf("cell %s: rolling back its migration: %s", cell, p)})
	m, err := r.runMigration(ctx, req, p, keep, save)
	if errors.Is(err, ErrStopped) {
		r.emit(Event{Kind: Note, Wave: wave, Cell: cell, Message: detachedMessage(cell, m)})
		return "", err
	}
	if m.OK() {
		r.emit(Event{Kind: CellMigrated, Wave: wave, Cell: cell, Message: migratedMessage(cell, m)})
		return "", nil
	}
	return "rollback migration failed: " + m.Failure(), nil
}

// runMigration runs one planned migration, keeping it in the record
// (through keep, under the journal's lock, and save) when its task starts
// and when it ends. The error is ErrStopped when the run stopped waiting
// for the task at the operator's request: the record then names the task,
// unfinished, for a rerun to follow. Any other outcome is in the Migration.
func (r *run) runMigration(ctx context.Context, req MigrationRequest, p MigrationPlan, keep func(*Migration), save func(context.Context) error) (*Migration, error) {
	var at time.Time
	var task string
	if req.Token == "" {
		req.Token = "cellctl-" + nonce() + nonce()
	}
	// The token first: a run that dies after the start and before the
	// task is recorded leaves the token, and the rerun's start with it
	// gets that task back.
	keep(&Migration{Image: p.Image, Command: p.Command, Token: req.Token})
	if err := save(ctx); err != nil {
		m := Migration{Image: p.Image, Command: p.Command, Error: "not started: " + err.Error()}
		r.ended(&m, nil)
		return &m, nil
	}
	started := func(t string) {
		at, task = r.clock.Now().UTC(), t
		keep(&Migration{Image: p.Image, Command: p.Command, Token: req.Token, Task: t, Started: at})
		_ = save(ctx)
	}
	req.Detach = r.opts.Stop
	m, err := r.ex.Migrator.Migrate(ctx, req, started)
	if m.Image == "" {
		m.Image, m.Command = p.Image, p.Command
	}
	if m.Task == "" {
		m.Task = task
	}
	if m.Started.IsZero() {
		m.Started = at
	}
	if errors.Is(err, ErrStopped) && m.Task != "" {
		// The task runs on: the record keeps it unfinished, as it was
		// when it started, so the rerun follows it.
		m = Migration{Image: p.Image, Command: p.Command, Token: req.Token, Task: m.Task, TaskDefinition: m.TaskDefinition, Started: m.Started}
		keep(&m)
		_ = save(ctx)
		return &m, err
	}
	m.Token = req.Token
	r.ended(&m, err)
	keep(&m)
	_ = save(ctx)
	return &m, nil
}

// follow waits for a migration task an earlier run started and never saw
// end (prev) to end, keeping what it learns (keep, save). It returns the
// migration as it ended, and whether its outcome stands: false when that
// earlier run had given up on the task (an error: it was cancelled, and
// stopped the task, or lost sight of it) and the task did not pass — it
// has stopped now, and the migration may run again. The error is
// ErrStopped when this run stopped waiting at the operator's request (the
// task runs on, still unfinished in the record), or says why the task
// could not be followed to its end.
func (r *run) follow(ctx context.Context, wave string, req MigrationRequest, prev *Migration, keep func(*Migration), save func(context.Context) error) (*Migration, bool, error) {
	res, ok := r.ex.Migrator.(Resumer)
	if !ok {
		err := fmt.Errorf("migration task %s, started by an earlier run, was never seen to end, and this migrator cannot follow it: "+
			"check that it has stopped (aws ecs describe-tasks), then rerun", prev.TaskID())
		m := *prev
		m.Error = err.Error()
		keep(&m)
		_ = save(ctx)
		return &m, false, err
	}
	r.emit(Event{Kind: CellMigrating, Wave: wave, Cell: req.Cell, Message: fmt.Sprintf(
		"cell %s: migration task %s, started by an earlier run at %s, was never seen to end: following it (no second task starts)",
		req.Cell, prev.TaskID(), prev.Started.Format(time.RFC3339))})
	req.Detach = r.opts.Stop
	m, err := res.Resume(ctx, req, *prev)
	if m.Image == "" {
		m.Image, m.Command = prev.Image, prev.Command
	}
	if m.Task == "" {
		m.Task = prev.Task
	}
	if m.Started.IsZero() {
		m.Started = prev.Started
	}
	if errors.Is(err, ErrStopped) {
		return prev, false, err
	}
	r.ended(&m, err)
	keep(&m)
	_ = save(ctx)
	if m.Unfinished() {
		return &m, false, fmt.Errorf("following migration task %s: %s", m.TaskID(), m.Error)
	}
	return &m, prev.Error == "" || m.OK(), nil
}

// ended completes a migration whose wait ended with err: the error is
// kept, and the task counts as stopped (Stopped set) only when it was
// seen to stop or never started — a task cellctl lost sight of stays
// unfinished, for the next run to follow.
func (r *run) ended(m *Migration, err error) {
	if err != nil {
		m.Error = err.Error()
	}
	seen := err == nil || m.ExitCode != nil || m.StopCode != "" || m.Task == ""
	if m.Stopped.IsZero() && seen {
		m.Stopped = r.clock.Now().UTC()
	}
}

// detachedMessage says a run stopped waiting for a cell's migration task.
func detachedMessage(cell string, m *Migration) string {
	return fmt.Sprintf("cell %s: stopped waiting for migration task %s, which keeps running; the record names it, and rerunning the same deploy follows it to its end instead of starting another",
		cell, m.TaskID())
}

func migratedMessage(cell string, m *Migration) string {
	s := fmt.Sprintf("cell %s: migration task %s exited 0", cell, m.TaskID())
	if m.SchemaVersion != "" {
		s += ", schema version " + m.SchemaVersion
	}
	return s
}

// schemaCheck keeps the gate on the rolled-back cells whose migration ran
// for one poll window: a rollback returns the old image but leaves the
// new schema (unless a rollback command undid it), and the old image must
// run on it. A breach is reported, not acted on: the cells already run
// their previous configuration. The window is recorded before it starts,
// so a rerun after a kill finishes it instead of starting over.
func (r *run) schemaCheck(ctx context.Context, w Wave, wr *WaveRecord) (*Breach, error) {
	r.j.mu.Lock()
	var cells []string
	for _, c := range wr.Cells {
		if c.State == CellStateRolled && c.Migration != nil && c.Migration.Task != "" && !c.RollbackMigration.OK() {
			cells = append(cells, c.Cell)
		}
	}
	sc := wr.SchemaCheck
	if len(cells) > 0 && sc == nil {
		sc = &StepRecord{Name: w.Name + "/schema", Kind: "schema-check", Wave: w.Name, Cells: cells,
			State: WaveBaking, Started: r.clock.Now().UTC(), BakeStart: r.clock.Now().UTC()}
		wr.SchemaCheck = sc
	}
	r.j.mu.Unlock()
	if sc == nil {
		return nil, nil
	}
	if sc.State != WaveBaking {
		return sc.Breach, nil
	}
	if err := r.save(ctx); err != nil {
		return nil, err
	}
	r.emit(Event{Kind: Note, Wave: w.Name, Message: fmt.Sprintf("wave %s: the old image runs on the schema its migration left in %s: the gate reads them for one poll window (%s)",
		w.Name, strings.Join(sc.Cells, ", "), w.Gate.Poll)})
	b := Baker{Gate: r.ex.Gate, Clock: r.clock, Stop: r.opts.Stop, Steer: r.steerStop(),
		Record: func(p Poll) error {
			r.j.mu.Lock()
			sc.Polls = append(sc.Polls, p)
			r.j.mu.Unlock()
			return r.save(ctx)
		}}
	res, err := b.Bake(ctx, BakeSpec{Step: w.Name, Cells: sc.Cells, Start: sc.BakeStart, Duration: w.Gate.Poll, Poll: w.Gate.Poll})
	if err != nil {
		return nil, fmt.Errorf("wave %w; rerun the same deploy to finish the check after its rollback", err)
	}
	r.j.mu.Lock()
	sc.Decision, sc.Breach, sc.Reason, sc.Finished = res.Decision, res.Breach, res.Reason, r.clock.Now().UTC()
	sc.State = WaveDone
	if res.Decision == waves.Breached {
		sc.State = WaveHalted
	}
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return nil, err
	}
	if res.Breach != nil {
		msg := fmt.Sprintf("after the rollback %s: the old image fails too, most likely on the migrated schema (or on another change since the wave started)", res.Breach)
		r.j.mu.Lock()
		untouched := schemaUntouched(wr, res.Breach.Cell)
		r.j.mu.Unlock()
		if untouched {
			msg = fmt.Sprintf("after the rollback %s: %s", res.Breach, untouchedSchemaWords)
		}
		r.emit(Event{Kind: Note, Wave: w.Name, Cell: res.Breach.Cell, Message: msg})
	}
	return res.Breach, nil
}

// schemaUntouched reports whether no migration of the wave ran on cell's
// database (its task never started): a breach after the rollback is then
// not the old image on a migrated schema.
func schemaUntouched(wr *WaveRecord, cell string) bool {
	cr := wr.cell(cell)
	return cr != nil && cr.Migration.NeverRan()
}

// untouchedSchemaWords say what is known of a cell that still breaches
// after its rollback when no migration of the rollout ran on its
// database.
const untouchedSchemaWords = "the cell still breaches on its previous configuration, and no migration of this rollout ran on its database " +
	"(its task never started), so the cause is not this rollout's schema: something changed since the wave started — " +
	"an out-of-band change, its access, its dependencies (see `cellctl health`)"
