package executor

import (
	"context"
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

// MigrationRequest is one cell's migration: the change from From to To.
// A forward migration runs To's image; a rollback (Rollback true) runs the
// rollback command with To's image — the configuration the cell returns
// to — after From's migration ran.
type MigrationRequest struct {
	Cell     string
	From, To CellConfig
	Rollback bool
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
	if done.OK() && done.Image == p.Image && slices.Equal(done.Command, p.Command) {
		// A rerun after the migration passed and the update did not
		// finish: the schema is there, the service update is what is left.
		r.emit(Event{Kind: Note, Wave: w.Name, Cell: cell, Message: fmt.Sprintf("cell %s: its migration passed in an earlier run (task %s): not run again", cell, done.TaskID())})
		return true
	}
	r.emit(Event{Kind: CellMigrating, Wave: w.Name, Cell: cell, Message: fmt.Sprintf("cell %s: migrating: %s", cell, p)})
	m, ok := r.runMigration(ctx, req, p, func(m *Migration) {
		r.j.mu.Lock()
		wr.cell(cell).Migration = m
		r.j.mu.Unlock()
	})
	if ctx.Err() != nil {
		return false
	}
	if !ok {
		r.setCell(wr, cell, CellStateFailed, "migration failed: "+m.Failure())
		r.emit(Event{Kind: CellFailed, Wave: w.Name, Cell: cell, Message: m.Failure()})
		_ = r.save(ctx)
		return false
	}
	r.emit(Event{Kind: CellMigrated, Wave: w.Name, Cell: cell, Message: migratedMessage(cell, m)})
	return true
}

// rollbackMigration runs the cell's rollback command (from the image it
// returns to) when its forward migration ran. It returns the failure to
// report, "" when it passed or nothing was to run.
func (r *run) rollbackMigration(ctx context.Context, w Wave, wr *WaveRecord, cell string) string {
	if r.ex.Migrator == nil {
		return ""
	}
	r.j.mu.Lock()
	cr := wr.cell(cell)
	ran := cr.Migration != nil && (cr.Migration.Task != "" || cr.Migration.Error != "")
	req := MigrationRequest{Cell: cell, From: cr.After.Clone(), Rollback: true}
	if cr.Before != nil {
		req.To = cr.Before.Clone()
	}
	done := cr.RollbackMigration
	r.j.mu.Unlock()
	if !ran || req.To.Image == "" {
		return ""
	}
	p := r.ex.Migrator.Plan(req)
	if p.None() || done.OK() {
		return ""
	}
	r.emit(Event{Kind: CellMigrating, Wave: w.Name, Cell: cell, Message: fmt.Sprintf("cell %s: rolling back its migration: %s", cell, p)})
	m, ok := r.runMigration(ctx, req, p, func(m *Migration) {
		r.j.mu.Lock()
		wr.cell(cell).RollbackMigration = m
		r.j.mu.Unlock()
	})
	if ok {
		r.emit(Event{Kind: CellMigrated, Wave: w.Name, Cell: cell, Message: migratedMessage(cell, m)})
		return ""
	}
	return "rollback migration failed: " + m.Failure()
}

// runMigration runs one planned migration, keeping it in the record
// (through keep, under the journal's lock) when its task starts and when
// it ends.
func (r *run) runMigration(ctx context.Context, req MigrationRequest, p MigrationPlan, keep func(*Migration)) (*Migration, bool) {
	var at time.Time
	started := func(task string) {
		at = r.clock.Now().UTC()
		keep(&Migration{Image: p.Image, Command: p.Command, Task: task, Started: at})
		_ = r.save(ctx)
	}
	m, err := r.ex.Migrator.Migrate(ctx, req, started)
	if m.Image == "" {
		m.Image, m.Command = p.Image, p.Command
	}
	if m.Started.IsZero() {
		m.Started = at
	}
	if m.Stopped.IsZero() {
		m.Stopped = r.clock.Now().UTC()
	}
	if err != nil {
		m.Error = err.Error()
	}
	keep(&m)
	_ = r.save(ctx)
	return &m, m.OK()
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
		w.Name, strings.Join(sc.Cells, ", "), w.Poll)})
	b := Baker{Gate: r.ex.Gate, Clock: r.clock, Stop: r.opts.Stop,
		Record: func(p Poll) error {
			r.j.mu.Lock()
			sc.Polls = append(sc.Polls, p)
			r.j.mu.Unlock()
			return r.save(ctx)
		}}
	res, err := b.Bake(ctx, BakeSpec{Step: w.Name, Cells: sc.Cells, Start: sc.BakeStart, Duration: w.Poll, Poll: w.Poll})
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
		r.emit(Event{Kind: Note, Wave: w.Name, Cell: res.Breach.Cell, Message: fmt.Sprintf("after the rollback %s: the old image fails too, most likely on the migrated schema (or on another change since the wave started)", res.Breach)})
	}
	return res.Breach, nil
}
