package netpath

import (
	"strings"
	"testing"
)

// The template's layout holds: every required path allowed, every
// forbidden one denied.
func TestTemplateLayoutHolds(t *testing.T) {
	rep := twoCells().check(t)
	onlyFindings(t, rep)
	allowed, required, denied, forbidden := rep.Counts()
	// Per cell: CloudFront, ALB, database, cache, SQS, ECR, Logs, S3 for
	// the task; database, ECR, Logs, S3 for the migrator.
	if required != 2*12 || allowed != required {
		t.Errorf("required %d/%d allowed, want 24/24", allowed, required)
	}
	// Per cell: one VPC pair, the join, the ALB around CloudFront, task,
	// migrator, database (twice), cache (twice).
	if forbidden != 2*(1+1+1+2+2+2) || denied != forbidden {
		t.Errorf("forbidden %d/%d denied, want 18/18", denied, forbidden)
	}
	r := result(t, rep.Required, "cell-a: ALB → task:8080")
	mustContain(t, r, "cell-a-alb-out-service", "cell-a-service-in-alb", "cell-a-vpc")
	r = result(t, rep.Required, "cell-a: task → SQS:443")
	mustContain(t, r, "cell-a-service-out-https", "cell-a-private-rt", "cell-a-nat-a", "cell-a-public-rt")
	r = result(t, rep.Required, "cell-a: CloudFront → ALB:443")
	mustContain(t, r, "cell-a-alb-in-https-cloudfront", "cell-a-https", "cell-a-igw")
	r = result(t, rep.Required, "cell-a: migrator → database:5432")
	mustContain(t, r, "cell-a-migrate-out-db", "cell-a-db-in-migrate")
}

// Each change to the layout that breaks a required path is a finding on
// that path, naming what is missing; nothing else changes.
func TestARequiredPathNamesTheMissingRule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, f *fixture)
		path   string
		names  []string
		// also are other findings the change makes.
		also []string
	}{
		{"the service's ingress from the ALB is gone", func(t *testing.T, f *fixture) { f.remove(t, "cell-a", "cell-a-service-in-alb") },
			"cell-a: ALB → task:8080", []string{"no ingress rule of cell-a-service-sg admits the ALB (cell-a-alb-sg"}, nil},
		{"the ALB's egress to the service is gone", func(t *testing.T, f *fixture) { f.remove(t, "cell-a", "cell-a-alb-out-service") },
			"cell-a: ALB → task:8080", []string{"no egress rule of cell-a-alb-sg allows tcp 8080 to the task"}, nil},
		{"the ALB's egress is on another port", func(t *testing.T, f *fixture) {
			f.set(t, "cell-a", "cell-a-alb-out-service", "fromPort", 80)
			f.set(t, "cell-a", "cell-a-alb-out-service", "toPort", 80)
		}, "cell-a: ALB → task:8080", []string{"no egress rule of cell-a-alb-sg allows tcp 8080"}, nil},
		{"the database admits the ALB instead of the service", func(t *testing.T, f *fixture) {
			f.set(t, "cell-a", "cell-a-db-in-service", "referencedSecurityGroupId", "sg-cell-a-alb")
		}, "cell-a: task → database:5432", []string{"no ingress rule of cell-a-db-sg admits the task"}, nil},
		{"the cache rule is gone", func(t *testing.T, f *fixture) { f.remove(t, "cell-a", "cell-a-service-out-cache") },
			"cell-a: task → cache:6379", []string{"no egress rule of cell-a-service-sg allows tcp 6379 to the cache"}, nil},
		{"the migrator's database ingress is gone", func(t *testing.T, f *fixture) { f.remove(t, "cell-a", "cell-a-db-in-migrate") },
			"cell-a: migrator → database:5432", []string{"no ingress rule of cell-a-db-sg admits the migrator"}, nil},
		{"the ALB admits another prefix list", func(t *testing.T, f *fixture) {
			f.set(t, "cell-a", "cell-a-alb-in-https-cloudfront", "prefixListId", "pl-other")
		}, "cell-a: CloudFront → ALB:443", []string{"no ingress rule of cell-a-alb-sg admits CloudFront's origin-facing prefix list pl-cf-us-east-1"},
			[]string{"cell-a: internet → ALB, around CloudFront"}},
		{"the ALB is internal", func(t *testing.T, f *fixture) { f.set(t, "cell-a", "cell-a-alb", "internal", true) },
			"cell-a: CloudFront → ALB:443", []string{"cell-a-alb is internal"}, nil},
		{"the ALB has no HTTPS listener", func(t *testing.T, f *fixture) { f.set(t, "cell-a", "cell-a-https", "port", 80) },
			"cell-a: CloudFront → ALB:443", []string{"cell-a-alb has no listener on 443"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := twoCells()
			tc.change(t, f)
			got := onlyFindings(t, f.check(t), append([]string{tc.path}, tc.also...)...)
			if r, ok := got[tc.path]; ok {
				if r.Allowed {
					t.Errorf("%s is allowed", tc.path)
				}
				mustContain(t, r, tc.names...)
			}
		})
	}
}

