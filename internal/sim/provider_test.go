package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

func TestLifecycle(t *testing.T) {
	h := newHarness(t, "cell-a", "eu-west-1")
	vpcIn := pm("cidrBlock", "10.1.0.0/16", "tags", map[string]any{"cell": "a"})

	// Preview: inputs back, computed outputs unknown, nothing created.
	checked, err := h.check(tVpc, "cell-a-vpc", nil, vpcIn)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := h.p.Create(h.ctx, plugin.CreateRequest{URN: h.urn(tVpc, "cell-a-vpc"), Type: tVpc, Name: "cell-a-vpc", Properties: checked, Preview: true})
	if err != nil || prev.ID != "" || !prev.Properties["arn"].IsComputed() || s(prev.Properties, "cidrBlock") != "10.1.0.0/16" {
		t.Fatalf("preview = %+v, %v", prev, err)
	}
	if rs, _ := h.cloud.Resources(Filter{}); len(rs) != 0 {
		t.Fatalf("preview created %d resources", len(rs))
	}

	vpc := h.create(tVpc, "cell-a-vpc", vpcIn)
	if !strings.HasPrefix(vpc.id, "vpc-0") || !strings.HasPrefix(s(vpc.out, "arn"), "arn:aws:ec2:eu-west-1:123456789012:vpc/vpc-0") {
		t.Errorf("vpc %s %s", vpc.id, s(vpc.out, "arn"))
	}

	// Refresh with nothing changed: same inputs, no diff.
	rd := h.read(vpc)
	if rd.ID != resource.ID(vpc.id) || !rd.Inputs.DeepEquals(vpc.inputs) {
		t.Fatalf("read inputs differ:\n%v\n%v", rd.Inputs, vpc.inputs)
	}

	// Update tags: same id, new tags.
	up, err := h.tryUpdate(vpc, pm("cidrBlock", "10.1.0.0/16", "tags", map[string]any{"cell": "a", "tier": "gold"}))
	if err != nil {
		t.Fatal(err)
	}
	if up.id != vpc.id || s(up.out, "arn") != s(vpc.out, "arn") || up.out["tags"].ObjectValue()["tier"].StringValue() != "gold" {
		t.Errorf("update = %v", up.out)
	}
	if d := h.diff(up, pm("cidrBlock", "10.2.0.0/16", "tags", map[string]any{"cell": "a", "tier": "gold"})); len(d.ReplaceKeys) != 1 || d.ReplaceKeys[0] != "cidrBlock" {
		t.Errorf("cidr change diff = %+v", d)
	}

	// Console edit: refresh sees it as an input change.
	if _, err := h.cloud.Edit("a", "cell-a-vpc", "tags.owner", `"someone"`); err != nil {
		t.Fatal(err)
	}
	rd = h.read(up)
	if owner := rd.Inputs["tags"].ObjectValue()["owner"]; !owner.IsString() || owner.StringValue() != "someone" {
		t.Errorf("drift not in read inputs: %v", rd.Inputs["tags"])
	}
	d, _ := h.p.Diff(h.ctx, plugin.DiffRequest{Type: tVpc, OldInputs: rd.Inputs, NewInputs: up.inputs})
	if d.Changes != plugin.DiffSome {
		t.Errorf("program vs drifted state: %+v", d)
	}
	// Applying the program again reconciles the drift.
	fixed, err := h.tryUpdate(&res{typ: tVpc, name: "cell-a-vpc", id: vpc.id, inputs: rd.Inputs, out: rd.Outputs}, up.inputs)
	if err != nil || fixed.out["tags"].ObjectValue().HasValue("owner") {
		t.Fatalf("reconcile: %v %v", err, fixed.out["tags"])
	}

	if err := h.delete(fixed); err != nil {
		t.Fatal(err)
	}
	if rd := h.read(fixed); rd.Outputs != nil {
		t.Errorf("deleted VPC still reads: %v", rd.Outputs)
	}
	// Deleting again is fine (already gone).
	if err := h.delete(fixed); err != nil {
		t.Errorf("second delete: %v", err)
	}
}

