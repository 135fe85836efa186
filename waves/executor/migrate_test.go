package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/waves"
)

// fakeMigrator runs migrations against fakeCells: a migration of an image
// in bad exits 1 with the given log line; every run is logged, with the
// service image the cell ran at that moment, so tests see the order. Its
// tasks live on like ECS's: a hung task outlives the run that started it
// (a kill sends no StopTask), and a later Resume follows it.
type fakeMigrator struct {
	mu    sync.Mutex
	cells *fakeCells
	bad   map[string]string // image → last log line of its failing migration
	// runErr makes Migrate fail to run (the API refused) for an image.
	runErr map[string]error
	// rollbackCmd is the rollback command ("" none).
	rollbackCmd string
	// hang: "cell migrate|rollback" → that cell's task of that kind runs
	// until ctx ends (the run dies: the task runs on) or Detach closes,
	// and a Resume waits the same while it is still set.
	hang map[string]bool
	// onStart runs once a task has started (its start recorded).
	onStart func(cell, kind string)
	log     []string // "cell image migrate|rollback (service on X)", "cell resume task"
	n       int
	tasks   map[string]*fakeTask
	running map[string]int // by cell
	// overlaps are the tasks started on a cell while another ran there.
	overlaps []string
	// tokens are the tasks started by token (RunTask's clientToken): a
	// start with a token seen before answers that task.
	tokens map[string]string
	// neverStarts: that cell's forward task is started and ECS stops it
	// before its container runs (TaskFailedToStart).
	neverStarts map[string]bool
}

type fakeTask struct {
	cell, kind string
	running    bool
	out        Migration
}

func kindOf(req MigrationRequest) string {
	if req.Rollback {
		return "rollback"
	}
	return "migrate"
}

func (m *fakeMigrator) Plan(req MigrationRequest) MigrationPlan {
	if req.Rollback {
		if m.rollbackCmd == "" {
			return MigrationPlan{}
		}
		return MigrationPlan{Image: req.To.Image, Command: []string{m.rollbackCmd}}
	}
	if req.From.Image == req.To.Image {
		return MigrationPlan{}
	}
	return MigrationPlan{Image: req.To.Image, Command: []string{"migrate", "up"}}
}

func (m *fakeMigrator) Migrate(ctx context.Context, req MigrationRequest, started func(string)) (Migration, error) {
	p := m.Plan(req)
	kind := kindOf(req)
	m.mu.Lock()
	if task, ok := m.tokens[req.Token]; ok && req.Token != "" {
		m.log = append(m.log, fmt.Sprintf("%s token %s", req.Cell, task[strings.LastIndex(task, "/")+1:]))
		m.mu.Unlock()
		started(task)
		return m.wait(ctx, req, task)
	}
	m.n++
	task := fmt.Sprintf("arn:aws:ecs:us-east-1:111111111111:task/c/task%04d", m.n)
	m.log = append(m.log, fmt.Sprintf("%s %s %s (service on %s)", req.Cell, p.Image, kind, m.cells.get(req.Cell).Image))
	err := m.runErr[p.Image]
	line, bad := m.bad[p.Image]
	m.mu.Unlock()
	if err != nil && !req.Rollback {
		return Migration{}, err
	}
	code := 0
	out := Migration{Image: p.Image, Command: p.Command, Task: task, LastLines: []string{"applying 0002_orders", "schema_version=2"}, SchemaVersion: "2"}
	if bad && !req.Rollback {
		code = 1
		out.LastLines, out.SchemaVersion = []string{"applying 0002_orders", line}, ""
	}
	out.ExitCode = &code
	if m.neverStarts[req.Cell] && !req.Rollback {
		out = Migration{Image: p.Image, Command: p.Command, Task: task, StopCode: "TaskFailedToStart",
			StoppedReason: "CannotPullContainerError: pull image manifest has been retried 5 time(s)"}
	}
	m.mu.Lock()
	if m.running[req.Cell] > 0 {
		m.overlaps = append(m.overlaps, fmt.Sprintf("%s: %s task %s started while another ran", req.Cell, kind, task))
	}
	m.running[req.Cell]++
	m.tasks[task] = &fakeTask{cell: req.Cell, kind: kind, running: true, out: out}
	if req.Token != "" {
		m.tokens[req.Token] = task
	}
	onStart := m.onStart
	m.mu.Unlock()
	started(task)
	if onStart != nil {
		onStart(req.Cell, kind)
	}
	return m.wait(ctx, req, task)
}

// Resume follows a task an earlier run started (Resumer).
func (m *fakeMigrator) Resume(ctx context.Context, req MigrationRequest, running Migration) (Migration, error) {
	m.mu.Lock()
	m.log = append(m.log, fmt.Sprintf("%s resume %s", req.Cell, running.TaskID()))
	_, ok := m.tasks[running.Task]
	m.mu.Unlock()
	if !ok {
		return running, fmt.Errorf("no task %s", running.Task)
	}
	return m.wait(ctx, req, running.Task)
}

