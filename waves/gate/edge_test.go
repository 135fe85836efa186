package gate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/signal"
)

// edgeReader answers the edge metrics of one distribution; a metric in
// missing is not returned at all.
type edgeReader struct {
	values  map[string][]float64 // metric ID → datapoints
	missing map[string]bool
	asked   []MetricQuery
}

func (r *edgeReader) AlarmStates(context.Context, []string) (map[string]AlarmState, error) {
	panic("the edge signals have no alarms: the gate must not ask for any")
}

func (r *edgeReader) MetricData(_ context.Context, q MetricQuery) ([]Series, error) {
	r.asked = append(r.asked, q)
	var out []Series
	for _, m := range q.Metrics {
		if r.missing[m.ID] {
			continue
		}
		s := Series{ID: m.ID, Complete: true}
		for _, v := range r.values[m.ID] {
			s.Timestamps = append(s.Timestamps, q.Start)
			s.Values = append(s.Values, v)
		}
		out = append(out, s)
	}
	return out, nil
}

func edgeCheck(r Reader, minRequests int) Poll {
	c := &Checker{Reader: r, Gate: waves.Gate{MinRequests: minRequests}, Signals: signal.Edge}
	return c.Check(context.Background(), Target{Cell: "router", Distribution: "E2STAGING00001", Thresholds: signal.EdgeDefaults()}, t0, t0.Add(5*time.Minute))
}

func TestEdgeSignalsReadTheStagingDistributionInAWSCloudFront(t *testing.T) {
	r := &edgeReader{values: map[string][]float64{"requests": {500}, "edge5xxrate": {0.2}}}
	p := edgeCheck(r, 100)
	if p.Verdict != waves.Pass {
		t.Fatalf("healthy staging distribution: %s", p.Summary())
	}
	if len(r.asked) != 1 {
		t.Fatalf("%d GetMetricData calls, want 1", len(r.asked))
	}
	for _, m := range r.asked[0].Metrics {
		if m.Namespace != "AWS/CloudFront" || m.Dimensions["DistributionId"] != "E2STAGING00001" || m.Dimensions["Region"] != "Global" || len(m.Dimensions) != 2 {
			t.Errorf("metric %s read from %s %v, want AWS/CloudFront {DistributionId: E2STAGING00001, Region: Global}", m.Name, m.Namespace, m.Dimensions)
		}
	}
}

func TestEdgeSignalsBreachOnErrorsAndFailClosed(t *testing.T) {
	cases := []struct {
		name    string
		r       *edgeReader
		verdict waves.Decision
		want    string
	}{
		{"5xx rate above the threshold", &edgeReader{values: map[string][]float64{"requests": {500}, "edge5xxrate": {4}}}, waves.Breached, "edge_error_rate_5xx 4%"},
		{"the function failed", &edgeReader{values: map[string][]float64{"requests": {500}, "edge5xxrate": {0}, "lambdaexec": {3}}}, waves.Breached, "edge_function_errors 3 errors"},
		{"invalid responses count too", &edgeReader{values: map[string][]float64{"requests": {500}, "edge5xxrate": {0}, "lambdavalid": {1}}}, waves.Breached, "edge_function_errors 1 error"},
		{"error counter not returned", &edgeReader{values: map[string][]float64{"requests": {500}, "edge5xxrate": {0}}, missing: map[string]bool{"lambdaexec": true}}, waves.Breached, "LambdaExecutionError was not returned"},
		{"5xx rate without a datapoint", &edgeReader{values: map[string][]float64{"requests": {500}}}, waves.Breached, "no 5xxErrorRate datapoint"},
		{"too little traffic", &edgeReader{values: map[string][]float64{"requests": {20}, "edge5xxrate": {0}}}, waves.Inconclusive, "fewer than min_requests 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := edgeCheck(c.r, 100)
			if p.Verdict != c.verdict || !strings.Contains(p.Summary(), c.want) {
				t.Fatalf("got %s, want %s containing %q", p.Summary(), c.verdict, c.want)
			}
		})
	}
}