func TestCheckFailuresAndAutonames(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	_, err := h.check(tVpc, "v", nil, pm("cidrBlock", "10.1.0.1/16"))
	wantErr(t, err, "cidrBlock", "network CIDR")
	_, err = h.check("aws:lb/loadBalancer:LoadBalancer", "cell-a-a-very-long-alb-name", nil, pm())
	wantErr(t, err, "longer than maximum length 32")

	q := h.create(tQueue, "cell-a-jobs", pm())
	name := s(q.out, "name")
	if !strings.HasPrefix(name, "cell-a-jobs-") || q.id != "https://sqs.us-east-1.amazonaws.com/123456789012/"+name {
		t.Errorf("queue %s %s", name, q.id)
	}
	// Update keeps the autoname; no diff.
	if d := h.diff(q, pm()); d.Changes != plugin.DiffNone {
		t.Errorf("autonamed queue diff on re-check: %+v", d)
	}
	up, err := h.tryUpdate(q, pm("visibilityTimeoutSeconds", 60))
	if err != nil || s(up.out, "name") != name {
		t.Fatalf("update renamed the queue: %v %v", s(up.out, "name"), err)
	}
}

func TestCrossResourceRules(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	vpc, subnets := h.network("a", "10.1.0.0/16", 2)

	_, err := h.tryCreate(tSubnet, "outside", pm("vpcId", vpc.id, "cidrBlock", "10.9.0.0/24"))
	wantErr(t, err, "InvalidSubnet.Range", "10.9.0.0/24")
	_, err = h.tryCreate(tSubnet, "overlap", pm("vpcId", vpc.id, "cidrBlock", "10.1.0.0/20"))
	wantErr(t, err, "InvalidSubnet.Conflict")
	_, err = h.tryCreate(tSubnet, "orphan", pm("vpcId", "vpc-0123456789abcdef0", "cidrBlock", "10.1.0.0/24"))
	wantErr(t, err, "InvalidVpcID.NotFound", "The vpc ID 'vpc-0123456789abcdef0' does not exist", "creating EC2 Subnet (orphan)")
	// AWS allows VPCs with overlapping CIDRs; the isolation audit flags them.
	h.create(tVpc, "twin", pm("cidrBlock", "10.1.0.0/16"))

	// A VPC with subnets cannot go.
	wantErr(t, h.delete(vpc), "DependencyViolation", "has dependencies and cannot be deleted")
	for _, sn := range subnets {
		if err := h.delete(sn); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.delete(vpc); err != nil {
		t.Fatalf("empty VPC: %v", err)
	}

	// Names unique per region (queues) and account (roles, buckets).
	h.create(tQueue, "q1", pm("name", "orders"))
	_, err = h.tryCreate(tQueue, "q2", pm("name", "orders"))
	wantErr(t, err, "QueueNameExists")
	h.create(tRole, "r1", pm("name", "app", "assumeRolePolicy", assumeRole))
	other := harnessOn(t, Options{Dir: h.cloud.Dir(), Stack: "cell-b"}, "eu-west-1")
	other.create(tQueue, "q3", pm("name", "orders")) // other region: fine
	_, err = other.tryCreate(tRole, "r2", pm("name", "app", "assumeRolePolicy", assumeRole))
	wantErr(t, err, "EntityAlreadyExists", "Role with name app already exists")

	// RDS subnet groups need two zones.
	_, one := h.network("b", "10.2.0.0/16", 1)
	_, err = h.tryCreate("aws:rds/subnetGroup:SubnetGroup", "db", pm("subnetIds", []any{one[0].id}))
	wantErr(t, err, "DBSubnetGroupDoesNotCoverEnoughAZs")

	// An ECS service cannot use a target group no listener forwards to.
	_, subs := h.network("c", "10.3.0.0/16", 2)
	vpcC := s(subs[0].out, "vpcId")
	tg := h.create("aws:lb/targetGroup:TargetGroup", "tg", pm("port", 80, "protocol", "HTTP", "vpcId", vpcC, "targetType", "ip"))
	cluster := h.create("aws:ecs/cluster:Cluster", "cl", pm())
	svcIn := pm("cluster", cluster.id, "launchType", "FARGATE", "networkConfiguration", map[string]any{"subnets": []any{subs[0].id}},
		"loadBalancers", []any{map[string]any{"targetGroupArn": tg.id, "containerName": "app", "containerPort": 80}})
	_, err = h.tryCreate("aws:ecs/service:Service", "svc", svcIn)
	wantErr(t, err, "does not have an associated load balancer")
	alb := h.create("aws:lb/loadBalancer:LoadBalancer", "alb", pm("subnets", []any{subs[0].id, subs[1].id}))
	h.create("aws:lb/listener:Listener", "http", pm("loadBalancerArn", alb.id, "port", 80,
		"defaultActions", []any{map[string]any{"type": "forward", "targetGroupArn": tg.id}}))
	svc := h.create("aws:ecs/service:Service", "svc", svcIn)
	if !strings.HasPrefix(svc.id, "arn:aws:ecs:us-east-1:123456789012:service/cl-") {
		t.Errorf("service id %s", svc.id)
	}
}

func TestDeleteWaitsForDependents(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	h.p.opts.DependencyTimeout = 5e9
	vpc, subnets := h.network("a", "10.1.0.0/16", 1)
	done := make(chan error)
	go func() { done <- h.delete(vpc) }()
	// The subnet goes while the VPC delete retries, as AWS + terraform do.
	if err := h.delete(subnets[0]); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("VPC delete did not succeed after its subnet went: %v", err)
	}
}