// wait waits for a task as ECS's would run: a hung one until the caller
// gives up, any other to its end.
func (m *fakeMigrator) wait(ctx context.Context, req MigrationRequest, task string) (Migration, error) {
	m.mu.Lock()
	t := m.tasks[task]
	hang := t.running && m.hang[t.cell+" "+t.kind]
	m.mu.Unlock()
	if hang {
		select {
		case <-ctx.Done():
			return Migration{Task: task}, ctx.Err()
		case <-req.Detach:
			return Migration{Task: task}, fmt.Errorf("%w (task %s left running)", ErrStopped, task)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.running {
		t.running = false
		m.running[t.cell]--
	}
	return t.out, nil
}

func (m *fakeMigrator) setHang(key string, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hang[key] = on
}

// stillRunning reports whether a task has not ended.
func (m *fakeMigrator) stillRunning(task string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[task]
	return ok && t.running
}

// count is how many tasks of a kind (migrate, rollback) were started on a
// cell.
func (m *fakeMigrator) count(cell, kind string) int {
	n := 0
	for _, r := range m.runs() {
		if strings.HasPrefix(r, cell+" ") && strings.Contains(r, " "+kind+" (") {
			n++
		}
	}
	return n
}

func (m *fakeMigrator) overlapping() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.overlaps...)
}

func (m *fakeMigrator) runs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.log...)
}

func migratingFleet(t *testing.T) (*fleet, *fakeMigrator) {
	f := newFleet(t)
	m := &fakeMigrator{cells: f.cells, bad: map[string]string{}, runErr: map[string]error{}, hang: map[string]bool{}, tasks: map[string]*fakeTask{}, running: map[string]int{}, tokens: map[string]string{}}
	f.ex.Migrator = m
	return f, m
}

func TestEachCellMigratesBeforeItsUpdateInWaveOrder(t *testing.T) {
	f, m := migratingFleet(t)
	out, err := f.run(t, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	runs := m.runs()
	if len(runs) != 5 {
		t.Fatalf("migrations %v: want one per changed cell", runs)
	}
	for _, r := range runs {
		if !strings.HasSuffix(r, "app:v2 migrate (service on app:v1)") {
			t.Errorf("migration %q: want the new image's, run while the service still ran the old one", r)
		}
	}
	// Wave order: cell-a before wave-2's cells, wave-2's before wave-3's.
	order := map[string]int{}
	for i, r := range runs {
		order[strings.Fields(r)[0]] = i
	}
	if order["cell-a"] != 0 || order["cell-b"] > 2 || order["cell-c"] > 2 || order["cell-d"] < 3 || order["cell-e"] < 3 {
		t.Errorf("migrations ran out of wave order: %v", runs)
	}
	rec := f.store.record(t, out.Record.ID)
	cr := rec.Waves[0].Cells[0]
	if cr.Migration == nil || !cr.Migration.OK() || cr.Migration.SchemaVersion != "2" || cr.Migration.Task == "" {
		t.Fatalf("cell-a's record has no passed migration with its schema version: %+v", cr.Migration)
	}
	if !slices.Contains(f.events.kinds(), CellMigrated) {
		t.Errorf("no cell-migrated event: %v", f.events.kinds())
	}
}

func TestFailedCanaryMigrationRollsBackTheCanaryAloneAndNoOtherCellMigrates(t *testing.T) {
	f, m := migratingFleet(t)
	m.bad["app:v2"] = `ERROR: relation "orders" already exists`
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.Wave != "wave-1" || !h.RolledBack {
		t.Fatalf("want a rolled-back halt at wave-1, got %v", err)
	}
	if h.Breach == nil || h.Breach.Cell != "cell-a" || h.Breach.Signal != SignalMigration {
		t.Fatalf("breach %+v: want cell-a's migration", h.Breach)
	}
	for _, want := range []string{"cell-a", "task0001", "exited 1", `relation "orders" already exists`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("halt %q does not name %q", err, want)
		}
	}
	if runs := m.runs(); len(runs) != 1 || !strings.HasPrefix(runs[0], "cell-a ") {
		t.Errorf("migrations %v: only the canary's may run", runs)
	}
	if got := f.cells.applies(); !slices.Equal(got, []string{"cell-a app:v1"}) {
		t.Errorf("applies %v: the canary's service never moves to the new image, and its rollback re-applies the old one", got)
	}
	if img := f.images(t); img["cell-a"] != "app:v1" || img["cell-b"] != "app:v1" {
		t.Errorf("images %v", img)
	}
	rec := f.store.record(t, h.RolloutID)
	mig := rec.Waves[0].Cells[0].Migration
	if mig == nil || mig.ExitCode == nil || *mig.ExitCode != 1 || mig.LastLine() != `ERROR: relation "orders" already exists` {
		t.Fatalf("the record does not hold the task's exit code and last line: %+v", mig)
	}
	if rec.Waves[1].State != WavePending {
		t.Errorf("wave-2 is %s: later waves never start", rec.Waves[1].State)
	}
	if n := f.gate.wavesChecked()["wave-1"]; n != 1 {
		t.Errorf("wave-1 gate polls %d: a failed migration is not baked, but the rolled-back cell is read for one window", n)
	}
}

