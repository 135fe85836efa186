package awsapi

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"
)

func TestAlarmsFollowsNextTokenAndReportsMissing(t *testing.T) {
	var firstNames any
	tg, r := start(t,
		reply{op: "DescribeAlarms", check: func(in any) {
			firstNames = field(in, "AlarmNames")
			if field(in, "NextToken") != nil {
				t.Errorf("first page sent a NextToken: %v", in)
			}
		}, body: asCBOR(t, documented(t, "cloudwatch/describe-alarms.json"), map[string]any{"NextToken": "page-2"})},
		reply{op: "DescribeAlarms", check: func(in any) {
			if field(in, "NextToken") != "page-2" {
				t.Errorf("second page NextToken = %v", field(in, "NextToken"))
			}
		}, body: asCBOR(t, documented(t, "cloudwatch/describe-alarms-for-metric.json"), nil)},
	)
	cw, err := NewCloudWatch(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"myalarm", "myHighCpuAlarm", "myHighCpuAlarm2", "cellctl-a-5xx-rate"}
	got, err := cw.Alarms(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	r.done()
	if !reflect.DeepEqual(firstNames, []any{"myalarm", "myHighCpuAlarm", "myHighCpuAlarm2", "cellctl-a-5xx-rate"}) {
		t.Errorf("AlarmNames sent = %v", firstNames)
	}
	if len(got) != 3 {
		t.Fatalf("alarms = %v", got)
	}
	a := got["myalarm"]
	want := Alarm{Name: "myalarm", ARN: "arn:aws:cloudwatch:us-east-1:123456789012:alarm:myalarm", State: "OK",
		Reason:    "Threshold Crossed: 2 datapoints were not greater than the threshold (70.0). The most recent datapoints: [38.958, 40.292].",
		Updated:   time.Date(2014, 4, 9, 18, 59, 6, 442e6, time.UTC),
		Threshold: 70, Comparison: "GreaterThanThreshold", Metric: "CPUUtilization", Description: "CPU usage exceeds 70 percent"}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("myalarm =\n%+v, want\n%+v", a, want)
	}
	if got["myHighCpuAlarm2"].Comparison != "GreaterThanOrEqualToThreshold" {
		t.Errorf("page 2 alarm = %+v", got["myHighCpuAlarm2"])
	}
	if m := MissingAlarms(names, got); !reflect.DeepEqual(m, []string{"cellctl-a-5xx-rate"}) {
		t.Errorf("missing = %v", m)
	}
}

