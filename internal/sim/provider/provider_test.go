package provider_test

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
	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

func TestLifecycle(t *testing.T) {
	h := simtest.New(t, "cell-a", "eu-west-1")
	vpcIn := simtest.PM("cidrBlock", "10.1.0.0/16", "tags", map[string]any{"cell": "a"})

	// Preview: inputs back, computed outputs unknown, nothing created.
	checked, err := h.Check(simtest.TVpc, "cell-a-vpc", nil, vpcIn)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := h.P.Create(h.Ctx, plugin.CreateRequest{URN: h.URN(simtest.TVpc, "cell-a-vpc"), Type: simtest.TVpc, Name: "cell-a-vpc", Properties: checked, Preview: true})
	if err != nil || prev.ID != "" || !prev.Properties["arn"].IsComputed() || simtest.S(prev.Properties, "cidrBlock") != "10.1.0.0/16" {
		t.Fatalf("preview = %+v, %v", prev, err)
	}
	if rs, _ := h.Cloud.Resources(store.Filter{}); len(rs) != 0 {
		t.Fatalf("preview created %d resources", len(rs))
	}

	vpc := h.Create(simtest.TVpc, "cell-a-vpc", vpcIn)
	if !strings.HasPrefix(vpc.ID, "vpc-0") || !strings.HasPrefix(simtest.S(vpc.Out, "arn"), "arn:aws:ec2:eu-west-1:123456789012:vpc/vpc-0") {
		t.Errorf("vpc %s %s", vpc.ID, simtest.S(vpc.Out, "arn"))
	}

	// Refresh with nothing changed: same inputs, no diff.
	rd := h.Read(vpc)
	if rd.ID != resource.ID(vpc.ID) || !rd.Inputs.DeepEquals(vpc.Inputs) {
		t.Fatalf("read inputs differ:\n%v\n%v", rd.Inputs, vpc.Inputs)
	}

	// Update tags: same id, new tags.
	up, err := h.TryUpdate(vpc, simtest.PM("cidrBlock", "10.1.0.0/16", "tags", map[string]any{"cell": "a", "tier": "gold"}))
	if err != nil {
		t.Fatal(err)
	}
	if up.ID != vpc.ID || simtest.S(up.Out, "arn") != simtest.S(vpc.Out, "arn") || up.Out["tags"].ObjectValue()["tier"].StringValue() != "gold" {
		t.Errorf("update = %v", up.Out)
	}
	if d := h.Diff(up, simtest.PM("cidrBlock", "10.2.0.0/16", "tags", map[string]any{"cell": "a", "tier": "gold"})); len(d.ReplaceKeys) != 1 || d.ReplaceKeys[0] != "cidrBlock" {
		t.Errorf("cidr change diff = %+v", d)
	}

	// Console edit: refresh sees it as an input change.
	if _, err := h.Cloud.Edit("a", "cell-a-vpc", "tags.owner", `"someone"`); err != nil {
		t.Fatal(err)
	}
	rd = h.Read(up)
	if owner := rd.Inputs["tags"].ObjectValue()["owner"]; !owner.IsString() || owner.StringValue() != "someone" {
		t.Errorf("drift not in read inputs: %v", rd.Inputs["tags"])
	}
	d, _ := h.P.Diff(h.Ctx, plugin.DiffRequest{Type: simtest.TVpc, OldInputs: rd.Inputs, NewInputs: up.Inputs})
	if d.Changes != plugin.DiffSome {
		t.Errorf("program vs drifted state: %+v", d)
	}
	// Applying the program again reconciles the drift.
	fixed, err := h.TryUpdate(&simtest.Res{Typ: simtest.TVpc, Name: "cell-a-vpc", ID: vpc.ID, Inputs: rd.Inputs, Out: rd.Outputs}, up.Inputs)
	if err != nil || fixed.Out["tags"].ObjectValue().HasValue("owner") {
		t.Fatalf("reconcile: %v %v", err, fixed.Out["tags"])
	}

	if err := h.Delete(fixed); err != nil {
		t.Fatal(err)
	}
	if rd := h.Read(fixed); rd.Outputs != nil {
		t.Errorf("deleted VPC still reads: %v", rd.Outputs)
	}
	// Deleting again is fine (already gone).
	if err := h.Delete(fixed); err != nil {
		t.Errorf("second delete: %v", err)
	}
}

