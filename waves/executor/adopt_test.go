package executor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// killWhen makes the process die right after the first save for which
// cond holds: every later save is lost, ctx is cancelled and no cell
// update applies any more — a kill -9, which sends no StopTask: the fake's
// tasks run on.
func killWhen(f *fleet, cancel func(), cond func(*Record) bool) *atomic.Bool {
	var died atomic.Bool
	f.store.onSave = func(r *Record) error {
		if died.Load() {
			return errDied
		}
		if cond(r) {
			died.Store(true)
			cancel()
		}
		return nil
	}
	f.cells.fail = func(string, CellConfig) error {
		if died.Load() {
			return errDied
		}
		return nil
	}
	return &died
}

// revive is the operator's rerun after the kill: the backend as the dead
// run left it.
func revive(f *fleet) {
	f.store.mu.Lock()
	f.store.onSave = nil
	f.store.mu.Unlock()
	f.cells.mu.Lock()
	f.cells.fail = nil
	f.cells.mu.Unlock()
}

func indexOf(list []string, prefix string) int {
	return slices.IndexFunc(list, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

func TestKilledDuringAMigrationTheRerunFollowsItsTaskInsteadOfStartingAnother(t *testing.T) {
	f, m := migratingFleet(t)
	m.hang["cell-a migrate"] = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	died := killWhen(f, cancel, func(r *Record) bool { return r.Waves[0].Cells[0].Migration.Unfinished() })
	_, _ = f.ex.Run(ctx, f.plan, f.opts())
	if !died.Load() {
		t.Fatal("the first run never recorded cell-a's migration task")
	}
	rec := f.store.record(t, f.plan.ID())
	first := rec.Waves[0].Cells[0].Migration
	if !first.Unfinished() || !m.stillRunning(first.Task) {
		t.Fatalf("setup: the record holds %+v; the task must still run", first)
	}

	revive(f)
	f.store.lock = nil // the dead run's host cannot be asked; the operator reruns elsewhere
	m.setHang("cell-a migrate", false)
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatal(err)
	}
	if n := m.count("cell-a", "migrate"); n != 1 {
		t.Errorf("cell-a's migration started %d times (%v): the rerun follows the task the killed run started", n, m.runs())
	}
	if o := m.overlapping(); len(o) > 0 {
		t.Errorf("two tasks ran at once on one database: %v", o)
	}
	if i := indexOf(m.runs(), "cell-a resume "+first.TaskID()); i < 0 {
		t.Errorf("the rerun never followed task %s: %v", first.TaskID(), m.runs())
	}
	mig := f.store.record(t, f.plan.ID()).Waves[0].Cells[0].Migration
	if mig.Task != first.Task || !mig.OK() || mig.Unfinished() || mig.Started != first.Started {
		t.Errorf("cell-a's record after the rerun: %+v, want the first task, passed, with its start", mig)
	}
	if got := f.cells.get("cell-a").Image; got != "app:v2" {
		t.Errorf("cell-a runs %s", got)
	}
}

func TestKilledDuringARollbackMigrationTheRerunFollowsItsTask(t *testing.T) {
	f, m := migratingFleet(t)
	m.rollbackCmd = "migrate down"
	m.hang["cell-c rollback"] = true
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	died := killWhen(f, cancel, func(r *Record) bool { return r.Waves[1].Cells[1].RollbackMigration.Unfinished() })
	_, _ = f.ex.Run(ctx, f.plan, f.opts())
	if !died.Load() {
		t.Fatal("the first run never recorded cell-c's rollback task")
	}
	down := f.store.record(t, f.plan.ID()).Waves[1].Cells[1].RollbackMigration

	revive(f)
	f.store.lock = nil
	m.setHang("cell-c rollback", false)
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.Wave != "wave-2" || !h.RolledBack {
		t.Fatalf("err = %v, want wave-2's rollback finished by the rerun", err)
	}
	if n := m.count("cell-c", "rollback"); n != 1 {
		t.Errorf("cell-c's rollback migration started %d times (%v): the rerun follows the one the killed run started", n, m.runs())
	}
	if o := m.overlapping(); len(o) > 0 {
		t.Errorf("two tasks ran at once on one database: %v", o)
	}
	cr := f.store.record(t, f.plan.ID()).Waves[1].Cells[1]
	if cr.RollbackMigration.Task != down.Task || !cr.RollbackMigration.OK() || cr.State != CellStateRolled {
		t.Errorf("cell-c's record: %s, rollback migration %+v; want rolled back by the first task", cr.State, cr.RollbackMigration)
	}
	if got := f.cells.get("cell-c").Image; got != "app:v1" {
		t.Errorf("cell-c runs %s, want app:v1", got)
	}
}

// bothHappened closes stop once n callers have called it.
func bothHappened(n int, stop chan struct{}) func() {
	var mu sync.Mutex
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if n--; n == 0 {
			close(stop)
		}
	}
}

