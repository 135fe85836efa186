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
)

// fakeBootstrapper bootstraps against fakeCells: a configuration runs
// migrations when its setting "migrations" is true. Every run is logged
// with what the cell's service ran at that moment and how many
// migrations had run in it, so tests see where in the cell's update it
// ran.
type fakeBootstrapper struct {
	mu    sync.Mutex
	cells *fakeCells
	m     *fakeMigrator
	fail  error
	log   []string // "cell (migrations on|off, N migrated)"
}

func runsMigrations(c CellConfig) bool { on, _ := c.Settings["migrations"].(bool); return on }

func (b *fakeBootstrapper) Plan(req MigrationRequest) BootstrapPlan {
	switch {
	case req.Rollback || !runsMigrations(req.To):
		return BootstrapPlan{}
	case !runsMigrations(req.From):
		return BootstrapPlan{Why: "migrations turned on", AfterUpdate: true}
	}
	return BootstrapPlan{Why: "the migration logs in as the migrator"}
}

func (b *fakeBootstrapper) Bootstrap(_ context.Context, cell string) (string, error) {
	on := "off"
	if runsMigrations(b.cells.get(cell)) {
		on = "on"
	}
	migrated := 0
	if b.m != nil {
		for _, r := range b.m.runs() {
			if strings.HasPrefix(r, cell+" ") {
				migrated++
			}
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.log = append(b.log, fmt.Sprintf("%s (migrations %s, %d migrated)", cell, on, migrated))
	return "users in place", b.fail
}

func (b *fakeBootstrapper) runs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.log)
}

func withMigrations(c CellConfig) CellConfig {
	c = c.Clone()
	c.Settings["migrations"] = true
	return c
}

// bootstrappingFleet is the five-cell fleet with a migrator and a
// bootstrapper, and a plan that turns migrations on with the image kept.
func bootstrappingFleet(t *testing.T) (*fleet, *fakeMigrator, *fakeBootstrapper) {
	f, m := migratingFleet(t)
	b := &fakeBootstrapper{cells: f.cells, m: m}
	f.ex.Bootstrapper = b
	for c := range f.plan.Desired {
		f.plan.Desired[c] = withMigrations(oldConfig())
	}
	return f, m, b
}

// TestAnUpdateThatTurnsMigrationsOnBootstrapsTheDatabaseUsers: a rollout
// that turns migrations on (the image kept: nothing to migrate yet)
// bootstraps each cell's database users once its update made the stack's
// bootstrap the one with the migrator; the next rollout's migrations then
// find them, and bootstrap again before each migration — idempotent, for
// a cell whose users were never put in place. Before, only `up`
// bootstrapped: the next migration failed with role "cellctl_migrator"
// does not exist.
func TestAnUpdateThatTurnsMigrationsOnBootstrapsTheDatabaseUsers(t *testing.T) {
	f, m, b := bootstrappingFleet(t)
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatal(err)
	}
	if len(m.runs()) != 0 {
		t.Errorf("migrations %v: turning migrations on with the image kept migrates nothing", m.runs())
	}
	got := b.runs()
	slices.Sort(got)
	want := []string{"cell-a (migrations on, 0 migrated)", "cell-b (migrations on, 0 migrated)", "cell-c (migrations on, 0 migrated)",
		"cell-d (migrations on, 0 migrated)", "cell-e (migrations on, 0 migrated)"}
	if !slices.Equal(got, want) {
		t.Fatalf("bootstraps %v: want each cell once, after its update turned migrations on", got)
	}
	if !slices.ContainsFunc(f.events.messages(), func(s string) bool {
		return s == "cell cell-a: users in place (after the update: migrations turned on)"
	}) {
		t.Errorf("no note of cell-a's bootstrap: %v", f.events.messages())
	}

	// The next rollout ships a new image: each migration runs after
	// the cell's users were put in place again.
	next := newFleet(t)
	f.plan = next.plan
	for c := range f.plan.Desired {
		f.plan.Desired[c] = withMigrations(withImage(oldConfig(), "app:v2"))
	}
	b.log = nil
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatal(err)
	}
	if len(m.runs()) != 5 {
		t.Fatalf("migrations %v: want one per cell", m.runs())
	}
	got = b.runs()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("bootstraps %v: want each cell once, before its migration", got)
	}
}

// TestAFailedBootstrapFailsTheCellsUpdate: a bootstrap that fails after
// the update fails the cell — the canary breaches and is rolled back to
// its configuration without migrations, no later wave starts — and the
// halt says what failed.
func TestAFailedBootstrapFailsTheCellsUpdate(t *testing.T) {
	f, _, b := bootstrappingFleet(t)
	b.fail = errors.New("rds-data ExecuteStatement: BadRequestException: HttpEndpoint is not enabled")
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.Wave != "wave-1" || !h.RolledBack || h.Breach == nil || h.Breach.Cell != "cell-a" {
		t.Fatalf("want the canary breached and rolled back, got %v", err)
	}
	for _, want := range []string{"bootstrapping its database users", "HttpEndpoint is not enabled"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("halt %q does not say %q", err, want)
		}
	}
	if runsMigrations(f.cells.get("cell-a")) || runsMigrations(f.cells.get("cell-b")) {
		t.Errorf("cell-a %+v, cell-b %+v: the canary returns to its configuration, no other cell moves", f.cells.get("cell-a"), f.cells.get("cell-b"))
	}
	if got := b.runs(); len(got) != 1 {
		t.Errorf("bootstraps %v: only the canary's", got)
	}
}

// TestDescribeSaysWhichCellsBootstrap: the dry run lists the bootstrap of
// a cell whose update turns migrations on, and of a migrating cell (before
// its migration); an unchanged cell's is not listed, nor one that runs no
// migration in this change.
func TestDescribeSaysWhichCellsBootstrap(t *testing.T) {
	f, m, b := bootstrappingFleet(t)
	f.cells.current["cell-b"] = withMigrations(oldConfig())                     // unchanged
	f.cells.current["cell-c"] = withMigrations(oldConfig())                     // migrates to v2
	f.plan.Desired["cell-c"] = withMigrations(withImage(oldConfig(), "app:v2")) // …
	f.cells.current["cell-d"] = withMigrations(oldConfig())                     // a resize: no migration
	f.plan.Desired["cell-d"] = withMigrations(oldConfig())                      // …
	f.plan.Desired["cell-d"].Settings["taskCpu"] = 512                          // …
	d, err := Describe(context.Background(), f.cells, m, b, f.plan, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range d.Waves {
		for _, c := range w.Cells {
			if c.Bootstrap != nil {
				got[c.Cell] = c.Bootstrap.String()
			}
		}
	}
	want := map[string]string{"cell-a": "after the update: migrations turned on", "cell-c": "before the migration: the migration logs in as the migrator",
		"cell-e": "after the update: migrations turned on"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bootstraps in the dry run %v, want %v", got, want)
	}
	if len(b.runs()) != 0 {
		t.Errorf("the dry run bootstrapped: %v", b.runs())
	}
}
