package awsapi

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// CloudWatch reads alarm states and metric data.
type CloudWatch struct {
	api *cloudwatch.Client
	// PageSize, when set, asks for smaller pages (DescribeAlarms
	// MaxRecords, GetMetricData MaxDatapoints). Only tests need it: the
	// readers follow NextToken whatever the page size.
	PageSize int32
}

// NewCloudWatch builds the CloudWatch reader for a target.
func NewCloudWatch(ctx context.Context, t Target) (*CloudWatch, error) {
	cfg, err := t.Config(ctx)
	if err != nil {
		return nil, err
	}
	return &CloudWatch{api: cloudwatch.NewFromConfig(cfg)}, nil
}

// Alarm is one metric alarm as CloudWatch reports it.
type Alarm struct {
	Name        string    `json:"name"`
	ARN         string    `json:"arn,omitempty"`
	State       string    `json:"state"` // OK, ALARM, INSUFFICIENT_DATA
	Reason      string    `json:"reason,omitempty"`
	Updated     time.Time `json:"updated"`
	Threshold   float64   `json:"threshold"`
	Comparison  string    `json:"comparison,omitempty"` // GreaterThanThreshold…
	Metric      string    `json:"metric,omitempty"`     // metric name, or the returned expression's label for metric-math alarms
	Description string    `json:"description,omitempty"`
}

// describeAlarmsMaxNames is DescribeAlarms' limit on AlarmNames per call
// (API reference: "Array Members: Maximum number of 100 items").
const describeAlarmsMaxNames = 100

// Alarms returns the metric alarms with the given names, keyed by name.
// A name missing from the map does not exist in the account and region:
// a gate must treat that as a breach (see MissingAlarms), never as OK.
func (c *CloudWatch) Alarms(ctx context.Context, names []string) (map[string]Alarm, error) {
	out := map[string]Alarm{}
	names = dedupe(names)
	for start := 0; start < len(names); start += describeAlarmsMaxNames {
		end := min(start+describeAlarmsMaxNames, len(names))
		in := &cloudwatch.DescribeAlarmsInput{
			AlarmNames: names[start:end],
			AlarmTypes: []types.AlarmType{types.AlarmTypeMetricAlarm},
		}
		if c.PageSize > 0 {
			in.MaxRecords = aws.Int32(c.PageSize)
		}
		p := cloudwatch.NewDescribeAlarmsPaginator(c.api, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("CloudWatch DescribeAlarms: %w", err)
			}
			for _, a := range page.MetricAlarms {
				al := alarmOf(a)
				out[al.Name] = al
			}
		}
	}
	return out, nil
}

// MissingAlarms lists the names that got no alarm back, in order.
func MissingAlarms(names []string, got map[string]Alarm) []string {
	var missing []string
	for _, n := range dedupe(names) {
		if _, ok := got[n]; !ok {
			missing = append(missing, n)
		}
	}
	return missing
}

func alarmOf(a types.MetricAlarm) Alarm {
	al := Alarm{
		Name: aws.ToString(a.AlarmName), ARN: aws.ToString(a.AlarmArn), State: string(a.StateValue),
		Reason: aws.ToString(a.StateReason), Threshold: aws.ToFloat64(a.Threshold),
		Comparison: string(a.ComparisonOperator), Metric: aws.ToString(a.MetricName),
		Description: aws.ToString(a.AlarmDescription),
	}
	if a.StateUpdatedTimestamp != nil {
		al.Updated = a.StateUpdatedTimestamp.UTC()
	}
	if al.Metric == "" {
		for _, q := range a.Metrics {
			if aws.ToBool(q.ReturnData) {
				al.Metric = aws.ToString(q.Label)
				if al.Metric == "" {
					al.Metric = aws.ToString(q.Expression)
				}
			}
		}
	}
	return al
}