func TestCheckFailuresAndAutonames(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	_, err := h.Check(simtest.TVpc, "v", nil, simtest.PM("cidrBlock", "10.1.0.1/16"))
	simtest.WantErr(t, err, "cidrBlock", "network CIDR")
	_, err = h.Check("aws:lb/loadBalancer:LoadBalancer", "cell-a-a-very-long-alb-name", nil, simtest.PM())
	simtest.WantErr(t, err, "longer than maximum length 32")

	q := h.Create(simtest.TQueue, "cell-a-jobs", simtest.PM())
	name := simtest.S(q.Out, "name")
	if !strings.HasPrefix(name, "cell-a-jobs-") || q.ID != "https://sqs.us-east-1.amazonaws.com/123456789012/"+name {
		t.Errorf("queue %s %s", name, q.ID)
	}
	// Update keeps the autoname; no diff.
	if d := h.Diff(q, simtest.PM()); d.Changes != plugin.DiffNone {
		t.Errorf("autonamed queue diff on re-check: %+v", d)
	}
	up, err := h.TryUpdate(q, simtest.PM("visibilityTimeoutSeconds", 60))
	if err != nil || simtest.S(up.Out, "name") != name {
		t.Fatalf("update renamed the queue: %v %v", simtest.S(up.Out, "name"), err)
	}
}

func TestCrossResourceRules(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	vpc, subnets := h.Network("a", "10.1.0.0/16", 2)

	_, err := h.TryCreate(simtest.TSubnet, "outside", simtest.PM("vpcId", vpc.ID, "cidrBlock", "10.9.0.0/24"))
	simtest.WantErr(t, err, "InvalidSubnet.Range", "10.9.0.0/24")
	_, err = h.TryCreate(simtest.TSubnet, "overlap", simtest.PM("vpcId", vpc.ID, "cidrBlock", "10.1.0.0/20"))
	simtest.WantErr(t, err, "InvalidSubnet.Conflict")
	_, err = h.TryCreate(simtest.TSubnet, "orphan", simtest.PM("vpcId", "vpc-0123456789abcdef0", "cidrBlock", "10.1.0.0/24"))
	simtest.WantErr(t, err, "InvalidVpcID.NotFound", "The vpc ID 'vpc-0123456789abcdef0' does not exist", "creating EC2 Subnet (orphan)")
	// AWS allows VPCs with overlapping CIDRs; the isolation audit flags them.
	h.Create(simtest.TVpc, "twin", simtest.PM("cidrBlock", "10.1.0.0/16"))

	// A VPC with subnets cannot go.
	simtest.WantErr(t, h.Delete(vpc), "DependencyViolation", "has dependencies and cannot be deleted")
	for _, sn := range subnets {
		if err := h.Delete(sn); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Delete(vpc); err != nil {
		t.Fatalf("empty VPC: %v", err)
	}

	// Names unique per region (queues) and account (roles, buckets).
	h.Create(simtest.TQueue, "q1", simtest.PM("name", "orders"))
	_, err = h.TryCreate(simtest.TQueue, "q2", simtest.PM("name", "orders"))
	simtest.WantErr(t, err, "QueueNameExists")
	h.Create(simtest.TRole, "r1", simtest.PM("name", "app", "assumeRolePolicy", simtest.AssumeRole))
	other := simtest.On(t, provider.Options{Dir: h.Cloud.Dir(), Stack: "cell-b"}, "eu-west-1")
	other.Create(simtest.TQueue, "q3", simtest.PM("name", "orders")) // other region: fine
	_, err = other.TryCreate(simtest.TRole, "r2", simtest.PM("name", "app", "assumeRolePolicy", simtest.AssumeRole))
	simtest.WantErr(t, err, "EntityAlreadyExists", "Role with name app already exists")

	// RDS subnet groups need two zones.
	_, one := h.Network("b", "10.2.0.0/16", 1)
	_, err = h.TryCreate("aws:rds/subnetGroup:SubnetGroup", "db", simtest.PM("subnetIds", []any{one[0].ID}))
	simtest.WantErr(t, err, "DBSubnetGroupDoesNotCoverEnoughAZs")

	// An ECS service cannot use a target group no listener forwards to.
	_, subs := h.Network("c", "10.3.0.0/16", 2)
	vpcC := simtest.S(subs[0].Out, "vpcId")
	tg := h.Create("aws:lb/targetGroup:TargetGroup", "tg", simtest.PM("port", 80, "protocol", "HTTP", "vpcId", vpcC, "targetType", "ip"))
	cluster := h.Create("aws:ecs/cluster:Cluster", "cl", simtest.PM())
	svcIn := simtest.PM("cluster", cluster.ID, "launchType", "FARGATE", "networkConfiguration", map[string]any{"subnets": []any{subs[0].ID}},
		"loadBalancers", []any{map[string]any{"targetGroupArn": tg.ID, "containerName": "app", "containerPort": 80}})
	_, err = h.TryCreate("aws:ecs/service:Service", "svc", svcIn)
	simtest.WantErr(t, err, "does not have an associated load balancer")
	alb := h.Create("aws:lb/loadBalancer:LoadBalancer", "alb", simtest.PM("subnets", []any{subs[0].ID, subs[1].ID}))
	h.Create("aws:lb/listener:Listener", "http", simtest.PM("loadBalancerArn", alb.ID, "port", 80,
		"defaultActions", []any{map[string]any{"type": "forward", "targetGroupArn": tg.ID}}))
	svc := h.Create("aws:ecs/service:Service", "svc", svcIn)
	if !strings.HasPrefix(svc.ID, "arn:aws:ecs:us-east-1:123456789012:service/cl-") {
		t.Errorf("service id %s", svc.ID)
	}
}

func TestDeleteWaitsForDependents(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	h.P.Opts().DependencyTimeout = 5e9
	vpc, subnets := h.Network("a", "10.1.0.0/16", 1)
	done := make(chan error)
	go func() { done <- h.Delete(vpc) }()
	// The subnet goes while the VPC delete retries, as AWS + terraform do.
	if err := h.Delete(subnets[0]); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("VPC delete did not succeed after its subnet went: %v", err)
	}
}