// A subnet is public only with a default route to an internet gateway of
// its VPC: an ALB in the private tier is out of CloudFront's reach, and a
// task whose tier lost its NAT route reaches no AWS API.
func TestRoutesDecideThePublicAndPrivateTiers(t *testing.T) {
	t.Run("ALB in private subnets", func(t *testing.T) {
		f := twoCells()
		f.set(t, "cell-a", "cell-a-alb", "subnets", []any{"subnet-cell-a-private-a", "subnet-cell-a-private-b"})
		got := onlyFindings(t, f.check(t), "cell-a: CloudFront → ALB:443")
		mustContain(t, got["cell-a: CloudFront → ALB:443"], "cell-a-private-a is not a public subnet", "cell-a-private-rt")
	})
	t.Run("no NAT route", func(t *testing.T) {
		f := twoCells()
		f.set(t, "cell-a", "cell-a-private-rt", "routes", []any{})
		paths := []string{"cell-a: task → SQS:443", "cell-a: task → ECR:443", "cell-a: task → CloudWatch Logs:443",
			"cell-a: migrator → ECR:443", "cell-a: migrator → CloudWatch Logs:443"}
		got := onlyFindings(t, f.check(t), paths...)
		mustContain(t, got[paths[0]], "cell-a-private-rt (the route table of cell-a-private-a) has no route to 0.0.0.0/0")
	})
	t.Run("NAT gateway in a private subnet", func(t *testing.T) {
		f := twoCells()
		f.set(t, "cell-a", "cell-a-nat-a", "subnetId", "subnet-cell-a-private-a")
		got := onlyFindings(t, f.check(t), "cell-a: task → SQS:443", "cell-a: task → ECR:443", "cell-a: task → CloudWatch Logs:443",
			"cell-a: migrator → ECR:443", "cell-a: migrator → CloudWatch Logs:443")
		mustContain(t, got["cell-a: task → SQS:443"], "cell-a-nat-a is in cell-a-private-a, whose route table cell-a-private-rt has no 0.0.0.0/0 route to the VPC's internet gateway")
	})
	t.Run("route to the internet gateway without a public address", func(t *testing.T) {
		f := twoCells()
		f.set(t, "cell-a", "cell-a-private-rt", "routes", []any{map[string]any{"cidrBlock": "0.0.0.0/0", "gatewayId": "igw-cell-a-main"}})
		got := onlyFindings(t, f.check(t), "cell-a: task → SQS:443", "cell-a: task → ECR:443", "cell-a: task → CloudWatch Logs:443",
			"cell-a: migrator → ECR:443", "cell-a: migrator → CloudWatch Logs:443")
		mustContain(t, got["cell-a: task → SQS:443"], "the task has no public address")
	})
	t.Run("the S3 endpoint misses the private table", func(t *testing.T) {
		f := twoCells()
		f.set(t, "cell-a", "cell-a-s3-endpoint", "routeTableIds", []any{"rtb-cell-a-isolated"})
		got := onlyFindings(t, f.check(t), "cell-a: task → S3:443 (gateway endpoint)", "cell-a: migrator → S3:443 (gateway endpoint)")
		mustContain(t, got["cell-a: task → S3:443 (gateway endpoint)"], "no S3 gateway endpoint (com.amazonaws.us-east-1.s3) of cell-a-vpc is associated with cell-a-private-rt")
	})
	t.Run("HTTPS egress only to the VPC", func(t *testing.T) {
		f := twoCells()
		f.set(t, "cell-a", "cell-a-service-out-https", "cidrIpv4", "10.1.0.0/16")
		got := onlyFindings(t, f.check(t), "cell-a: task → SQS:443", "cell-a: task → ECR:443", "cell-a: task → CloudWatch Logs:443",
			"cell-a: task → S3:443 (gateway endpoint)")
		mustContain(t, got["cell-a: task → S3:443 (gateway endpoint)"], "no egress rule of cell-a-service-sg allows tcp 443 to S3")
	})
}

