package cellmodule

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/vpc"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule/spec"
)

// lookups makes the invokes the cell needs. They run with the cell as
// parent so they use the same provider as its resources.
func (b *builder) lookups() error {
	ctx, s := b.ctx, b.spec
	zones, err := aws.GetAvailabilityZones(ctx, &aws.GetAvailabilityZonesArgs{
		State: pulumi.StringRef("available"),
		// Local and Wavelength zones are "available" once opted in, but they
		// lack NAT gateways, Aurora and ElastiCache.
		Filters: []aws.GetAvailabilityZonesFilter{{Name: "opt-in-status", Values: []string{"opt-in-not-required"}}},
	}, pulumi.Parent(b.cell))
	if err != nil {
		return fmt.Errorf("listing availability zones in %s: %w", s.Region, err)
	}
	if len(zones.Names) < spec.AZCount {
		return fmt.Errorf("region %s has %d available availability zones (%s); a cell needs %d",
			s.Region, len(zones.Names), strings.Join(zones.Names, ", "), spec.AZCount)
	}
	azs := append([]string(nil), zones.Names[:spec.AZCount]...)
	for _, az := range azs {
		if !strings.HasPrefix(az, s.Region) {
			return fmt.Errorf("availability zone %s is not in region %s: the AWS provider's region and cells:region disagree", az, s.Region)
		}
	}
	b.cell.Network.AvailabilityZones = azs

	part, err := aws.GetPartition(ctx, &aws.GetPartitionArgs{}, pulumi.Parent(b.cell))
	if err != nil {
		return fmt.Errorf("looking up the AWS partition: %w", err)
	}
	b.partition = part.Partition
	if b.partition == "" {
		return fmt.Errorf("the AWS partition lookup returned an empty partition")
	}
	b.bucketArn = fmt.Sprintf("arn:%s:s3:::%s", b.partition, s.FleetBucket)
	b.objectsArn = b.bucketArn + "/" + StoragePrefix(s.ID) + "*"

	id, err := aws.GetCallerIdentity(ctx, &aws.GetCallerIdentityArgs{}, pulumi.Parent(b.cell))
	if err != nil {
		return fmt.Errorf("looking up the AWS account: %w", err)
	}
	b.account = id.AccountId

	pl, err := ec2.LookupManagedPrefixList(ctx, &ec2.LookupManagedPrefixListArgs{
		Name: pulumi.StringRef(CloudFrontPrefixList),
	}, pulumi.Parent(b.cell))
	if err != nil {
		return fmt.Errorf("looking up the managed prefix list %s: %w", CloudFrontPrefixList, err)
	}
	if pl.Id == "" {
		return fmt.Errorf("managed prefix list %s not found in %s", CloudFrontPrefixList, s.Region)
	}
	b.prefixListID = pl.Id
	return nil
}

// azSuffix turns "us-east-1a" into "1a" for resource names.
func azSuffix(az string) string {
	if i := strings.LastIndex(az, "-"); i >= 0 && i < len(az)-1 {
		return az[i+1:]
	}
	return az
}

