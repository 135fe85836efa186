package desired

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
)

func testFleet() *fleet.Fleet {
	var cells []*fleet.Cell
	for _, id := range []string{"cell-a", "cell-b", "cell-c", "cell-d", "cell-e"} {
		cells = append(cells, &fleet.Cell{Cell: spec.Cell{ID: id, Image: "app:1.4.2"}, File: "stacks/Pulumi." + id + ".yaml"})
	}
	return &fleet.Fleet{Cells: cells}
}

func cellRec(id string, st executor.CellState, image, repo string) executor.CellRecord {
	return executor.CellRecord{Cell: id, State: st, After: executor.CellConfig{Image: image}, RepoImage: repo}
}

func TestResolveHoldsWhatRolloutsShippedAndKept(t *testing.T) {
	fl := testFleet()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	older := &executor.Record{ID: "r-old", State: executor.HaltedState, Started: t0, Waves: []executor.WaveRecord{
		{Name: "canary", State: executor.WaveDone, Cells: []executor.CellRecord{
			cellRec("cell-a", executor.CellStateUpdated, "app:1.5.0", "app:1.4.2"),
			cellRec("cell-b", executor.CellStateUpdated, "app:1.5.0", "app:1.4.2"),
			// The repository moved since (1.4.1 then, 1.4.2 now): a commit
			// after the rollout decides.
			cellRec("cell-d", executor.CellStateUpdated, "app:1.5.0", "app:1.4.1"),
		}},
		// Rolled back: the cell runs what it ran before.
		{Name: "wave-1", State: executor.WaveRolledBack, Cells: []executor.CellRecord{
			cellRec("cell-c", executor.CellStateRolled, "app:1.5.0", "app:1.4.2"),
		}},
		// Never reached (the rollout halted first).
		{Name: "wave-2", State: executor.WavePending, Cells: []executor.CellRecord{
			cellRec("cell-e", executor.CellPending, "app:1.5.0", "app:1.4.2"),
		}},
	}}
	// A newer rollout shipped the repository's own image to cell-b.
	newer := &executor.Record{ID: "r-new", State: executor.Complete, Started: t0.Add(time.Hour), Waves: []executor.WaveRecord{
		{Name: "canary", State: executor.WaveDone, Cells: []executor.CellRecord{
			cellRec("cell-b", executor.CellStateUpdated, "app:1.4.2", ""),
		}},
	}}
	st := Resolve(fl, []*executor.Record{older, newer})
	want := map[string]string{"cell-a": "app:1.5.0", "cell-b": "app:1.4.2", "cell-c": "app:1.4.2", "cell-d": "app:1.4.2", "cell-e": "app:1.4.2"}
	for id, img := range want {
		if got := st.Fleet.Cell(id).Image; got != img {
			t.Errorf("%s: desired image %s, want %s", id, got, img)
		}
		if got := fl.Cell(id).Image; got != "app:1.4.2" {
			t.Errorf("%s: the loaded fleet was changed (%s)", id, got)
		}
	}
	if len(st.Pins) != 1 || st.Pins["cell-a"].Rollout != "r-old" {
		t.Fatalf("pins = %+v, want cell-a by r-old only", st.Pins)
	}
	if n := st.Notes(); len(n) != 1 || !strings.Contains(n[0], "commit `cells:image: app:1.5.0` to stacks/Pulumi.cell-a.yaml") {
		t.Fatalf("notes = %q", n)
	}
	if st.Repository != fl {
		t.Fatal("the state must keep the repository's fleet")
	}

	// Once the stack file says what the rollout shipped, nothing is pinned.
	fl.Cell("cell-a").Image = "app:1.5.0"
	if st := Resolve(fl, []*executor.Record{older, newer}); len(st.Pins) != 0 || st.Fleet != fl {
		t.Fatalf("committed image: pins %+v", st.Pins)
	}
}

type failingRecords struct{}

func (failingRecords) List(context.Context) ([]*executor.Record, error) {
	return nil, errors.New("access denied")
}

