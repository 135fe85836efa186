package e2e

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/cloud"
	"github.com/cellctl/cellctl/internal/quota"
	"github.com/cellctl/cellctl/internal/sim"
)

func quotaRow(t *testing.T, rep quota.Report, region, code string) quota.Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Region == region && r.Code == code {
			return r
		}
	}
	t.Fatalf("no %s row for %s in %+v", code, region, rep.Rows)
	return quota.Row{}
}

const eipQuota = "ec2/L-0263D0A3"

// TestQuotaOnTheSimulatedCloud reads usage from the simulator's own
// resources through the same AWS clients as on AWS: one deployed cell's
// Elastic IP, against a low simulated Elastic IP quota, is critical once
// two more cells are asked for, and an up of a new cell is refused before
// any of its resources exists.
func TestQuotaOnTheSimulatedCloud(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	r := mustRun(t, dir, "up", "cell-a")
	if strings.Contains(r.stderr, "--skip-quota-check") {
		t.Errorf("the first up of a fresh cell passes the quota check without notes:\n%s", r.stderr)
	}
	mustRun(t, dir, "sim", "quota", "set", "us-east-1", eipQuota, "2")

	var rep quota.Report
	r = cellctl(t, dir, "quota", "-o", "json")
	if r.code != 0 {
		t.Fatalf("quota with one of two Elastic IPs in use: want exit 0, got %s", r)
	}
	decode(t, r, &rep)
	eip := quotaRow(t, rep, "us-east-1", eipQuota)
	if eip.Used == nil || *eip.Used != 1 || eip.Limit == nil || *eip.Limit != 2 || eip.LimitSource != "applied" || eip.PerCell != 1 || eip.Status != quota.StatusOK {
		t.Errorf("Elastic IPs in us-east-1: %+v (want 1 used of an applied 2, 1 per cell, ok)", eip)
	}
	if eip.Headroom == nil || *eip.Headroom != 1 {
		t.Errorf("Elastic IP headroom: %v, want 1 cell", eip.Headroom)
	}
	// cell-d (per-AZ NAT) costs 3 Elastic IPs in us-west-2, from its plan.
	if west := quotaRow(t, rep, "us-west-2", eipQuota); west.PerCell != 3 || west.Used == nil || *west.Used != 0 {
		t.Errorf("Elastic IPs in us-west-2: %+v (want 0 used, 3 per cell)", west)
	}
	// The deployed cell's VPC and the region's default VPC, which every
	// account has (a new simulated account too); so does us-west-2, where
	// nothing is deployed.
	if vpc := quotaRow(t, rep, "us-east-1", "vpc/L-F678F1CE"); vpc.Used == nil || *vpc.Used != 2 || vpc.Status != quota.StatusOK {
		t.Errorf("VPCs in us-east-1: %+v, want 2 (the deployed cell's and the default VPC), ok", vpc)
	}
	if igw := quotaRow(t, rep, "us-west-2", "vpc/L-A4707A72"); igw.Used == nil || *igw.Used != 1 {
		t.Errorf("internet gateways in us-west-2: %+v, want the default VPC's 1", igw)
	}

	// Two more cells need two more addresses: 1 + 2 > 2.
	r = cellctl(t, dir, "quota", "--add-cells", "2", "-o", "json")
	if r.code != 2 {
		t.Fatalf("quota --add-cells 2 over a 2-address quota: want exit 2, got %s", r)
	}
	rep = quota.Report{}
	decode(t, r, &rep)
	eip = quotaRow(t, rep, "us-east-1", eipQuota)
	if eip.Status != quota.StatusCritical || eip.Adding != 2 || !strings.Contains(eip.Reason, "1 used + 2 for the new cells = 3 > limit 2") {
		t.Errorf("Elastic IPs with 2 more cells: %+v", eip)
	}
	if !strings.Contains(eip.Next, "--service-code ec2 --quota-code L-0263D0A3") {
		t.Errorf("a critical quota must say how to raise it: %q", eip.Next)
	}
	if !strings.Contains(r.stderr, eipQuota) {
		t.Errorf("stderr must name the critical quota:\n%s", r.stderr)
	}

	// With the quota at 1, a new cell in us-east-1 has no address left:
	// up refuses before anything of cell-b exists.
	mustRun(t, dir, "sim", "quota", "set", "us-east-1", eipQuota, "1")
	r = cellctl(t, dir, "up", "cell-b")
	if r.code != 2 {
		t.Fatalf("up of a new cell with no Elastic IP left: want exit 2, got %s", r)
	}
	for _, want := range []string{"refusing to create cell-b", eipQuota, "us-east-1", "1 used + 1 for the new cells = 2 > limit 1", "--skip-quota-check"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal must say %q:\n%s", want, r.stderr)
		}
	}
	live, err := sim.Open(cloud.SimDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := live.Resources(sim.Filter{Stack: "cell-b"}); err != nil || len(rs) != 0 {
		t.Errorf("after the refusal cell-b has %d resources in the simulated cloud (err %v), want none", len(rs), err)
	}
	// An update of the deployed cell is not a creation: no check.
	if r := cellctl(t, dir, "up", "cell-a"); r.code != 0 {
		t.Errorf("up of the deployed cell-a with the quota full: %s", r)
	}
}

// TestQuotaOnTheDeployedDemoFleet: the deployed demo fleet has no quota
// finding (exit 0) now that every region of the simulated account holds
// its default VPC, as a real account's does: us-east-1's three cells and
// the default VPC use 4 of the default 5 VPCs and internet gateways (a
// warning, 1 cell of headroom), us-west-2's one cell and its default VPC
// 2 of 5.
func TestQuotaOnTheDeployedDemoFleet(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	r := cellctl(t, dir, "quota", "-o", "json")
	if r.code != 0 {
		t.Fatalf("quota on the deployed demo fleet: want exit 0, got %s", r)
	}
	var rep quota.Report
	decode(t, r, &rep)
	for _, row := range rep.Rows {
		if row.Finding() {
			t.Errorf("a finding on the demo fleet: %+v", row)
		}
	}
	for _, c := range []struct {
		region, code   string
		used, headroom int
	}{
		{"us-east-1", "vpc/L-F678F1CE", 4, 1}, {"us-east-1", "vpc/L-A4707A72", 4, 1},
		{"us-west-2", "vpc/L-F678F1CE", 2, 3}, {"us-west-2", "vpc/L-A4707A72", 2, 3},
	} {
		row := quotaRow(t, rep, c.region, c.code)
		if row.Used == nil || *row.Used != float64(c.used) || row.Headroom == nil || *row.Headroom != c.headroom {
			t.Errorf("%s %s: %+v, want %d used (the cells' and the default VPC's), headroom %d", c.region, c.code, row, c.used, c.headroom)
		}
	}
}
