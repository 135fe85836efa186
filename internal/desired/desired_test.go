package desired

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/fleet"
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
