package awsapi

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/elasticache"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbtypes "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/rds"
)

// Inventory counts what an account has in a region, with the describe and
// list calls of EC2 (EC2 query protocol), RDS, ElastiCache, ELBv2 and IAM
// (AWS query protocol). These are the usage readers of the quotas AWS
// publishes no AWS/Usage metric for. Every paginated call follows its
// token to the end; page sizes are the largest each API allows, so a run
// makes one call per API until an account holds more than a page.
type Inventory struct {
	ec2 *ec2.Client
	rds *rds.Client
	ec  *elasticache.Client
	elb *elbv2.Client
	iam *iam.Client
	// PageSize, when set, asks every API for pages of this size (tests).
	PageSize int32
}

// NewInventory builds the inventory readers for a target.
func NewInventory(ctx context.Context, t Target) (*Inventory, error) {
	cfg, err := t.Config(ctx)
	if err != nil {
		return nil, err
	}
	return &Inventory{
		ec2: ec2.NewFromConfig(cfg), rds: rds.NewFromConfig(cfg), ec: elasticache.NewFromConfig(cfg),
		elb: elbv2.NewFromConfig(cfg), iam: iam.NewFromConfig(cfg),
	}, nil
}

// page is the page size to ask for: the test override, else max (the
// API's largest).
func (i *Inventory) page(max int32) *int32 {
	if i.PageSize > 0 {
		return aws.Int32(i.PageSize)
	}
	return aws.Int32(max)
}

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

// ElasticIPs counts the region's VPC Elastic IP addresses
// (DescribeAddresses, domain vpc; the API returns every address at once,
// it has no pagination).
func (i *Inventory) ElasticIPs(ctx context.Context) (int, error) {
	out, err := i.ec2.DescribeAddresses(ctx, &ec2.DescribeAddressesInput{Filters: []ec2types.Filter{filter("domain", "vpc")}})
	if err != nil {
		return 0, fmt.Errorf("EC2 DescribeAddresses: %w", err)
	}
	return len(out.Addresses), nil
}

