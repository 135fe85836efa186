package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/signal"
)

func demoPlan(t *testing.T) *waves.Plan {
	t.Helper()
	p, err := waves.Parse("waves.yaml", []byte(`waves:
  - {name: canary, cells: [cell-a], bake: 30m}
  - {name: wave-1, cells: [cell-b]}
  - {name: wave-2, cells: [cell-c, cell-d], max_parallel: 1}
gate:
  promote_if: {error_rate_5xx: "< 0.5%"}
`))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewRecordAndResumePoint(t *testing.T) {
	r := New(NewID(t0), demoPlan(t), Me("x", t0), func(string) signal.Thresholds {
		return signal.Defaults().Merge(signal.Thresholds{ErrorRate5xx: signal.Threshold{Op: signal.Below, Value: 0.5}})
	})
	if len(r.Waves) != 3 || r.Waves[2].Cells[1].ID != "cell-d" || r.Waves[0].Bake != 30*time.Minute ||
		!strings.HasPrefix(r.Waves[0].Gate.Thresholds["cell-a"], "error_rate_5xx < 0.5%") || r.Waves[0].Gate.OnBreach != "halt_and_rollback_wave" {
		t.Fatalf("%+v", r.Waves[0])
	}
	if r.NextWave() != 0 {
		t.Fatal("a new rollout starts at the first wave")
	}
	if err := r.CanRunWave("wave-1"); err == nil || !strings.Contains(err.Error(), `before wave "canary"`) {
		t.Errorf("--wave wave-1 before the canary: %v", err)
	}
	r.Waves[0].State = WavePassed
	r.Waves[1].State = WaveUnchanged
	if r.NextWave() != 2 || r.CanRunWave("wave-2") != nil {
		t.Errorf("next %d, can run wave-2: %v", r.NextWave(), r.CanRunWave("wave-2"))
	}
	if err := r.CanRunWave("wave-9"); err == nil || !strings.Contains(err.Error(), "its waves: canary, wave-1, wave-2") {
		t.Errorf("unknown wave: %v", err)
	}
	if err := r.SetCell("cell-c", CellUpdating, t0); err != nil {
		t.Fatal(err)
	}
	if got := r.Interrupted(); len(got) != 1 || got[0] != "cell-c" {
		t.Errorf("interrupted %v", got)
	}
	if r.SetCell("cell-z", CellPassed, t0) == nil {
		t.Error("unknown cell accepted")
	}
}

func TestRowsShowWhatEachCellRuns(t *testing.T) {
	r := New(NewID(t0), demoPlan(t), Me("x", t0), nil)
	old, img := Config{"cells:image": {Value: "app:1"}}, Config{"cells:image": {Value: "app:2"}}
	set := func(id string, st CellState) {
		c, _ := r.Cell(id)
		c.Before, c.After, c.State = old, img, st
	}
	set("cell-a", CellPassed)
	set("cell-b", CellRolledBack)
	set("cell-c", CellUntouched)
	set("cell-d", CellUntouched)
	want := []Row{{"cell-a", "canary", "app:2", CellPassed}, {"cell-b", "wave-1", "app:1", CellRolledBack},
		{"cell-c", "wave-2", "app:1", CellUntouched}, {"cell-d", "wave-2", "app:1", CellUntouched}}
	got := r.Rows("cells")
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