// A store that cannot be read fails closed: shipping the repository's
// image instead would be the silent downgrade.
func TestLoadFailsClosed(t *testing.T) {
	if _, err := Load(context.Background(), testFleet(), failingRecords{}); err == nil || !strings.Contains(err.Error(), "access denied") {
		t.Fatalf("Load over an unreadable store = %v", err)
	}
}

// demoFleet is the demo's four cells, each taking its image from the
// baseline (Pulumi.yaml).
func demoFleet() *fleet.Fleet {
	fl := &fleet.Fleet{Project: "cells", Baseline: spec.Cell{Image: "app:1.4.2"}}
	for _, id := range []string{"cell-a", "cell-b", "cell-c", "cell-d"} {
		fl.Cells = append(fl.Cells, &fleet.Cell{Cell: spec.Cell{ID: id, Image: "app:1.4.2"}, File: "stacks/Pulumi." + id + ".yaml", Lines: map[string]int{}})
	}
	return fl
}

func migration(image, version string, exit int, at time.Time) *executor.Migration {
	return &executor.Migration{Image: image, Task: "arn:aws:ecs:us-east-1:1:task/c/" + version, ExitCode: &exit, SchemaVersion: version, Started: at, Stopped: at}
}

// demoRecords are `make demo`'s three rollouts: 1.5.0 shipped everywhere
// (schema 1.5.0); 1.5.1-bad migrated the canary (schema 1.5.1-bad), breached
// and rolled back, the old image passing the gate on that schema; 1.6.0's
// migration failed in the canary, which kept its image, the old image
// passing the gate on what the task left.
func demoRecords(t0 time.Time) []*executor.Record {
	shipped := &executor.Record{ID: "r-good", State: executor.Complete, Started: t0}
	for i, waveCells := range [][]string{{"cell-a"}, {"cell-b"}, {"cell-c", "cell-d"}} {
		w := executor.WaveRecord{Name: fmt.Sprint("w", i), State: executor.WaveDone}
		for _, c := range waveCells {
			cr := cellRec(c, executor.CellStateUpdated, "app:1.5.0", "app:1.4.2")
			cr.Migration = migration("app:1.5.0", "1.5.0", 0, t0.Add(time.Duration(i)*time.Minute))
			w.Cells = append(w.Cells, cr)
		}
		shipped.Waves = append(shipped.Waves, w)
	}
	rolledBack := func(id, image, version string, exit int, at time.Time) *executor.Record {
		cr := cellRec("cell-a", executor.CellStateRolled, image, "app:1.4.2")
		cr.Migration = migration(image, version, exit, at)
		return &executor.Record{ID: id, State: executor.HaltedState, Started: at, Waves: []executor.WaveRecord{
			{Name: "w0", State: executor.WaveRolledBack, Cells: []executor.CellRecord{cr},
				SchemaCheck: &executor.StepRecord{Name: "w0/schema", Cells: []string{"cell-a"}, State: executor.WaveDone, Decision: waves.Pass}},
			{Name: "w1", State: executor.WavePending, Cells: []executor.CellRecord{cellRec("cell-b", executor.CellPending, image, "app:1.4.2")}},
		}}
	}
	return []*executor.Record{shipped,
		rolledBack("r-bad", "app:1.5.1-bad", "1.5.1-bad", 0, t0.Add(time.Hour)),
		rolledBack("r-badmig", "app:1.6.0", "", 1, t0.Add(2*time.Hour))}
}