func TestAlarmsSplitsMoreThan100Names(t *testing.T) {
	var sizes []int
	count := func(in any) { sizes = append(sizes, len(field(in, "AlarmNames").([]any))) }
	empty := asCBOR(t, []byte(`{"MetricAlarms": []}`), nil)
	tg, r := start(t, reply{op: "DescribeAlarms", check: count, body: empty}, reply{op: "DescribeAlarms", check: count, body: empty})
	cw, _ := NewCloudWatch(ctx, tg)
	var names []string
	for i := range 130 {
		names = append(names, "alarm-"+string(rune('a'+i/26))+string(rune('a'+i%26)))
	}
	got, err := cw.Alarms(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	r.done()
	if !reflect.DeepEqual(sizes, []int{100, 30}) || len(MissingAlarms(names, got)) != 130 {
		t.Errorf("batches = %v, missing = %d", sizes, len(MissingAlarms(names, got)))
	}
}

func TestThrottlingIsRetriedAdaptively(t *testing.T) {
	throttled := cborError(t, 400, "ThrottlingException", "Throttling", "Rate exceeded")
	throttled.op = "DescribeAlarms"
	tg, r := start(t, throttled, reply{op: "DescribeAlarms", body: asCBOR(t, documented(t, "cloudwatch/describe-alarms.json"), nil)})
	cw, _ := NewCloudWatch(ctx, tg)
	got, err := cw.Alarms(ctx, []string{"myalarm"})
	if err != nil {
		t.Fatalf("a throttled call that succeeds on retry failed: %v", err)
	}
	r.done()
	if got["myalarm"].State != "OK" {
		t.Errorf("alarm = %+v", got["myalarm"])
	}

	// Out of attempts, the throttling error comes back: never an empty
	// answer a gate could mistake for "no alarms".
	tg, r = start(t, throttled, throttled)
	tg.MaxAttempts = 2
	cw, _ = NewCloudWatch(ctx, tg)
	_, err = cw.Alarms(ctx, []string{"myalarm"})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "Throttling" {
		t.Fatalf("error = %v, want the Throttling API error", err)
	}
	r.done()
}

func TestMetricDataFollowsNextToken(t *testing.T) {
	var query any
	tg, r := start(t,
		reply{op: "GetMetricData", check: func(in any) { query = in },
			body: asCBOR(t, documented(t, "cloudwatch/get-metric-data-iops.json"), map[string]any{"NextToken": "more"})},
		reply{op: "GetMetricData", check: func(in any) {
			if field(in, "NextToken") != "more" {
				t.Errorf("second page NextToken = %v", field(in, "NextToken"))
			}
		}, body: asCBOR(t, documented(t, "cloudwatch/get-metric-data-billing.json"), nil)},
	)
	cw, _ := NewCloudWatch(ctx, tg)
	start := time.Date(2024, 9, 29, 22, 10, 0, 0, time.UTC)
	qs := []Query{
		{ID: "m3", Namespace: "AWS/EC2", Metric: "EBSReadOps", Dimensions: map[string]string{"InstanceId": "i-abcdef"}, Stat: "Sum", Period: 5 * time.Minute},
		{ID: "m1", Namespace: "AWS/Billing", Metric: "EstimatedCharges", Dimensions: map[string]string{"Currency": "USD"}, Stat: "Maximum", Period: 6 * time.Hour},
		{ID: "none", Namespace: "AWS/EC2", Metric: "EBSWriteOps", Stat: "Sum", Period: time.Minute},
	}
	got, err := cw.MetricData(ctx, qs, start, start.Add(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	r.done()
	if s := got["m3"]; s.Label != "Avg Total IOPS" || !reflect.DeepEqual(s.Points, []Point{{start, 96.85}}) {
		t.Errorf("m3 = %+v", s)
	}
	if s := got["m1"]; !reflect.DeepEqual(s.Points, []Point{{time.Date(2024, 9, 26, 12, 0, 0, 0, time.UTC), 542.38}}) {
		t.Errorf("m1 = %+v", s)
	}
	if s, ok := got["none"]; !ok || len(s.Points) != 0 {
		t.Errorf("a query without data must come back empty, got %+v %v", s, ok)
	}
	// The request is what GetMetricData documents.
	q0 := field(query, "MetricDataQueries").([]any)[0]
	if field(q0, "Id") != "m3" || field(q0, "MetricStat", "Period") != 300.0 || field(q0, "MetricStat", "Stat") != "Sum" ||
		field(q0, "MetricStat", "Metric", "MetricName") != "EBSReadOps" || field(query, "StartTime") != start {
		t.Errorf("query = %v", query)
	}
}

func TestMetricDataUnreadableIsAnError(t *testing.T) {
	// The documented body with its StatusCode changed: CloudWatch marks a
	// result InternalError or Forbidden when it could not read it.
	doc := strings.Replace(string(documented(t, "cloudwatch/get-metric-data-iops.json")), `"Complete"`, `"Forbidden"`, 1)
	tg, _ := start(t, reply{op: "GetMetricData", body: asCBOR(t, []byte(doc), nil)})
	cw, _ := NewCloudWatch(ctx, tg)
	_, err := cw.MetricData(ctx, []Query{{ID: "m3", Namespace: "AWS/EC2", Metric: "EBSReadOps", Stat: "Sum", Period: time.Minute}}, time.Now().Add(-time.Hour), time.Now())
	if err == nil || !strings.Contains(err.Error(), "metric m3: Forbidden") {
		t.Fatalf("error = %v", err)
	}
}

func TestMetricDataThrottlingRetried(t *testing.T) {
	throttled := cborError(t, 400, "ThrottlingException", "Throttling", "Rate exceeded")
	throttled.op = "GetMetricData"
	tg, r := start(t, throttled, reply{op: "GetMetricData", body: asCBOR(t, documented(t, "cloudwatch/get-metric-data-billing.json"), nil)})
	cw, _ := NewCloudWatch(ctx, tg)
	got, err := cw.MetricData(ctx, []Query{{ID: "m1", Namespace: "AWS/Billing", Metric: "EstimatedCharges", Stat: "Maximum", Period: 6 * time.Hour}}, time.Now().Add(-time.Hour), time.Now())
	if err != nil || len(got["m1"].Points) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	r.done()
}

func TestCellQueriesAndSummary(t *testing.T) {
	qs := CellQueries(Cell{LoadBalancer: "app/cell-a/abc", TargetGroup: "targetgroup/cell-a/def"}, time.Minute)
	if len(qs) != len(CellMetrics) {
		t.Fatalf("queries = %v", qs)
	}
	for _, q := range qs {
		if q.Namespace != ALBNamespace || q.Dimensions["LoadBalancer"] != "app/cell-a/abc" {
			t.Errorf("query %+v", q)
		}
		if _, tg := q.Dimensions["TargetGroup"]; tg != (q.ID == MetricHealthyHosts) {
			t.Errorf("query %s TargetGroup dimension = %v", q.ID, tg)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pts := func(vs ...float64) Series {
		var s Series
		for i, v := range vs {
			s.Points = append(s.Points, Point{t0.Add(time.Duration(i) * time.Minute), v})
		}
		return s
	}
	r := Summarize(map[string]Series{
		MetricRequests: pts(100, 300), MetricTarget5xx: pts(1, 5), MetricELB5xx: pts(0, 2),
		MetricP99Latency: pts(0.12, 0.9), MetricHealthyHosts: pts(3, 2),
	}, t0, t0.Add(2*time.Minute))
	if r.Requests != 400 || r.Errors5xx != 8 || r.ErrorRate != 0.02 || r.P99 != 900*time.Millisecond || !r.HasP99 || r.HealthyMin != 2 || !r.HasHealthy {
		t.Errorf("summary = %+v", r)
	}
	if e := Summarize(map[string]Series{}, t0, t0); e.Requests != 0 || e.HasP99 || e.HasHealthy || e.ErrorRate != 0 {
		t.Errorf("empty summary = %+v", e)
	}
}
