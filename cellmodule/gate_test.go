package cellmodule

import (
	"testing"

	"github.com/cellctl/cellctl/waves/signal"
)

// TestAlarmsTakeTheGateThresholds: a cell whose wave gate says
// promote_if {error_rate_5xx: "< 0.5%", p99_latency_ms: "< 400",
// unhealthy_tasks: "< 2"} gets alarms that fire exactly when those
// conditions fail — operator and value both follow the gate.
func TestAlarmsTakeTheGateThresholds(t *testing.T) {
	s := testSpec("cell-q", 9, "us-east-1", "single")
	s.Gate.ErrorRate5xx = signal.Threshold{Op: signal.Below, Value: 0.5}
	s.Gate.P99LatencyMs = signal.Threshold{Op: signal.Below, Value: 400}
	s.Gate.UnhealthyTasks = signal.Threshold{Op: signal.Below, Value: 2}
	r, err := runCell(s, newTestModel(s.Region), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		resource  string
		threshold float64
	}{
		{"5xx-rate", 0.5},
		{"p99-latency", 0.4},
		{"unhealthy-tasks", 2},
	} {
		a := in(r.one(t, c.resource))
		if a["comparisonOperator"] != "GreaterThanOrEqualToThreshold" || a["threshold"] != c.threshold {
			t.Errorf("%s alarm: %v %v, want GreaterThanOrEqualToThreshold %g", c.resource, a["comparisonOperator"], a["threshold"], c.threshold)
		}
	}
	if got := in(r.one(t, "5xx-rate"))["alarmDescription"]; got != `cell cell-q: fires when error_rate_5xx < 0.5% fails (the wave gate's promote_if)` {
		t.Errorf("description %q", got)
	}
}