// After the demo the fleet's release is what it last shipped and kept
// (1.5.0), for every cell and for the baseline; the rolled-back releases'
// schema and failed migration are what cell-a's database is, not a
// target, and not a problem: the old image passed the gate on them.
func TestResolveAfterTheDemo(t *testing.T) {
	fl := demoFleet()
	st := Resolve(fl, demoRecords(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)))
	for _, c := range st.Fleet.Cells {
		if c.Image != "app:1.5.0" {
			t.Errorf("%s: desired image %s, want app:1.5.0", c.ID, c.Image)
		}
	}
	if st.Release == nil || st.Release.Image != "app:1.5.0" || st.Release.Rollout != "r-good" || st.Fleet.Baseline.Image != "app:1.5.0" {
		t.Errorf("release %+v, baseline %s: want app:1.5.0 by r-good", st.Release, st.Fleet.Baseline.Image)
	}
	if fl.Baseline.Image != "app:1.4.2" {
		t.Errorf("the repository's baseline was changed: %s", fl.Baseline.Image)
	}
	a := st.Schemas["cell-a"]
	if a.Version != "1.5.1-bad" || a.LeftBy != "r-bad" || !a.FailedRolledBack || a.Shipped != "1.5.0" || a.Problem != "" {
		t.Errorf("cell-a's schema %+v: want 1.5.1-bad left by r-bad, the failed migration rolled back, no problem", a)
	}
	for _, id := range []string{"cell-b", "cell-c", "cell-d"} {
		if s := st.Schemas[id]; s.Version != "1.5.0" || s.Shipped != "1.5.0" || s.Problem != "" || s.LeftBy != "" {
			t.Errorf("%s's schema %+v: want 1.5.0, shipped, no problem", id, s)
		}
	}
	n := st.Notes()
	if len(n) != 1 || !strings.HasPrefix(n[0], "cell-a, cell-b, cell-c, cell-d run app:1.5.0, shipped by rollout r-good") ||
		!strings.Contains(n[0], "commit `cells:image: app:1.5.0` to Pulumi.yaml") {
		t.Errorf("notes %q: want one line naming the four cells, committing to Pulumi.yaml", n)
	}

	// cell-d never got the release: committing it to Pulumi.yaml would
	// move cell-d too, ungated, so the note names the three stack files;
	// the fleet's release is still 1.5.0, which cell-d does not run.
	recs := demoRecords(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	recs[0].Waves[2].Cells[1].State = executor.CellPending
	st = Resolve(fl, recs)
	n = st.Notes()
	if len(n) != 1 || !strings.Contains(n[0], "to stacks/Pulumi.cell-a.yaml, stacks/Pulumi.cell-b.yaml, stacks/Pulumi.cell-c.yaml to make") {
		t.Errorf("notes %q: want the three pinned cells' stack files", n)
	}
	if st.Fleet.Baseline.Image != "app:1.5.0" || st.Fleet.Cell("cell-d").Image != "app:1.4.2" {
		t.Errorf("baseline %s, cell-d %s: want the release 1.5.0 and cell-d on the repository's 1.4.2", st.Fleet.Baseline.Image, st.Fleet.Cell("cell-d").Image)
	}
}