// An interface endpoint with private DNS answers for its service: the
// task then reaches it through the endpoint's group, not the NAT.
func TestInterfaceEndpointsCarryTheirService(t *testing.T) {
	f := twoCells()
	f.set(t, "cell-a", "cell-a-private-rt", "routes", []any{})
	for _, svc := range []string{"sqs", "ecr.api", "ecr.dkr", "logs"} {
		f.add("cell-a", tEndpoint, "cell-a-"+svc+"-endpoint", "vpce-cell-a-"+svc, map[string]any{"vpcId": "vpc-cell-a-main",
			"serviceName": "com.amazonaws.us-east-1." + svc, "vpcEndpointType": "Interface", "privateDnsEnabled": true,
			"subnetIds": []any{"subnet-cell-a-private-a", "subnet-cell-a-private-b"}, "securityGroupIds": []any{"sg-cell-a-endpoints"}})
	}
	f.add("cell-a", tSG, "cell-a-endpoints-sg", "sg-cell-a-endpoints", map[string]any{"vpcId": "vpc-cell-a-main"})
	f.add("cell-a", tIngress, "cell-a-endpoints-in-https", "sgr-e", map[string]any{"securityGroupId": "sg-cell-a-endpoints",
		"ipProtocol": "tcp", "fromPort": 443, "toPort": 443, "cidrIpv4": "10.1.0.0/16"})
	rep := f.check(t)
	onlyFindings(t, rep)
	mustContain(t, result(t, rep.Required, "cell-a: task → SQS:443"), "cell-a-sqs-endpoint", "cell-a-endpoints-in-https")

	// Without private DNS the default name resolves to the public
	// endpoint, which the tables no longer route.
	f.set(t, "cell-a", "cell-a-sqs-endpoint", "privateDnsEnabled", false)
	got := onlyFindings(t, f.check(t), "cell-a: task → SQS:443")
	mustContain(t, got["cell-a: task → SQS:443"], "has no route to 0.0.0.0/0")

	// With it but a group that does not admit the task, the endpoint is
	// out of reach.
	f.set(t, "cell-a", "cell-a-sqs-endpoint", "privateDnsEnabled", true)
	f.set(t, "cell-a", "cell-a-endpoints-in-https", "cidrIpv4", "10.1.96.0/20")
	got = onlyFindings(t, f.check(t), "cell-a: task → SQS:443", "cell-a: task → ECR:443", "cell-a: task → CloudWatch Logs:443",
		"cell-a: migrator → ECR:443", "cell-a: migrator → CloudWatch Logs:443")
	mustContain(t, got["cell-a: task → SQS:443"], "no ingress rule of cell-a-endpoints-sg admits the task")
}

