package isolation

import (
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/offline"
)

func res(cell, typ, name string, inputs, outputs map[string]any) *offline.Resource {
	return &offline.Resource{
		URN:     "urn:pulumi:" + cell + "::cells::" + typ + "::" + name,
		Type:    typ,
		Name:    name,
		Custom:  true,
		ID:      name + "-id0000",
		Inputs:  resource.NewPropertyMapFromMap(inputs),
		Outputs: resource.NewPropertyMapFromMap(outputs),
	}
}

func vpc(cell, cidr string) *offline.Resource {
	return res(cell, "aws:ec2/vpc:Vpc", cell+"-vpc", map[string]any{"cidrBlock": cidr, "tags": map[string]any{"cell": cell}},
		map[string]any{"arn": "arn:aws:ec2:us-east-1:123456789012:vpc/" + cell + "-vpc-id"})
}

func queue(cell string) *offline.Resource {
	return res(cell, "aws:sqs/queue:Queue", cell+"-queue", map[string]any{},
		map[string]any{"arn": "arn:aws:sqs:us-east-1:123456789012:" + cell + "-queue-abc1234"})
}

func TestCleanCells(t *testing.T) {
	r := Check([]Cell{
		{ID: "cell-a", Resources: []*offline.Resource{vpc("cell-a", "10.1.0.0/16"), queue("cell-a")}},
		{ID: "cell-b", Resources: []*offline.Resource{vpc("cell-b", "10.2.0.0/16"), queue("cell-b")}},
	})
	if !r.OK || len(r.Violations) != 0 {
		t.Fatalf("violations: %+v", r.Violations)
	}
}

func TestOverlappingCIDRs(t *testing.T) {
	r := Check([]Cell{
		{ID: "cell-a", Resources: []*offline.Resource{vpc("cell-a", "10.1.0.0/16")}},
		{ID: "cell-b", Resources: []*offline.Resource{vpc("cell-b", "10.1.128.0/17")}},
	})
	if r.OK || len(r.Violations) != 1 || r.Violations[0].Rule != RuleCIDROverlap {
		t.Fatalf("want one overlap, got %+v", r.Violations)
	}
}

func TestReferenceToAnotherCellsARN(t *testing.T) {
	q := queue("cell-b")
	policy := res("cell-a", "aws:iam/rolePolicy:RolePolicy", "cell-a-task", map[string]any{
		"policy": `{"Statement":[{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"` + q.Outputs["arn"].StringValue() + `"}]}`,
	}, nil)
	r := Check([]Cell{
		{ID: "cell-a", Resources: []*offline.Resource{vpc("cell-a", "10.1.0.0/16"), policy}},
		{ID: "cell-b", Resources: []*offline.Resource{vpc("cell-b", "10.2.0.0/16"), q}},
	})
	if r.OK {
		t.Fatal("a policy naming another cell's queue passed")
	}
	v := r.Violations[0]
	if v.Cell != "cell-a" || v.Other != "cell-b" || v.Resource != "cell-a-task" || v.Rule != RuleCrossReference {
		t.Fatalf("violation = %+v", v)
	}
}

func TestDependencyOnAnotherCell(t *testing.T) {
	b := vpc("cell-b", "10.2.0.0/16")
	a := vpc("cell-a", "10.1.0.0/16")
	a.DependsOn = []string{b.URN}
	r := Check([]Cell{{ID: "cell-a", Resources: []*offline.Resource{a}}, {ID: "cell-b", Resources: []*offline.Resource{b}}})
	if r.OK || r.Violations[0].Rule != RuleCrossDependency {
		t.Fatalf("violations = %+v", r.Violations)
	}
}

func TestStoragePrefix(t *testing.T) {
	grant := func(resourceARN string) Cell {
		p := res("cell-a", "aws:iam/rolePolicy:RolePolicy", "cell-a-task", map[string]any{
			"policy": `{"Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":["` + resourceARN + `"]},` +
				`{"Effect":"Deny","Action":"s3:*","Resource":"arn:aws:s3:::fleet/*"}]}`,
		}, nil)
		return Cell{ID: "cell-a", FleetBucket: "fleet", Resources: []*offline.Resource{p}}
	}
	if r := Check([]Cell{grant("arn:aws:s3:::fleet/cells/cell-a/*")}); !r.OK {
		t.Fatalf("own prefix flagged: %+v", r.Violations)
	}
	for _, arn := range []string{"arn:aws:s3:::fleet/*", "arn:aws:s3:::fleet/cells/*", "arn:aws:s3:::fleet/cells/cell-ab/*"} {
		r := Check([]Cell{grant(arn)})
		if r.OK || r.Violations[0].Rule != RuleSharedPrefix {
			t.Errorf("%s: want a storage-prefix violation, got %+v", arn, r.Violations)
		}
	}
}

func TestCellIDMentions(t *testing.T) {
	ids := map[string]bool{"cell-a": true, "cell-a-1": true, "cell-b": true, "cell-bb": true}
	cases := map[string]string{
		"cell-a-vpc":          "cell-a",
		"cell-a-1-vpc":        "cell-a-1",
		"cells/cell-b/":       "cell-b",
		"cell-bb-queue":       "cell-bb",
		"mycell-b":            "",
		"arn:...:cell-b-q:x":  "cell-b",
		"cell-a cell-b":       "cell-a,cell-b",
		"xcell-a-1 cell-a-12": "cell-a", // no cell-a-12: a name of cell-a
	}
	for s, want := range cases {
		if got := strings.Join(cellIDs(s, ids), ","); got != want {
			t.Errorf("cellIDs(%q) = %q, want %q", s, got, want)
		}
	}
}
