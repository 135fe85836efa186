package quota

import (
	"context"
	"testing"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/plan"
)

// The demo fleet: cells a–c take the baseline (one NAT per cell), cell-d
// overrides natMode: per-az. What each costs is counted from its plan.
func renderDemo(t *testing.T) map[string]*plan.Stack {
	t.Helper()
	fl, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := plan.Render(context.Background(), fl, plan.Options{Stacks: fl.CellIDs()})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*plan.Stack{}
	for _, s := range rep.Stacks {
		out[s.Cell] = s
	}
	return out
}

func TestCostFollowsTheRenderedPlan(t *testing.T) {
	cells := renderDemo(t)
	cost := func(q awsfacts.Quota, cell string) float64 {
		t.Helper()
		e, ok := Lookup(q.Code)
		if !ok {
			t.Fatalf("%s is not in the catalog", q.Code)
		}
		n, err := e.Cost(cells[cell])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, tc := range []struct {
		q          awsfacts.Quota
		single, az float64
	}{
		{awsfacts.ElasticIPs, 1, 3},
		{awsfacts.NATGatewaysPerAZ, 1, 1}, // per-AZ puts one in each zone
		{awsfacts.VPCsPerRegion, 1, 1},
		{awsfacts.InternetGatewaysPerRegion, 1, 1},
		{awsfacts.GatewayEndpointsPerRegion, 1, 1},
		{awsfacts.DBClusters, 1, 1},
		{awsfacts.ApplicationLoadBalancersPerRegion, 1, 1},
		{awsfacts.TargetGroupsPerRegion, 1, 1},
	} {
		if got := cost(tc.q, "cell-a"); got != tc.single {
			t.Errorf("%s: cell-a (single NAT) costs %v, want %v", tc.q.Name, got, tc.single)
		}
		if got := cost(tc.q, "cell-d"); got != tc.az {
			t.Errorf("%s: cell-d (per-AZ NAT) costs %v, want %v", tc.q.Name, got, tc.az)
		}
	}
	// The ALB group's prefix-list rule weighs 55 of the 60 (CloudFront
	// origin-facing list).
	if got := cost(awsfacts.RulesPerSecurityGroup, "cell-a"); got < 55 || got > 60 {
		t.Errorf("rules per security group: cell-a's fullest group has %v, want 55..60", got)
	}
	// The five groups the cell template declares, and the default group
	// AWS creates with its VPC (DescribeSecurityGroups lists it; moto's
	// answer showed the simulator once left it out).
	if got := cost(awsfacts.SecurityGroupsPerRegion, "cell-a"); got != 6 {
		t.Errorf("security groups per Region: cell-a costs %v, want 6 (5 declared + its VPC's default group)", got)
	}
	for _, q := range []awsfacts.Quota{awsfacts.DBInstances, awsfacts.CacheNodesPerRegion, awsfacts.SecurityGroupsPerRegion, awsfacts.RolesPerAccount, awsfacts.FargateOnDemandVCPU, CloudWatchAlarms} {
		if got := cost(q, "cell-a"); got <= 0 {
			t.Errorf("%s: cell-a costs %v, want > 0", q.Name, got)
		}
	}
	for _, q := range []awsfacts.Quota{awsfacts.DistributionsPerAccount, awsfacts.GeneralPurposeBuckets} {
		if got := cost(q, "cell-a"); got != 0 {
			t.Errorf("%s: a cell costs %v, want 0 (the router owns it)", q.Name, got)
		}
	}
	t.Logf("cell-a: fargate vCPU %v, alarms %v, roles %v, cache nodes %v, db instances %v",
		cost(awsfacts.FargateOnDemandVCPU, "cell-a"), cost(CloudWatchAlarms, "cell-a"), cost(awsfacts.RolesPerAccount, "cell-a"),
		cost(awsfacts.CacheNodesPerRegion, "cell-a"), cost(awsfacts.DBInstances, "cell-a"))
}