func (b *builder) network() error {
	ctx, s, n := b.ctx, b.spec, &b.cell.Network
	cidr, err := netip.ParsePrefix(s.CIDR())
	if err != nil {
		return err
	}
	if n.Layout, err = CarveSubnets(cidr); err != nil {
		return err
	}

	name := b.name("vpc")
	if n.VPC, err = ec2.NewVpc(ctx, name, &ec2.VpcArgs{
		CidrBlock:          pulumi.String(cidr.String()),
		EnableDnsSupport:   pulumi.Bool(true),
		EnableDnsHostnames: pulumi.Bool(true),
		Tags:               b.tags(name),
	}, b.opts()...); err != nil {
		return err
	}

	subnets := func(tier string, prefixes [spec.AZCount]netip.Prefix) ([]*ec2.Subnet, error) {
		out := make([]*ec2.Subnet, spec.AZCount)
		for i, az := range n.AvailabilityZones {
			name := b.name(tier + "-" + azSuffix(az))
			tags := b.tags(name)
			tags["tier"] = pulumi.String(tier)
			sn, err := ec2.NewSubnet(ctx, name, &ec2.SubnetArgs{
				VpcId:            n.VPC.ID(),
				CidrBlock:        pulumi.String(prefixes[i].String()),
				AvailabilityZone: pulumi.String(az),
				// Nothing in a cell gets a public IP at launch, not even in the
				// public tier: only the ALB and NAT gateways live there.
				MapPublicIpOnLaunch: pulumi.Bool(false),
				Tags:                tags,
			}, b.opts()...)
			if err != nil {
				return nil, err
			}
			out[i] = sn
		}
		return out, nil
	}
	if n.PublicSubnets, err = subnets("public", n.Layout.Public); err != nil {
		return err
	}
	if n.PrivateSubnets, err = subnets("private", n.Layout.Private); err != nil {
		return err
	}
	if n.IsolatedSubnets, err = subnets("isolated", n.Layout.Isolated); err != nil {
		return err
	}

	name = b.name("igw")
	if n.InternetGateway, err = ec2.NewInternetGateway(ctx, name, &ec2.InternetGatewayArgs{
		VpcId: n.VPC.ID(),
		Tags:  b.tags(name),
	}, b.opts()...); err != nil {
		return err
	}

	// NAT gateways: one per AZ survives an AZ outage; one per cell saves
	// Elastic IPs (5 per region by default).
	natAZs := spec.AZCount
	if s.NATMode == spec.NATSingle {
		natAZs = 1
	}
	for i := 0; i < natAZs; i++ {
		suffix := azSuffix(n.AvailabilityZones[i])
		eipName := b.name("nat-eip-" + suffix)
		eip, err := ec2.NewEip(ctx, eipName, &ec2.EipArgs{
			Domain: pulumi.String("vpc"),
			Tags:   b.tags(eipName),
		}, b.opts()...)
		if err != nil {
			return err
		}
		natName := b.name("nat-" + suffix)
		nat, err := ec2.NewNatGateway(ctx, natName, &ec2.NatGatewayArgs{
			AllocationId:     eip.AllocationId,
			SubnetId:         n.PublicSubnets[i].ID(),
			ConnectivityType: pulumi.String("public"),
			Tags:             b.tags(natName),
			// A public NAT gateway needs the VPC's internet gateway attached.
		}, b.opts(pulumi.DependsOn([]pulumi.Resource{n.InternetGateway}))...)
		if err != nil {
			return err
		}
		n.NATGateways = append(n.NATGateways, nat)
	}

	name = b.name("public-rt")
	if n.PublicRouteTable, err = ec2.NewRouteTable(ctx, name, &ec2.RouteTableArgs{
		VpcId: n.VPC.ID(),
		Routes: ec2.RouteTableRouteArray{ec2.RouteTableRouteArgs{
			CidrBlock: pulumi.String("0.0.0.0/0"),
			GatewayId: n.InternetGateway.ID(),
		}},
		Tags: b.tags(name),
	}, b.opts()...); err != nil {
		return err
	}
	for i, az := range n.AvailabilityZones {
		suffix := azSuffix(az)
		nat := n.NATGateways[0]
		if len(n.NATGateways) == spec.AZCount {
			nat = n.NATGateways[i]
		}
		name := b.name("private-" + suffix + "-rt")
		rt, err := ec2.NewRouteTable(ctx, name, &ec2.RouteTableArgs{
			VpcId: n.VPC.ID(),
			Routes: ec2.RouteTableRouteArray{ec2.RouteTableRouteArgs{
				CidrBlock:    pulumi.String("0.0.0.0/0"),
				NatGatewayId: nat.ID(),
			}},
			Tags: b.tags(name),
		}, b.opts()...)
		if err != nil {
			return err
		}
		n.PrivateRouteTables = append(n.PrivateRouteTables, rt)
	}
	// The isolated tier has no route out of the VPC; only the S3 gateway
	// endpoint adds its prefix-list route.
	name = b.name("isolated-rt")
	if n.IsolatedRouteTable, err = ec2.NewRouteTable(ctx, name, &ec2.RouteTableArgs{
		VpcId: n.VPC.ID(),
		Tags:  b.tags(name),
	}, b.opts()...); err != nil {
		return err
	}

	associate := func(tier string, subnets []*ec2.Subnet, table func(i int) *ec2.RouteTable) error {
		for i, sn := range subnets {
			name := b.name(tier + "-" + azSuffix(n.AvailabilityZones[i]) + "-rta")
			if _, err := ec2.NewRouteTableAssociation(ctx, name, &ec2.RouteTableAssociationArgs{
				SubnetId:     sn.ID(),
				RouteTableId: table(i).ID(),
			}, b.opts()...); err != nil {
				return err
			}
		}
		return nil
	}
	if err := associate("public", n.PublicSubnets, func(int) *ec2.RouteTable { return n.PublicRouteTable }); err != nil {
		return err
	}
	if err := associate("private", n.PrivateSubnets, func(i int) *ec2.RouteTable { return n.PrivateRouteTables[i] }); err != nil {
		return err
	}
	if err := associate("isolated", n.IsolatedSubnets, func(int) *ec2.RouteTable { return n.IsolatedRouteTable }); err != nil {
		return err
	}

	rtIDs := pulumi.StringArray{}
	for _, rt := range n.PrivateRouteTables {
		rtIDs = append(rtIDs, rt.ID())
	}
	rtIDs = append(rtIDs, n.IsolatedRouteTable.ID())
	name = b.name("s3-endpoint")
	n.S3Endpoint, err = ec2.NewVpcEndpoint(ctx, name, &ec2.VpcEndpointArgs{
		VpcId:           n.VPC.ID(),
		ServiceName:     pulumi.String(fmt.Sprintf("com.amazonaws.%s.s3", s.Region)),
		VpcEndpointType: pulumi.String("Gateway"),
		RouteTableIds:   rtIDs,
		Tags:            b.tags(name),
	}, b.opts()...)
	return err
}

