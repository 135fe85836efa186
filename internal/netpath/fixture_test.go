package netpath

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/offline"
)

// fixture is a render built by hand: one stack per cell, laid out as the
// cell template lays a cell out (cellmodule/network.go): a VPC with
// public, private and isolated subnets in two zones, an internet gateway,
// one NAT gateway, the S3 gateway endpoint on the private and isolated
// tables, the ALB, service, database, cache and migrator groups and their
// rules, and the workloads placed in them.
type fixture struct {
	stacks []Stack
}

type cellSpec struct {
	id     string
	index  int
	region string
}

func newFixture(cells ...cellSpec) *fixture {
	f := &fixture{}
	for _, c := range cells {
		f.stacks = append(f.stacks, cellStack(c))
	}
	return f
}

func twoCells() *fixture {
	return newFixture(cellSpec{"cell-a", 1, "us-east-1"}, cellSpec{"cell-b", 2, "us-east-1"})
}

func (f *fixture) stack(owner string) *Stack {
	for i := range f.stacks {
		if f.stacks[i].Owner == owner {
			return &f.stacks[i]
		}
	}
	panic("no stack " + owner)
}

// res returns a stack's resource by logical name.
func (f *fixture) res(t *testing.T, owner, name string) *offline.Resource {
	t.Helper()
	for _, r := range f.stack(owner).Resources {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("%s has no %s", owner, name)
	return nil
}

// remove drops a stack's resource by logical name.
func (f *fixture) remove(t *testing.T, owner, name string) {
	t.Helper()
	s := f.stack(owner)
	for i, r := range s.Resources {
		if r.Name == name {
			s.Resources = append(s.Resources[:i], s.Resources[i+1:]...)
			return
		}
	}
	t.Fatalf("%s has no %s", owner, name)
}

// add appends a resource to a stack.
func (f *fixture) add(owner, typ, name, id string, in map[string]any, out ...map[string]any) {
	s := f.stack(owner)
	s.Resources = append(s.Resources, newRes(typ, name, id, in, out...))
}

// set replaces an input of a stack's resource.
func (f *fixture) set(t *testing.T, owner, name, key string, v any) {
	t.Helper()
	r := f.res(t, owner, name)
	r.Inputs[resource.PropertyKey(key)] = resource.NewPropertyValue(v)
}

func (f *fixture) check(t *testing.T) Report {
	t.Helper()
	rep, err := Check(f.stacks)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func newRes(typ, name, id string, in map[string]any, out ...map[string]any) *offline.Resource {
	o := map[string]any{"id": id}
	if len(out) > 0 {
		for k, v := range out[0] {
			o[k] = v
		}
	}
	return &offline.Resource{Type: typ, Name: name, Custom: true, ID: id,
		Inputs: resource.NewPropertyMapFromMap(in), Outputs: resource.NewPropertyMapFromMap(o)}
}

// cfList is the CloudFront origin-facing list's id in the fixture's
// regions, and a sample of its entries.
func cfList(region string) string { return "pl-cf-" + region }

var cfEntries = []any{map[string]any{"cidr": "13.32.0.0/15"}, map[string]any{"cidr": "130.176.0.0/17"}}

func cellStack(c cellSpec) Stack {
	id := func(kind, name string) string { return kind + "-" + c.id + "-" + name }
	n := func(name string) string { return c.id + "-" + name }
	vpc := id("vpc", "main")
	cidr := func(third int) string { return fmt.Sprintf("10.%d.%d.0/20", c.index, third) }
	var rs []*offline.Resource
	add := func(typ, name, rid string, in map[string]any, out ...map[string]any) {
		rs = append(rs, newRes(typ, name, rid, in, out...))
	}
	add(tVPC, n("vpc"), vpc, map[string]any{"cidrBlock": fmt.Sprintf("10.%d.0.0/16", c.index), "enableDnsSupport": true, "enableDnsHostnames": true},
		map[string]any{"mainRouteTableId": id("rtb", "main"), "defaultNetworkAclId": id("acl", "default"), "defaultSecurityGroupId": id("sg", "default")})
	zones := []string{"a", "b"}
	for i, z := range zones {
		add(tSubnet, n("public-"+z), id("subnet", "public-"+z), map[string]any{"vpcId": vpc, "cidrBlock": cidr(96 + 16*i)},
			map[string]any{"arn": "arn:aws:ec2:" + c.region + ":123456789012:subnet/" + id("subnet", "public-"+z)})
		add(tSubnet, n("private-"+z), id("subnet", "private-"+z), map[string]any{"vpcId": vpc, "cidrBlock": cidr(16 * i)})
		add(tSubnet, n("isolated-"+z), id("subnet", "isolated-"+z), map[string]any{"vpcId": vpc, "cidrBlock": cidr(160 + 16*i)})
	}
	add(tIGW, n("igw"), id("igw", "main"), map[string]any{"vpcId": vpc})
	add(tNAT, n("nat-a"), id("nat", "a"), map[string]any{"subnetId": id("subnet", "public-a"), "connectivityType": "public"})
	add(tRouteTable, n("public-rt"), id("rtb", "public"), map[string]any{"vpcId": vpc,
		"routes": []any{map[string]any{"cidrBlock": "0.0.0.0/0", "gatewayId": id("igw", "main")}}})
	add(tRouteTable, n("private-rt"), id("rtb", "private"), map[string]any{"vpcId": vpc,
		"routes": []any{map[string]any{"cidrBlock": "0.0.0.0/0", "natGatewayId": id("nat", "a")}}})
	add(tRouteTable, n("isolated-rt"), id("rtb", "isolated"), map[string]any{"vpcId": vpc})
	for _, z := range zones {
		for _, tier := range []string{"public", "private", "isolated"} {
			add(tRTAssoc, n(tier+"-"+z+"-rta"), id("rtbassoc", tier+"-"+z), map[string]any{"subnetId": id("subnet", tier+"-"+z), "routeTableId": id("rtb", tier)})
		}
	}
	add(tEndpoint, n("s3-endpoint"), id("vpce", "s3"), map[string]any{"vpcId": vpc, "serviceName": "com.amazonaws." + c.region + ".s3",
		"vpcEndpointType": "Gateway", "routeTableIds": []any{id("rtb", "private"), id("rtb", "isolated")}},
		map[string]any{"prefixListId": "pl-s3-" + c.region, "cidrBlocks": []any{"52.216.0.0/15", "3.5.0.0/19"}})
	for _, g := range []string{"alb", "service", "db", "cache", "migrate"} {
		add(tSG, n(g+"-sg"), id("sg", g), map[string]any{"vpcId": vpc})
	}
	sgRule := func(typ, name, on string, port int, peer map[string]any) {
		in := map[string]any{"securityGroupId": id("sg", on), "ipProtocol": "tcp", "fromPort": port, "toPort": port}
		for k, v := range peer {
			in[k] = v
		}
		add(typ, n(name), id("sgr", name), in)
	}
	ref := func(g string) map[string]any { return map[string]any{"referencedSecurityGroupId": id("sg", g)} }
	anywhere := map[string]any{"cidrIpv4": "0.0.0.0/0"}
	sgRule(tIngress, "alb-in-https-cloudfront", "alb", 443, map[string]any{"prefixListId": cfList(c.region)})
	sgRule(tEgress, "alb-out-service", "alb", 8080, ref("service"))
	sgRule(tIngress, "service-in-alb", "service", 8080, ref("alb"))
	sgRule(tEgress, "service-out-https", "service", 443, anywhere)
	sgRule(tEgress, "service-out-db", "service", 5432, ref("db"))
	sgRule(tEgress, "service-out-cache", "service", 6379, ref("cache"))
	sgRule(tIngress, "db-in-service", "db", 5432, ref("service"))
	sgRule(tIngress, "cache-in-service", "cache", 6379, ref("service"))
	sgRule(tEgress, "migrate-out-https", "migrate", 443, anywhere)
	sgRule(tEgress, "migrate-out-db", "migrate", 5432, ref("db"))
	sgRule(tIngress, "db-in-migrate", "db", 5432, ref("migrate"))

	albARN := "arn:aws:elasticloadbalancing:" + c.region + ":123456789012:loadbalancer/app/" + n("alb")
	add(tLB, n("alb"), albARN, map[string]any{"loadBalancerType": "application", "internal": false,
		"subnets": []any{id("subnet", "public-a"), id("subnet", "public-b")}, "securityGroups": []any{id("sg", "alb")}}, map[string]any{"arn": albARN})
	add(tListener, n("https"), albARN+"/listener", map[string]any{"loadBalancerArn": albARN, "port": 443, "protocol": "HTTPS"})
	add(tService, n("service"), "svc-"+c.id, map[string]any{"launchType": "FARGATE",
		"networkConfiguration": map[string]any{"assignPublicIp": false, "securityGroups": []any{id("sg", "service")},
			"subnets": []any{id("subnet", "private-a"), id("subnet", "private-b")}},
		"loadBalancers": []any{map[string]any{"containerName": "app", "containerPort": 8080}}})
	isolated := []any{id("subnet", "isolated-a"), id("subnet", "isolated-b")}
	add(tDBSubnetGroup, n("db-subnets"), n("db-subnets-1"), map[string]any{"subnetIds": isolated})
	add(tDBCluster, n("db"), "cells-"+c.id+"-db", map[string]any{"engine": "aurora-postgresql", "port": 5432,
		"dbSubnetGroupName": n("db-subnets-1"), "vpcSecurityGroupIds": []any{id("sg", "db")}})
	add(tDBInstance, n("db-1"), n("db-1"), map[string]any{"clusterIdentifier": "cells-" + c.id + "-db", "publiclyAccessible": false})
	add(tCacheSubnetGroup, n("cache-subnets"), n("cache-subnets-1"), map[string]any{"subnetIds": isolated})
	add(tCache, n("cache"), n("cache-1"), map[string]any{"engine": "valkey", "port": 6379,
		"subnetGroupName": n("cache-subnets-1"), "securityGroupIds": []any{id("sg", "cache")}})

	cfResult := resource.NewPropertyMapFromMap(map[string]any{"id": cfList(c.region), "name": CloudFrontPrefixLists[0], "entries": cfEntries})
	return Stack{Stack: offline.Stack{Name: c.id, Owner: c.id, Account: "123456789012", Region: c.region, Resources: rs,
		Invokes: []offline.Invoke{{Token: invokePrefixList, Result: cfResult}}},
		Tasks: []Task{{Name: "migrator", Subnets: []string{id("subnet", "private-a"), id("subnet", "private-b")},
			SecurityGroups: []string{id("sg", "migrate")}}}}
}

// result returns the result of the path named name.
func result(t *testing.T, rs []Result, name string) Result {
	t.Helper()
	for _, r := range rs {
		if r.Path == name {
			return r
		}
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.Path)
	}
	t.Fatalf("no path %q among:\n  %s", name, strings.Join(names, "\n  "))
	return Result{}
}

// onlyFindings asserts the report's findings are exactly the named paths
// and returns them by path.
func onlyFindings(t *testing.T, rep Report, paths ...string) map[string]Result {
	t.Helper()
	got := map[string]Result{}
	for _, f := range rep.Findings() {
		got[f.Path] = f
	}
	for _, p := range paths {
		if _, ok := got[p]; !ok {
			t.Errorf("expected a finding on %q", p)
		}
	}
	for p, f := range got {
		if !contains(paths, p) {
			t.Errorf("unexpected finding %q: %s", p, f.Reason)
		}
	}
	return got
}

func mustContain(t *testing.T, r Result, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(r.Reason, p) && !contains(r.Deciding, p) {
			t.Errorf("%s: reason %q (deciding %v) does not name %q", r.Path, r.Reason, r.Deciding, p)
		}
	}
}