func TestInvokesUseTheConnectionsRegion(t *testing.T) {
	h := newHarness(t, "router", "us-west-2")
	resp, err := h.p.Invoke(h.ctx, plugin.InvokeRequest{Tok: tokens.ModuleMember(awsmodel.InvokeAvailabilityZones), Args: pm("state", "available")})
	if err != nil {
		t.Fatal(err)
	}
	if names := resp.Properties["names"].ArrayValue(); len(names) != 4 || names[0].StringValue() != "us-west-2a" {
		t.Errorf("names = %v", names)
	}
	_, err = h.p.Invoke(h.ctx, plugin.InvokeRequest{Tok: "aws:ec2/getAmi:getAmi"})
	wantErr(t, err, "aws:ec2/getAmi:getAmi")
}

func TestConfigValidation(t *testing.T) {
	h := newHarness(t, "cell-a", "")
	resp, _ := h.p.CheckConfig(h.ctx, plugin.CheckConfigRequest{News: pm("region", "mars-north-1x")})
	if len(resp.Failures) != 1 || resp.Failures[0].Property != "region" {
		t.Errorf("failures = %v", resp.Failures)
	}
	d, _ := h.p.DiffConfig(h.ctx, plugin.DiffConfigRequest{OldInputs: pm("region", "us-east-1", "version", "6.83.4"), NewInputs: pm("region", "eu-west-1", "version", "6.83.4")})
	if len(d.ReplaceKeys) != 1 || d.ReplaceKeys[0] != "region" {
		t.Errorf("region change: %+v", d)
	}
	d, _ = h.p.DiffConfig(h.ctx, plugin.DiffConfigRequest{OldInputs: pm("region", "us-east-1", "version", "6.83.4"), NewInputs: pm("region", "us-east-1", "version", "6.83.5")})
	if d.Changes != plugin.DiffNone {
		t.Errorf("version-only change: %+v", d)
	}
	info, _ := h.p.GetPluginInfo(h.ctx)
	if info.Version.String() != "6.83.4" {
		t.Errorf("version %v", info.Version)
	}
}

