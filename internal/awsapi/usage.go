package awsapi

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// AlarmCount counts the region's metric and composite alarms
// (DescribeAlarms, all pages).
func (c *CloudWatch) AlarmCount(ctx context.Context) (int, error) {
	in := &cloudwatch.DescribeAlarmsInput{AlarmTypes: []types.AlarmType{types.AlarmTypeMetricAlarm, types.AlarmTypeCompositeAlarm}}
	if c.PageSize > 0 {
		in.MaxRecords = &c.PageSize
	}
	n := 0
	p := cloudwatch.NewDescribeAlarmsPaginator(c.api, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("CloudWatch DescribeAlarms: %w", err)
		}
		n += len(page.MetricAlarms) + len(page.CompositeAlarms)
	}
	return n, nil
}

// UsageWindow is how far back a quota's AWS/Usage metric is read. AWS
// publishes these metrics every minute while there is usage.
const UsageWindow = 15 * time.Minute

// Usage is a quota's usage read from its AWS/Usage metric.
type Usage struct {
	// Value is the latest datapoint's value (the recommended statistic).
	Value float64
	// At is the latest datapoint's time; zero when there was none.
	At time.Time
	// NoData: the metric had no datapoint in the window. AWS publishes
	// usage metrics only while a resource is in use, so this means none
	// is — the caller decides what that is worth.
	NoData bool
}

// ReadUsage reads one AWS/Usage metric over the last UsageWindow before
// now (GetMetricData, one-minute periods, the metric's recommended
// statistic; "" = Maximum).
func (c *CloudWatch) ReadUsage(ctx context.Context, m UsageMetric, now time.Time) (Usage, error) {
	stat := m.Stat
	if stat == "" {
		stat = "Maximum"
	}
	series, err := c.MetricData(ctx, []Query{{ID: "usage", Namespace: m.Namespace, Metric: m.Metric, Dimensions: m.Dimensions, Stat: stat, Period: time.Minute}},
		now.Add(-UsageWindow), now)
	if err != nil {
		return Usage{}, err
	}
	pts := series["usage"].Points
	if len(pts) == 0 {
		return Usage{NoData: true}, nil
	}
	last := pts[len(pts)-1]
	return Usage{Value: last.Value, At: last.Time}, nil
}
