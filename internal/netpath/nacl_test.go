package netpath

import (
	"net/netip"
	"strings"
	"testing"
)

func aclOf(ingress, egress []*naclRule) *nacl {
	a := &nacl{named: named{name: "acl"}, declared: true, ingress: ingress, egress: egress}
	sortACL(a.ingress)
	sortACL(a.egress)
	return a
}

func rule(num int, allow bool, proto, cidr string, from, to int) *naclRule {
	return &naclRule{name: "r", num: num, allow: allow, proto: proto, cidr: netip.MustParsePrefix(cidr), from: from, to: to}
}

func TestACLFirstMatchingRuleDecides(t *testing.T) {
	vpc := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/20")}
	for _, tc := range []struct {
		name  string
		rules []*naclRule
		pass  bool
		why   string
	}{
		{"nothing declared but the final rule", nil, false, "its final rule * denies it"},
		{"allow all", []*naclRule{rule(100, true, "-1", "0.0.0.0/0", 0, 0)}, true, ""},
		{"a deny before the allow", []*naclRule{rule(100, true, "-1", "0.0.0.0/0", 0, 0), rule(50, false, "tcp", "10.1.0.0/16", 5432, 5432)},
			false, "rule 50 of acl denies"},
		{"a deny after the allow", []*naclRule{rule(100, true, "-1", "0.0.0.0/0", 0, 0), rule(200, false, "tcp", "10.1.0.0/16", 5432, 5432)}, true, ""},
		{"a deny of another port", []*naclRule{rule(50, false, "tcp", "10.1.0.0/16", 22, 22), rule(100, true, "tcp", "10.0.0.0/8", 5432, 5432)}, true, ""},
		{"an allow of part of the range", []*naclRule{rule(100, true, "tcp", "10.1.0.0/24", 5432, 5432)}, false, "no inbound rule of acl allows tcp 5432 from 10.1.0.0/20"},
		{"an allow of UDP only", []*naclRule{rule(100, true, "udp", "0.0.0.0/0", 0, 65535)}, false, "no inbound rule"},
		{"a deny overlapping part of the range", []*naclRule{rule(50, false, "tcp", "10.1.8.0/24", 0, 65535), rule(100, true, "-1", "0.0.0.0/0", 0, 0)},
			false, "rule 50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := aclOf(tc.rules, nil).passes(false, vpc, 5432, 5432)
			if ok != tc.pass || !strings.Contains(why, tc.why) {
				t.Fatalf("passes = %v, %q; want %v, %q", ok, why, tc.pass, tc.why)
			}
		})
	}
	if ok, _ := (&nacl{}).passes(true, vpc, 1, 1); !ok {
		t.Fatal("an ACL nothing declares (the VPC's default) allows everything")
	}
}

func TestACLFlowNeedsTheResponseAndSkipsOneSubnet(t *testing.T) {
	v := &vpc{named: named{name: "vpc"}}
	open := aclOf([]*naclRule{rule(100, true, "-1", "0.0.0.0/0", 0, 0)}, []*naclRule{rule(100, true, "-1", "0.0.0.0/0", 0, 0)})
	requestsOnly := aclOf([]*naclRule{rule(100, true, "tcp", "0.0.0.0/0", 5432, 5432)}, []*naclRule{rule(100, true, "tcp", "0.0.0.0/0", 5432, 5432)})
	a := &subnet{named: named{name: "a"}, vpc: v, cidr: netip.MustParsePrefix("10.1.0.0/20"), acl: open}
	b := &subnet{named: named{name: "b"}, vpc: v, cidr: netip.MustParsePrefix("10.1.16.0/20"), acl: requestsOnly}
	if _, why := aclFlow(subnetHop(a), subnetHop(b), 5432); !strings.Contains(why, "b: no outbound rule of acl allows tcp 1024-65535 to 10.1.0.0/20") ||
		!strings.Contains(why, "the response needs its own rule") {
		t.Fatalf("got %q", why)
	}
	if _, why := aclFlow(subnetHop(b), subnetHop(b), 5432); why != "" {
		t.Fatalf("traffic inside one subnet crosses no ACL, got %q", why)
	}
	deny := aclOf(nil, nil)
	c := &subnet{named: named{name: "c"}, vpc: v, cidr: netip.MustParsePrefix("10.1.32.0/20"), acl: deny}
	if _, why := aclFlow(subnetHop(c), subnetHop(c), 5432); why != "" {
		t.Fatalf("traffic inside one subnet crosses no ACL, got %q", why)
	}
}

