package simtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"

	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// Harness drives a Provider the way the engine does (Check, then
// Create/Update/…), against a cloud in a temp dir.
type Harness struct {
	T       testing.TB
	P       *provider.Provider
	Cloud   *store.Cloud
	Ctx     context.Context
	Stack   string
	Project string // the URNs' project (default cells)
}

func New(t *testing.T, stack, region string, opts ...func(*provider.Options)) *Harness {
	t.Helper()
	o := provider.Options{Dir: t.TempDir(), Stack: stack, DependencyTimeout: 300 * time.Millisecond}
	for _, f := range opts {
		f(&o)
	}
	return On(t, o, region)
}

func On(t testing.TB, o provider.Options, region string) *Harness {
	t.Helper()
	cloud, err := store.Open(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &Harness{T: t, P: provider.NewProvider(cloud, o), Cloud: cloud, Ctx: context.Background(), Stack: o.Stack, Project: o.Project}
	if h.Project == "" {
		h.Project = "cells"
	}
	if region != "" {
		h.Configure(region)
	}
	return h
}

func (h *Harness) Configure(region string) {
	h.T.Helper()
	if _, err := h.P.Configure(h.Ctx, plugin.ConfigureRequest{Inputs: resource.PropertyMap{"region": resource.NewStringProperty(region)}}); err != nil {
		h.T.Fatal(err)
	}
}

func (h *Harness) URN(typ, name string) resource.URN {
	return resource.NewURN(tokens.QName(h.Stack), tokens.PackageName(h.Project), "", tokens.Type(typ), name)
}

func (h *Harness) Check(typ, name string, olds, news resource.PropertyMap) (resource.PropertyMap, error) {
	resp, err := h.P.Check(h.Ctx, plugin.CheckRequest{URN: h.URN(typ, name), Name: name, Type: tokens.Type(typ), Olds: olds, News: news, RandomSeed: []byte(h.Stack + "/" + name)})
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

// Res is a created resource as the engine would remember it.
type Res struct {
	Typ, Name, ID string
	Inputs, Out   resource.PropertyMap
}

func (h *Harness) TryCreate(typ, name string, in resource.PropertyMap) (*Res, error) {
	checked, err := h.Check(typ, name, nil, in)
	if err != nil {
		return nil, err
	}
	resp, err := h.P.Create(h.Ctx, plugin.CreateRequest{URN: h.URN(typ, name), Name: name, Type: tokens.Type(typ), Properties: checked})
	if err != nil {
		return nil, err
	}
	return &Res{Typ: typ, Name: name, ID: string(resp.ID), Inputs: checked, Out: resp.Properties}, nil
}

func (h *Harness) Create(typ, name string, in resource.PropertyMap) *Res {
	h.T.Helper()
	r, err := h.TryCreate(typ, name, in)
	if err != nil {
		h.T.Fatalf("create %s %s: %v", typ, name, err)
	}
	return r
}

func (h *Harness) TryUpdate(r *Res, in resource.PropertyMap) (*Res, error) {
	checked, err := h.Check(r.Typ, r.Name, r.Inputs, in)
	if err != nil {
		return nil, err
	}
	resp, err := h.P.Update(h.Ctx, plugin.UpdateRequest{URN: h.URN(r.Typ, r.Name), Name: r.Name, Type: tokens.Type(r.Typ), ID: resource.ID(r.ID),
		OldInputs: r.Inputs, OldOutputs: r.Out, NewInputs: checked})
	if err != nil {
		return nil, err
	}
	return &Res{Typ: r.Typ, Name: r.Name, ID: r.ID, Inputs: checked, Out: resp.Properties}, nil
}

func (h *Harness) Read(r *Res) plugin.ReadResponse {
	h.T.Helper()
	resp, err := h.P.Read(h.Ctx, plugin.ReadRequest{URN: h.URN(r.Typ, r.Name), Name: r.Name, Type: tokens.Type(r.Typ), ID: resource.ID(r.ID), Inputs: r.Inputs, State: r.Out})
	if err != nil {
		h.T.Fatalf("read %s: %v", r.Name, err)
	}
	return resp
}

func (h *Harness) Delete(r *Res) error {
	_, err := h.P.Delete(h.Ctx, plugin.DeleteRequest{URN: h.URN(r.Typ, r.Name), Name: r.Name, Type: tokens.Type(r.Typ), ID: resource.ID(r.ID), Inputs: r.Inputs, Outputs: r.Out})
	return err
}

func (h *Harness) Diff(r *Res, news resource.PropertyMap) plugin.DiffResult {
	h.T.Helper()
	checked, err := h.Check(r.Typ, r.Name, r.Inputs, news)
	if err != nil {
		h.T.Fatal(err)
	}
	d, err := h.P.Diff(h.Ctx, plugin.DiffRequest{URN: h.URN(r.Typ, r.Name), Name: r.Name, Type: tokens.Type(r.Typ), ID: resource.ID(r.ID),
		OldInputs: r.Inputs, OldOutputs: r.Out, NewInputs: checked})
	if err != nil {
		h.T.Fatal(err)
	}
	return d
}

func PM(kv ...any) resource.PropertyMap {
	m := resource.PropertyMap{}
	for i := 0; i < len(kv); i += 2 {
		m[resource.PropertyKey(kv[i].(string))] = resource.NewPropertyValue(kv[i+1])
	}
	return m
}

func S(m resource.PropertyMap, k string) string {
	v := m[resource.PropertyKey(k)]
	for v.IsSecret() {
		v = v.SecretValue().Element
	}
	if v.IsString() {
		return v.StringValue()
	}
	return ""
}

func WantErr(t *testing.T, err error, parts ...string) {
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
	TVpc          = "aws:ec2/vpc:Vpc"
	TSubnet       = "aws:ec2/subnet:Subnet"
	TQueue        = "aws:sqs/queue:Queue"
	TRole         = "aws:iam/role:Role"
	TEIP          = "aws:ec2/eip:Eip"
	TFn           = "aws:lambda/function:Function"
	TAlarm        = "aws:cloudwatch/metricAlarm:MetricAlarm"
	TDistribution = "aws:cloudfront/distribution:Distribution"
	TCDPolicy     = "aws:cloudfront/continuousDeploymentPolicy:ContinuousDeploymentPolicy"
)

const AssumeRole = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

// Network creates a VPC with n /24 subnets across zones.
func (h *Harness) Network(prefix, cidr string, n int) (*Res, []*Res) {
	vpc := h.Create(TVpc, prefix+"-vpc", PM("cidrBlock", cidr))
	base := strings.TrimSuffix(cidr, ".0.0/16")
	zones := []string{"a", "b", "c"}
	var subnets []*Res
	region := vpc.Out["arn"].StringValue()
	region = strings.Split(region, ":")[3]
	for i := 0; i < n; i++ {
		subnets = append(subnets, h.Create(TSubnet, fmt.Sprintf("%s-subnet-%d", prefix, i), PM(
			"vpcId", vpc.ID, "cidrBlock", fmt.Sprintf("%s.%d.0/24", base, i), "availabilityZone", region+zones[i%3])))
	}
	return vpc, subnets
}

func SecretString(v string) resource.PropertyValue {
	return resource.MakeSecret(resource.NewStringProperty(v))
}

func NewArchive(files map[string]string) (resource.PropertyValue, error) {
	assets := map[string]any{}
	for name, text := range files {
		assets[name] = MustText(text)
	}
	a, err := resource.NewAssetArchive(assets)
	if err != nil {
		return resource.PropertyValue{}, err
	}
	return resource.NewArchiveProperty(a), nil
}

// DiffInputs diffs the recorded inputs with inputs read back by a refresh,
// as the engine does after Read.
func (h *Harness) DiffInputs(r *Res, read resource.PropertyMap) plugin.DiffResult {
	h.T.Helper()
	d, err := h.P.Diff(h.Ctx, plugin.DiffRequest{URN: h.URN(r.Typ, r.Name), Name: r.Name, Type: tokens.Type(r.Typ), ID: resource.ID(r.ID),
		OldInputs: read, OldOutputs: r.Out, NewInputs: r.Inputs})
	if err != nil {
		h.T.Fatal(err)
	}
	return d
}

// Clock is a settable time for the provider and the health model.
type Clock struct{ T time.Time }

func (c *Clock) Now() time.Time { return c.T }

func (c *Clock) Advance(d time.Duration) { c.T = c.T.Add(d) }

func NewClock() *Clock { return &Clock{T: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)} }

func (c *Clock) Opts(o *provider.Options) { o.Now = c.Now }

func (c *Clock) Cloud(cl *store.Cloud) *store.Cloud { return cl.WithClock(c.Now) }

// SimCell is a cell's serving path built through the provider as the cell
// template builds it: ALB + target group + listener, ECS service on a task
// definition running image, and the template's three alarms.
type SimCell struct {
	H                  *Harness
	LBSuffix, TGSuffix string
	TaskDef, Svc       *Res
}

func ContainerDefs(image string) string {
	return fmt.Sprintf(`[{"name":"app","image":%q,"essential":true,"portMappings":[{"containerPort":8080}]}]`, image)
}

func NewSimCell(t testing.TB, dir string, clk *Clock, id, region, cidr, image string) *SimCell {
	t.Helper()
	return NewSimCellOn(t, On(t, provider.Options{Dir: dir, Stack: "cell-" + id, Now: clk.Now, DependencyTimeout: 300 * time.Millisecond}, region), id, cidr, image)
}

// NewSimCellOn builds the serving path of cell id through a harness
// already configured (a region, or a role in another account).
func NewSimCellOn(t testing.TB, h *Harness, id, cidr, image string) *SimCell {
	t.Helper()
	_, subs := h.Network("cell-"+id, cidr, 2)
	vpc := S(subs[0].Out, "vpcId")
	tg := h.Create("aws:lb/targetGroup:TargetGroup", "cell-"+id+"-tg", PM("port", 8080, "protocol", "HTTP", "vpcId", vpc, "targetType", "ip"))
	alb := h.Create("aws:lb/loadBalancer:LoadBalancer", "cell-"+id+"-alb", PM("subnets", []any{subs[0].ID, subs[1].ID}))
	h.Create("aws:lb/listener:Listener", "cell-"+id+"-http", PM("loadBalancerArn", alb.ID, "port", 80,
		"defaultActions", []any{map[string]any{"type": "forward", "targetGroupArn": tg.ID}}))
	cluster := h.Create("aws:ecs/cluster:Cluster", "cell-"+id+"-cluster", PM())
	td := h.Create("aws:ecs/taskDefinition:TaskDefinition", "cell-"+id+"-task", PM("family", "cell-"+id, "containerDefinitions", ContainerDefs(image),
		"requiresCompatibilities", []any{"FARGATE"}, "networkMode", "awsvpc", "cpu", "256", "memory", "512"))
	svc := h.Create("aws:ecs/service:Service", "cell-"+id+"-service", PM("cluster", cluster.ID, "launchType", "FARGATE", "desiredCount", 2,
		"taskDefinition", S(td.Out, "arn"), "networkConfiguration", map[string]any{"subnets": []any{subs[0].ID}},
		"loadBalancers", []any{map[string]any{"targetGroupArn": tg.ID, "containerName": "app", "containerPort": 8080}}))
	c := &SimCell{H: h, LBSuffix: S(alb.Out, "arnSuffix"), TGSuffix: S(tg.Out, "arnSuffix"), TaskDef: td, Svc: svc}
	lbDims := map[string]any{"LoadBalancer": c.LBSuffix}
	metric := func(qid, name string) map[string]any {
		return map[string]any{"id": qid, "returnData": false, "metric": map[string]any{
			"namespace": "AWS/ApplicationELB", "metricName": name, "dimensions": lbDims, "period": 60, "stat": "Sum"}}
	}
	// The cell template's alarms (cellmodule/alarms.go), thresholds 1 %
	// and 400 ms, 2 of 2 periods.
	h.Create(TAlarm, "cell-"+id+"-5xx-rate", PM("name", "cellctl-"+id+"-5xx-rate", "comparisonOperator", "GreaterThanThreshold",
		"threshold", 1, "evaluationPeriods", 2, "datapointsToAlarm", 2, "treatMissingData", "notBreaching",
		"metricQueries", []any{metric("target5xx", "HTTPCode_Target_5XX_Count"), metric("elb5xx", "HTTPCode_ELB_5XX_Count"), metric("requests", "RequestCount"),
			map[string]any{"id": "rate", "expression": "100 * (FILL(target5xx, 0) + FILL(elb5xx, 0)) / requests", "label": "5xx rate (%)", "returnData": true}}))
	h.Create(TAlarm, "cell-"+id+"-p99-latency", PM("name", "cellctl-"+id+"-p99-latency", "comparisonOperator", "GreaterThanThreshold",
		"threshold", 0.4, "evaluationPeriods", 2, "datapointsToAlarm", 2, "treatMissingData", "notBreaching",
		"namespace", "AWS/ApplicationELB", "metricName", "TargetResponseTime", "dimensions", lbDims, "extendedStatistic", "p99", "period", 60))
	h.Create(TAlarm, "cell-"+id+"-unhealthy-tasks", PM("name", "cellctl-"+id+"-unhealthy-tasks", "comparisonOperator", "GreaterThanThreshold",
		"threshold", 0, "evaluationPeriods", 2, "datapointsToAlarm", 2, "treatMissingData", "notBreaching",
		"namespace", "AWS/ApplicationELB", "metricName", "UnHealthyHostCount", "statistic", "Maximum", "period", 60,
		"dimensions", map[string]any{"LoadBalancer": c.LBSuffix, "TargetGroup": c.TGSuffix}))
	return c
}

// Deploy rolls the cell onto image the way an update does: a new task
// definition revision and the service pointed at it.
func (c *SimCell) Deploy(t *testing.T, image string) {
	t.Helper()
	in := c.TaskDef.Inputs.Copy()
	in["containerDefinitions"] = resource.NewStringProperty(ContainerDefs(image))
	td, err := c.H.TryUpdate(c.TaskDef, in)
	if err != nil {
		t.Fatal(err)
	}
	c.TaskDef = td
	svcIn := c.Svc.Inputs.Copy()
	svcIn["taskDefinition"] = resource.NewStringProperty(S(td.Out, "arn"))
	if c.Svc, err = c.H.TryUpdate(c.Svc, svcIn); err != nil {
		t.Fatal(err)
	}
}

func Ptr[T any](v T) *T { return &v }

func MustText(s string) *resource.Asset {
	a, err := resource.NewTextAsset(s)
	if err != nil {
		panic(err)
	}
	return a
}

func EdgeFunction(role, routing string) resource.PropertyMap {
	code, _ := resource.NewAssetArchive(map[string]any{
		"index.js":    MustText("exports.handler = async (e) => require('./config.json')"),
		"config.json": MustText(`{"version":"` + routing + `"}`),
	})
	return resource.PropertyMap{
		"role": resource.NewStringProperty(role), "runtime": resource.NewStringProperty("nodejs24.x"),
		"handler": resource.NewStringProperty("index.handler"), "publish": resource.NewBoolProperty(true),
		"code": resource.NewArchiveProperty(code),
	}
}

func DistInputs(lambdaArn string, extra ...any) resource.PropertyMap {
	m := PM(
		"enabled", true, "httpVersion", "http2",
		"origins", []any{map[string]any{"originId": "cell-a", "domainName": "cell-a.cells.example.com",
			"customOriginConfig": map[string]any{"httpPort": 80, "httpsPort": 443, "originProtocolPolicy": "https-only", "originSslProtocols": []any{"TLSv1.2"}}}},
		"defaultCacheBehavior", map[string]any{"targetOriginId": "cell-a", "viewerProtocolPolicy": "https-only",
			"allowedMethods": []any{"GET", "HEAD"}, "cachedMethods": []any{"GET", "HEAD"}, "cachePolicyId": "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
			"lambdaFunctionAssociations": []any{map[string]any{"eventType": "origin-request", "lambdaArn": lambdaArn}}},
		"restrictions", map[string]any{"geoRestriction": map[string]any{"restrictionType": "none"}},
		"viewerCertificate", map[string]any{"cloudfrontDefaultCertificate": true},
	)
	for k, v := range PM(extra...) {
		m[k] = v
	}
	return m
}

func EdgeCode(t *testing.T, table int) resource.PropertyValue {
	t.Helper()
	a, err := NewArchive(map[string]string{"index.js": "exports.handler=async(e)=>e.Records[0].cf.request", "config.json": fmt.Sprintf(`{"format": 1, "version": %d}`, table)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
