package fleet

import (
	"testing"
	"testing/fstest"
)

// Lanes default to M = 8, r = 2 without queues; the baseline sets them for
// every cell and a cell overrides them; laneQueues takes a YAML boolean or
// the string pulumi config set writes.
func TestLanesBaselineAndOverride(t *testing.T) {
	fsys := caseFS(t, nil)
	f, err := LoadFS(fsys, "FLEET")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Cells {
		if c.Lanes != 8 || c.LaneShardSize != 2 || c.LaneQueues {
			t.Errorf("%s: lanes %d, shard %d, queues %v; want the defaults 8, 2, false", c.ID, c.Lanes, c.LaneShardSize, c.LaneQueues)
		}
	}
	project := string(fsys["Pulumi.yaml"].Data) + "  cells:lanes: 64\n  cells:laneQueues: true\n"
	fsys["Pulumi.yaml"] = &fstest.MapFile{Data: []byte(project)}
	fsys["stacks/Pulumi.cell-b.yaml"] = &fstest.MapFile{Data: []byte("config:\n  cells:index: 2\n  cells:lanes: 16\n  cells:laneShardSize: 3\n  cells:laneQueues: \"false\"\n")}
	f, err = LoadFS(fsys, "FLEET")
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Cell("cell-a"), f.Cell("cell-b")
	if a.Lanes != 64 || a.LaneShardSize != 2 || !a.LaneQueues {
		t.Errorf("cell-a: %d, %d, %v; want the baseline 64, 2, true", a.Lanes, a.LaneShardSize, a.LaneQueues)
	}
	if b.Lanes != 16 || b.LaneShardSize != 3 || b.LaneQueues {
		t.Errorf("cell-b: %d, %d, %v; want its overrides 16, 3, false", b.Lanes, b.LaneShardSize, b.LaneQueues)
	}
	want := []string{"cells:laneQueues", "cells:laneShardSize", "cells:lanes"}
	if len(b.Overrides) != 3 || b.Overrides[0] != want[0] || b.Overrides[1] != want[1] || b.Overrides[2] != want[2] {
		t.Errorf("cell-b overrides = %v, want %v", b.Overrides, want)
	}
}