// A network ACL the program declares on the private tier decides the
// paths that cross it, both ways.
func TestDeclaredACLsDecideRequiredPaths(t *testing.T) {
	aclRules := func(ingress, egress []any) map[string]any {
		return map[string]any{"vpcId": "vpc-cell-a-main", "subnetIds": []any{"subnet-cell-a-private-a", "subnet-cell-a-private-b"},
			"ingress": ingress, "egress": egress}
	}
	allow := func(no int, proto, cidr string, from, to int) map[string]any {
		return map[string]any{"ruleNo": no, "action": "allow", "protocol": proto, "cidrBlock": cidr, "fromPort": from, "toPort": to}
	}
	deny := func(no int, proto, cidr string, from, to int) map[string]any {
		return map[string]any{"ruleNo": no, "action": "deny", "protocol": proto, "cidrBlock": cidr, "fromPort": from, "toPort": to}
	}
	t.Run("everything both ways", func(t *testing.T) {
		f := twoCells()
		f.add("cell-a", tNACL, "cell-a-private-acl", "acl-a", aclRules([]any{allow(100, "-1", "0.0.0.0/0", 0, 0)}, []any{allow(100, "-1", "0.0.0.0/0", 0, 0)}))
		rep := f.check(t)
		onlyFindings(t, rep)
		mustContain(t, result(t, rep.Required, "cell-a: ALB → task:8080"), "cell-a-private-acl")
	})
	t.Run("no response to the ALB", func(t *testing.T) {
		f := twoCells()
		f.add("cell-a", tNACL, "cell-a-private-acl", "acl-a", aclRules(
			[]any{allow(100, "-1", "0.0.0.0/0", 0, 0)},
			[]any{allow(100, "tcp", "0.0.0.0/0", 443, 443), allow(110, "tcp", "10.1.160.0/19", 5432, 6379)}))
		got := onlyFindings(t, f.check(t), "cell-a: ALB → task:8080")
		mustContain(t, got["cell-a: ALB → task:8080"], "cell-a-private-a: no outbound rule of cell-a-private-acl allows tcp 1024-65535 to 10.1.96.0/20")
	})
	t.Run("the public tier admits only HTTPS", func(t *testing.T) {
		// The ALB's requests leave, but the task's responses come back to
		// the ALB's ephemeral ports, and the NAT gateway's from the
		// internet: both are dropped. CloudFront's requests still pass.
		f := twoCells()
		f.add("cell-a", tNACL, "cell-a-public-acl", "acl-p", map[string]any{"vpcId": "vpc-cell-a-main",
			"subnetIds": []any{"subnet-cell-a-public-a", "subnet-cell-a-public-b"},
			"ingress":   []any{allow(100, "tcp", "0.0.0.0/0", 443, 443)}, "egress": []any{allow(100, "-1", "0.0.0.0/0", 0, 0)}})
		got := onlyFindings(t, f.check(t), "cell-a: ALB → task:8080", "cell-a: task → SQS:443", "cell-a: task → ECR:443",
			"cell-a: task → CloudWatch Logs:443", "cell-a: migrator → ECR:443", "cell-a: migrator → CloudWatch Logs:443")
		mustContain(t, got["cell-a: ALB → task:8080"], "cell-a-public-a: no inbound rule of cell-a-public-acl allows tcp 1024-65535 from 10.1.0.0/20",
			"the response needs its own rule")
		mustContain(t, got["cell-a: task → SQS:443"], "cell-a-public-a: no inbound rule of cell-a-public-acl allows tcp 1024-65535 from 0.0.0.0/0")
	})
	t.Run("the database port denied first", func(t *testing.T) {
		f := twoCells()
		f.add("cell-a", tNACL, "cell-a-private-acl", "acl-a", aclRules(
			[]any{allow(100, "-1", "0.0.0.0/0", 0, 0)},
			[]any{deny(90, "tcp", "10.1.160.0/19", 5432, 5432), allow(100, "-1", "0.0.0.0/0", 0, 0)}))
		got := onlyFindings(t, f.check(t), "cell-a: task → database:5432", "cell-a: migrator → database:5432")
		mustContain(t, got["cell-a: task → database:5432"], "outbound rule 90 of cell-a-private-acl denies")
	})
	t.Run("a rule added to the default ACL", func(t *testing.T) {
		f := twoCells()
		f.add("cell-a", tNACLRule, "cell-a-default-deny-https", "aclr-1", map[string]any{"networkAclId": "acl-cell-a-default",
			"ruleNumber": 10, "egress": true, "protocol": "tcp", "ruleAction": "deny", "cidrBlock": "0.0.0.0/0", "fromPort": 443, "toPort": 443})
		rep := f.check(t)
		got := onlyFindings(t, rep, "cell-a: task → SQS:443", "cell-a: task → ECR:443", "cell-a: task → CloudWatch Logs:443",
			"cell-a: task → S3:443 (gateway endpoint)", "cell-a: migrator → ECR:443", "cell-a: migrator → CloudWatch Logs:443",
			"cell-a: migrator → S3:443 (gateway endpoint)")
		mustContain(t, got["cell-a: task → SQS:443"], "outbound rule 10 of cell-a-vpc (default network ACL) denies")
	})
}
