package plan

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/offline"
)

func renderCells(t *testing.T, f *fleet.Fleet) *Report {
	t.Helper()
	r, err := Render(context.Background(), f, Options{Now: testNow, Stacks: f.CellIDs()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func increase(j QuotaJudgement, code, scope string) (QuotaIncrease, bool) {
	for _, q := range j.Increases {
		if q.Code == code && q.Scope == scope {
			return q, true
		}
	}
	return QuotaIncrease{}, false
}

// TestNineElasticIPsInOneRegionAreSummedOverTheRegion: nine single-NAT
// cells in one region need nine Elastic IPs (default 5). Each stack alone
// needs one, which is what plan --strict used to judge.
func TestNineElasticIPsInOneRegionAreSummedOverTheRegion(t *testing.T) {
	r := renderCells(t, regionalFleet(t, 9, "eu-west-1"))
	j := r.JudgeQuotas()
	eip, ok := increase(j, awsfacts.ElasticIPs.Code, "eu-west-1")
	if !ok || eip.Needed != 9 || eip.Default != 5 || len(eip.Stacks) != 9 {
		t.Fatalf("Elastic IPs: %+v (found %v); every increase: %v", eip, ok, j.Increases)
	}
	if !strings.Contains(eip.Request, "--region eu-west-1 --service-code ec2 --quota-code L-0263D0A3 --desired-value 9") {
		t.Fatalf("request: %s", eip.Request)
	}
	// Nine NAT gateways in the cells' (one) zone, 5 per AZ by default.
	var nat bool
	for _, q := range j.Increases {
		nat = nat || q.Code == awsfacts.NATGatewaysPerAZ.Code && q.Needed == 9
	}
	if !nat {
		t.Fatalf("no NAT-per-zone increase for 9 single-NAT cells: %v", j.Increases)
	}
	// Adjustable quotas are requests, not violations.
	for _, v := range r.Rules() {
		t.Errorf("violation: %s", v)
	}
}

// TestFiveCellsAndTheDefaultVPCNeedSixVPCs: the default VPC counts toward
// VPCs (and internet gateways) per Region, so five cells need six.
func TestFiveCellsAndTheDefaultVPCNeedSixVPCs(t *testing.T) {
	r := renderCells(t, regionalFleet(t, 5, "us-west-2"))
	j := r.JudgeQuotas()
	for _, q := range []awsfacts.Quota{awsfacts.VPCsPerRegion, awsfacts.InternetGatewaysPerRegion} {
		got, ok := increase(j, q.Code, "us-west-2")
		if !ok || got.Needed != 6 || !containsString(got.Stacks, "default VPC") {
			t.Errorf("%s: %+v (found %v)", q.Name, got, ok)
		}
	}
	// Four cells and the default VPC fit the default five.
	if got, ok := increase(renderCells(t, regionalFleet(t, 4, "us-west-2")).JudgeQuotas(), awsfacts.VPCsPerRegion.Code, "us-west-2"); ok {
		t.Errorf("four cells: %+v", got)
	}
}

// TestAHardLimitIsAViolation: passing a quota that is not adjustable fails
// plan --strict (51 listeners on one load balancer, at most 50).
func TestAHardLimitIsAViolation(t *testing.T) {
	r := renderCells(t, regionalFleet(t, 1, "us-east-1"))
	s := r.Stacks[0]
	for i := 0; i < 51; i++ {
		s.recorded = append(s.recorded, &offline.Resource{Type: "aws:lb/listener:Listener", Name: fmt.Sprintf("l%d", i), Custom: true,
			ID: fmt.Sprintf("listener-%d", i), Outputs: resource.PropertyMap{"loadBalancerArn": resource.NewStringProperty("arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/x/1")}})
	}
	var found bool
	for _, v := range r.Rules() {
		found = found || v.Rule == "quota."+awsfacts.ListenersPerALB.Code && v.Code == "TooManyListeners"
	}
	if !found {
		t.Fatalf("no violation of the listeners hard limit: %v", r.Rules())
	}
}

// TestA256CellFleetOverThreeRegionsPassesWithTheIncreasesItNeeds: the
// fleet's documented cap, spread over three regions, breaks no hard
// limit; plan --strict lists the increases each region needs.
func TestA256CellFleetOverThreeRegionsPassesWithTheIncreasesItNeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 256 cells")
	}
	r := renderCells(t, regionalFleet(t, 256, "us-east-1", "eu-west-1", "ap-southeast-2"))
	for _, v := range r.Rules() {
		t.Errorf("violation: %s", v)
	}
	j := r.JudgeQuotas()
	// 86, 85 and 85 cells, each with the default VPC.
	for region, want := range map[string]float64{"us-east-1": 87, "eu-west-1": 86, "ap-southeast-2": 86} {
		got, ok := increase(j, awsfacts.VPCsPerRegion.Code, region)
		if !ok || got.Needed != want {
			t.Errorf("%s VPCs: %+v (found %v), want %g", region, got, ok, want)
		}
	}
	t.Logf("%d increases, e.g. %s", len(j.Increases), j.Increases[0])
}

// regionalFleet is a valid fleet of n single-NAT cells spread over
// regions, in one wave.
func regionalFleet(tb testing.TB, n int, regions ...string) *fleet.Fleet {
	return fleettest.Generate(tb, fleettest.Generated{Cells: n, Regions: regions, OneWave: true})
}