func TestInvokesUseTheConnectionsRegion(t *testing.T) {
	h := simtest.New(t, "router", "us-west-2")
	resp, err := h.P.Invoke(h.Ctx, plugin.InvokeRequest{Tok: tokens.ModuleMember(awsmodel.InvokeAvailabilityZones), Args: simtest.PM("state", "available")})
	if err != nil {
		t.Fatal(err)
	}
	if names := resp.Properties["names"].ArrayValue(); len(names) != 4 || names[0].StringValue() != "us-west-2a" {
		t.Errorf("names = %v", names)
	}
	_, err = h.P.Invoke(h.Ctx, plugin.InvokeRequest{Tok: "aws:ec2/getAmi:getAmi"})
	simtest.WantErr(t, err, "aws:ec2/getAmi:getAmi")
}

func TestConfigValidation(t *testing.T) {
	h := simtest.New(t, "cell-a", "")
	resp, _ := h.P.CheckConfig(h.Ctx, plugin.CheckConfigRequest{News: simtest.PM("region", "mars-north-1x")})
	if len(resp.Failures) != 1 || resp.Failures[0].Property != "region" {
		t.Errorf("failures = %v", resp.Failures)
	}
	d, _ := h.P.DiffConfig(h.Ctx, plugin.DiffConfigRequest{OldInputs: simtest.PM("region", "us-east-1", "version", "6.83.4"), NewInputs: simtest.PM("region", "eu-west-1", "version", "6.83.4")})
	if len(d.ReplaceKeys) != 1 || d.ReplaceKeys[0] != "region" {
		t.Errorf("region change: %+v", d)
	}
	d, _ = h.P.DiffConfig(h.Ctx, plugin.DiffConfigRequest{OldInputs: simtest.PM("region", "us-east-1", "version", "6.83.4"), NewInputs: simtest.PM("region", "us-east-1", "version", "6.83.5")})
	if d.Changes != plugin.DiffNone {
		t.Errorf("version-only change: %+v", d)
	}
	info, _ := h.P.GetPluginInfo(h.Ctx)
	if info.Version.String() != "6.83.4" {
		t.Errorf("version %v", info.Version)
	}
}