// securityGroups creates the four groups and their rules. Rules are separate
// resources (no inline rules) so groups can reference each other; a new group
// loses AWS's default allow-all egress rule when the provider creates it.
func (b *builder) securityGroups() error {
	ctx, s, sg := b.ctx, b.spec, &b.cell.SG
	group := func(suffix, description string) (*ec2.SecurityGroup, error) {
		name := b.name(suffix)
		return ec2.NewSecurityGroup(ctx, name, &ec2.SecurityGroupArgs{
			VpcId:       b.cell.Network.VPC.ID(),
			Description: pulumi.String(description),
			Tags:        b.tags(name),
		}, b.opts()...)
	}
	var err error
	if sg.ALB, err = group("alb-sg", "cellctl "+s.ID+": ALB, HTTPS from CloudFront only"); err != nil {
		return err
	}
	if sg.Service, err = group("service-sg", "cellctl "+s.ID+": ECS service tasks"); err != nil {
		return err
	}
	if sg.Database, err = group("db-sg", "cellctl "+s.ID+": Aurora, from the service only"); err != nil {
		return err
	}
	if sg.Cache, err = group("cache-sg", "cellctl "+s.ID+": ElastiCache, from the service only"); err != nil {
		return err
	}

	ingress := func(suffix string, on *ec2.SecurityGroup, port int, args vpc.SecurityGroupIngressRuleArgs) error {
		name := b.name(suffix)
		args.SecurityGroupId = on.ID()
		args.IpProtocol = pulumi.String("tcp")
		args.FromPort = pulumi.Int(port)
		args.ToPort = pulumi.Int(port)
		args.Tags = b.tags(name)
		_, err := vpc.NewSecurityGroupIngressRule(ctx, name, &args, b.opts()...)
		return err
	}
	egress := func(suffix string, on *ec2.SecurityGroup, port int, args vpc.SecurityGroupEgressRuleArgs) error {
		name := b.name(suffix)
		args.SecurityGroupId = on.ID()
		args.IpProtocol = pulumi.String("tcp")
		args.FromPort = pulumi.Int(port)
		args.ToPort = pulumi.Int(port)
		args.Tags = b.tags(name)
		_, err := vpc.NewSecurityGroupEgressRule(ctx, name, &args, b.opts()...)
		return err
	}
	port := s.ContainerPort
	steps := []func() error{
		func() error {
			return ingress("alb-in-https-cloudfront", sg.ALB, httpsPort, vpc.SecurityGroupIngressRuleArgs{
				PrefixListId: pulumi.String(b.prefixListID),
				Description:  pulumi.String("HTTPS from CloudFront origin-facing addresses"),
			})
		},
		func() error {
			return egress("alb-out-service", sg.ALB, port, vpc.SecurityGroupEgressRuleArgs{
				ReferencedSecurityGroupId: sg.Service.ID(),
				Description:               pulumi.String("to the service tasks (traffic and health checks)"),
			})
		},
		func() error {
			return ingress("service-in-alb", sg.Service, port, vpc.SecurityGroupIngressRuleArgs{
				ReferencedSecurityGroupId: sg.ALB.ID(),
				Description:               pulumi.String("from the ALB of this cell"),
			})
		},
		func() error {
			return egress("service-out-https", sg.Service, httpsPort, vpc.SecurityGroupEgressRuleArgs{
				CidrIpv4:    pulumi.String("0.0.0.0/0"),
				Description: pulumi.String("HTTPS to AWS APIs and ECR (via NAT / S3 endpoint)"),
			})
		},
		func() error {
			return egress("service-out-db", sg.Service, postgresPort, vpc.SecurityGroupEgressRuleArgs{
				ReferencedSecurityGroupId: sg.Database.ID(),
				Description:               pulumi.String("to Aurora"),
			})
		},
		func() error {
			return egress("service-out-cache", sg.Service, cachePort, vpc.SecurityGroupEgressRuleArgs{
				ReferencedSecurityGroupId: sg.Cache.ID(),
				Description:               pulumi.String("to ElastiCache"),
			})
		},
		func() error {
			return ingress("db-in-service", sg.Database, postgresPort, vpc.SecurityGroupIngressRuleArgs{
				ReferencedSecurityGroupId: sg.Service.ID(),
				Description:               pulumi.String("PostgreSQL from the service tasks"),
			})
		},
		func() error {
			return ingress("cache-in-service", sg.Cache, cachePort, vpc.SecurityGroupIngressRuleArgs{
				ReferencedSecurityGroupId: sg.Service.ID(),
				Description:               pulumi.String("Redis protocol from the service tasks"),
			})
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}
