package deploy

import (
	"context"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/waves/gate"
)

// CloudWatchReader is gate.Reader over the aws-sdk-go-v2 CloudWatch
// reader: the same code on AWS and on the simulator's loopback endpoint.
type CloudWatchReader struct {
	CW *awsapi.CloudWatch
}

// AlarmStates implements gate.Reader; an alarm that does not exist is
// absent from the map (the gate breaches on it).
func (r *CloudWatchReader) AlarmStates(ctx context.Context, names []string) (map[string]gate.AlarmState, error) {
	alarms, err := r.CW.Alarms(ctx, names)
	if err != nil {
		return nil, err
	}
	out := make(map[string]gate.AlarmState, len(alarms))
	for name, a := range alarms {
		out[name] = gate.AlarmState{Name: a.Name, State: a.State, Reason: a.Reason}
	}
	return out, nil
}

// MetricData implements gate.Reader. awsapi follows every NextToken and
// fails on a result CloudWatch marks InternalError or Forbidden, so a
// series it returns is complete; one it does not return stays absent (the
// gate breaches on it).
func (r *CloudWatchReader) MetricData(ctx context.Context, q gate.MetricQuery) ([]gate.Series, error) {
	qs := make([]awsapi.Query, 0, len(q.Metrics))
	for _, m := range q.Metrics {
		qs = append(qs, awsapi.Query{ID: m.ID, Namespace: m.Namespace, Metric: m.Name, Dimensions: m.Dimensions, Stat: m.Stat, Period: q.Period})
	}
	got, err := r.CW.MetricData(ctx, qs, q.Start, q.End)
	if err != nil {
		return nil, err
	}
	out := make([]gate.Series, 0, len(got))
	for _, m := range q.Metrics {
		s, ok := got[m.ID]
		if !ok {
			continue
		}
		gs := gate.Series{ID: m.ID, Complete: true}
		for _, p := range s.Points {
			gs.Timestamps = append(gs.Timestamps, p.Time)
			gs.Values = append(gs.Values, p.Value)
		}
		out = append(out, gs)
	}
	return out, nil
}