func TestFirstInterruptStopsWaitingOnAHungMigrationAndTheRerunFollowsIt(t *testing.T) {
	f, m := migratingFleet(t)
	m.hang["cell-a migrate"] = true
	stop := make(chan struct{})
	m.onStart = func(cell, kind string) { close(stop) } // Ctrl-C while the task hangs
	o := f.opts()
	o.Stop = stop
	// Without the stop, this run would wait until the task's timeout: the
	// fake's hung task never ends on its own.
	_, err := f.ex.Run(context.Background(), f.plan, o)
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("err = %v, want the run stopped at the operator's request", err)
	}
	rec := f.store.record(t, f.plan.ID())
	cr := rec.Waves[0].Cells[0]
	if !cr.Migration.Unfinished() || cr.Migration.Error != "" || cr.State != CellStateUpdating || !m.stillRunning(cr.Migration.Task) {
		t.Fatalf("cell-a %s, migration %+v: want the task named, unfinished, and still running", cr.State, cr.Migration)
	}
	if !slices.ContainsFunc(f.events.messages(), func(s string) bool {
		return strings.Contains(s, cr.Migration.TaskID()) && strings.Contains(s, "keeps running") && strings.Contains(s, "rerunning the same deploy follows it")
	}) {
		t.Errorf("no message says the task runs on and the rerun follows it: %v", f.events.messages())
	}
	if got := f.cells.applies(); len(got) != 0 {
		t.Errorf("applies %v: the service never moves before its migration ends", got)
	}

	m.setHang("cell-a migrate", false)
	m.onStart = nil
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatal(err)
	}
	if n := m.count("cell-a", "migrate"); n != 1 {
		t.Errorf("cell-a migrated %d times: %v", n, m.runs())
	}
}