// The forbidden paths: each change that opens one is a finding naming
// the rule or route that opens it.
func TestAForbiddenPathNamesWhatOpensIt(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, f *fixture)
		paths  []string
		names  []string
	}{
		{"the database admits the internet", func(t *testing.T, f *fixture) {
			f.add("cell-a", tIngress, "cell-a-db-in-anywhere", "sgr-x", map[string]any{"securityGroupId": "sg-cell-a-db",
				"ipProtocol": "tcp", "fromPort": 5432, "toPort": 5432, "cidrIpv4": "0.0.0.0/0"})
		}, []string{"cell-a: internet → database"}, []string{"cell-a-db-in-anywhere (cell-a-db-sg ingress tcp 5432 from 0.0.0.0/0) admits internet addresses"}},
		{"the cache admits IPv6 anywhere on every port", func(t *testing.T, f *fixture) {
			f.add("cell-a", tIngress, "cell-a-cache-in-v6", "sgr-x", map[string]any{"securityGroupId": "sg-cell-a-cache",
				"ipProtocol": "-1", "cidrIpv6": "::/0"})
		}, []string{"cell-a: internet → cache"}, []string{"cell-a-cache-in-v6"}},
		{"the task admits a public range", func(t *testing.T, f *fixture) {
			f.add("cell-a", tIngress, "cell-a-service-in-office", "sgr-x", map[string]any{"securityGroupId": "sg-cell-a-service",
				"ipProtocol": "tcp", "fromPort": 22, "toPort": 22, "cidrIpv4": "203.0.113.0/24"})
		}, []string{"cell-a: internet → task"}, []string{"cell-a-service-in-office"}},
		{"the task gets a public address", func(t *testing.T, f *fixture) {
			f.set(t, "cell-a", "cell-a-service", "networkConfiguration", map[string]any{"assignPublicIp": true,
				"securityGroups": []any{"sg-cell-a-service"}, "subnets": []any{"subnet-cell-a-private-a", "subnet-cell-a-private-b"}})
		}, []string{"cell-a: internet → task"}, []string{"cell-a-service (assignPublicIp) gives the task a public address"}},
		{"an Aurora instance is publicly accessible", func(t *testing.T, f *fixture) {
			f.set(t, "cell-a", "cell-a-db-1", "publiclyAccessible", true)
		}, []string{"cell-a: internet → database"}, []string{"cell-a-db-1 (publiclyAccessible)"}},
		{"the ALB admits the internet on 443", func(t *testing.T, f *fixture) {
			f.add("cell-a", tIngress, "cell-a-alb-in-https-anywhere", "sgr-x", map[string]any{"securityGroupId": "sg-cell-a-alb",
				"ipProtocol": "tcp", "fromPort": 443, "toPort": 443, "cidrIpv4": "0.0.0.0/0"})
		}, []string{"cell-a: internet → ALB, around CloudFront"}, []string{"cell-a-alb-in-https-anywhere"}},
		{"the database sits in the public tier", func(t *testing.T, f *fixture) {
			f.set(t, "cell-a", "cell-a-db-subnets", "subnetIds", []any{"subnet-cell-a-public-a", "subnet-cell-a-public-b"})
		}, []string{"cell-a: database in a subnet routed to an internet gateway"}, []string{"cell-a-db is in cell-a-public-a, whose route table routes to an internet gateway (cell-a-public-rt: 0.0.0.0/0 → internet gateway cell-a-igw)"}},
		{"the isolated tier gets a route to the internet gateway", func(t *testing.T, f *fixture) {
			f.add("cell-a", tRoute, "cell-a-isolated-out", "r-x", map[string]any{"routeTableId": "rtb-cell-a-isolated",
				"destinationCidrBlock": "198.51.100.0/24", "gatewayId": "igw-cell-a-main"})
		}, []string{"cell-a: database in a subnet routed to an internet gateway", "cell-a: cache in a subnet routed to an internet gateway"},
			[]string{"cell-a-isolated-out"}},
		{"a route to another cell's range", func(t *testing.T, f *fixture) {
			f.add("cell-a", tRoute, "cell-a-to-b", "r-x", map[string]any{"routeTableId": "rtb-cell-a-private",
				"destinationCidrBlock": "10.2.0.0/16", "vpcPeeringConnectionId": "pcx-unknown"})
		}, []string{"cell-a → cell-b: VPC to VPC"}, []string{"cell-a-to-b routes 10.2.0.0/16, which holds cell-b's VPC (10.2.0.0/16), to a VPC peering connection (pcx-unknown)"}},
		{"a default route to a transit gateway", func(t *testing.T, f *fixture) {
			f.set(t, "cell-a", "cell-a-private-rt", "routes", []any{map[string]any{"cidrBlock": "0.0.0.0/0", "transitGatewayId": "tgw-1"}})
		}, []string{"cell-a → cell-b: VPC to VPC", "cell-a: task → SQS:443", "cell-a: task → ECR:443", "cell-a: task → CloudWatch Logs:443",
			"cell-a: migrator → ECR:443", "cell-a: migrator → CloudWatch Logs:443"}, []string{"cell-a-private-rt"}},
		{"a peering connection between the cells", func(t *testing.T, f *fixture) {
			f.add("cell-a", tPeering, "cell-a-peer-b", "pcx-ab", map[string]any{"vpcId": "vpc-cell-a-main", "peerVpcId": "vpc-cell-b-main"})
		}, []string{"cell-a → cell-b: VPC to VPC", "cell-b → cell-a: VPC to VPC",
			"cell-a: VPC → another network (peering, transit gateway, VPN, shared subnet)",
			"cell-b: VPC → another network (peering, transit gateway, VPN, shared subnet)"}, []string{"cell-a-peer-b"}},
		{"both cells attach to one transit gateway", func(t *testing.T, f *fixture) {
			for _, c := range []string{"cell-a", "cell-b"} {
				f.add(c, tTGWAttach, c+"-tgw", "tgw-attach-"+c, map[string]any{"vpcId": "vpc-" + c + "-main", "transitGatewayId": "tgw-shared",
					"subnetIds": []any{"subnet-" + c + "-private-a"}})
			}
		}, []string{"cell-a → cell-b: VPC to VPC", "cell-b → cell-a: VPC to VPC",
			"cell-a: VPC → another network (peering, transit gateway, VPN, shared subnet)",
			"cell-b: VPC → another network (peering, transit gateway, VPN, shared subnet)"}, []string{"tgw-shared"}},
		{"a rule naming another cell's group", func(t *testing.T, f *fixture) {
			f.add("cell-b", tIngress, "cell-b-db-in-a", "sgr-x", map[string]any{"securityGroupId": "sg-cell-b-db",
				"ipProtocol": "tcp", "fromPort": 5432, "toPort": 5432, "referencedSecurityGroupId": "sg-cell-a-service"})
		}, []string{"cell-a → cell-b: VPC to VPC"}, []string{"cell-b-db-in-a (cell-b-db-sg ingress tcp 5432 from cell-a-service-sg) names cell-a's security group cell-a-service-sg"}},
		{"an egress rule covering every cell's range", func(t *testing.T, f *fixture) {
			f.add("cell-a", tEgress, "cell-a-service-out-private", "sgr-x", map[string]any{"securityGroupId": "sg-cell-a-service",
				"ipProtocol": "-1", "cidrIpv4": "10.0.0.0/8"})
		}, []string{"cell-a → cell-b: VPC to VPC"}, []string{"cell-a-service-out-private"}},
		{"a subnet shared with another account", func(t *testing.T, f *fixture) {
			f.add("cell-a", tRAMAssoc, "cell-a-share", "share-1", map[string]any{"resourceArn": "arn:aws:ec2:us-east-1:123456789012:subnet/subnet-cell-a-public-a"})
		}, []string{"cell-a: VPC → another network (peering, transit gateway, VPN, shared subnet)"}, []string{"cell-a-share shares cell-a-public-a"}},
		{"an endpoint to another cell's endpoint service", func(t *testing.T, f *fixture) {
			f.add("cell-b", tEndpointService, "cell-b-svc", "vpce-svc-b", map[string]any{}, map[string]any{"serviceName": "com.amazonaws.vpce.us-east-1.vpce-svc-b"})
			f.add("cell-a", tEndpoint, "cell-a-to-b-svc", "vpce-x", map[string]any{"vpcId": "vpc-cell-a-main", "serviceName": "com.amazonaws.vpce.us-east-1.vpce-svc-b",
				"vpcEndpointType": "Interface", "subnetIds": []any{"subnet-cell-a-private-a"}})
		}, []string{"cell-a → cell-b: VPC to VPC"}, []string{"cell-a-to-b-svc connects to cell-b's endpoint service cell-b-svc"}},
		{"the database carries a group the render does not declare", func(t *testing.T, f *fixture) {
			f.set(t, "cell-a", "cell-a-db", "vpcSecurityGroupIds", []any{"sg-cell-a-db", "sg-elsewhere"})
		}, []string{"cell-a: internet → database"}, []string{"security group sg-elsewhere is not in the render"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := twoCells()
			tc.change(t, f)
			got := onlyFindings(t, f.check(t), tc.paths...)
			if r, ok := got[tc.paths[0]]; ok {
				mustContain(t, r, tc.names...)
			}
		})
	}
}

