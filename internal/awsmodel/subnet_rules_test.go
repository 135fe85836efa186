package awsmodel

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// subnetCases: a subnet outside its VPC's block, and one overlapping a
// sibling — what EC2 (and moto) refuse with InvalidSubnet.Range and
// InvalidSubnet.Conflict.
func subnetCases(t *testing.T) []ruleCase {
	vpcIn := resource.PropertyMap{"cidrBlock": pv("10.1.0.0/16")}
	// Ids are deterministic per type and name: the VPC the setup creates
	// in each case's mock has this id.
	vpcID, _, err := NewMock(Env{}).NewResource(tVpc, "net", vpcIn, "")
	if err != nil {
		t.Fatal(err)
	}
	setup := func(t *testing.T, m *Mock) {
		mustCreate(t, m, tVpc, "net", vpcIn)
		mustCreate(t, m, tSubnet, "first", resource.PropertyMap{"vpcId": pv(vpcID), "cidrBlock": pv("10.1.0.0/24")})
	}
	subnet := func(cidr string) resource.PropertyMap {
		return resource.PropertyMap{"vpcId": pv(vpcID), "cidrBlock": pv(cidr)}
	}
	return []ruleCase{
		{rule: "ec2.subnet-in-vpc", typ: tSubnet, setup: setup, bad: subnet("10.9.0.0/24"), ok: subnet("10.1.1.0/24"), contains: "The CIDR '10.9.0.0/24' is invalid."},
		{rule: "ec2.subnet-in-vpc", typ: tSubnet, setup: setup, bad: subnet("10.0.0.0/8"), ok: subnet("10.1.0.0/16"), contains: "The CIDR '10.0.0.0/8' is invalid."},
		{rule: "ec2.subnet-conflict", typ: tSubnet, setup: setup, bad: subnet("10.1.0.0/25"), ok: subnet("10.1.1.0/25"), contains: "The CIDR '10.1.0.0/25' conflicts with another subnet"},
	}
}

// TestSubnetRulesInTheMocks: the mocks refuse, as EC2 does, a subnet
// outside its VPC and one overlapping a sibling; a subnet of another VPC
// with the same block is no conflict, and an audit does not find a
// subnet in conflict with itself.
func TestSubnetRulesInTheMocks(t *testing.T) {
	m := NewMock(Env{})
	vpc := func(name, cidr string) string {
		id, _, err := m.NewResource(tVpc, name, resource.PropertyMap{"cidrBlock": pv(cidr)}, "")
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a, b := vpc("a", "10.1.0.0/16"), vpc("b", "10.1.0.0/16")
	create := func(name, vpcID, cidr string) error {
		_, _, err := m.NewResource(tSubnet, name, resource.PropertyMap{"vpcId": pv(vpcID), "cidrBlock": pv(cidr)}, "")
		return err
	}
	if err := create("a1", a, "10.1.0.0/20"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, vpc, cidr, code string }{
		{"outside", a, "10.2.0.0/24", "InvalidSubnet.Range"},
		{"inside-overlap", a, "10.1.8.0/21", "InvalidSubnet.Conflict"},
		{"other-vpc", b, "10.1.0.0/20", ""},
		{"next", a, "10.1.16.0/20", ""},
	} {
		err := create(c.name, c.vpc, c.cidr)
		var ae *APIError
		switch {
		case c.code == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.code != "" && (!errors.As(err, &ae) || ae.Code != c.code || ae.Operation != "CreateSubnet"):
			t.Errorf("%s: got %v, want %s from CreateSubnet", c.name, err, c.code)
		}
	}
	var rs []AuditResource
	for _, l := range m.List(tSubnet) {
		rs = append(rs, AuditResource{Stack: "s", Type: tSubnet, Name: l.ID, ID: l.ID, Inputs: l.Outputs, Outputs: l.Outputs})
	}
	for _, l := range m.List(tVpc) {
		rs = append(rs, AuditResource{Stack: "s", Type: tVpc, Name: l.ID, ID: l.ID, Inputs: l.Outputs, Outputs: l.Outputs})
	}
	if len(rs) != 5 {
		t.Fatalf("listed %d resources, want 3 subnets and 2 VPCs", len(rs))
	}
	if v := Audit(rs); len(v) != 0 {
		t.Errorf("audit of sibling subnets: %v", v)
	}
}

// TestIAMTagLimitsAnswerWithIAMsCodes: 51 tags on a new IAM role are
// IAM's ValidationError (CreateRole's Tags: at most 50 items), as moto
// answers too; tags past 50 on an existing role are TagRole's
// LimitExceeded; an EC2 resource keeps EC2's TagLimitExceeded.
func TestIAMTagLimitsAnswerWithIAMsCodes(t *testing.T) {
	tags := map[string]any{}
	for i := 0; i < 51; i++ {
		tags[fmt.Sprintf("k%d", i)] = "v"
	}
	role := resource.PropertyMap{"assumeRolePolicy": pv(`{"Version":"2012-10-17","Statement":[]}`), "tags": pv(tags)}
	for _, c := range []struct {
		typ  string
		in   resource.PropertyMap
		op   int
		code string
	}{
		{tRole, role, OpCreate, "ValidationError"},
		{tRole, role, OpUpdate, "LimitExceeded"},
		{tVpc, resource.PropertyMap{"cidrBlock": pv("10.0.0.0/16"), "tags": pv(tags)}, OpCreate, "TagLimitExceeded"},
	} {
		err := CheckRules(c.typ, "r", c.in, Env{}, nil, c.op)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Code != c.code || !strings.Contains(err.Error(), "maximum number of tags") {
			t.Errorf("%s op %d: got %v, want %s", c.typ, c.op, err, c.code)
		}
	}
	long := resource.PropertyMap{"assumeRolePolicy": pv(`{}`), "tags": pv(map[string]any{strings.Repeat("k", 129): "v"})}
	if err := CheckRules(tRole, "r", long, Env{}, nil, OpCreate); err == nil || !strings.Contains(err.Error(), "api error ValidationError") {
		t.Errorf("a 129-character key on a role: %v, want ValidationError", err)
	}
}