// A schema the records cannot vouch for is a problem: the old image
// failed the gate on what a rolled-back migration left, or no check read
// it, or a failed migration's cell was not rolled back, or a cell never
// ran the migration its image's release ran elsewhere.
func TestSchemaProblems(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		change func(recs []*executor.Record, fl *fleet.Fleet) *fleet.Fleet
		cell   string
		want   string
	}{
		"breached after the rollback": {func(recs []*executor.Record, fl *fleet.Fleet) *fleet.Fleet {
			sc := recs[1].Waves[0].SchemaCheck
			sc.State, sc.Decision, sc.Breach = executor.WaveHalted, waves.Breached, &executor.Breach{Cell: "cell-a", Signal: "error_rate_5xx"}
			return fl
		}, "cell-a", "the old image failed the gate on it"},
		"no schema check": {func(recs []*executor.Record, fl *fleet.Fleet) *fleet.Fleet {
			recs[1].Waves[0].SchemaCheck = nil
			return fl
		}, "cell-a", "no schema check read the old image on it"},
		"failed and not rolled back": {func(recs []*executor.Record, fl *fleet.Fleet) *fleet.Fleet {
			recs[2].Waves[0].Cells[0].State = executor.CellStateFailed
			return fl
		}, "cell-a", "its last migration failed in rollout r-badmig"},
		// The rollback command exited 0 but reported the version the
		// release's migration left: it did not undo it, and the executor
		// skips the schema check after a rollback command that passed.
		"rollback command did not undo": {func(recs []*executor.Record, fl *fleet.Fleet) *fleet.Fleet {
			cr := &recs[1].Waves[0].Cells[0]
			cr.RollbackMigration = migration("app:1.4.2", "1.5.1-bad", 0, cr.Migration.Stopped.Add(time.Minute))
			recs[1].Waves[0].SchemaCheck = nil
			return fl
		}, "cell-a", "its rollback command exited 0 but reported schema 1.5.1-bad, what the migration left: it did not undo it"},
		// The rolled-back migration reported no version: what it left is
		// unknown, and no check read the old image on it.
		"unknown version left": {func(recs []*executor.Record, fl *fleet.Fleet) *fleet.Fleet {
			recs[1].Waves[0].Cells[0].Migration.SchemaVersion = ""
			recs[1].Waves[0].SchemaCheck = nil
			return fl
		}, "cell-a", "left schema unknown in place, past the schema of its release (1.5.0), but no schema check read the old image on it"},
		"never migrated": {func(recs []*executor.Record, fl *fleet.Fleet) *fleet.Fleet {
			fl.Cells = append(fl.Cells, &fleet.Cell{Cell: spec.Cell{ID: "cell-e", Image: "app:1.5.0"}, File: "stacks/Pulumi.cell-e.yaml", Lines: map[string]int{"cells:image": 3}})
			return fl
		}, "cell-e", "no migration is recorded for it"},
	} {
		t.Run(name, func(t *testing.T) {
			recs := demoRecords(t0)
			st := Resolve(tc.change(recs, demoFleet()), recs)
			if s := st.Schemas[tc.cell]; !strings.Contains(s.Problem, tc.want) || s.Next == "" {
				t.Errorf("%s's schema %+v: want a problem %q with what to do", tc.cell, s, tc.want)
			}
		})
	}
}

// TestResolveGivesANewCellTheFleetsRelease: a cell no rollout shipped to
// (cell add's new cell) takes the image the newest complete rollout kept
// over the same repository image — not a halted or rolled-back rollout's,
// and not when its stack file names another image.
func TestResolveGivesANewCellTheFleetsRelease(t *testing.T) {
	fl := testFleet()
	fl.Cell("cell-d").Image = "app:1.3.0" // its own override
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	shipped := &executor.Record{ID: "r-good", State: executor.Complete, Started: t0, Waves: []executor.WaveRecord{
		{Name: "canary", State: executor.WaveDone, Cells: []executor.CellRecord{cellRec("cell-a", executor.CellStateUpdated, "app:1.5.0", "app:1.4.2")}},
		{Name: "wave-1", State: executor.WaveDone, Cells: []executor.CellRecord{cellRec("cell-b", executor.CellStateUpdated, "app:1.5.0", "app:1.4.2")}},
	}}
	// Newer, but halted after its canary rolled back: not what the fleet runs.
	bad := &executor.Record{ID: "r-bad", State: executor.HaltedState, Started: t0.Add(time.Hour), Waves: []executor.WaveRecord{
		{Name: "canary", State: executor.WaveRolledBack, Cells: []executor.CellRecord{cellRec("cell-a", executor.CellStateRolled, "app:1.5.1-bad", "app:1.4.2")}},
		{Name: "wave-1", State: executor.WavePending, Cells: []executor.CellRecord{cellRec("cell-b", executor.CellPending, "app:1.5.1-bad", "app:1.4.2")}},
	}}
	st := Resolve(fl, []*executor.Record{bad, shipped})
	want := map[string]string{"cell-a": "app:1.5.0", "cell-b": "app:1.5.0", "cell-c": "app:1.5.0", "cell-d": "app:1.3.0", "cell-e": "app:1.5.0"}
	for id, img := range want {
		if got := st.Fleet.Cell(id).Image; got != img {
			t.Errorf("%s: desired image %s, want %s", id, got, img)
		}
	}
	p := st.Pins["cell-e"]
	if !p.Release || p.Rollout != "r-good" || p.RepoImage != "app:1.4.2" || st.Pins["cell-a"].Release {
		t.Errorf("cell-e's pin %+v, cell-a's %+v", p, st.Pins["cell-a"])
	}
	if !strings.Contains(p.Note(), "cell-e gets app:1.5.0, what rollout r-good shipped to the fleet") {
		t.Errorf("note: %s", p.Note())
	}
	// With no complete rollout, a new cell follows its stack file.
	if st := Resolve(testFleet(), []*executor.Record{bad}); len(st.Pins) != 0 {
		t.Errorf("pins without a complete rollout: %+v", st.Pins)
	}
	// A complete rollout of the repository's own image pins nothing.
	own := &executor.Record{ID: "r-own", State: executor.Complete, Started: t0.Add(2 * time.Hour), Waves: []executor.WaveRecord{
		{Name: "canary", State: executor.WaveDone, Cells: []executor.CellRecord{cellRec("cell-a", executor.CellStateUpdated, "app:1.4.2", "")}},
	}}
	if st := Resolve(testFleet(), []*executor.Record{shipped, own}); st.Fleet.Cell("cell-e").Image != "app:1.4.2" {
		t.Errorf("after a rollout of the repository's image, a new cell gets %s", st.Fleet.Cell("cell-e").Image)
	}
}

