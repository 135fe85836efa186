package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
)

// harness drives a Provider the way the engine does (Check, then
// Create/Update/…), against a cloud in a temp dir.
type harness struct {
	t       testing.TB
	p       *Provider
	cloud   *Cloud
	ctx     context.Context
	stack   string
	project string // the URNs' project (default cells)
}

func newHarness(t *testing.T, stack, region string, opts ...func(*Options)) *harness {
	t.Helper()
	o := Options{Dir: t.TempDir(), Stack: stack, DependencyTimeout: 300 * time.Millisecond}
	for _, f := range opts {
		f(&o)
	}
	return harnessOn(t, o, region)
}

func harnessOn(t testing.TB, o Options, region string) *harness {
	t.Helper()
	cloud, err := Open(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, p: NewProvider(cloud, o), cloud: cloud, ctx: context.Background(), stack: o.Stack, project: o.Project}
	if h.project == "" {
		h.project = "cells"
	}
	if region != "" {
		h.configure(region)
	}
	return h
}

func (h *harness) configure(region string) {
	h.t.Helper()
	if _, err := h.p.Configure(h.ctx, plugin.ConfigureRequest{Inputs: resource.PropertyMap{"region": resource.NewStringProperty(region)}}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) urn(typ, name string) resource.URN {
	return resource.NewURN(tokens.QName(h.stack), tokens.PackageName(h.project), "", tokens.Type(typ), name)
}

func (h *harness) check(typ, name string, olds, news resource.PropertyMap) (resource.PropertyMap, error) {
	resp, err := h.p.Check(h.ctx, plugin.CheckRequest{URN: h.urn(typ, name), Name: name, Type: tokens.Type(typ), Olds: olds, News: news, RandomSeed: []byte(h.stack + "/" + name)})
	if err != nil {
		return nil, err
	}
	if len(resp.Failures) > 0 {
		var msgs []string
		for _, f := range resp.Failures {
			msgs = append(msgs, fmt.Sprintf("%s: %s", f.Property, f.Reason))
		}
		return nil, fmt.Errorf("check failures: %s", strings.Join(msgs, "; "))
	}
	return resp.Properties, nil
}

// res is a created resource as the engine would remember it.
type res struct {
	typ, name, id string
	inputs, out   resource.PropertyMap
}

func (h *harness) tryCreate(typ, name string, in resource.PropertyMap) (*res, error) {
	checked, err := h.check(typ, name, nil, in)
	if err != nil {
		return nil, err
	}
	resp, err := h.p.Create(h.ctx, plugin.CreateRequest{URN: h.urn(typ, name), Name: name, Type: tokens.Type(typ), Properties: checked})
	if err != nil {
		return nil, err
	}
	return &res{typ: typ, name: name, id: string(resp.ID), inputs: checked, out: resp.Properties}, nil
}

func (h *harness) create(typ, name string, in resource.PropertyMap) *res {
	h.t.Helper()
	r, err := h.tryCreate(typ, name, in)
	if err != nil {
		h.t.Fatalf("create %s %s: %v", typ, name, err)
	}
	return r
}

func (h *harness) tryUpdate(r *res, in resource.PropertyMap) (*res, error) {
	checked, err := h.check(r.typ, r.name, r.inputs, in)
	if err != nil {
		return nil, err
	}
	resp, err := h.p.Update(h.ctx, plugin.UpdateRequest{URN: h.urn(r.typ, r.name), Name: r.name, Type: tokens.Type(r.typ), ID: resource.ID(r.id),
		OldInputs: r.inputs, OldOutputs: r.out, NewInputs: checked})
	if err != nil {
		return nil, err
	}
	return &res{typ: r.typ, name: r.name, id: r.id, inputs: checked, out: resp.Properties}, nil
}

func (h *harness) read(r *res) plugin.ReadResponse {
	h.t.Helper()
	resp, err := h.p.Read(h.ctx, plugin.ReadRequest{URN: h.urn(r.typ, r.name), Name: r.name, Type: tokens.Type(r.typ), ID: resource.ID(r.id), Inputs: r.inputs, State: r.out})
	if err != nil {
		h.t.Fatalf("read %s: %v", r.name, err)
	}
	return resp
}

func (h *harness) delete(r *res) error {
	_, err := h.p.Delete(h.ctx, plugin.DeleteRequest{URN: h.urn(r.typ, r.name), Name: r.name, Type: tokens.Type(r.typ), ID: resource.ID(r.id), Inputs: r.inputs, Outputs: r.out})
	return err
}

func (h *harness) diff(r *res, news resource.PropertyMap) plugin.DiffResult {
	h.t.Helper()
	checked, err := h.check(r.typ, r.name, r.inputs, news)
	if err != nil {
		h.t.Fatal(err)
	}
	d, err := h.p.Diff(h.ctx, plugin.DiffRequest{URN: h.urn(r.typ, r.name), Name: r.name, Type: tokens.Type(r.typ), ID: resource.ID(r.id),
		OldInputs: r.inputs, OldOutputs: r.out, NewInputs: checked})
	if err != nil {
		h.t.Fatal(err)
	}
	return d
}

func pm(kv ...any) resource.PropertyMap {
	m := resource.PropertyMap{}
	for i := 0; i < len(kv); i += 2 {
		m[resource.PropertyKey(kv[i].(string))] = resource.NewPropertyValue(kv[i+1])
	}
	return m
}

func s(m resource.PropertyMap, k string) string {
	v := m[resource.PropertyKey(k)]
	for v.IsSecret() {
		v = v.SecretValue().Element
	}
	if v.IsString() {
		return v.StringValue()
	}
	return ""
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error containing %q, got none", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

const (
	tVpc          = "aws:ec2/vpc:Vpc"
	tSubnet       = "aws:ec2/subnet:Subnet"
	tQueue        = "aws:sqs/queue:Queue"
	tRole         = "aws:iam/role:Role"
	tEIP          = "aws:ec2/eip:Eip"
	tFn           = "aws:lambda/function:Function"
	tAlarm        = "aws:cloudwatch/metricAlarm:MetricAlarm"
	tDistribution = "aws:cloudfront/distribution:Distribution"
	tCDPolicy     = "aws:cloudfront/continuousDeploymentPolicy:ContinuousDeploymentPolicy"
)

const assumeRole = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

// network creates a VPC with n /24 subnets across zones.
func (h *harness) network(prefix, cidr string, n int) (*res, []*res) {
	vpc := h.create(tVpc, prefix+"-vpc", pm("cidrBlock", cidr))
	base := strings.TrimSuffix(cidr, ".0.0/16")
	zones := []string{"a", "b", "c"}
	var subnets []*res
	region := vpc.out["arn"].StringValue()
	region = strings.Split(region, ":")[3]
	for i := 0; i < n; i++ {
		subnets = append(subnets, h.create(tSubnet, fmt.Sprintf("%s-subnet-%d", prefix, i), pm(
			"vpcId", vpc.id, "cidrBlock", fmt.Sprintf("%s.%d.0/24", base, i), "availabilityZone", region+zones[i%3])))
	}
	return vpc, subnets
}

func secretString(v string) resource.PropertyValue {
	return resource.MakeSecret(resource.NewStringProperty(v))
}

func newArchive(files map[string]string) (resource.PropertyValue, error) {
	assets := map[string]any{}
	for name, text := range files {
		assets[name] = mustText(text)
	}
	a, err := resource.NewAssetArchive(assets)
	if err != nil {
		return resource.PropertyValue{}, err
	}
	return resource.NewArchiveProperty(a), nil
}

// diffInputs diffs the recorded inputs with inputs read back by a refresh,
// as the engine does after Read.
func (h *harness) diffInputs(r *res, read resource.PropertyMap) plugin.DiffResult {
	h.t.Helper()
	d, err := h.p.Diff(h.ctx, plugin.DiffRequest{URN: h.urn(r.typ, r.name), Name: r.name, Type: tokens.Type(r.typ), ID: resource.ID(r.id),
		OldInputs: read, OldOutputs: r.out, NewInputs: r.inputs})
	if err != nil {
		h.t.Fatal(err)
	}
	return d
}

// clock is a settable time for the provider and the health model.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *clock { return &clock{t: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)} }

func (c *clock) opts(o *Options) { o.Now = c.now }

func (c *clock) cloud(cl *Cloud) *Cloud { return cl.WithClock(c.now) }

// simCell is a cell's serving path built through the provider as the cell
// template builds it: ALB + target group + listener, ECS service on a task
// definition running image, and the template's three alarms.
type simCell struct {
	h                  *harness
	lbSuffix, tgSuffix string
	taskDef, svc       *res
}

func containerDefs(image string) string {
	return fmt.Sprintf(`[{"name":"app","image":%q,"essential":true,"portMappings":[{"containerPort":8080}]}]`, image)
}

func newSimCell(t testing.TB, dir string, clk *clock, id, region, cidr, image string) *simCell {
	t.Helper()
	h := harnessOn(t, Options{Dir: dir, Stack: "cell-" + id, Now: clk.now, DependencyTimeout: 300 * time.Millisecond}, region)
	_, subs := h.network("cell-"+id, cidr, 2)
	vpc := s(subs[0].out, "vpcId")
	tg := h.create("aws:lb/targetGroup:TargetGroup", "cell-"+id+"-tg", pm("port", 8080, "protocol", "HTTP", "vpcId", vpc, "targetType", "ip"))
	alb := h.create("aws:lb/loadBalancer:LoadBalancer", "cell-"+id+"-alb", pm("subnets", []any{subs[0].id, subs[1].id}))
	h.create("aws:lb/listener:Listener", "cell-"+id+"-http", pm("loadBalancerArn", alb.id, "port", 80,
		"defaultActions", []any{map[string]any{"type": "forward", "targetGroupArn": tg.id}}))
	cluster := h.create("aws:ecs/cluster:Cluster", "cell-"+id+"-cluster", pm())
	td := h.create("aws:ecs/taskDefinition:TaskDefinition", "cell-"+id+"-task", pm("family", "cell-"+id, "containerDefinitions", containerDefs(image),
		"requiresCompatibilities", []any{"FARGATE"}, "networkMode", "awsvpc", "cpu", "256", "memory", "512"))
	svc := h.create("aws:ecs/service:Service", "cell-"+id+"-service", pm("cluster", cluster.id, "launchType", "FARGATE", "desiredCount", 2,
		"taskDefinition", s(td.out, "arn"), "networkConfiguration", map[string]any{"subnets": []any{subs[0].id}},
		"loadBalancers", []any{map[string]any{"targetGroupArn": tg.id, "containerName": "app", "containerPort": 8080}}))
	c := &simCell{h: h, lbSuffix: s(alb.out, "arnSuffix"), tgSuffix: s(tg.out, "arnSuffix"), taskDef: td, svc: svc}
	lbDims := map[string]any{"LoadBalancer": c.lbSuffix}
	metric := func(qid, name string) map[string]any {
		return map[string]any{"id": qid, "returnData": false, "metric": map[string]any{
			"namespace": "AWS/ApplicationELB", "metricName": name, "dimensions": lbDims, "period": 60, "stat": "Sum"}}
	}
	// The cell template's alarms (cellmodule/alarms.go), thresholds 1 %
	// and 400 ms, 2 of 2 periods.
	h.create(tAlarm, "cell-"+id+"-5xx-rate", pm("name", "cellctl-"+id+"-5xx-rate", "comparisonOperator", "GreaterThanThreshold",
		"threshold", 1, "evaluationPeriods", 2, "datapointsToAlarm", 2, "treatMissingData", "notBreaching",
		"metricQueries", []any{metric("target5xx", "HTTPCode_Target_5XX_Count"), metric("elb5xx", "HTTPCode_ELB_5XX_Count"), metric("requests", "RequestCount"),
			map[string]any{"id": "rate", "expression": "100 * (FILL(target5xx, 0) + FILL(elb5xx, 0)) / requests", "label": "5xx rate (%)", "returnData": true}}))
	h.create(tAlarm, "cell-"+id+"-p99-latency", pm("name", "cellctl-"+id+"-p99-latency", "comparisonOperator", "GreaterThanThreshold",
		"threshold", 0.4, "evaluationPeriods", 2, "datapointsToAlarm", 2, "treatMissingData", "notBreaching",
		"namespace", "AWS/ApplicationELB", "metricName", "TargetResponseTime", "dimensions", lbDims, "extendedStatistic", "p99", "period", 60))
	h.create(tAlarm, "cell-"+id+"-unhealthy-tasks", pm("name", "cellctl-"+id+"-unhealthy-tasks", "comparisonOperator", "GreaterThanThreshold",
		"threshold", 0, "evaluationPeriods", 2, "datapointsToAlarm", 2, "treatMissingData", "notBreaching",
		"namespace", "AWS/ApplicationELB", "metricName", "UnHealthyHostCount", "statistic", "Maximum", "period", 60,
		"dimensions", map[string]any{"LoadBalancer": c.lbSuffix, "TargetGroup": c.tgSuffix}))
	return c
}

// deploy rolls the cell onto image the way an update does: a new task
// definition revision and the service pointed at it.
func (c *simCell) deploy(t *testing.T, image string) {
	t.Helper()
	in := c.taskDef.inputs.Copy()
	in["containerDefinitions"] = resource.NewStringProperty(containerDefs(image))
	td, err := c.h.tryUpdate(c.taskDef, in)
	if err != nil {
		t.Fatal(err)
	}
	c.taskDef = td
	svcIn := c.svc.inputs.Copy()
	svcIn["taskDefinition"] = resource.NewStringProperty(s(td.out, "arn"))
	if c.svc, err = c.h.tryUpdate(c.svc, svcIn); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

func mustText(s string) *resource.Asset {
	a, err := resource.NewTextAsset(s)
	if err != nil {
		panic(err)
	}
	return a
}

func edgeFunction(role, routing string) resource.PropertyMap {
	code, _ := resource.NewAssetArchive(map[string]any{
		"index.js":    mustText("exports.handler = async (e) => require('./config.json')"),
		"config.json": mustText(`{"version":"` + routing + `"}`),
	})
	return resource.PropertyMap{
		"role": resource.NewStringProperty(role), "runtime": resource.NewStringProperty("nodejs20.x"),
		"handler": resource.NewStringProperty("index.handler"), "publish": resource.NewBoolProperty(true),
		"code": resource.NewArchiveProperty(code),
	}
}

func distInputs(lambdaArn string, extra ...any) resource.PropertyMap {
	m := pm(
		"enabled", true, "httpVersion", "http2",
		"origins", []any{map[string]any{"originId": "cell-a", "domainName": "cell-a.cells.example.com",
			"customOriginConfig": map[string]any{"httpPort": 80, "httpsPort": 443, "originProtocolPolicy": "https-only", "originSslProtocols": []any{"TLSv1.2"}}}},
		"defaultCacheBehavior", map[string]any{"targetOriginId": "cell-a", "viewerProtocolPolicy": "https-only",
			"allowedMethods": []any{"GET", "HEAD"}, "cachedMethods": []any{"GET", "HEAD"}, "cachePolicyId": "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
			"lambdaFunctionAssociations": []any{map[string]any{"eventType": "origin-request", "lambdaArn": lambdaArn}}},
		"restrictions", map[string]any{"geoRestriction": map[string]any{"restrictionType": "none"}},
		"viewerCertificate", map[string]any{"cloudfrontDefaultCertificate": true},
	)
	for k, v := range pm(extra...) {
		m[k] = v
	}
	return m
}

func edgeCode(t *testing.T, table int) resource.PropertyValue {
	t.Helper()
	a, err := newArchive(map[string]string{"index.js": "exports.handler=async(e)=>e.Records[0].cf.request", "config.json": fmt.Sprintf(`{"format": 1, "version": %d}`, table)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