func TestMigrationThatCannotRunFailsClosed(t *testing.T) {
	f, m := migratingFleet(t)
	m.runErr["app:v2"] = errors.New("ECS RunTask: AccessDeniedException: not authorized to perform ecs:RunTask")
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.Breach == nil || h.Breach.Signal != SignalMigration || !strings.Contains(err.Error(), "could not start") {
		t.Fatalf("want a migration breach that says it could not start, got %v", err)
	}
	if got := f.cells.applies(); !slices.Equal(got, []string{"cell-a app:v1"}) {
		t.Errorf("applies %v", got)
	}
}

func TestRollbackCommandRunsFromTheOldImageBeforeTheServiceReturns(t *testing.T) {
	f, m := migratingFleet(t)
	m.rollbackCmd = "migrate down-to-image"
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.Wave != "wave-2" || !h.RolledBack {
		t.Fatalf("want wave-2 rolled back, got %v", err)
	}
	runs := m.runs()
	var rollbacks []string
	for _, r := range runs {
		if strings.Contains(r, " rollback ") {
			rollbacks = append(rollbacks, r)
		}
	}
	slices.Sort(rollbacks)
	want := []string{"cell-b app:v1 rollback (service on app:v2)", "cell-c app:v1 rollback (service on app:v2)"}
	if !slices.Equal(rollbacks, want) {
		t.Errorf("rollback migrations %v, want %v (old image, before the service returns)", rollbacks, want)
	}
	rec := f.store.record(t, h.RolloutID)
	for _, cr := range rec.Waves[1].Cells {
		if !cr.RollbackMigration.OK() {
			t.Errorf("%s: rollback migration not recorded as passed: %+v", cr.Cell, cr.RollbackMigration)
		}
	}
	// The rollback command undid the schema: no check of the old image on it.
	if rec.Waves[1].SchemaCheck != nil {
		t.Errorf("a schema check ran although the rollback command undid the migration: %+v", rec.Waves[1].SchemaCheck)
	}
}

// breachesAfterRollback answers the gate with base until the first cell
// is rolled back, then with cell breaching (its old image, on whatever the
// rollout left, fails too).
func breachesAfterRollback(f *fleet, base func(GateQuery) ([]Verdict, error), cell string) {
	rolled := false
	f.gate.answer = func(q GateQuery) ([]Verdict, error) {
		vs, err := base(q)
		if rolled {
			for i := range vs {
				if vs[i].Cell == cell {
					b := &Breach{Cell: cell, Signal: "error_rate_5xx", Reading: "41%", Threshold: "< 0.5%"}
					vs[i] = Verdict{Cell: cell, Decision: waves.Breached, Breach: b}
				}
			}
		}
		return vs, err
	}
	f.ex.Progress = ProgressFunc(func(e Event) {
		f.events.Event(e)
		if e.Kind == CellRolledBack {
			rolled = true
		}
	})
}

func TestOldImageFailingOnTheNewSchemaIsReportedAfterTheRollback(t *testing.T) {
	f, _ := migratingFleet(t)
	// cell-c's new image breaches; after the rollback the old image breaches
	// too (it cannot read the migrated schema).
	breachesAfterRollback(f, healthByImage(f.cells, map[string]bool{"cell-c app:v2": true}), "cell-b")
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || !h.RolledBack || h.SchemaBreach == nil || h.SchemaBreach.Cell != "cell-b" {
		t.Fatalf("want a rollback whose schema check names cell-b, got %v (%+v)", err, h)
	}
	if !strings.Contains(err.Error(), "old image fails too — most likely on the schema the migration left") {
		t.Errorf("halt %q does not say the old image fails on the new schema", err)
	}
	rec := f.store.record(t, h.RolloutID)
	sc := rec.Waves[1].SchemaCheck
	if sc == nil || sc.Decision != waves.Breached || len(sc.Polls) != 1 || !slices.Equal(sc.Cells, []string{"cell-b", "cell-c"}) {
		t.Fatalf("schema check record %+v", sc)
	}
	if rec.Waves[1].State != WaveRolledBack {
		t.Errorf("wave-2 is %s", rec.Waves[1].State)
	}
}