// inconclusiveRecord is a rollout of app:1.6.0 whose canary's gate could
// not read its signal: the wave halted without a rollback (fail closed),
// and cell-a runs 1.6.0, schema 1.6.0 included; wave w1 never started.
func inconclusiveRecord(at time.Time) *executor.Record {
	cr := cellRec("cell-a", executor.CellStateUpdated, "app:1.6.0", "app:1.4.2")
	cr.Before = &executor.CellConfig{Image: "app:1.5.0"}
	cr.Migration = migration("app:1.6.0", "1.6.0", 0, at)
	return &executor.Record{ID: "r-inconclusive", State: executor.HaltedState, Started: at, Waves: []executor.WaveRecord{
		{Name: "w0", State: executor.WaveHalted, Reason: "cell-a: 37 requests < min 100", Cells: []executor.CellRecord{cr}},
		{Name: "w1", State: executor.WavePending, Cells: []executor.CellRecord{cellRec("cell-b", executor.CellPending, "app:1.6.0", "app:1.4.2")}},
	}}
}

// After an inconclusive halt the canary runs the new image: the desired
// state says so (an up must not downgrade it), its note is true and says
// how to resolve the halt rather than to commit the image, and the
// fleet's release stays what it last shipped and kept. Before, the halted
// wave was skipped: cell-a's desired image was 1.5.0 and its note said it
// ran that.
func TestResolveKeepsAHaltedWavesCells(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	recs := append(demoRecords(t0)[:1], inconclusiveRecord(t0.Add(time.Hour)))
	st := Resolve(demoFleet(), recs)
	want := map[string]string{"cell-a": "app:1.6.0", "cell-b": "app:1.5.0", "cell-c": "app:1.5.0", "cell-d": "app:1.5.0"}
	for id, img := range want {
		if got := st.Fleet.Cell(id).Image; got != img {
			t.Errorf("%s: desired image %s, want %s", id, got, img)
		}
	}
	p := st.Pins["cell-a"]
	if p.Halted == nil || p.Rollout != "r-inconclusive" || p.Halted.Wave != "w0" {
		t.Fatalf("cell-a's pin %+v: want held by r-inconclusive's halted wave w0", p)
	}
	if st.Release == nil || st.Release.Image != "app:1.5.0" || st.Fleet.Baseline.Image != "app:1.5.0" {
		t.Errorf("release %+v: want app:1.5.0 (a halted rollout ships no release)", st.Release)
	}
	var held string
	for _, n := range st.Notes() {
		if strings.HasPrefix(n, "cell-a ") {
			held = n
		}
		if strings.Contains(n, "cell-a,") {
			t.Errorf("note %q names cell-a with the cells running 1.5.0", n)
		}
	}
	for _, w := range []string{"cell-a runs app:1.6.0", "rollout r-inconclusive", "wave w0 halted", "37 requests < min 100",
		"`cellctl deploy --image app:1.6.0 --retry`", "`cellctl deploy --image app:1.5.0`"} {
		if !strings.Contains(held, w) {
			t.Errorf("cell-a's note %q lacks %q", held, w)
		}
	}
	if strings.Contains(held, "commit") {
		t.Errorf("cell-a's note %q: committing an image the gate has not passed is not the way out of a halt", held)
	}
	if s := st.Schemas["cell-a"]; s.Version != "1.6.0" || s.Shipped != "1.6.0" || s.Problem != "" || s.LeftBy != "" {
		t.Errorf("cell-a's schema %+v: want 1.6.0, what the release it runs migrated it to", s)
	}

	// A later deploy of the desired state finds cell-a already on 1.6.0
	// (unchanged, so not baked): that does not make 1.6.0 a release —
	// cell-a is still held by the halt, and a new cell gets 1.5.0.
	noop := &executor.Record{ID: "r-noop", State: executor.Complete, Started: t0.Add(2 * time.Hour), Waves: []executor.WaveRecord{
		{Name: "w0", State: executor.WaveUnchanged, Cells: []executor.CellRecord{cellRec("cell-a", executor.CellStateUnchanged, "app:1.6.0", "app:1.4.2")}},
		{Name: "w1", State: executor.WaveUnchanged, Cells: []executor.CellRecord{cellRec("cell-b", executor.CellStateUnchanged, "app:1.5.0", "app:1.4.2")}},
	}}
	fl := demoFleet()
	fl.Cells = append(fl.Cells, &fleet.Cell{Cell: spec.Cell{ID: "cell-e", Image: "app:1.4.2"}, File: "stacks/Pulumi.cell-e.yaml", Lines: map[string]int{}})
	st = Resolve(fl, append(recs, noop))
	if p := st.Pins["cell-a"]; p.Halted == nil || p.Rollout != "r-inconclusive" || p.Image != "app:1.6.0" {
		t.Errorf("cell-a's pin after an unchanged rollout %+v: want still held by r-inconclusive", p)
	}
	if st.Release == nil || st.Release.Image != "app:1.5.0" || st.Fleet.Cell("cell-e").Image != "app:1.5.0" {
		t.Errorf("release %+v, new cell %s: want app:1.5.0", st.Release, st.Fleet.Cell("cell-e").Image)
	}
}

