package awsapi

import (
	"context"
	"testing"
	"time"

	readers "github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/simtest"
)

// The quota audit's readers (the real EC2, ELBv2, RDS, ElastiCache, IAM
// and CloudWatch clients) against the simulator: every count comes from
// the simulated cloud's own resources, the same code path as on AWS.
func TestInventoryReadersCountTheSimulatedCloud(t *testing.T) {
	f := newAPIFixture(t)
	ctx := context.Background()
	h := f.cell.H
	// A NAT gateway with its address in the first subnet, and a security
	// group whose one rule references the CloudFront prefix list.
	_, subs := h.Network("cell-a-extra", "10.9.0.0/16", 1)
	eip := h.Create("aws:ec2/eip:Eip", "cell-a-nat-eip", simtest.PM("domain", "vpc"))
	h.Create("aws:ec2/natGateway:NatGateway", "cell-a-nat", simtest.PM("subnetId", subs[0].ID, "allocationId", eip.ID))
	sg := h.Create("aws:ec2/securityGroup:SecurityGroup", "cell-a-alb-sg", simtest.PM("vpcId", simtest.S(subs[0].Out, "vpcId"), "description", "alb"))
	var cloudfront string
	for _, pl := range awsmodel.ManagedPrefixLists(awsmodel.Env{Region: "us-east-1"}) {
		if pl.MaxEntries == 55 {
			cloudfront = pl.ID
		}
	}
	h.Create("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "cell-a-alb-https", simtest.PM("securityGroupId", sg.ID,
		"prefixListId", cloudfront, "ipProtocol", "tcp", "fromPort", 443, "toPort", 443))

	tg := readers.Sim(f.endpoint, "us-east-1")
	tg.MaxBackoff = 1
	inv, err := readers.NewInventory(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	inv.PageSize = 5 // EC2's smallest page: pagination runs against the simulator too
	count := func(name string, got int, err error, want int) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", name, got, err, want)
		}
	}
	// The cell's VPC, the extra one, and the region's default VPC, which
	// every account has (store.View.Defaults).
	n, err := inv.VPCs(ctx)
	count("VPCs", n, err, 3)
	n, err = inv.ElasticIPs(ctx)
	count("Elastic IPs", n, err, 1)
	n, err = inv.TargetGroups(ctx)
	count("target groups", n, err, 1)
	lbs, err := inv.LoadBalancers(ctx)
	count("ALBs", lbs["application"], err, 1)
	byAZ, err := inv.NATGatewaysByAZ(ctx)
	count("NAT gateways in us-east-1a", byAZ["us-east-1a"], err, 1)
	sgs, err := inv.SecurityGroups(ctx)
	// The ALB group, the default VPC's default group, and the default
	// group AWS creates with each created VPC (the cell's and the extra).
	if err != nil || sgs.Count != 4 || sgs.MostRules != 55 || sgs.Fullest != sg.ID+" inbound" {
		t.Errorf("security groups = %+v, %v; want 4: the ALB group, whose prefix-list rule weighs 55, the default VPC's default group and each created VPC's", sgs, err)
	}

	// Fargate: 2 tasks × 256 CPU units = 0.5 vCPU, published in AWS/Usage
	// each minute from the service's creation on.
	f.clk.Advance(3 * time.Minute)
	u, err := f.cw.ReadUsage(ctx, readers.UsageMetric{Namespace: "AWS/Usage", Metric: "ResourceCount", Stat: "Maximum",
		Dimensions: map[string]string{"Service": "Fargate", "Type": "Resource", "Resource": "vCPU", "Class": "Standard/OnDemand"}}, f.clk.Now())
	if err != nil || u.NoData || u.Value != 0.5 {
		t.Errorf("Fargate usage = %+v, %v; want 0.5 vCPU", u, err)
	}
	alarms, err := f.cw.AlarmCount(ctx)
	count("alarms", alarms, err, 3)
}

// TestANewAccountHasADefaultNetworkInEveryRegion: like a real account, a
// simulated one nobody has created anything in holds, in each region it
// is read in, a default VPC (172.31.0.0/16) with its internet gateway and
// its default security group — what the quota audit counts toward VPCs,
// internet gateways and security groups per Region.
func TestANewAccountHasADefaultNetworkInEveryRegion(t *testing.T) {
	f := newAPIFixture(t)
	ctx := context.Background()
	for _, region := range []string{"us-west-2", "eu-west-1"} {
		tg := readers.Sim(f.endpoint, region)
		tg.MaxBackoff = 1
		inv, err := readers.NewInventory(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		vpcs, err := inv.VPCs(ctx)
		igws, err2 := inv.InternetGateways(ctx)
		sgs, err3 := inv.SecurityGroups(ctx)
		if err != nil || err2 != nil || err3 != nil || vpcs != 1 || igws != 1 || sgs.Count != 1 {
			t.Errorf("%s: %d VPCs, %d internet gateways, %d security groups (%v %v %v); want the default VPC, its gateway and its group",
				region, vpcs, igws, sgs.Count, err, err2, err3)
		}
	}
	defaults := awsmodel.DefaultNetwork(awsmodel.Env{Region: "us-west-2"})
	if len(defaults) != 3 || defaults[0].Outputs["cidrBlock"].StringValue() != "172.31.0.0/16" || defaults[2].Outputs["vpcId"].StringValue() != defaults[0].ID {
		t.Errorf("default network: %+v", defaults)
	}
}
