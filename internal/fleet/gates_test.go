package fleet

import (
	"testing"
	"testing/fstest"

	"github.com/cellctl/cellctl/waves/signal"
)

// TestCellsGetTheirWavesGate: the loader hands each cell its wave's
// promote_if, so the alarms the template builds from spec.Thresholds() and
// the gate agree; signals the gate leaves out keep the cell's alarm keys.
func TestCellsGetTheirWavesGate(t *testing.T) {
	fsys := caseFS(t, nil)
	fsys["stacks/Pulumi.cell-b.yaml"] = &fstest.MapFile{Data: []byte("config:\n  cells:index: 2\n  cells:alarmP99LatencyMs: 700\n")}
	fsys["stacks/waves.yaml"] = &fstest.MapFile{Data: []byte(`waves:
  - name: canary
    cells: [cell-a]
    gate:
      promote_if: {p99_latency_ms: "< 400"}
  - name: rest
    cells: [cell-b]
gate:
  promote_if: {error_rate_5xx: "< 0.5%", healthy_tasks: ">= 2"}
`)}
	f, err := LoadFS(fsys, "FLEET")
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.Cell("cell-a").Thresholds(), f.Cell("cell-b").Thresholds()
	want := func(got signal.Threshold, op signal.Op, v float64, what string) {
		t.Helper()
		if got != (signal.Threshold{Op: op, Value: v}) {
			t.Errorf("%s = %+v, want %s %g", what, got, op, v)
		}
	}
	want(a.ErrorRate5xx, signal.Below, 0.5, "cell-a error rate (fleet gate)")
	want(a.P99LatencyMs, signal.Below, 400, "cell-a p99 (wave gate)")
	want(a.HealthyTasks, signal.AtLeast, 2, "cell-a healthy tasks (fleet gate)")
	want(a.UnhealthyTasks, signal.AtMost, 0, "cell-a unhealthy tasks (default)")
	want(b.ErrorRate5xx, signal.Below, 0.5, "cell-b error rate (fleet gate)")
	want(b.P99LatencyMs, signal.AtMost, 700, "cell-b p99 (its alarm key)")
}