// A new cell's schema comes from its cell add's record (executor.KindCellAdd),
// which migrated it for the image it was given: that is its release's
// schema, not one "from a rollout that has not kept the cell". And a
// rollback command that undid the migration (it reported another version)
// leaves nothing behind.
func TestSchemaOfANewCellAndAnUndoneMigration(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	recs := demoRecords(t0)
	cr := cellRec("cell-e", executor.CellStateUpdated, "app:1.5.0", "app:1.4.2")
	cr.Migration = migration("app:1.5.0", "1.5.0", 0, t0.Add(3*time.Hour))
	recs = append(recs, &executor.Record{ID: "a-0123456789ab", Kind: executor.KindCellAdd, State: executor.Complete, Started: t0.Add(3 * time.Hour),
		Waves: []executor.WaveRecord{{Name: "cell add", State: executor.WaveDone, Cells: []executor.CellRecord{cr}}}})
	a := &recs[1].Waves[0].Cells[0]
	a.RollbackMigration = migration("app:1.5.0", "1.5.0", 0, a.Migration.Stopped.Add(time.Minute))
	fl := demoFleet()
	fl.Cells = append(fl.Cells, &fleet.Cell{Cell: spec.Cell{ID: "cell-e", Image: "app:1.4.2"}, File: "stacks/Pulumi.cell-e.yaml", Lines: map[string]int{}})
	st := Resolve(fl, recs)
	if s := st.Schemas["cell-e"]; s.Version != "1.5.0" || s.Shipped != "1.5.0" || s.Problem != "" {
		t.Errorf("cell-e's schema %+v: want 1.5.0, its cell add's, no problem", s)
	}
	if s := st.Schemas["cell-a"]; s.Version != "1.5.0" || s.LeftBy != "" || s.Problem != "" {
		t.Errorf("cell-a's schema %+v: want 1.5.0, the rollback command undid 1.5.1-bad", s)
	}
}