// A cell whose migration task never started (ECS stopped it before its
// container ran) and that still breaches after the rollback: no migration
// of this rollout touched its database, so the halt says what is known —
// the cell still breaches on its previous configuration — and not that
// the old image fails on a migrated schema.
func TestACellStillBreachingAfterItsRollbackWithoutAMigrationIsNotBlamedOnTheSchema(t *testing.T) {
	f, m := migratingFleet(t)
	m.neverStarts = map[string]bool{"cell-b": true}
	breachesAfterRollback(f, healthByImage(f.cells, nil), "cell-b")
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || !h.RolledBack || h.SchemaBreach == nil || h.SchemaBreach.Cell != "cell-b" {
		t.Fatalf("want a rollback whose check after it names cell-b, got %v (%+v)", err, h)
	}
	if strings.Contains(err.Error(), "schema the migration left") || !strings.Contains(err.Error(), "still breaches on its previous configuration") ||
		!strings.Contains(err.Error(), "no migration of this rollout ran on its database") || !strings.Contains(err.Error(), "out-of-band change") {
		t.Errorf("halt %q: want what is known (still breaching, no migration ran, an out-of-band change among the causes), not the schema", err)
	}
	for _, msg := range f.events.messages() {
		if strings.Contains(msg, "migrated schema") {
			t.Errorf("note %q blames a schema no migration changed", msg)
		}
	}
}

func TestRerunAfterAPassedMigrationDoesNotMigrateAgain(t *testing.T) {
	f, m := migratingFleet(t)
	// The process dies as cell-a's update starts, after its migration.
	f.cells.fail = func(cell string, cfg CellConfig) error {
		if cell == "cell-a" && cfg.Image == "app:v2" {
			return errDied
		}
		return nil
	}
	died := false
	f.store.onSave = func(r *Record) error {
		if died {
			return errDied
		}
		c := r.Waves[0].Cells[0]
		if c.State == CellStateUpdating && c.Migration.OK() {
			died = true
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cells.during = func(cell string, cfg CellConfig) {
		if died {
			cancel()
		}
	}
	_, _ = f.ex.Run(ctx, f.plan, f.opts())
	if !died {
		t.Fatal("the first run never got past cell-a's migration")
	}
	f.store.onSave, f.cells.fail, f.cells.during = nil, nil, nil
	f.store.lock = nil
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range m.runs() {
		if strings.HasPrefix(r, "cell-a ") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("cell-a migrated %d times: a passed migration is not run again by the rerun (%v)", n, m.runs())
	}
}

func TestDescribeListsEachChangedCellsMigration(t *testing.T) {
	f, m := migratingFleet(t)
	f.cells.current["cell-b"] = withImage(oldConfig(), "app:v2") // already there
	d, err := Describe(context.Background(), f.cells, m, nil, f.plan, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	a, b := d.Waves[0].Cells[0], d.Waves[1].Cells[0]
	if a.Migration == nil || a.Migration.Image != "app:v2" || !slices.Equal(a.Migration.Command, []string{"migrate", "up"}) {
		t.Errorf("cell-a's dry run has no migration step: %+v", a.Migration)
	}
	if b.Migration != nil {
		t.Errorf("unchanged cell-b lists a migration: %+v", b.Migration)
	}
	if len(m.runs()) != 0 {
		t.Errorf("the dry run ran migrations: %v", m.runs())
	}
}

func TestSchemaVersionsAreFleetStateAfterAHaltedRollout(t *testing.T) {
	f, m := migratingFleet(t)
	// Wave-1 passes (cell-a migrates to 2); cell-c's new image breaches in
	// wave-2, which rolls back leaving schema 2 under the old image there;
	// wave-3 never starts.
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	if _, err := f.run(t, f.opts()); err == nil {
		t.Fatal("want a halt")
	}
	recs, _ := f.store.List(context.Background())
	states := SchemaVersions(recs)
	for _, c := range []string{"cell-a", "cell-b", "cell-c"} {
		if states[c].Version != "2" {
			t.Errorf("%s schema %+v, want version 2", c, states[c])
		}
	}
	for _, c := range []string{"cell-d", "cell-e"} {
		if s, ok := states[c]; ok {
			t.Errorf("%s never migrated, but has a schema state %+v", c, s)
		}
	}

	// A failed migration is named whatever the version.
	g, m2 := migratingFleet(t)
	m2.bad["app:v2"] = "ERROR: column \"total\" does not exist"
	_, _ = g.run(t, g.opts())
	recs, _ = g.store.List(context.Background())
	st := SchemaVersions(recs)["cell-a"]
	if st.Version != "" || !strings.Contains(st.Failed, `column "total" does not exist`) {
		t.Errorf("cell-a after a failed migration: %+v", st)
	}
	_ = m
}