func TestARollbackWaitsForAForwardMigrationStillRunningOnTheCell(t *testing.T) {
	f, m := migratingFleet(t)
	m.rollbackCmd = "migrate down"
	m.hang["cell-b migrate"] = true
	stop := make(chan struct{})
	// The operator's Ctrl-C comes once cell-b's migration hangs and cell-c's
	// update has failed: the run leaves cell-b's task running, and the
	// failed cell-c breaches the wave all the same.
	ready := bothHappened(2, stop)
	m.onStart = func(cell, kind string) {
		if cell == "cell-b" && kind == "migrate" {
			ready()
		}
	}
	f.cells.fail = func(cell string, cfg CellConfig) error {
		if cell == "cell-c" && cfg.Image == "app:v2" {
			ready()
			return errors.New("service did not stabilise")
		}
		return nil
	}
	o := f.opts()
	o.Stop = stop
	_, err := f.ex.Run(context.Background(), f.plan, o)
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("err = %v, want the run stopped with wave-2's rollback left for the rerun", err)
	}
	rec := f.store.record(t, f.plan.ID())
	fwd := rec.Waves[1].Cells[0].Migration
	if rec.Waves[1].State != WaveRollingBack || !fwd.Unfinished() || !m.stillRunning(fwd.Task) {
		t.Fatalf("setup: wave-2 %s, cell-b's migration %+v", rec.Waves[1].State, fwd)
	}
	if n := m.count("cell-b", "rollback"); n != 0 {
		t.Fatalf("cell-b's rollback migration ran while its forward task still ran: %v", m.runs())
	}

	m.setHang("cell-b migrate", false)
	m.onStart = nil
	f.cells.mu.Lock()
	f.cells.fail = nil
	f.cells.mu.Unlock()
	_, err = f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || !h.RolledBack || h.Wave != "wave-2" {
		t.Fatalf("err = %v, want wave-2 rolled back by the rerun", err)
	}
	runs := m.runs()
	resumed, down := indexOf(runs, "cell-b resume "+fwd.TaskID()), indexOf(runs, "cell-b app:v1 rollback")
	if resumed < 0 || down < 0 || resumed > down {
		t.Errorf("migrations %v: cell-b's forward task is followed to its end before its rollback migration starts", runs)
	}
	if o := m.overlapping(); len(o) > 0 {
		t.Errorf("two tasks ran at once on one database: %v", o)
	}
	if got := f.cells.get("cell-b").Image; got != "app:v1" {
		t.Errorf("cell-b runs %s", got)
	}
}

func TestANewRolloutRunsAnAbandonedRollbacksDownMigrationBeforeItMigrates(t *testing.T) {
	f, m := migratingFleet(t)
	m.rollbackCmd = "migrate down"
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	abandoned, runs := abandonedThenV3(t, f, m, "cell-c", "rollback", func(r *Record) *Migration { return r.Waves[1].Cells[1].RollbackMigration })
	if n := m.count("cell-c", "rollback"); n != 1 {
		t.Errorf("cell-c's rollback migration started %d times: %v", n, runs)
	}
	old := f.store.record(t, abandoned)
	if old.Waves[1].State != WaveRolledBack {
		t.Errorf("the abandoned rollout's wave-2 is %s", old.Waves[1].State)
	}
	for _, c := range old.Waves[1].Cells {
		if !c.RollbackMigration.OK() || c.State != CellStateRolled {
			t.Errorf("%s in the abandoned rollout: %s, rollback migration %+v; want its down migration run (or followed) and passed", c.Cell, c.State, c.RollbackMigration)
		}
	}
	if got := f.cells.get("cell-c").Image; got != "app:v3" {
		t.Errorf("cell-c runs %s", got)
	}
}

func TestANewRolloutWaitsForAMigrationAnAbandonedRolloutLeftRunning(t *testing.T) {
	f, m := migratingFleet(t)
	abandoned, _ := abandonedThenV3(t, f, m, "cell-a", "migrate", func(r *Record) *Migration { return r.Waves[0].Cells[0].Migration })
	if mig := f.store.record(t, abandoned).Waves[0].Cells[0].Migration; mig.Unfinished() || !mig.OK() {
		t.Errorf("the abandoned rollout's record keeps cell-a's task as %+v, want its end", mig)
	}
}

func TestKilledBetweenATasksStartAndItsRecordTheRerunGetsThatTaskBack(t *testing.T) {
	f, m := migratingFleet(t)
	m.hang["cell-a migrate"] = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The start's token is saved; the process dies before the save that
	// names the task it started.
	died := killWhen(f, cancel, func(r *Record) bool { return r.Waves[0].Cells[0].Migration.Starting() })
	_, _ = f.ex.Run(ctx, f.plan, f.opts())
	if !died.Load() {
		t.Fatal("the first run never recorded cell-a's start")
	}
	rec := f.store.record(t, f.plan.ID())
	if mig := rec.Waves[0].Cells[0].Migration; !mig.Starting() || m.count("cell-a", "migrate") != 1 {
		t.Fatalf("setup: record %+v, migrations %v: want the token recorded and the task started, unnamed", mig, m.runs())
	}

	revive(f)
	f.store.lock = nil
	m.setHang("cell-a migrate", false)
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatal(err)
	}
	if n := m.count("cell-a", "migrate"); n != 1 {
		t.Errorf("cell-a's migration started %d times (%v): the rerun's start with the recorded token gets the first task back", n, m.runs())
	}
	if o := m.overlapping(); len(o) > 0 {
		t.Errorf("two tasks ran at once on one database: %v", o)
	}
	if mig := f.store.record(t, f.plan.ID()).Waves[0].Cells[0].Migration; !mig.OK() || !strings.HasSuffix(mig.Task, "task0001") {
		t.Errorf("cell-a's record: %+v, want the first task, passed", mig)
	}
}

