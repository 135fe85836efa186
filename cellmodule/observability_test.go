package cellmodule

import (
	"testing"

	"github.com/cellctl/cellctl/cellmodule/spec"
)

// The task exports the cell as CELL_ID and as the OpenTelemetry resource
// attribute cell.id, so the application's own metrics, logs and traces
// carry the cell label with no code of its own.
func TestTaskExportsTheCellLabel(t *testing.T) {
	s := testSpec("cell-o", 12, "us-east-1", "single")
	r, err := runCell(s, newTestModel(s.Region), nil)
	if err != nil {
		t.Fatal(err)
	}
	var defs []map[string]any
	mustJSON(t, str(in(r.one(t, "task"))["containerDefinitions"]), &defs)
	env := map[string]string{}
	for _, e := range defs[0]["environment"].([]any) {
		env[str(get(e, "name"))] = str(get(e, "value"))
	}
	if env["CELL_ID"] != "cell-o" || env["OTEL_RESOURCE_ATTRIBUTES"] != "cell.id=cell-o" {
		t.Errorf("CELL_ID=%q OTEL_RESOURCE_ATTRIBUTES=%q", env["CELL_ID"], env["OTEL_RESOURCE_ATTRIBUTES"])
	}
}

// CellCapacityWarning: RequestCount's one-minute Sum above 80 % of the
// published capacity (req/s × 60) for 10 minutes, from the cell's config,
// exported under alarmNames.capacity; no capacity published, no alarm.
func TestCapacityAlarmFromConfig(t *testing.T) {
	s := testSpec("cell-p", 13, "us-east-1", "single")
	s.CapacityRPS = 50
	r, err := runCell(s, newTestModel(s.Region), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := in(r.one(t, "capacity-warning"))
	want := map[string]any{
		"name": "cellctl-shop-cell-p-capacity-warning", "metricName": "RequestCount", "namespace": "AWS/ApplicationELB",
		"statistic": "Sum", "period": float64(60), "comparisonOperator": "GreaterThanThreshold",
		"threshold": float64(50 * 60 * 80 / 100), "evaluationPeriods": float64(10), "datapointsToAlarm": float64(10),
		"treatMissingData": "notBreaching",
	}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("capacity alarm %s = %v, want %v", k, a[k], v)
		}
	}
	if get(a, "dimensions", "LoadBalancer") != str(out(r.one(t, "alb"))["arnSuffix"]) {
		t.Errorf("dimensions %v", a["dimensions"])
	}
	if got := get(normalize(r.outputs["alarmNames"].Value), spec.CapacityAlarmKey); got != "cellctl-shop-cell-p-capacity-warning" {
		t.Errorf("alarmNames.capacity = %v", got)
	}

	s.ID, s.Index, s.CapacityRPS = "cell-n", 14, 0
	s.CapacityWarningMinutes, s.CapacityWarningPercent = 15, 90
	r, err = runCell(s, newTestModel(s.Region), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range r.rec.Resources() {
		if res.Name == "cell-n-capacity-warning" {
			t.Errorf("a cell without a published capacity got %s", res.Name)
		}
	}
}
