package executor

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/waves"
)

func TestDiffNamesEverySettingThatChanges(t *testing.T) {
	old := CellConfig{Image: "app:v1", Settings: map[string]any{"auroraInstances": 2, "cacheNodeType": "cache.t4g.small", "tags": map[string]any{"team": "a"}}}
	new := CellConfig{Image: "app:v2", Settings: map[string]any{"auroraInstances": 3.0, "taskCpu": 512, "tags": map[string]any{"team": "b"}}}
	got := Diff(old, new)
	want := []Change{
		{Key: "auroraInstances", Old: "2", New: "3"},
		{Key: "cacheNodeType", Old: `"cache.t4g.small"`, New: ""},
		{Key: "image", Old: `"app:v1"`, New: `"app:v2"`},
		{Key: "tags.team", Old: `"a"`, New: `"b"`},
		{Key: "taskCpu", Old: "", New: "512"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff =\n%+v\nwant\n%+v", got, want)
	}
	if d := Diff(old, old.Clone()); len(d) != 0 {
		t.Errorf("a config differs from its clone: %+v", d)
	}
}

func TestEqualIgnoresHowNumbersWereWritten(t *testing.T) {
	a := CellConfig{Image: "x", Settings: map[string]any{"n": 2, "f": 0.5}}
	b := CellConfig{Image: "x", Settings: map[string]any{"f": 0.5, "n": float64(2)}}
	if !a.Equal(b) {
		t.Errorf("2 and 2.0 differ")
	}
	c := CellConfig{Image: "x", Settings: map[string]any{"n": 2, "f": 0.5, "extra": nil}}
	if a.Equal(c) {
		t.Errorf("an added key is equal")
	}
	bad := CellConfig{Image: "x", Settings: map[string]any{"ch": make(chan int)}}
	if bad.Equal(bad) {
		t.Errorf("an unserialisable config equals itself: it would be skipped as unchanged")
	}
}

func TestDescribeIsThePlanWithChangesExposureAndTime(t *testing.T) {
	f := newFleet(t)
	f.cells.current["cell-b"] = withImage(oldConfig(), "app:v2") // already there
	f.plan.Exposure = []waves.WaveExposure{{Wave: "wave-1", BucketShare: 0.05, PinnedShare: 0.10},
		{Wave: "wave-2", BucketShare: 0.25, PinnedShare: 0.30}, {Wave: "wave-3", BucketShare: 0.70, PinnedShare: 0.60}}
	f.plan.Waves[0].Gate.MinRequests = 100
	d, err := Describe(context.Background(), f.cells, nil, nil, f.plan, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	w1, w2, w3 := d.Waves[0], d.Waves[1], d.Waves[2]
	if !reflect.DeepEqual(w1.Cells[0].Changes, []Change{{Key: "image", Old: `"app:v1"`, New: `"app:v2"`}}) || w1.Gate != "min 100 requests" {
		t.Errorf("wave-1: %+v", w1)
	}
	if !w2.Cells[0].Unchanged || w2.Cells[1].Unchanged || w2.Changed != 1 {
		t.Errorf("wave-2 cells: %+v", w2.Cells)
	}
	// wave-1: 1 round + 30m; wave-2: 1 round + 1h; wave-3: max_parallel 1
	// so 2 rounds + 10m.
	if w1.Expected != 32*time.Minute || w2.Expected != 62*time.Minute || w3.Expected != 14*time.Minute || d.Expected != 108*time.Minute {
		t.Errorf("expected times %s %s %s total %s", w1.Expected, w2.Expected, w3.Expected, d.Expected)
	}
	if *w2.Cumulative != (Exposure{Buckets: 0.30, Pinned: 0.40}) || w3.Cumulative.Buckets != 1 {
		t.Errorf("cumulative exposure %+v %+v", *w2.Cumulative, *w3.Cumulative)
	}
	if d.ID != f.plan.ID() || len(f.cells.applies()) != 0 {
		t.Errorf("dry run id %s (want %s) or it changed cells", d.ID, f.plan.ID())
	}
}

func TestDescribeReportsUnreadableCells(t *testing.T) {
	f := newFleet(t)
	f.cells.currentErr = map[string]error{"cell-d": errors.New("stack not found")}
	d, err := Describe(context.Background(), f.cells, nil, nil, f.plan, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "cell-d: stack not found") {
		t.Fatalf("err = %v", err)
	}
	if c := d.Waves[2].Cells[0]; c.Error == "" || d.Waves[2].Changed != 2 {
		t.Errorf("cell-d described as %+v (wave changed %d): unknown must count as a change", c, d.Waves[2].Changed)
	}
	if d.Waves[0].Cumulative != nil {
		t.Errorf("cumulative exposure without exposure")
	}
}
