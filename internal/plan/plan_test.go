package plan

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/isolation"
)

func demoFleet(t testing.TB) *fleet.Fleet {
	t.Helper()
	f, err := fleet.Load("../..")
	if err != nil {
		t.Fatalf("demo fleet: %v", err)
	}
	return f
}

// Every resource kind the cell template promises, in every cell.
var cellKinds = []string{
	"cellctl:index:Cell",
	"aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/internetGateway:InternetGateway", "aws:ec2/eip:Eip",
	"aws:ec2/natGateway:NatGateway", "aws:ec2/routeTable:RouteTable", "aws:ec2/routeTableAssociation:RouteTableAssociation",
	"aws:ec2/vpcEndpoint:VpcEndpoint", "aws:ec2/securityGroup:SecurityGroup",
	"aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
	"aws:rds/subnetGroup:SubnetGroup", "aws:rds/clusterParameterGroup:ClusterParameterGroup", "aws:rds/cluster:Cluster",
	"aws:rds/clusterInstance:ClusterInstance", "aws:elasticache/subnetGroup:SubnetGroup", "aws:elasticache/user:User",
	"aws:elasticache/userGroup:UserGroup", "aws:elasticache/replicationGroup:ReplicationGroup", "aws:sqs/queue:Queue",
	"aws:sqs/queuePolicy:QueuePolicy", "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy", "aws:iam/role:Role",
	"aws:iam/rolePolicy:RolePolicy", "aws:cloudwatch/logGroup:LogGroup",
	"aws:cloudwatch/metricAlarm:MetricAlarm", "aws:ecs/cluster:Cluster", "aws:ecs/taskDefinition:TaskDefinition",
	"aws:ecs/service:Service", "aws:lb/loadBalancer:LoadBalancer", "aws:lb/targetGroup:TargetGroup",
	"aws:lb/listener:Listener", "aws:lb/listenerRule:ListenerRule",
}

func TestRenderDemoFleet(t *testing.T) {
	f := demoFleet(t)
	report, err := Render(context.Background(), f, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if !report.Isolation.OK {
		t.Fatalf("isolation violations in the demo fleet: %+v", report.Isolation.Violations)
	}
	var cells int
	for _, s := range report.Stacks {
		if s.Kind != KindCell {
			continue
		}
		cells++
		counts := s.Counts()
		for _, k := range cellKinds {
			if counts[k] == 0 {
				t.Errorf("%s: no %s", s.Name, k)
			}
		}
		fc := f.Cell(s.Name)
		if s.Index == nil || *s.Index != fc.Index || s.CIDR != fc.CIDR() || s.Cell != fc.ID {
			t.Errorf("%s: header %+v", s.Name, s)
		}
		if s.Outputs["albDnsName"] == nil || s.Outputs["cidr"] != fc.CIDR() {
			t.Errorf("%s: outputs %v", s.Name, s.Outputs)
		}
	}
	if cells != 4 {
		t.Fatalf("rendered %d cells, want 4", cells)
	}
}

// TestJSONShape pins the documented -o json shape.
func TestJSONShape(t *testing.T) {
	f := demoFleet(t)
	report, err := Render(context.Background(), f, Options{Now: testNow, Stacks: []string{"cell-a"}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Stacks []struct {
			Name      string `json:"name"`
			Kind      string `json:"kind"`
			Cell      string `json:"cell"`
			Index     int    `json:"index"`
			CIDR      string `json:"cidr"`
			Resources []struct {
				Type   string         `json:"type"`
				Name   string         `json:"name"`
				Parent string         `json:"parent"`
				Inputs map[string]any `json:"inputs"`
			} `json:"resources"`
		} `json:"stacks"`
		Isolation struct {
			OK         *bool `json:"ok"`
			Violations []any `json:"violations"`
		} `json:"isolation"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Stacks[0]
	if s.Name != "cell-a" || s.Kind != "cell" || s.Cell != "cell-a" || s.Index != 1 || s.CIDR != "10.1.0.0/16" {
		t.Fatalf("stack header: %+v", s)
	}
	if doc.Isolation.OK == nil || !*doc.Isolation.OK || doc.Isolation.Violations == nil {
		t.Fatalf("isolation: %s", data)
	}
	var sawVPC, sawSecret bool
	for _, r := range s.Resources {
		if r.Type == "aws:ec2/vpc:Vpc" {
			sawVPC = r.Inputs["cidrBlock"] == "10.1.0.0/16" && r.Parent == "cell-a"
		}
		if r.Type == "aws:lb/listenerRule:ListenerRule" {
			sawSecret = strings.Contains(string(mustJSON(t, r.Inputs)), `"[secret]"`)
		}
	}
	if !sawVPC {
		t.Error("VPC with cidrBlock 10.1.0.0/16 parented to the cell not found")
	}
	if !sawSecret {
		t.Error("the origin-verify secret must render as [secret]")
	}
	if strings.Contains(string(data), PlaceholderSecret) {
		t.Fatal("a secret value leaked into the plan")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIsolationCatchesSharedIndex renders a deliberately broken fleet —
// two cells given one index, bypassing the loader's own check — and
// expects the audit to flag the overlapping networks.
func TestIsolationCatchesSharedIndex(t *testing.T) {
	f := demoFleet(t)
	f.Cell("cell-b").Index = f.Cell("cell-a").Index
	report, err := Render(context.Background(), f, Options{Now: testNow, Stacks: []string{"cell-a", "cell-b"}})
	if err != nil {
		t.Fatal(err)
	}
	if report.Isolation.OK {
		t.Fatal("two cells with one index passed the isolation audit")
	}
	found := false
	for _, v := range report.Isolation.Violations {
		if v.Rule == isolation.RuleCIDROverlap && v.Cell == "cell-b" && v.Other == "cell-a" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no CIDR overlap violation: %+v", report.Isolation.Violations)
	}
}