// A default route to a NAT or internet gateway reaches no other cell:
// the internet routes no private range.
func TestDefaultRoutesThroughGatewaysJoinNoCells(t *testing.T) {
	rep := twoCells().check(t)
	r := result(t, rep.Forbidden, "cell-a → cell-b: VPC to VPC")
	if r.Allowed || !strings.Contains(r.Reason, "cell-a's VPC (10.1.0.0/16)") || !strings.Contains(r.Reason, "cell-b's VPC (10.2.0.0/16)") {
		t.Fatalf("%+v", r)
	}
}

// The CloudFront path needs the lookup of CloudFront's list in the
// cell's region: a list id is regional.
func TestCloudFrontIsItsRegionsList(t *testing.T) {
	f := newFixture(cellSpec{"cell-a", 1, "us-east-1"}, cellSpec{"cell-d", 4, "us-west-2"})
	onlyFindings(t, f.check(t))
	// cell-d names us-east-1's list: AWS has no such list in us-west-2.
	f.set(t, "cell-d", "cell-d-alb-in-https-cloudfront", "prefixListId", cfList("us-east-1"))
	got := onlyFindings(t, f.check(t), "cell-d: CloudFront → ALB:443", "cell-d: internet → ALB, around CloudFront")
	mustContain(t, got["cell-d: CloudFront → ALB:443"], "pl-cf-us-west-2")

	// Without any lookup of the list in the region, the rule's prefix
	// list is an id nothing in the render explains.
	f = twoCells()
	f.stack("cell-a").Invokes = nil
	f.stack("cell-b").Invokes = nil
	onlyFindings(t, f.check(t), "cell-a: CloudFront → ALB:443", "cell-a: internet → ALB, around CloudFront",
		"cell-b: CloudFront → ALB:443", "cell-b: internet → ALB, around CloudFront")
	f.stack("cell-b").Invokes = twoCells().stack("cell-b").Invokes
	onlyFindings(t, f.check(t))
	f.stack("cell-b").Invokes = nil
	got = onlyFindings(t, f.check(t), "cell-a: CloudFront → ALB:443", "cell-a: internet → ALB, around CloudFront",
		"cell-b: CloudFront → ALB:443", "cell-b: internet → ALB, around CloudFront")
	mustContain(t, got["cell-a: CloudFront → ALB:443"], "the render does not look up CloudFront's origin-facing prefix list")
	mustContain(t, got["cell-a: internet → ALB, around CloudFront"], "whose entries the render does not show")
}