// Query is one metric to read: a statistic of a metric over periods.
type Query struct {
	// ID names the series in the result; it must start with a lower-case
	// letter and hold only letters, digits and '_' (GetMetricData's rule).
	ID         string
	Namespace  string
	Metric     string
	Dimensions map[string]string
	// Stat is Sum, Average, Minimum, Maximum, SampleCount or a percentile
	// such as p99.
	Stat   string
	Period time.Duration
}

// Point is one datapoint.
type Point struct {
	Time  time.Time `json:"time"`
	Value float64   `json:"value"`
}

// Series is what GetMetricData returned for one query, oldest point first.
type Series struct {
	ID     string  `json:"id"`
	Label  string  `json:"label,omitempty"`
	Points []Point `json:"points"`
}

// MetricData reads the queries over [start, end), following NextToken
// until every point is in. A result CloudWatch marks InternalError or
// Forbidden is an error naming the query: an unreadable signal must never
// look like a quiet one.
func (c *CloudWatch) MetricData(ctx context.Context, qs []Query, start, end time.Time) (map[string]Series, error) {
	if len(qs) == 0 {
		return map[string]Series{}, nil
	}
	in := &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(start), EndTime: aws.Time(end),
		ScanBy: types.ScanByTimestampAscending,
	}
	if c.PageSize > 0 {
		in.MaxDatapoints = aws.Int32(c.PageSize)
	}
	for _, q := range qs {
		if q.Period <= 0 || q.Period%time.Second != 0 {
			return nil, fmt.Errorf("metric %s: period %s must be a positive whole number of seconds", q.ID, q.Period)
		}
		var dims []types.Dimension
		for _, k := range slices.Sorted(maps.Keys(q.Dimensions)) {
			dims = append(dims, types.Dimension{Name: aws.String(k), Value: aws.String(q.Dimensions[k])})
		}
		in.MetricDataQueries = append(in.MetricDataQueries, types.MetricDataQuery{
			Id: aws.String(q.ID),
			MetricStat: &types.MetricStat{
				Metric: &types.Metric{Namespace: aws.String(q.Namespace), MetricName: aws.String(q.Metric), Dimensions: dims},
				Period: aws.Int32(int32(q.Period / time.Second)),
				Stat:   aws.String(q.Stat),
			},
			ReturnData: aws.Bool(true),
		})
	}
	out := map[string]Series{}
	p := cloudwatch.NewGetMetricDataPaginator(c.api, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("CloudWatch GetMetricData: %w", err)
		}
		for _, r := range page.MetricDataResults {
			id := aws.ToString(r.Id)
			switch r.StatusCode {
			case types.StatusCodeInternalError, types.StatusCodeForbidden:
				var msgs []string
				for _, m := range r.Messages {
					msgs = append(msgs, aws.ToString(m.Code)+": "+aws.ToString(m.Value))
				}
				return nil, fmt.Errorf("CloudWatch GetMetricData: metric %s: %s %s", id, r.StatusCode, strings.Join(msgs, "; "))
			}
			if len(r.Timestamps) != len(r.Values) {
				return nil, fmt.Errorf("CloudWatch GetMetricData: metric %s: %d timestamps for %d values", id, len(r.Timestamps), len(r.Values))
			}
			s := out[id]
			s.ID = id
			if l := aws.ToString(r.Label); l != "" {
				s.Label = l
			}
			for i, t := range r.Timestamps {
				s.Points = append(s.Points, Point{Time: t.UTC(), Value: r.Values[i]})
			}
			out[id] = s
		}
	}
	for id, s := range out {
		sort.SliceStable(s.Points, func(i, j int) bool { return s.Points[i].Time.Before(s.Points[j].Time) })
		out[id] = s
	}
	// A query CloudWatch had no data for still gets an (empty) series,
	// so callers can tell "no data" from "not asked".
	for _, q := range qs {
		if _, ok := out[q.ID]; !ok {
			out[q.ID] = Series{ID: q.ID}
		}
	}
	return out, nil
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