func TestSecretsAreNotStoredInPlaintext(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	const token = "correct-horse-battery-staple-0123"
	vpc, subnets := h.Network("a", "10.1.0.0/16", 2)
	_ = vpc
	sg := h.Create("aws:elasticache/subnetGroup:SubnetGroup", "cache", simtest.PM("subnetIds", []any{subnets[0].ID, subnets[1].ID}))
	in := simtest.PM("description", "cache", "nodeType", "cache.t4g.small", "subnetGroupName", simtest.S(sg.Out, "name"), "transitEncryptionEnabled", true)
	in["authToken"] = resource.MakeSecret(resource.NewStringProperty(token))
	rg := h.Create("aws:elasticache/replicationGroup:ReplicationGroup", "cache", in)

	filepath.Walk(h.Cloud.Dir(), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), token) {
				t.Errorf("%s contains the secret in plaintext", path)
			}
		}
		return nil
	})
	// Read gives it back, as a secret, equal: no drift on refresh.
	rd := h.Read(rg)
	if !rd.Outputs["authToken"].IsSecret() || simtest.S(rd.Outputs, "authToken") != token {
		t.Errorf("authToken read back as %v", rd.Outputs["authToken"])
	}
	if d, _ := h.P.Diff(h.Ctx, plugin.DiffRequest{Type: "aws:elasticache/replicationGroup:ReplicationGroup", OldInputs: rg.Inputs, NewInputs: rd.Inputs}); d.Changes != plugin.DiffNone {
		t.Errorf("refresh shows a diff: %v", d.ChangedKeys)
	}
	// People see it redacted.
	rs, _ := h.Cloud.Resources(store.Filter{Type: "elasticache/replicationGroup"})
	if len(rs) != 1 || rs[0].Inputs["authToken"] != "[secret]" {
		t.Errorf("listed = %v", rs)
	}
}

func TestExplicitProviderRegionOverDirectCalls(t *testing.T) {
	// Without gRPC every call shares one "connection": the last Configure
	// wins. (Per-connection config is tested through the server.)
	h := simtest.New(t, "router", "eu-west-1")
	h.Configure("us-east-1")
	role := h.Create(simtest.TRole, "edge-role", simtest.PM("assumeRolePolicy", simtest.AssumeRole))
	fn := h.Create(simtest.TFn, "edge", simtest.EdgeFunction(simtest.S(role.Out, "arn"), "v1"))
	if !strings.HasPrefix(simtest.S(fn.Out, "arn"), "arn:aws:lambda:us-east-1:") {
		t.Errorf("arn %s", simtest.S(fn.Out, "arn"))
	}
}

func TestFunctionCode(t *testing.T) {
	h := simtest.New(t, "router", "us-east-1")
	role := h.Create(simtest.TRole, "edge-role", simtest.PM("assumeRolePolicy", simtest.AssumeRole))
	fn := h.Create(simtest.TFn, "router-edge", simtest.EdgeFunction(simtest.S(role.Out, "arn"), "v1"))
	files, err := h.Cloud.FunctionCode("router-edge")
	if err != nil || files["config.json"] != `{"version":"v1"}` || !strings.Contains(files["index.js"], "exports.handler") {
		t.Fatalf("code = %v, %v", files, err)
	}
	fn2, err := h.TryUpdate(fn, simtest.EdgeFunction(simtest.S(role.Out, "arn"), "v2"))
	if err != nil {
		t.Fatal(err)
	}
	if simtest.S(fn2.Out, "version") != "2" {
		t.Errorf("version after code change = %s", simtest.S(fn2.Out, "version"))
	}
	latest, _ := h.Cloud.FunctionCode(fn.ID)
	v1, _ := h.Cloud.FunctionCodeVersion("router-edge", "1")
	if latest["config.json"] != `{"version":"v2"}` || v1["config.json"] != `{"version":"v1"}` {
		t.Errorf("latest %v, v1 %v", latest, v1)
	}
	// The role cannot go while the function... roles are free to go; the
	// function itself deletes and its code with it.
	if err := h.Delete(fn2); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Cloud.FunctionCode("router-edge"); err == nil {
		t.Error("code of a deleted function still readable")
	}
}

func TestUnknownTypeIsEchoed(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	r := h.Create("aws:sns/topic:Topic", "alerts", simtest.PM("displayName", "x"))
	if r.ID == "" || simtest.S(r.Out, "displayName") != "x" {
		t.Errorf("generic resource = %s %v", r.ID, r.Out)
	}
	if rd := h.Read(r); rd.Outputs == nil {
		t.Error("generic resource not readable")
	}
}

func TestErrorsAreAPIErrors(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	_, err := h.TryCreate(simtest.TSubnet, "x", simtest.PM("vpcId", "vpc-1", "cidrBlock", "10.0.0.0/24"))
	var ae *awsmodel.APIError
	if !errors.As(err, &ae) || ae.Code != "InvalidVpcID.NotFound" || ae.Operation != "CreateSubnet" {
		t.Errorf("err = %#v", err)
	}
	_ = context.Background()
}