func TestSecretsAreNotStoredInPlaintext(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	const token = "correct-horse-battery-staple-0123"
	vpc, subnets := h.network("a", "10.1.0.0/16", 2)
	_ = vpc
	sg := h.create("aws:elasticache/subnetGroup:SubnetGroup", "cache", pm("subnetIds", []any{subnets[0].id, subnets[1].id}))
	in := pm("description", "cache", "nodeType", "cache.t4g.small", "subnetGroupName", s(sg.out, "name"), "transitEncryptionEnabled", true)
	in["authToken"] = resource.MakeSecret(resource.NewStringProperty(token))
	rg := h.create("aws:elasticache/replicationGroup:ReplicationGroup", "cache", in)

	filepath.Walk(h.cloud.Dir(), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), token) {
				t.Errorf("%s contains the secret in plaintext", path)
			}
		}
		return nil
	})
	// Read gives it back, as a secret, equal: no drift on refresh.
	rd := h.read(rg)
	if !rd.Outputs["authToken"].IsSecret() || s(rd.Outputs, "authToken") != token {
		t.Errorf("authToken read back as %v", rd.Outputs["authToken"])
	}
	if d, _ := h.p.Diff(h.ctx, plugin.DiffRequest{Type: "aws:elasticache/replicationGroup:ReplicationGroup", OldInputs: rg.inputs, NewInputs: rd.Inputs}); d.Changes != plugin.DiffNone {
		t.Errorf("refresh shows a diff: %v", d.ChangedKeys)
	}
	// People see it redacted.
	rs, _ := h.cloud.Resources(Filter{Type: "elasticache/replicationGroup"})
	if len(rs) != 1 || rs[0].Inputs["authToken"] != "[secret]" {
		t.Errorf("listed = %v", rs)
	}
}

func TestExplicitProviderRegionOverDirectCalls(t *testing.T) {
	// Without gRPC every call shares one "connection": the last Configure
	// wins. (Per-connection config is tested through the server.)
	h := newHarness(t, "router", "eu-west-1")
	h.configure("us-east-1")
	role := h.create(tRole, "edge-role", pm("assumeRolePolicy", assumeRole))
	fn := h.create(tFn, "edge", edgeFunction(s(role.out, "arn"), "v1"))
	if !strings.HasPrefix(s(fn.out, "arn"), "arn:aws:lambda:us-east-1:") {
		t.Errorf("arn %s", s(fn.out, "arn"))
	}
}

func TestFunctionCode(t *testing.T) {
	h := newHarness(t, "router", "us-east-1")
	role := h.create(tRole, "edge-role", pm("assumeRolePolicy", assumeRole))
	fn := h.create(tFn, "router-edge", edgeFunction(s(role.out, "arn"), "v1"))
	files, err := h.cloud.FunctionCode("router-edge")
	if err != nil || files["config.json"] != `{"version":"v1"}` || !strings.Contains(files["index.js"], "exports.handler") {
		t.Fatalf("code = %v, %v", files, err)
	}
	fn2, err := h.tryUpdate(fn, edgeFunction(s(role.out, "arn"), "v2"))
	if err != nil {
		t.Fatal(err)
	}
	if s(fn2.out, "version") != "2" {
		t.Errorf("version after code change = %s", s(fn2.out, "version"))
	}
	latest, _ := h.cloud.FunctionCode(fn.id)
	v1, _ := h.cloud.FunctionCodeVersion("router-edge", "1")
	if latest["config.json"] != `{"version":"v2"}` || v1["config.json"] != `{"version":"v1"}` {
		t.Errorf("latest %v, v1 %v", latest, v1)
	}
	// The role cannot go while the function... roles are free to go; the
	// function itself deletes and its code with it.
	if err := h.delete(fn2); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cloud.FunctionCode("router-edge"); err == nil {
		t.Error("code of a deleted function still readable")
	}
}

func TestUnknownTypeIsEchoed(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	r := h.create("aws:sns/topic:Topic", "alerts", pm("displayName", "x"))
	if r.id == "" || s(r.out, "displayName") != "x" {
		t.Errorf("generic resource = %s %v", r.id, r.out)
	}
	if rd := h.read(r); rd.Outputs == nil {
		t.Error("generic resource not readable")
	}
}

func TestErrorsAreAPIErrors(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	_, err := h.tryCreate(tSubnet, "x", pm("vpcId", "vpc-1", "cidrBlock", "10.0.0.0/24"))
	var ae *awsmodel.APIError
	if !errors.As(err, &ae) || ae.Code != "InvalidVpcID.NotFound" || ae.Operation != "CreateSubnet" {
		t.Errorf("err = %#v", err)
	}
	_ = context.Background()
}
