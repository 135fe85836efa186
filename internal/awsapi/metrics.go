package awsapi

import (
	"context"
	"fmt"
	"math"
	"time"
)

// The metric vocabulary of a cell: what the gate and the health view read
// from a cell's ALB and target group. Kept in this one table so it is easy
// to repoint (another namespace, another statistic) without touching the
// readers.
const (
	MetricRequests     = "requests"  // RequestCount, Sum
	MetricTarget5xx    = "target5xx" // HTTPCode_Target_5XX_Count, Sum
	MetricELB5xx       = "elb5xx"    // HTTPCode_ELB_5XX_Count, Sum
	MetricP99Latency   = "p99"       // TargetResponseTime, p99 (seconds)
	MetricHealthyHosts = "healthy"   // HealthyHostCount, Minimum
)

// ALBNamespace is the namespace of Application Load Balancer metrics.
const ALBNamespace = "AWS/ApplicationELB"

// CellMetric is one row of the vocabulary.
type CellMetric struct {
	ID     string
	Metric string
	Stat   string
	// PerTargetGroup metrics take the TargetGroup dimension as well as
	// LoadBalancer (HealthyHostCount is only published that way).
	PerTargetGroup bool
}

// CellMetrics is the vocabulary. Sources: "CloudWatch metrics for your
// Application Load Balancer" (Elastic Load Balancing user guide):
// RequestCount and HTTPCode_Target_5XX_Count ("Statistics: The most useful
// statistic is Sum"), TargetResponseTime in seconds (percentiles
// supported), HealthyHostCount by TargetGroup, LoadBalancer ("The most
// useful statistics are Average, Minimum, and Maximum").
var CellMetrics = []CellMetric{
	{ID: MetricRequests, Metric: "RequestCount", Stat: "Sum"},
	{ID: MetricTarget5xx, Metric: "HTTPCode_Target_5XX_Count", Stat: "Sum"},
	{ID: MetricELB5xx, Metric: "HTTPCode_ELB_5XX_Count", Stat: "Sum"},
	{ID: MetricP99Latency, Metric: "TargetResponseTime", Stat: "p99"},
	{ID: MetricHealthyHosts, Metric: "HealthyHostCount", Stat: "Minimum", PerTargetGroup: true},
}

// Cell names a cell's load balancer and target group by their ARN
// suffixes (the albArnSuffix and targetGroupArnSuffix stack outputs),
// which are the values of CloudWatch's LoadBalancer and TargetGroup
// dimensions.
type Cell struct {
	LoadBalancer string `json:"loadBalancer"`
	TargetGroup  string `json:"targetGroup"`
}

// CellQueries builds the vocabulary's queries for one cell.
func CellQueries(c Cell, period time.Duration) []Query {
	var qs []Query
	for _, m := range CellMetrics {
		dims := map[string]string{"LoadBalancer": c.LoadBalancer}
		if m.PerTargetGroup {
			dims["TargetGroup"] = c.TargetGroup
		}
		qs = append(qs, Query{ID: m.ID, Namespace: ALBNamespace, Metric: m.Metric, Dimensions: dims, Stat: m.Stat, Period: period})
	}
	return qs
}

// CellReading summarises a cell's metrics over a window.
type CellReading struct {
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Requests  float64   `json:"requests"`
	Errors5xx float64   `json:"errors5xx"` // target + load balancer 5xx
	// ErrorRate is Errors5xx / Requests (0..1); NaN-free: 0 when there
	// were no requests (check Requests before trusting it).
	ErrorRate float64 `json:"errorRate"`
	// P99 is the worst per-period p99 in the window; HasP99 is false when
	// no period had one.
	P99    time.Duration `json:"p99"`
	HasP99 bool          `json:"hasP99"`
	// HealthyMin is the fewest healthy targets any period saw; HasHealthy
	// is false when the metric had no points.
	HealthyMin float64 `json:"healthyMin"`
	HasHealthy bool    `json:"hasHealthy"`
	// Series are the raw series, by vocabulary id.
	Series map[string]Series `json:"series"`
}

// ReadCell reads a cell's vocabulary over [start, end) and summarises it.
func (c *CloudWatch) ReadCell(ctx context.Context, cell Cell, start, end time.Time, period time.Duration) (CellReading, error) {
	if cell.LoadBalancer == "" || cell.TargetGroup == "" {
		return CellReading{}, fmt.Errorf("reading cell metrics: the load balancer and target group ARN suffixes are required (got %q, %q)", cell.LoadBalancer, cell.TargetGroup)
	}
	series, err := c.MetricData(ctx, CellQueries(cell, period), start, end)
	if err != nil {
		return CellReading{}, err
	}
	return Summarize(series, start, end), nil
}

// Summarize folds vocabulary series into a CellReading.
func Summarize(series map[string]Series, start, end time.Time) CellReading {
	r := CellReading{Start: start, End: end, Series: series}
	r.Requests = sum(series[MetricRequests])
	r.Errors5xx = sum(series[MetricTarget5xx]) + sum(series[MetricELB5xx])
	if r.Requests > 0 {
		r.ErrorRate = r.Errors5xx / r.Requests
	}
	if pts := series[MetricP99Latency].Points; len(pts) > 0 {
		worst := math.Inf(-1)
		for _, p := range pts {
			worst = math.Max(worst, p.Value)
		}
		r.P99, r.HasP99 = time.Duration(worst*float64(time.Second)), true
	}
	if pts := series[MetricHealthyHosts].Points; len(pts) > 0 {
		least := math.Inf(1)
		for _, p := range pts {
			least = math.Min(least, p.Value)
		}
		r.HealthyMin, r.HasHealthy = least, true
	}
	return r
}

func sum(s Series) float64 {
	var t float64
	for _, p := range s.Points {
		t += p.Value
	}
	return t
}