// VPCs counts the region's VPCs (DescribeVpcs, all pages).
func (i *Inventory) VPCs(ctx context.Context) (int, error) {
	n := 0
	p := ec2.NewDescribeVpcsPaginator(i.ec2, &ec2.DescribeVpcsInput{MaxResults: i.page(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("EC2 DescribeVpcs: %w", err)
		}
		n += len(page.Vpcs)
	}
	return n, nil
}

// InternetGateways counts the region's internet gateways.
func (i *Inventory) InternetGateways(ctx context.Context) (int, error) {
	n := 0
	p := ec2.NewDescribeInternetGatewaysPaginator(i.ec2, &ec2.DescribeInternetGatewaysInput{MaxResults: i.page(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("EC2 DescribeInternetGateways: %w", err)
		}
		n += len(page.InternetGateways)
	}
	return n, nil
}

// NATGatewaysByAZ counts the NAT gateways that hold quota (pending or
// available) per Availability Zone. DescribeNatGateways names a gateway's
// subnet, not its zone, so the zones come from DescribeSubnets.
func (i *Inventory) NATGatewaysByAZ(ctx context.Context) (map[string]int, error) {
	bySubnet := map[string]int{}
	p := ec2.NewDescribeNatGatewaysPaginator(i.ec2, &ec2.DescribeNatGatewaysInput{
		Filter: []ec2types.Filter{filter("state", "pending", "available")}, MaxResults: i.page(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("EC2 DescribeNatGateways: %w", err)
		}
		for _, g := range page.NatGateways {
			bySubnet[aws.ToString(g.SubnetId)]++
		}
	}
	out := map[string]int{}
	if len(bySubnet) == 0 {
		return out, nil
	}
	zones := map[string]string{}
	sp := ec2.NewDescribeSubnetsPaginator(i.ec2, &ec2.DescribeSubnetsInput{MaxResults: i.page(1000)})
	for sp.HasMorePages() {
		page, err := sp.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("EC2 DescribeSubnets: %w", err)
		}
		for _, s := range page.Subnets {
			zones[aws.ToString(s.SubnetId)] = aws.ToString(s.AvailabilityZone)
		}
	}
	for subnet, n := range bySubnet {
		az, ok := zones[subnet]
		if !ok {
			// Fail closed: a gateway whose zone cannot be told still
			// counts, against a zone that says so.
			az = "unknown-az(" + subnet + ")"
		}
		out[az] += n
	}
	return out, nil
}

// SecurityGroups is what DescribeSecurityGroups says about a region.
type SecurityGroups struct {
	// Count is the number of security groups.
	Count int
	// MostRules is the largest rule count of one group in one direction,
	// counted as AWS counts them against "rules per security group": one
	// per CIDR range and per referenced group, and a referenced prefix
	// list as many as its maximum entries.
	MostRules int
	// Fullest names the group (and direction) with MostRules.
	Fullest string
	// RulesErr says why the rules could not be weighed (a referenced
	// prefix list the account does not describe); MostRules and Fullest
	// are then unknown, while Count, which no rule changes, still stands.
	RulesErr error
}

// SecurityGroups counts the region's security groups and their rules;
// referenced prefix lists are weighed with DescribeManagedPrefixLists.
func (i *Inventory) SecurityGroups(ctx context.Context) (SecurityGroups, error) {
	var groups []ec2types.SecurityGroup
	p := ec2.NewDescribeSecurityGroupsPaginator(i.ec2, &ec2.DescribeSecurityGroupsInput{MaxResults: i.page(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return SecurityGroups{}, fmt.Errorf("EC2 DescribeSecurityGroups: %w", err)
		}
		groups = append(groups, page.SecurityGroups...)
	}
	weights := map[string]int{}
	referenced := false
	for _, g := range groups {
		for _, perms := range [][]ec2types.IpPermission{g.IpPermissions, g.IpPermissionsEgress} {
			for _, pm := range perms {
				referenced = referenced || len(pm.PrefixListIds) > 0
			}
		}
	}
	if referenced {
		pp := ec2.NewDescribeManagedPrefixListsPaginator(i.ec2, &ec2.DescribeManagedPrefixListsInput{MaxResults: i.page(100)})
		for pp.HasMorePages() {
			page, err := pp.NextPage(ctx)
			if err != nil {
				return SecurityGroups{Count: len(groups), RulesErr: fmt.Errorf("EC2 DescribeManagedPrefixLists: %w", err)}, nil
			}
			for _, l := range page.PrefixLists {
				weights[aws.ToString(l.PrefixListId)] = int(aws.ToInt32(l.MaxEntries))
			}
		}
	}
	out := SecurityGroups{Count: len(groups)}
	for _, g := range groups {
		for dir, perms := range map[string][]ec2types.IpPermission{"inbound": g.IpPermissions, "outbound": g.IpPermissionsEgress} {
			n, err := ruleCount(perms, weights)
			if err != nil {
				return SecurityGroups{Count: len(groups), RulesErr: fmt.Errorf("security group %s: %w", aws.ToString(g.GroupId), err)}, nil
			}
			if n > out.MostRules || n == out.MostRules && out.Fullest != "" && aws.ToString(g.GroupId)+" "+dir < out.Fullest {
				out.MostRules, out.Fullest = n, aws.ToString(g.GroupId)+" "+dir
			}
		}
	}
	return out, nil
}

// ruleCount weighs one direction's permissions; AWS enforces the quota
// separately for IPv4 and IPv6 rules, so the larger family counts.
func ruleCount(perms []ec2types.IpPermission, weights map[string]int) (int, error) {
	v4, v6 := 0, 0
	for _, pm := range perms {
		shared := len(pm.UserIdGroupPairs)
		for _, pl := range pm.PrefixListIds {
			w, ok := weights[aws.ToString(pl.PrefixListId)]
			if !ok {
				return 0, fmt.Errorf("references prefix list %s, which DescribeManagedPrefixLists did not return (its weight is unknown)", aws.ToString(pl.PrefixListId))
			}
			shared += w
		}
		v4 += len(pm.IpRanges) + shared
		v6 += len(pm.Ipv6Ranges) + shared
	}
	return max(v4, v6), nil
}

// GatewayEndpoints counts the region's gateway VPC endpoints that hold
// quota (not deleted or failed).
func (i *Inventory) GatewayEndpoints(ctx context.Context) (int, error) {
	n := 0
	p := ec2.NewDescribeVpcEndpointsPaginator(i.ec2, &ec2.DescribeVpcEndpointsInput{
		Filters: []ec2types.Filter{filter("vpc-endpoint-type", "Gateway")}, MaxResults: i.page(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("EC2 DescribeVpcEndpoints: %w", err)
		}
		for _, e := range page.VpcEndpoints {
			switch e.State {
			case ec2types.StateDeleted, ec2types.StateFailed, ec2types.StateRejected, ec2types.StateExpired:
				continue
			}
			n++
		}
	}
	return n, nil
}

// DBClusters counts the region's RDS DB clusters (DescribeDBClusters).
func (i *Inventory) DBClusters(ctx context.Context) (int, error) {
	n := 0
	p := rds.NewDescribeDBClustersPaginator(i.rds, &rds.DescribeDBClustersInput{MaxRecords: i.page(100)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("RDS DescribeDBClusters: %w", err)
		}
		n += len(page.DBClusters)
	}
	return n, nil
}

// DBInstances counts the region's RDS DB instances (DescribeDBInstances).
func (i *Inventory) DBInstances(ctx context.Context) (int, error) {
	n := 0
	p := rds.NewDescribeDBInstancesPaginator(i.rds, &rds.DescribeDBInstancesInput{MaxRecords: i.page(100)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("RDS DescribeDBInstances: %w", err)
		}
		n += len(page.DBInstances)
	}
	return n, nil
}

// CacheNodes counts the region's ElastiCache nodes: the NumCacheNodes of
// every cache cluster (a replication group's members are cache clusters).
func (i *Inventory) CacheNodes(ctx context.Context) (int, error) {
	n := 0
	p := elasticache.NewDescribeCacheClustersPaginator(i.ec, &elasticache.DescribeCacheClustersInput{MaxRecords: i.page(100)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("ElastiCache DescribeCacheClusters: %w", err)
		}
		for _, c := range page.CacheClusters {
			n += int(aws.ToInt32(c.NumCacheNodes))
		}
	}
	return n, nil
}

// LoadBalancers counts the region's load balancers by type
// ("application", "network", "gateway").
func (i *Inventory) LoadBalancers(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	p := elbv2.NewDescribeLoadBalancersPaginator(i.elb, &elbv2.DescribeLoadBalancersInput{PageSize: i.page(400)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("ELBv2 DescribeLoadBalancers: %w", err)
		}
		for _, lb := range page.LoadBalancers {
			t := lb.Type
			if t == "" {
				t = elbtypes.LoadBalancerTypeEnumApplication
			}
			out[string(t)]++
		}
	}
	return out, nil
}

// TargetGroups counts the region's target groups.
func (i *Inventory) TargetGroups(ctx context.Context) (int, error) {
	n := 0
	p := elbv2.NewDescribeTargetGroupsPaginator(i.elb, &elbv2.DescribeTargetGroupsInput{PageSize: i.page(400)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("ELBv2 DescribeTargetGroups: %w", err)
		}
		n += len(page.TargetGroups)
	}
	return n, nil
}

// Roles counts the account's IAM roles (ListRoles; IAM is global).
func (i *Inventory) Roles(ctx context.Context) (int, error) {
	n := 0
	p := iam.NewListRolesPaginator(i.iam, &iam.ListRolesInput{MaxItems: i.page(1000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("IAM ListRoles: %w", err)
		}
		n += len(page.Roles)
	}
	return n, nil
}