// noResume is a Migrator that cannot follow a task an earlier run started.
type noResume struct{ m *fakeMigrator }

func (n noResume) Plan(req MigrationRequest) MigrationPlan { return n.m.Plan(req) }
func (n noResume) Migrate(ctx context.Context, req MigrationRequest, started func(string)) (Migration, error) {
	return n.m.Migrate(ctx, req, started)
}

func TestAMigratorThatCannotFollowATaskFailsTheCellInsteadOfStartingAnother(t *testing.T) {
	f, m := migratingFleet(t)
	m.hang["cell-a migrate"] = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killWhen(f, cancel, func(r *Record) bool { return r.Waves[0].Cells[0].Migration.Unfinished() })
	_, _ = f.ex.Run(ctx, f.plan, f.opts())
	revive(f)
	f.store.lock = nil
	f.ex.Migrator = noResume{m}
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.Breach == nil || h.Breach.Signal != SignalMigration || !strings.Contains(err.Error(), "cannot follow it") {
		t.Fatalf("err = %v, want cell-a's migration failed saying the task cannot be followed", err)
	}
	if n := m.count("cell-a", "migrate"); n != 1 || len(m.overlapping()) > 0 {
		t.Errorf("migrations %v: no second task may start", m.runs())
	}
}

// abandonedThenV3 runs the fleet's rollout until the task of cell's
// migration (step "migrate" or "rollback", hung) is recorded, kills the
// run, abandons the rollout (deploy --abandon), and runs a new rollout of
// app:v3 to every cell. It checks that the new rollout followed the
// abandoned task to its end before migrating cell, never two tasks at
// once, and returns the abandoned rollout's id and the migrations run.
func abandonedThenV3(t *testing.T, f *fleet, m *fakeMigrator, cell, step string, task func(*Record) *Migration) (string, []string) {
	t.Helper()
	m.hang[cell+" "+step] = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	died := killWhen(f, cancel, func(r *Record) bool { return task(r).Unfinished() })
	_, _ = f.ex.Run(ctx, f.plan, f.opts())
	if !died.Load() {
		t.Fatalf("the first run never recorded %s's %s task", cell, step)
	}
	abandoned := f.plan.ID()
	left := task(f.store.record(t, abandoned))
	revive(f)
	// deploy --abandon: the dead run's lock broken, its record abandoned.
	if _, err := Abandon(context.Background(), f.store, abandoned, Holder{Host: "laptop", PID: 9}); err != nil {
		t.Fatal(err)
	}
	// A new rollout (app:v3) migrates every cell, cell included.
	for c := range f.plan.Desired {
		f.plan.Desired[c] = withImage(oldConfig(), "app:v3")
	}
	m.setHang(cell+" "+step, false)
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatal(err)
	}
	if o := m.overlapping(); len(o) > 0 {
		t.Errorf("the new rollout migrated while the abandoned rollout's task ran: %v", o)
	}
	runs := m.runs()
	resumed, up := indexOf(runs, cell+" resume "+left.TaskID()), indexOf(runs, cell+" app:v3 migrate")
	if resumed < 0 || up < 0 || resumed > up {
		t.Errorf("migrations %v: the abandoned rollout's task on %s ends before the new rollout migrates it", runs, cell)
	}
	return abandoned, runs
}
