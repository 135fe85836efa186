package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/offline"
)

// TestDemoFleetPassesEveryAWSRule renders the demo fleet and runs every
// AWS rule over every resource: what `cellctl plan --strict` checks.
func TestDemoFleetPassesEveryAWSRule(t *testing.T) {
	report, err := Render(context.Background(), demoFleet(t), Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range report.Stacks {
		for _, r := range auditResources(s, report.at) {
			if strings.HasPrefix(r.Type, "aws:") {
				checked++
				if !awsmodel.Known(r.Type) {
					t.Errorf("%s %s: type unknown to internal/awsmodel", s.Name, r.Name)
				}
			}
		}
	}
	t.Logf("%d AWS resources in %d stacks audited against %d rules", checked, len(report.Stacks), len(awsmodel.Rules()))
	if checked < 300 {
		t.Fatalf("only %d AWS resources audited", checked)
	}
	for _, v := range report.Rules() {
		t.Errorf("rule violation: %s", v)
	}
}

// TestRulesCatchANewResourceTheModelDoesNotKnow: a resource of an AWS type
// internal/awsmodel has no spec for is a finding, so no resource can skip
// the rules by being new.
func TestRulesCatchANewResourceTheModelDoesNotKnow(t *testing.T) {
	report, err := Render(context.Background(), demoFleet(t), Options{Now: testNow, Stacks: []string{"cell-a"}})
	if err != nil {
		t.Fatal(err)
	}
	s := report.Stacks[0]
	s.recorded = append(s.recorded, &offline.Resource{URN: "urn:x", Type: "aws:sns/topic:Topic", Name: "cell-a-alerts", Custom: true,
		Inputs: resource.PropertyMap{}, Outputs: resource.PropertyMap{}})
	// And a rule violation on an existing resource: 51 tags on the VPC.
	for _, r := range s.recorded {
		if r.Type == "aws:ec2/vpc:Vpc" {
			tags := map[string]string{}
			for i := 0; i < 51; i++ {
				tags[strings.Repeat("k", i+1)] = "v"
			}
			r.Inputs = r.Inputs.Copy()
			r.Inputs["tags"] = resource.NewPropertyValue(tags)
		}
	}
	got := map[string]bool{}
	for _, v := range report.Rules() {
		got[v.Rule] = true
	}
	if !got["awsmodel.known-type"] || !got["tags.limits"] || len(got) != 2 {
		t.Fatalf("findings %v, want awsmodel.known-type and tags.limits", got)
	}
}
