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
	tVpc    = "aws:ec2/vpc:Vpc"
	tSubnet = "aws:ec2/subnet:Subnet"
	tQueue  = "aws:sqs/queue:Queue"
	tRole   = "aws:iam/role:Role"
	tEIP    = "aws:ec2/eip:Eip"
	tFn     = "aws:lambda/function:Function"
	tAlarm  = "aws:cloudwatch/metricAlarm:MetricAlarm"
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