// A rule, route or range that does not parse fails the check: it is
// never read as allowing nothing.
func TestAnUnreadableRuleIsAnError(t *testing.T) {
	f := twoCells()
	f.set(t, "cell-a", "cell-a-service-out-https", "cidrIpv4", "[unknown]")
	if _, err := Check(f.stacks); err == nil || !strings.Contains(err.Error(), "cell-a-service-out-https") {
		t.Fatalf("got %v", err)
	}
	// An inline rule's range that does not parse would otherwise drop the
	// rule alone.
	f = twoCells()
	f.set(t, "cell-a", "cell-a-cache-sg", "ingress", []any{map[string]any{"protocol": "tcp", "fromPort": 6379, "toPort": 6379,
		"cidrBlocks": []any{"10.1.0.0/16", "10.1.0.0/33"}}})
	if _, err := Check(f.stacks); err == nil || !strings.Contains(err.Error(), "cell-a-cache-sg") || !strings.Contains(err.Error(), "10.1.0.0/33") {
		t.Fatalf("got %v", err)
	}
	f = twoCells()
	f.set(t, "cell-a", "cell-a-db-in-service", "ipProtocol", "")
	if _, err := Check(f.stacks); err == nil || !strings.Contains(err.Error(), "cell-a-db-in-service") {
		t.Fatalf("got %v", err)
	}
}

// A cell that lacks a workload has findings on its paths, not silence.
func TestAMissingWorkloadIsAFinding(t *testing.T) {
	f := twoCells()
	f.remove(t, "cell-a", "cell-a-cache")
	got := onlyFindings(t, f.check(t), "cell-a: task → cache")
	mustContain(t, got["cell-a: task → cache"], "cell-a declares no cache replication group")
}
