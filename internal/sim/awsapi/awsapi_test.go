package awsapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/smithy-go"

	readers "github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/sim/health"
	"github.com/cellctl/cellctl/internal/sim/simtest"

	// apiFixture is a simulated cloud with one cell, served on loopback, and
	// the product's own readers pointed at it.
	"github.com/cellctl/cellctl/internal/awsapi/wire"
	"github.com/cellctl/cellctl/internal/sim/store"
)

type apiFixture struct {
	clk      *simtest.Clock
	cloud    *store.Cloud
	cell     *simtest.SimCell
	endpoint string
	cw       *readers.CloudWatch
}

func newAPIFixture(t *testing.T) *apiFixture {
	t.Helper()
	clk := simtest.NewClock()
	dir := t.TempDir()
	cell := simtest.NewSimCell(t, dir, clk, "a", "us-east-1", "10.1.0.0/16", "registry/app:v1")
	base, _ := store.Open(dir)
	c := clk.Cloud(base)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	endpoint, stop, err := Serve(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	cw, err := readers.NewCloudWatch(ctx, readers.Sim(endpoint, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	return &apiFixture{clk: clk, cloud: c, cell: cell, endpoint: endpoint, cw: cw}
}

var cellAAlarms = []string{"cellctl-a-5xx-rate", "cellctl-a-p99-latency", "cellctl-a-unhealthy-tasks"}

// The acceptance path of the waves and health issues: the real
// aws-sdk-go-v2 CloudWatch client, through cellctl's readers, against the
// simulator's endpoint. A bad image raises the cell's 5xx alarm (from the
// alarm resource's own threshold) and GetMetricData returns the series.
func TestReadersAgainstTheSimulatorSeeABadImage(t *testing.T) {
	f := newAPIFixture(t)
	ctx := context.Background()
	f.clk.Advance(10*time.Minute + 30*time.Second)

	got, err := f.cw.Alarms(ctx, append(cellAAlarms, "cellctl-zz-5xx-rate"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range cellAAlarms {
		if got[n].State != "OK" {
			t.Errorf("healthy cell: %s = %+v", n, got[n])
		}
	}
	if m := readers.MissingAlarms(append(cellAAlarms, "cellctl-zz-5xx-rate"), got); len(m) != 1 || m[0] != "cellctl-zz-5xx-rate" {
		t.Errorf("missing = %v", m)
	}
	if a := got["cellctl-a-5xx-rate"]; a.Threshold != 1 || a.Comparison != "GreaterThanThreshold" || a.Metric != "5xx rate (%)" {
		t.Errorf("5xx alarm as read = %+v", a)
	}

	cell := readers.Cell{LoadBalancer: f.cell.LBSuffix, TargetGroup: f.cell.TGSuffix}
	end := f.clk.T
	good, err := f.cw.ReadCell(ctx, cell, end.Add(-5*time.Minute), end, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Five complete minutes plus the current one (start rounds down).
	if len(good.Series[readers.MetricRequests].Points) != 6 || good.Requests != 3600 || good.ErrorRate != 6.0/3600 || good.P99 != 120*time.Millisecond || good.HealthyMin != 2 {
		t.Fatalf("healthy reading = %+v", good)
	}

	// "This build is bad", and the cell runs it.
	if _, err := health.Set(f.cloud, health.Target{Image: "registry/app:v2"}, health.Profile{ErrorRate: simtest.Ptr(0.03), P99: simtest.Ptr(store.Duration(900 * time.Millisecond))}); err != nil {
		t.Fatal(err)
	}
	f.cell.Deploy(t, "registry/app:v2")
	bakeStart := f.clk.T
	f.clk.Advance(2 * time.Minute)
	got, err = f.cw.Alarms(ctx, cellAAlarms)
	if err != nil {
		t.Fatal(err)
	}
	if got["cellctl-a-5xx-rate"].State != "ALARM" || got["cellctl-a-p99-latency"].State != "ALARM" || got["cellctl-a-unhealthy-tasks"].State != "OK" {
		t.Fatalf("after the bad deploy: %+v", got)
	}
	if !strings.Contains(got["cellctl-a-5xx-rate"].Reason, "greater than the threshold (1)") {
		t.Errorf("reason = %q", got["cellctl-a-5xx-rate"].Reason)
	}
	bad, err := f.cw.ReadCell(ctx, cell, bakeStart, f.clk.T, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if bad.ErrorRate != 0.03 || bad.P99 != 900*time.Millisecond || bad.Requests != 1800 {
		t.Errorf("bake reading = %+v", bad)
	}
	pts := bad.Series[readers.MetricTarget5xx].Points
	if len(pts) != 3 || pts[0].Time != bakeStart.Truncate(time.Minute) || pts[2].Value != 18 {
		t.Errorf("5xx series = %+v", pts)
	}

	// Small pages: the readers follow the simulator's NextToken.
	f.cw.PageSize = 1
	paged, err := f.cw.Alarms(ctx, cellAAlarms)
	if err != nil || len(paged) != 3 {
		t.Fatalf("paged alarms = %v, %v", paged, err)
	}
	f.cw.PageSize = 2
	pagedRead, err := f.cw.ReadCell(ctx, cell, bakeStart, f.clk.T, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for id, s := range bad.Series {
		if len(pagedRead.Series[id].Points) != len(s.Points) {
			t.Errorf("paged %s: %d points, want %d", id, len(pagedRead.Series[id].Points), len(s.Points))
		}
	}

	// A manual override still works and shows through the API.
	if _, err := f.cloud.SetAlarm("a", "cellctl-a-unhealthy-tasks", store.AlarmAlarm, "rehearsal"); err != nil {
		t.Fatal(err)
	}
	got, _ = f.cw.Alarms(ctx, cellAAlarms)
	if got["cellctl-a-unhealthy-tasks"].State != "ALARM" || got["cellctl-a-unhealthy-tasks"].Reason != "rehearsal" {
		t.Errorf("manual override = %+v", got["cellctl-a-unhealthy-tasks"])
	}
}

func TestSimulatorAPIRefusesWhatAWSRefuses(t *testing.T) {
	f := newAPIFixture(t)
	ctx := context.Background()
	cfg, _ := readers.Sim(f.endpoint, "us-east-1").Config(ctx)
	cw := cloudwatch.NewFromConfig(cfg)
	code := func(err error) string {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return ae.ErrorCode()
		}
		return "no API error: " + errorString(err)
	}
	_, err := cw.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{"x"}, AlarmNamePrefix: aws.String("cellctl-")})
	if code(err) != "InvalidParameterCombination" {
		t.Errorf("names + prefix: %v", err)
	}
	_, err = cw.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{NextToken: aws.String("forged")})
	if code(err) != "InvalidNextToken" {
		t.Errorf("forged token: %v", err)
	}
	start := f.clk.T.Add(-time.Hour)
	_, err = f.cw.MetricData(ctx, []readers.Query{{ID: "Bad-Id", Namespace: "AWS/ApplicationELB", Metric: "RequestCount", Stat: "Sum", Period: time.Minute}}, start, f.clk.T)
	if code(err) != "InvalidParameterValue" || !strings.Contains(err.Error(), "must start with a lowercase letter") {
		t.Errorf("bad id: %v", err)
	}
	_, err = f.cw.MetricData(ctx, []readers.Query{{ID: "r", Namespace: "AWS/ApplicationELB", Metric: "RequestCount", Stat: "Sum", Period: 90 * time.Second}}, start, f.clk.T)
	if code(err) != "InvalidParameterValue" {
		t.Errorf("period 90s: %v", err)
	}
	_, err = f.cw.MetricData(ctx, []readers.Query{{ID: "r", Namespace: "AWS/ApplicationELB", Metric: "RequestCount", Stat: "Sum", Period: time.Minute}}, f.clk.T, start)
	if code(err) != "InvalidParameterValue" || !strings.Contains(err.Error(), "StartTime must be less than") {
		t.Errorf("reversed window: %v", err)
	}
	// Another region sees none of us-east-1's alarms, as in AWS.
	eu, _ := readers.NewCloudWatch(ctx, readers.Sim(f.endpoint, "eu-west-1"))
	if got, err := eu.Alarms(ctx, cellAAlarms); err != nil || len(got) != 0 {
		t.Errorf("eu-west-1 alarms = %v, %v", got, err)
	}

	// Raw requests: an unknown operation and an unsigned request get AWS's
	// error shapes.
	post := func(path string, hdr map[string]string) (*http.Response, map[string]any) {
		body, _ := wire.EncodeCBOR(map[string]any{})
		req, _ := http.NewRequest("POST", f.endpoint+path, bytes.NewReader(body))
		req.Header.Set(wire.ProtocolHeader, wire.ProtocolCBOR)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		v, err := wire.DecodeCBOR(buf.Bytes())
		if err != nil {
			t.Fatalf("error body is not CBOR: %v", err)
		}
		m, _ := v.(map[string]any)
		return resp, m
	}
	signed := map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDSIMULATED0000000/20260302/us-east-1/monitoring/aws4_request, SignedHeaders=host, Signature=00"}
	resp, m := post("/service/GraniteServiceVersion20100801/operation/PutMetricAlarm", signed)
	if resp.StatusCode != 404 || m["__type"] != "com.amazonaws.cloudwatch#UnknownOperationException" || resp.Header.Get("X-Amzn-Query-Error") != "InvalidAction;Sender" {
		t.Errorf("unknown operation: %d %v %v", resp.StatusCode, m, resp.Header)
	}
	resp, m = post("/service/GraniteServiceVersion20100801/operation/DescribeAlarms", nil)
	if resp.StatusCode != 403 || !strings.HasSuffix(m["__type"].(string), "MissingAuthenticationTokenException") {
		t.Errorf("unsigned: %d %v", resp.StatusCode, m)
	}
}

func TestSimulatorServesServiceQuotas(t *testing.T) {
	f := newAPIFixture(t)
	ctx := context.Background()
	if err := f.cloud.SetQuota("us-east-1", "ec2/L-0263D0A3", 12); err != nil {
		t.Fatal(err)
	}
	q, err := readers.NewQuotas(ctx, readers.Sim(f.endpoint, "us-east-1"))
	if err != nil {
		t.Fatal(err)
	}
	q.PageSize = 1
	all, err := q.List(ctx, "vpc")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(simQuotas("vpc")) || len(all) < 2 || all[0].ServiceCode != "vpc" {
		t.Fatalf("vpc quotas = %+v", all)
	}
	eip, err := q.Get(ctx, "ec2", "L-0263D0A3")
	if err != nil || eip.Value != 12 || eip.Default || eip.Name != "EC2-VPC Elastic IPs" {
		t.Errorf("applied EIP quota = %+v, %v", eip, err)
	}
	def, err := q.Default(ctx, "ec2", "L-0263D0A3")
	if err != nil || def.Value != 5 || !def.Default {
		t.Errorf("default EIP quota = %+v, %v", def, err)
	}
	other, _ := readers.NewQuotas(ctx, readers.Sim(f.endpoint, "eu-west-1"))
	if eu, err := other.Get(ctx, "ec2", "L-0263D0A3"); err != nil || eu.Value != 5 {
		t.Errorf("eu-west-1 EIP quota = %+v, %v", eu, err)
	}
	if _, err := q.Get(ctx, "ec2", "L-NOPE"); err == nil || !strings.Contains(err.Error(), "NoSuchResourceException") {
		t.Errorf("unknown quota: %v", err)
	}
}

func errorString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
