package signal

import (
	"github.com/cellctl/cellctl/internal/awsname"

	"strings"
	"testing"
)

func TestParseThresholds(t *testing.T) {
	cases := []struct {
		signal Name
		text   string
		want   Threshold
	}{
		{ErrorRate5xx, "< 0.5%", Threshold{Below, 0.5}},
		{ErrorRate5xx, "<=1%", Threshold{AtMost, 1}},
		{P99LatencyMs, "< 400", Threshold{Below, 400}},
		{P99LatencyMs, "<= 400ms", Threshold{AtMost, 400}},
		{P99LatencyMs, "< 1.5s", Threshold{Below, 1500}},
		{UnhealthyTasks, "< 1", Threshold{Below, 1}},
		{HealthyTasks, ">= 2", Threshold{AtLeast, 2}},
		{HealthyTasks, "> 0 tasks", Threshold{Above, 0}},
	}
	for _, c := range cases {
		got, err := MustLookup(c.signal).Parse(c.text)
		if err != nil || got != c.want {
			t.Errorf("%s %q = %+v, %v; want %+v", c.signal, c.text, got, err, c.want)
		}
	}
}

func TestParseRefusesWhatCannotBeMeant(t *testing.T) {
	cases := []struct {
		signal Name
		text   string
		want   string
	}{
		{ErrorRate5xx, "0.5%", `"0.5%" has no comparison`},
		{ErrorRate5xx, "< 0.5", `"< 0.5" needs the unit %`},
		{ErrorRate5xx, "> 0.5%", `compares the wrong way: error_rate_5xx is healthy when below the threshold, use "<" or "<="`},
		{ErrorRate5xx, "< 150%", `out of range`},
		{ErrorRate5xx, "< 0%", `can never pass`},
		{P99LatencyMs, "< 400us", `unknown unit "us" (allowed: ms, s; a bare number is milliseconds)`},
		{P99LatencyMs, "< 2m", `unknown unit "m"`},
		{P99LatencyMs, "< 61s", `out of range`},
		{P99LatencyMs, "fast", `cannot read "fast"`},
		{HealthyTasks, "< 2", `use ">" or ">="`},
		{HealthyTasks, ">= 1.5", `a whole number`},
		{UnhealthyTasks, "< 1%", `unknown unit "%"`},
	}
	for _, c := range cases {
		_, err := MustLookup(c.signal).Parse(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want it to contain %q", c.signal, c.text, err, c.want)
		}
	}
}

func TestPassesAndAlarmAgree(t *testing.T) {
	// The alarm must fire exactly when the gate fails, at and around the
	// threshold, for every comparison.
	for _, op := range []Op{Below, AtMost, Above, AtLeast} {
		th := Threshold{Op: op, Value: 5}
		for _, v := range []float64{4, 5, 6} {
			fires := false
			switch th.AlarmComparison() {
			case "GreaterThanOrEqualToThreshold":
				fires = v >= 5
			case "GreaterThanThreshold":
				fires = v > 5
			case "LessThanOrEqualToThreshold":
				fires = v <= 5
			case "LessThanThreshold":
				fires = v < 5
			default:
				t.Fatalf("%s: comparison %q", op, th.AlarmComparison())
			}
			if fires == th.Passes(v) {
				t.Errorf("%s 5 at %g: passes=%v but alarm fires=%v", op, v, th.Passes(v), fires)
			}
		}
	}
	if (Threshold{}).Passes(0) {
		t.Error("an unset threshold must pass nothing")
	}
}

func TestDefaultsMatchTheAlarmKeys(t *testing.T) {
	// The cell baseline's alarm keys (1 %, 1000 ms) give the same
	// thresholds as the built-in defaults, so a fleet without a gate keeps
	// the alarms it had.
	if FromAlarmKeys(1, 1000) != Defaults() || !Defaults().Complete() {
		t.Fatalf("defaults %v, from keys %v", Defaults(), FromAlarmKeys(1, 1000))
	}
	var over Thresholds
	over.Set(P99LatencyMs, Threshold{Below, 400})
	m := Defaults().Merge(over)
	if m.P99LatencyMs != (Threshold{Below, 400}) || m.ErrorRate5xx != Defaults().ErrorRate5xx {
		t.Errorf("merge = %v", m)
	}
	if got := m.String(); got != "error_rate_5xx <= 1%, p99_latency_ms < 400ms, unhealthy_tasks <= 0 tasks, healthy_tasks >= 1 task" {
		t.Errorf("String() = %q", got)
	}
}

func TestAlarmNames(t *testing.T) {
	got := AlarmNames(awsname.For("shop", "cell-a"))
	want := map[string]string{"5xx": "cellctl-shop-cell-a-5xx-rate", "p99": "cellctl-shop-cell-a-p99-latency", "unhealthy": "cellctl-shop-cell-a-unhealthy-tasks"}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if MustLookup(HealthyTasks).AlarmName(awsname.For("", "cell-a")) != "" {
		t.Error("healthy_tasks has no alarm")
	}
	if ms := Metrics([]Name{ErrorRate5xx, P99LatencyMs, ErrorRate5xx}); len(ms) != 4 || ms[3] != ResponseTime {
		t.Errorf("metrics %v", ms)
	}
	if got := ByLegacy("unhealthy-tasks"); len(got) != 2 {
		t.Errorf("legacy unhealthy-tasks selects %v", got)
	}
}

func TestFormatValue(t *testing.T) {
	rate, p99, tasks := MustLookup(ErrorRate5xx), MustLookup(P99LatencyMs), MustLookup(HealthyTasks)
	for _, c := range []struct {
		s    Signal
		v    float64
		want string
	}{
		{rate, 0.1 * 7, "0.7%"}, {rate, 100.0 / 3, "33.333%"}, {rate, 0.5, "0.5%"}, {rate, 0, "0%"},
		{p99, 0.2345 * 1000, "234.5ms"}, {p99, 400, "400ms"}, {tasks, 1, "1 task"}, {tasks, 3, "3 tasks"},
	} {
		if got := c.s.FormatValue(c.v); got != c.want {
			t.Errorf("%s %v = %q, want %q", c.s.Name, c.v, got, c.want)
		}
	}
}
