package deploy

import (
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/waves/executor"
)

func shipped(id string, state executor.RolloutState, at int, images map[string]string, cpu int) *executor.Record {
	r := &executor.Record{ID: id, State: state, Started: time.Date(2026, 12, 1, at, 0, 0, 0, time.UTC)}
	w := executor.WaveRecord{Name: "canary"}
	for c, img := range images {
		w.Cells = append(w.Cells, executor.CellRecord{Cell: c, After: executor.CellConfig{Image: img, Settings: map[string]any{"taskCpu": cpu}}})
	}
	r.Waves = []executor.WaveRecord{w}
	return r
}

func TestPreviousIsTheCompletedRolloutBeforeTheLatest(t *testing.T) {
	recs := []*executor.Record{
		shipped("r-00000000000c", executor.Complete, 12, map[string]string{"cell-a": "app:3"}, 256),
		shipped("r-00000000000a", executor.Complete, 10, map[string]string{"cell-a": "app:1"}, 256),
		shipped("r-00000000000b", executor.Complete, 11, map[string]string{"cell-a": "app:2"}, 256),
		shipped("r-00000000000d", executor.HaltedState, 13, map[string]string{"cell-a": "app:4"}, 256),
		{ID: "c-00000000000e", Kind: executor.KindCanary, State: executor.Complete, Started: time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)},
	}
	u, err := Previous(recs, "")
	if err != nil || u.From != "r-00000000000b" || u.Images["cell-a"] != "app:2" {
		t.Fatalf("previous: %+v, %v; want r-00000000000b's app:2 (the halted one and the canary are not rollouts that shipped)", u, err)
	}
	if u, err := Previous(recs, "r-00000000000a"); err != nil || u.Images["cell-a"] != "app:1" {
		t.Fatalf("--to: %+v, %v", u, err)
	}
	for to, want := range map[string]string{"r-00000000000d": "not a completed rollout", "r-0000000000ff": "no such rollout"} {
		if _, err := Previous(recs, to); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--to %s: %v, want %q", to, err, want)
		}
	}
	if _, err := Previous(recs[:1], ""); err == nil || !strings.Contains(err.Error(), "nothing to undo") {
		t.Errorf("one completed rollout: %v", err)
	}
}

func TestUndoRefusesAnotherSettingThanTheRepositorys(t *testing.T) {
	from := shipped("r-00000000000b", executor.Complete, 11, map[string]string{"cell-a": "app:2"}, 256)
	u := &Undo{From: from.ID, Images: map[string]string{"cell-a": "app:2"}}
	same := map[string]executor.CellConfig{"cell-a": {Image: "app:3", Settings: map[string]any{"taskCpu": 256}}}
	if err := u.check(from, same); err != nil {
		t.Fatalf("only the image differs: %v", err)
	}
	other := map[string]executor.CellConfig{"cell-a": {Image: "app:3", Settings: map[string]any{"taskCpu": 512}}}
	err := u.check(from, other)
	if err == nil || !strings.Contains(err.Error(), "cell-a taskCpu: 256 then, 512 now") {
		t.Fatalf("a changed setting: %v", err)
	}
}
