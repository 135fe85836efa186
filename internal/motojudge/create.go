package motojudge

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2t "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/elasticache"
	ect "github.com/aws/aws-sdk-go-v2/service/elasticache/types"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	elbt "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamt "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmst "github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	rdst "github.com/aws/aws-sdk-go-v2/service/rds/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3t "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// creators translate a pulumi-aws resource into the AWS calls its create
// makes (pulumi-aws v6's Create for the type: the create call, then the
// attribute calls it makes for inputs the create call does not carry).
var creators = map[string]creator{
	"aws:ec2/vpc:Vpc":                     createVpc,
	"aws:ec2/subnet:Subnet":               createSubnet,
	"aws:ec2/securityGroup:SecurityGroup": createSecurityGroup,
	"aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": func(c *calls, p props) (string, string, error) {
		return createSGRule(c, p, true)
	},
	"aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": func(c *calls, p props) (string, string, error) {
		return createSGRule(c, p, false)
	},
	"aws:ec2/internetGateway:InternetGateway":                createIGW,
	"aws:ec2/routeTable:RouteTable":                          createRouteTable,
	"aws:ec2/route:Route":                                    createRoute,
	"aws:ec2/routeTableAssociation:RouteTableAssociation":    createRTA,
	"aws:ec2/eip:Eip":                                        createEIP,
	"aws:ec2/natGateway:NatGateway":                          createNAT,
	"aws:ec2/vpcEndpoint:VpcEndpoint":                        createVpcEndpoint,
	"aws:iam/role:Role":                                      createRole,
	"aws:iam/rolePolicy:RolePolicy":                          createRolePolicy,
	"aws:iam/rolePolicyAttachment:RolePolicyAttachment":      createRolePolicyAttachment,
	"aws:kms/key:Key":                                        createKey,
	"aws:cloudwatch/logGroup:LogGroup":                       createLogGroup,
	"aws:lb/loadBalancer:LoadBalancer":                       createLB,
	"aws:lb/targetGroup:TargetGroup":                         createTG,
	"aws:lb/listener:Listener":                               createListener,
	"aws:lb/listenerRule:ListenerRule":                       createListenerRule,
	"aws:rds/subnetGroup:SubnetGroup":                        createDBSubnetGroup,
	"aws:rds/clusterParameterGroup:ClusterParameterGroup":    createClusterParams,
	"aws:rds/cluster:Cluster":                                createCluster,
	"aws:rds/clusterInstance:ClusterInstance":                createClusterInstance,
	"aws:elasticache/subnetGroup:SubnetGroup":                createCacheSubnetGroup,
	"aws:elasticache/user:User":                              createCacheUser,
	"aws:elasticache/replicationGroup:ReplicationGroup":      createReplicationGroup,
	"aws:ecs/cluster:Cluster":                                createECSCluster,
	"aws:s3/bucketV2:BucketV2":                               createBucket,
	"aws:s3/bucketPolicy:BucketPolicy":                       createBucketPolicy,
	"aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": createPAB,
	"aws:s3/bucketVersioningV2:BucketVersioningV2":           createVersioning,
	"aws:s3/bucketOwnershipControls:BucketOwnershipControls": createOwnership,
	"aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2": createSSE,
}

// pulumi-aws's default description where AWS requires one.
const managedByPulumi = "Managed by Pulumi"

func ec2Tags(kind ec2t.ResourceType, p props) []ec2t.TagSpecification {
	tags := p.tags()
	if len(tags) == 0 {
		return nil
	}
	spec := ec2t.TagSpecification{ResourceType: kind}
	for _, t := range tags {
		spec.Tags = append(spec.Tags, ec2t.Tag{Key: aws.String(t[0]), Value: aws.String(t[1])})
	}
	return []ec2t.TagSpecification{spec}
}

func createVpc(c *calls, p props) (string, string, error) {
	c.op = "CreateVpc"
	out, err := c.ec2().CreateVpc(c.ctx, &ec2.CreateVpcInput{CidrBlock: p.sp("cidrBlock"),
		InstanceTenancy: ec2t.Tenancy(p.s("instanceTenancy")), TagSpecifications: ec2Tags(ec2t.ResourceTypeVpc, p)})
	if err != nil {
		return "", "", err
	}
	id := aws.ToString(out.Vpc.VpcId)
	for _, attr := range []string{"enableDnsSupport", "enableDnsHostnames"} {
		if v := p.inOnly().bp(attr); v != nil {
			c.op = "ModifyVpcAttribute"
			in := &ec2.ModifyVpcAttributeInput{VpcId: &id}
			if attr == "enableDnsSupport" {
				in.EnableDnsSupport = &ec2t.AttributeBooleanValue{Value: v}
			} else {
				in.EnableDnsHostnames = &ec2t.AttributeBooleanValue{Value: v}
			}
			if _, err := c.ec2().ModifyVpcAttribute(c.ctx, in); err != nil {
				return "", "", err
			}
		}
	}
	return id, "", nil
}

func createSubnet(c *calls, p props) (string, string, error) {
	c.op = "CreateSubnet"
	out, err := c.ec2().CreateSubnet(c.ctx, &ec2.CreateSubnetInput{VpcId: p.sp("vpcId"), CidrBlock: p.sp("cidrBlock"),
		AvailabilityZone: p.sp("availabilityZone"), TagSpecifications: ec2Tags(ec2t.ResourceTypeSubnet, p)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.Subnet.SubnetId), "", nil
}

func createSecurityGroup(c *calls, p props) (string, string, error) {
	c.op = "CreateSecurityGroup"
	desc := p.s("description")
	if !p.inOnly().has("description") {
		desc = managedByPulumi
	}
	out, err := c.ec2().CreateSecurityGroup(c.ctx, &ec2.CreateSecurityGroupInput{GroupName: p.sp("name"), Description: &desc,
		VpcId: p.sp("vpcId"), TagSpecifications: ec2Tags(ec2t.ResourceTypeSecurityGroup, p)})
	if err != nil {
		return "", "", err
	}
	id := aws.ToString(out.GroupId)
	for _, dir := range []string{"ingress", "egress"} {
		var perms []ec2t.IpPermission
		for _, r := range p.inOnly().objs(dir) {
			perm := permission(r, r.s("protocol"))
			for _, cidr := range r.list("cidrBlocks") {
				perm.IpRanges = append(perm.IpRanges, ec2t.IpRange{CidrIp: aws.String(cidr), Description: r.sp("description")})
			}
			for _, g := range r.list("securityGroups") {
				perm.UserIdGroupPairs = append(perm.UserIdGroupPairs, ec2t.UserIdGroupPair{GroupId: aws.String(g), Description: r.sp("description")})
			}
			for _, pl := range r.list("prefixListIds") {
				perm.PrefixListIds = append(perm.PrefixListIds, ec2t.PrefixListId{PrefixListId: aws.String(pl), Description: r.sp("description")})
			}
			perms = append(perms, perm)
		}
		if len(perms) == 0 {
			continue
		}
		var err error
		if dir == "ingress" {
			c.op = "AuthorizeSecurityGroupIngress"
			_, err = c.ec2().AuthorizeSecurityGroupIngress(c.ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: &id, IpPermissions: perms})
		} else {
			c.op = "AuthorizeSecurityGroupEgress"
			_, err = c.ec2().AuthorizeSecurityGroupEgress(c.ctx, &ec2.AuthorizeSecurityGroupEgressInput{GroupId: &id, IpPermissions: perms})
		}
		if err != nil {
			return "", "", err
		}
	}
	return id, "", nil
}

func permission(p props, proto string) ec2t.IpPermission {
	perm := ec2t.IpPermission{IpProtocol: aws.String(proto)}
	if proto != "-1" && proto != "all" {
		perm.FromPort, perm.ToPort = p.np("fromPort"), p.np("toPort")
	}
	return perm
}

// createSGRule is pulumi-aws's aws_vpc_security_group_*_rule: one
// Authorize call with one permission, the rule's id from the answer.
func createSGRule(c *calls, p props, ingress bool) (string, string, error) {
	perm := permission(p, p.s("ipProtocol"))
	desc := p.sp("description")
	switch {
	case p.has("cidrIpv4"):
		perm.IpRanges = []ec2t.IpRange{{CidrIp: p.sp("cidrIpv4"), Description: desc}}
	case p.has("cidrIpv6"):
		perm.Ipv6Ranges = []ec2t.Ipv6Range{{CidrIpv6: p.sp("cidrIpv6"), Description: desc}}
	case p.has("referencedSecurityGroupId"):
		perm.UserIdGroupPairs = []ec2t.UserIdGroupPair{{GroupId: p.sp("referencedSecurityGroupId"), Description: desc}}
	case p.has("prefixListId"):
		perm.PrefixListIds = []ec2t.PrefixListId{{PrefixListId: p.sp("prefixListId"), Description: desc}}
	}
	tags := ec2Tags(ec2t.ResourceTypeSecurityGroupRule, p)
	var rules []ec2t.SecurityGroupRule
	if ingress {
		c.op = "AuthorizeSecurityGroupIngress"
		out, err := c.ec2().AuthorizeSecurityGroupIngress(c.ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: p.sp("securityGroupId"),
			IpPermissions: []ec2t.IpPermission{perm}, TagSpecifications: tags})
		if err != nil {
			return "", "", err
		}
		rules = out.SecurityGroupRules
	} else {
		c.op = "AuthorizeSecurityGroupEgress"
		out, err := c.ec2().AuthorizeSecurityGroupEgress(c.ctx, &ec2.AuthorizeSecurityGroupEgressInput{GroupId: p.sp("securityGroupId"),
			IpPermissions: []ec2t.IpPermission{perm}, TagSpecifications: tags})
		if err != nil {
			return "", "", err
		}
		rules = out.SecurityGroupRules
	}
	if len(rules) == 0 {
		return "", "", nil
	}
	return aws.ToString(rules[0].SecurityGroupRuleId), "", nil
}

func createIGW(c *calls, p props) (string, string, error) {
	c.op = "CreateInternetGateway"
	out, err := c.ec2().CreateInternetGateway(c.ctx, &ec2.CreateInternetGatewayInput{TagSpecifications: ec2Tags(ec2t.ResourceTypeInternetGateway, p)})
	if err != nil {
		return "", "", err
	}
	id := aws.ToString(out.InternetGateway.InternetGatewayId)
	if vpc := p.sp("vpcId"); vpc != nil {
		c.op = "AttachInternetGateway"
		if _, err := c.ec2().AttachInternetGateway(c.ctx, &ec2.AttachInternetGatewayInput{InternetGatewayId: &id, VpcId: vpc}); err != nil {
			return "", "", err
		}
	}
	return id, "", nil
}

func routeInput(table *string, r props) *ec2.CreateRouteInput {
	return &ec2.CreateRouteInput{RouteTableId: table, DestinationCidrBlock: r.sp("cidrBlock"),
		DestinationPrefixListId: r.sp("destinationPrefixListId"), GatewayId: r.sp("gatewayId"),
		NatGatewayId: r.sp("natGatewayId"), VpcEndpointId: r.sp("vpcEndpointId")}
}

func createRouteTable(c *calls, p props) (string, string, error) {
	c.op = "CreateRouteTable"
	out, err := c.ec2().CreateRouteTable(c.ctx, &ec2.CreateRouteTableInput{VpcId: p.sp("vpcId"), TagSpecifications: ec2Tags(ec2t.ResourceTypeRouteTable, p)})
	if err != nil {
		return "", "", err
	}
	id := out.RouteTable.RouteTableId
	for _, r := range p.inOnly().objs("routes") {
		c.op = "CreateRoute"
		if _, err := c.ec2().CreateRoute(c.ctx, routeInput(id, r)); err != nil {
			return "", "", err
		}
	}
	return aws.ToString(id), "", nil
}

func createRoute(c *calls, p props) (string, string, error) {
	c.op = "CreateRoute"
	in := routeInput(p.sp("routeTableId"), p)
	in.DestinationCidrBlock = p.sp("destinationCidrBlock")
	if _, err := c.ec2().CreateRoute(c.ctx, in); err != nil {
		return "", "", err
	}
	return "r-" + p.s("routeTableId"), "", nil
}

func createRTA(c *calls, p props) (string, string, error) {
	c.op = "AssociateRouteTable"
	out, err := c.ec2().AssociateRouteTable(c.ctx, &ec2.AssociateRouteTableInput{RouteTableId: p.sp("routeTableId"),
		SubnetId: p.sp("subnetId"), GatewayId: p.sp("gatewayId")})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.AssociationId), "", nil
}

func createEIP(c *calls, p props) (string, string, error) {
	c.op = "AllocateAddress"
	out, err := c.ec2().AllocateAddress(c.ctx, &ec2.AllocateAddressInput{Domain: ec2t.DomainType(p.s("domain")),
		TagSpecifications: ec2Tags(ec2t.ResourceTypeElasticIp, p)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.AllocationId), "", nil
}

func createNAT(c *calls, p props) (string, string, error) {
	c.op = "CreateNatGateway"
	out, err := c.ec2().CreateNatGateway(c.ctx, &ec2.CreateNatGatewayInput{SubnetId: p.sp("subnetId"), AllocationId: p.sp("allocationId"),
		ConnectivityType: ec2t.ConnectivityType(p.s("connectivityType")), TagSpecifications: ec2Tags(ec2t.ResourceTypeNatgateway, p)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.NatGateway.NatGatewayId), "", nil
}

func createVpcEndpoint(c *calls, p props) (string, string, error) {
	c.op = "CreateVpcEndpoint"
	out, err := c.ec2().CreateVpcEndpoint(c.ctx, &ec2.CreateVpcEndpointInput{VpcId: p.sp("vpcId"), ServiceName: p.sp("serviceName"),
		VpcEndpointType: ec2t.VpcEndpointType(p.s("vpcEndpointType")), RouteTableIds: p.list("routeTableIds"),
		SubnetIds: p.list("subnetIds"), SecurityGroupIds: p.list("securityGroupIds"), PolicyDocument: p.sp("policy"),
		PrivateDnsEnabled: p.inOnly().bp("privateDnsEnabled"), TagSpecifications: ec2Tags(ec2t.ResourceTypeVpcEndpoint, p)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.VpcEndpoint.VpcEndpointId), "", nil
}

func iamTags(p props) []iamt.Tag {
	var out []iamt.Tag
	for _, t := range p.tags() {
		out = append(out, iamt.Tag{Key: aws.String(t[0]), Value: aws.String(t[1])})
	}
	return out
}

func createRole(c *calls, p props) (string, string, error) {
	c.op = "CreateRole"
	out, err := c.iam().CreateRole(c.ctx, &iam.CreateRoleInput{RoleName: p.sp("name"), AssumeRolePolicyDocument: p.sp("assumeRolePolicy"),
		Description: p.sp("description"), MaxSessionDuration: p.np("maxSessionDuration"), Path: p.sp("path"),
		PermissionsBoundary: p.sp("permissionsBoundary"), Tags: iamTags(p)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.Role.RoleName), aws.ToString(out.Role.Arn), nil
}

func createRolePolicy(c *calls, p props) (string, string, error) {
	c.op = "PutRolePolicy"
	_, err := c.iam().PutRolePolicy(c.ctx, &iam.PutRolePolicyInput{RoleName: p.sp("role"), PolicyName: p.sp("name"), PolicyDocument: p.sp("policy")})
	if err != nil {
		return "", "", err
	}
	return p.s("role") + ":" + p.s("name"), "", nil
}

func createRolePolicyAttachment(c *calls, p props) (string, string, error) {
	c.op = "AttachRolePolicy"
	_, err := c.iam().AttachRolePolicy(c.ctx, &iam.AttachRolePolicyInput{RoleName: p.sp("role"), PolicyArn: p.sp("policyArn")})
	return p.s("role") + "-" + p.s("policyArn"), "", err
}

func createKey(c *calls, p props) (string, string, error) {
	c.op = "CreateKey"
	var tags []kmst.Tag
	for _, t := range p.tags() {
		tags = append(tags, kmst.Tag{TagKey: aws.String(t[0]), TagValue: aws.String(t[1])})
	}
	out, err := c.kms().CreateKey(c.ctx, &kms.CreateKeyInput{Description: p.sp("description"), KeyUsage: kmst.KeyUsageType(p.s("keyUsage")),
		KeySpec: kmst.KeySpec(p.s("customerMasterKeySpec")), Policy: p.sp("policy"), MultiRegion: p.inOnly().bp("multiRegion"), Tags: tags})
	if err != nil {
		return "", "", err
	}
	id := out.KeyMetadata.KeyId
	if p.b("enableKeyRotation") {
		c.op = "EnableKeyRotation"
		if _, err := c.kms().EnableKeyRotation(c.ctx, &kms.EnableKeyRotationInput{KeyId: id, RotationPeriodInDays: p.np("rotationPeriodInDays")}); err != nil {
			return "", "", err
		}
	}
	return aws.ToString(id), aws.ToString(out.KeyMetadata.Arn), nil
}

func createLogGroup(c *calls, p props) (string, string, error) {
	c.op = "CreateLogGroup"
	tags := map[string]string{}
	for _, t := range p.tags() {
		tags[t[0]] = t[1]
	}
	if len(tags) == 0 {
		tags = nil
	}
	name := p.sp("name")
	if _, err := c.logs().CreateLogGroup(c.ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: name, KmsKeyId: p.sp("kmsKeyId"), Tags: tags}); err != nil {
		return "", "", err
	}
	if days := p.np("retentionInDays"); days != nil && *days != 0 {
		c.op = "PutRetentionPolicy"
		if _, err := c.logs().PutRetentionPolicy(c.ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: name, RetentionInDays: days}); err != nil {
			return "", "", err
		}
	}
	return aws.ToString(name), "", nil
}

func elbTags(p props) []elbt.Tag {
	var out []elbt.Tag
	for _, t := range p.tags() {
		out = append(out, elbt.Tag{Key: aws.String(t[0]), Value: aws.String(t[1])})
	}
	return out
}

func createLB(c *calls, p props) (string, string, error) {
	c.op = "CreateLoadBalancer"
	scheme := elbt.LoadBalancerSchemeEnumInternetFacing
	if p.b("internal") {
		scheme = elbt.LoadBalancerSchemeEnumInternal
	}
	out, err := c.elb().CreateLoadBalancer(c.ctx, &elbv2.CreateLoadBalancerInput{Name: p.sp("name"), Subnets: p.list("subnets"),
		SecurityGroups: p.list("securityGroups"), Scheme: scheme, Type: elbt.LoadBalancerTypeEnum(p.s("loadBalancerType")),
		IpAddressType: elbt.IpAddressType(p.s("ipAddressType")), Tags: elbTags(p)})
	if err != nil {
		return "", "", err
	}
	arn := out.LoadBalancers[0].LoadBalancerArn
	var attrs []elbt.LoadBalancerAttribute
	if v := p.inOnly().bp("dropInvalidHeaderFields"); v != nil {
		attrs = append(attrs, elbt.LoadBalancerAttribute{Key: aws.String("routing.http.drop_invalid_header_fields.enabled"), Value: aws.String(strconv.FormatBool(*v))})
	}
	if n := p.inOnly().np("idleTimeout"); n != nil {
		attrs = append(attrs, elbt.LoadBalancerAttribute{Key: aws.String("idle_timeout.timeout_seconds"), Value: aws.String(fmt.Sprint(*n))})
	}
	if len(attrs) > 0 {
		c.op = "ModifyLoadBalancerAttributes"
		if _, err := c.elb().ModifyLoadBalancerAttributes(c.ctx, &elbv2.ModifyLoadBalancerAttributesInput{LoadBalancerArn: arn, Attributes: attrs}); err != nil {
			return "", "", err
		}
	}
	return aws.ToString(arn), aws.ToString(arn), nil
}

func createTG(c *calls, p props) (string, string, error) {
	c.op = "CreateTargetGroup"
	in := &elbv2.CreateTargetGroupInput{Name: p.sp("name"), TargetType: elbt.TargetTypeEnum(p.s("targetType")), Tags: elbTags(p)}
	// pulumi-aws sends port, protocol and VPC for every target type but
	// lambda (its aws_lb_target_group Create).
	if p.s("targetType") != "lambda" {
		in.Port, in.Protocol, in.VpcId = p.np("port"), elbt.ProtocolEnum(p.s("protocol")), p.sp("vpcId")
		if in.Protocol == elbt.ProtocolEnumHttp || in.Protocol == elbt.ProtocolEnumHttps {
			in.ProtocolVersion = p.sp("protocolVersion")
		}
	}
	if hc, ok := p.inOnly().obj("healthCheck"); ok {
		in.HealthCheckEnabled = hc.bp("enabled")
		in.HealthCheckPath = hc.sp("path")
		in.HealthCheckPort = hc.sp("port")
		in.HealthCheckProtocol = elbt.ProtocolEnum(hc.s("protocol"))
		in.HealthCheckIntervalSeconds = hc.np("interval")
		in.HealthCheckTimeoutSeconds = hc.np("timeout")
		in.HealthyThresholdCount = hc.np("healthyThreshold")
		in.UnhealthyThresholdCount = hc.np("unhealthyThreshold")
		if m := hc.sp("matcher"); m != nil {
			in.Matcher = &elbt.Matcher{HttpCode: m}
		}
	}
	out, err := c.elb().CreateTargetGroup(c.ctx, in)
	if err != nil {
		return "", "", err
	}
	arn := out.TargetGroups[0].TargetGroupArn
	if n := p.inOnly().np("deregistrationDelay"); n != nil {
		c.op = "ModifyTargetGroupAttributes"
		if _, err := c.elb().ModifyTargetGroupAttributes(c.ctx, &elbv2.ModifyTargetGroupAttributesInput{TargetGroupArn: arn,
			Attributes: []elbt.TargetGroupAttribute{{Key: aws.String("deregistration_delay.timeout_seconds"), Value: aws.String(fmt.Sprint(*n))}}}); err != nil {
			return "", "", err
		}
	}
	return aws.ToString(arn), aws.ToString(arn), nil
}

func elbActions(ps []props) []elbt.Action {
	var out []elbt.Action
	for i, a := range ps {
		act := elbt.Action{Type: elbt.ActionTypeEnum(a.s("type")), Order: aws.Int32(int32(i + 1)), TargetGroupArn: a.sp("targetGroupArn")}
		if fr, ok := a.obj("fixedResponse"); ok {
			act.FixedResponseConfig = &elbt.FixedResponseActionConfig{StatusCode: fr.sp("statusCode"), ContentType: fr.sp("contentType"), MessageBody: fr.sp("messageBody")}
		}
		if rd, ok := a.obj("redirect"); ok {
			act.RedirectConfig = &elbt.RedirectActionConfig{StatusCode: elbt.RedirectActionStatusCodeEnum(rd.s("statusCode")), Host: rd.sp("host"),
				Path: rd.sp("path"), Port: rd.sp("port"), Protocol: rd.sp("protocol"), Query: rd.sp("query")}
		}
		out = append(out, act)
	}
	return out
}

func createListener(c *calls, p props) (string, string, error) {
	c.op = "CreateListener"
	in := &elbv2.CreateListenerInput{LoadBalancerArn: p.sp("loadBalancerArn"), Port: p.np("port"), Protocol: elbt.ProtocolEnum(p.s("protocol")),
		SslPolicy: p.sp("sslPolicy"), DefaultActions: elbActions(p.objs("defaultActions")), Tags: elbTags(p)}
	if cert := p.sp("certificateArn"); cert != nil {
		in.Certificates = []elbt.Certificate{{CertificateArn: cert}}
	}
	out, err := c.elb().CreateListener(c.ctx, in)
	if err != nil {
		return "", "", err
	}
	arn := aws.ToString(out.Listeners[0].ListenerArn)
	return arn, arn, nil
}

func createListenerRule(c *calls, p props) (string, string, error) {
	c.op = "CreateRule"
	var conds []elbt.RuleCondition
	for _, cd := range p.objs("conditions") {
		var rc elbt.RuleCondition
		if h, ok := cd.obj("httpHeader"); ok {
			rc.Field = aws.String("http-header")
			rc.HttpHeaderConfig = &elbt.HttpHeaderConditionConfig{HttpHeaderName: h.sp("httpHeaderName"), Values: h.list("values")}
		}
		if h, ok := cd.obj("hostHeader"); ok {
			rc.Field = aws.String("host-header")
			rc.HostHeaderConfig = &elbt.HostHeaderConditionConfig{Values: h.list("values")}
		}
		if h, ok := cd.obj("pathPattern"); ok {
			rc.Field = aws.String("path-pattern")
			rc.PathPatternConfig = &elbt.PathPatternConditionConfig{Values: h.list("values")}
		}
		if h, ok := cd.obj("sourceIp"); ok {
			rc.Field = aws.String("source-ip")
			rc.SourceIpConfig = &elbt.SourceIpConditionConfig{Values: h.list("values")}
		}
		conds = append(conds, rc)
	}
	out, err := c.elb().CreateRule(c.ctx, &elbv2.CreateRuleInput{ListenerArn: p.sp("listenerArn"), Priority: p.np("priority"),
		Actions: elbActions(p.objs("actions")), Conditions: conds, Tags: elbTags(p)})
	if err != nil {
		return "", "", err
	}
	arn := aws.ToString(out.Rules[0].RuleArn)
	return arn, arn, nil
}

func rdsTags(p props) []rdst.Tag {
	var out []rdst.Tag
	for _, t := range p.tags() {
		out = append(out, rdst.Tag{Key: aws.String(t[0]), Value: aws.String(t[1])})
	}
	return out
}

func descOr(p props, k string) *string {
	if s := p.inOnly().s(k); s != "" {
		return &s
	}
	return aws.String(managedByPulumi)
}

func createDBSubnetGroup(c *calls, p props) (string, string, error) {
	c.op = "CreateDBSubnetGroup"
	out, err := c.rds().CreateDBSubnetGroup(c.ctx, &rds.CreateDBSubnetGroupInput{DBSubnetGroupName: p.sp("name"),
		DBSubnetGroupDescription: descOr(p, "description"), SubnetIds: p.list("subnetIds"), Tags: rdsTags(p)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.DBSubnetGroup.DBSubnetGroupName), aws.ToString(out.DBSubnetGroup.DBSubnetGroupArn), nil
}

func createClusterParams(c *calls, p props) (string, string, error) {
	c.op = "CreateDBClusterParameterGroup"
	out, err := c.rds().CreateDBClusterParameterGroup(c.ctx, &rds.CreateDBClusterParameterGroupInput{DBClusterParameterGroupName: p.sp("name"),
		DBParameterGroupFamily: p.sp("family"), Description: descOr(p, "description"), Tags: rdsTags(p)})
	if err != nil {
		return "", "", err
	}
	name := out.DBClusterParameterGroup.DBClusterParameterGroupName
	var params []rdst.Parameter
	for _, pr := range p.objs("parameters") {
		method := rdst.ApplyMethod(pr.s("applyMethod"))
		if method == "" {
			method = rdst.ApplyMethodImmediate
		}
		params = append(params, rdst.Parameter{ParameterName: pr.sp("name"), ParameterValue: pr.sp("value"), ApplyMethod: method})
	}
	if len(params) > 0 {
		c.op = "ModifyDBClusterParameterGroup"
		if _, err := c.rds().ModifyDBClusterParameterGroup(c.ctx, &rds.ModifyDBClusterParameterGroupInput{DBClusterParameterGroupName: name, Parameters: params}); err != nil {
			return "", "", err
		}
	}
	return aws.ToString(name), aws.ToString(out.DBClusterParameterGroup.DBClusterParameterGroupArn), nil
}

func createCluster(c *calls, p props) (string, string, error) {
	c.op = "CreateDBCluster"
	in := &rds.CreateDBClusterInput{DBClusterIdentifier: p.sp("clusterIdentifier"), Engine: p.sp("engine"), EngineVersion: p.sp("engineVersion"),
		EngineMode: p.sp("engineMode"), DatabaseName: p.sp("databaseName"), MasterUsername: p.sp("masterUsername"),
		MasterUserPassword: p.sp("masterPassword"), ManageMasterUserPassword: p.inOnly().bp("manageMasterUserPassword"),
		Port: p.np("port"), DBSubnetGroupName: p.sp("dbSubnetGroupName"), VpcSecurityGroupIds: p.list("vpcSecurityGroupIds"),
		DBClusterParameterGroupName: p.sp("dbClusterParameterGroupName"), BackupRetentionPeriod: p.np("backupRetentionPeriod"),
		CopyTagsToSnapshot: p.inOnly().bp("copyTagsToSnapshot"), DeletionProtection: p.inOnly().bp("deletionProtection"),
		EnableHttpEndpoint: p.inOnly().bp("enableHttpEndpoint"), EnableIAMDatabaseAuthentication: p.inOnly().bp("iamDatabaseAuthenticationEnabled"),
		StorageEncrypted: p.inOnly().bp("storageEncrypted"), KmsKeyId: p.sp("kmsKeyId"), Tags: rdsTags(p)}
	if sv, ok := p.inOnly().obj("serverlessv2ScalingConfiguration"); ok {
		min, _ := sv.get("minCapacity")
		max, _ := sv.get("maxCapacity")
		if min.IsNumber() && max.IsNumber() {
			in.ServerlessV2ScalingConfiguration = &rdst.ServerlessV2ScalingConfiguration{MinCapacity: aws.Float64(min.NumberValue()), MaxCapacity: aws.Float64(max.NumberValue())}
		}
	}
	out, err := c.rds().CreateDBCluster(c.ctx, in)
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.DBCluster.DBClusterIdentifier), aws.ToString(out.DBCluster.DBClusterArn), nil
}

func createClusterInstance(c *calls, p props) (string, string, error) {
	c.op = "CreateDBInstance"
	out, err := c.rds().CreateDBInstance(c.ctx, &rds.CreateDBInstanceInput{DBInstanceIdentifier: p.sp("identifier"),
		DBClusterIdentifier: p.sp("clusterIdentifier"), DBInstanceClass: p.sp("instanceClass"), Engine: p.sp("engine"),
		EngineVersion: p.inOnly().sp("engineVersion"), PubliclyAccessible: p.inOnly().bp("publiclyAccessible"),
		AutoMinorVersionUpgrade: p.inOnly().bp("autoMinorVersionUpgrade"), DBSubnetGroupName: p.sp("dbSubnetGroupName"),
		CopyTagsToSnapshot: p.inOnly().bp("copyTagsToSnapshot"), Tags: rdsTags(p)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.DBInstance.DBInstanceIdentifier), aws.ToString(out.DBInstance.DBInstanceArn), nil
}

func cacheTags(p props) []ect.Tag {
	var out []ect.Tag
	for _, t := range p.tags() {
		out = append(out, ect.Tag{Key: aws.String(t[0]), Value: aws.String(t[1])})
	}
	return out
}

func createCacheSubnetGroup(c *calls, p props) (string, string, error) {
	c.op = "CreateCacheSubnetGroup"
	out, err := c.cache().CreateCacheSubnetGroup(c.ctx, &elasticache.CreateCacheSubnetGroupInput{CacheSubnetGroupName: p.sp("name"),
		CacheSubnetGroupDescription: descOr(p, "description"), SubnetIds: p.list("subnetIds"), Tags: cacheTags(p)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.CacheSubnetGroup.CacheSubnetGroupName), aws.ToString(out.CacheSubnetGroup.ARN), nil
}

func createCacheUser(c *calls, p props) (string, string, error) {
	c.op = "CreateUser"
	in := &elasticache.CreateUserInput{UserId: p.sp("userId"), UserName: p.sp("userName"), Engine: p.sp("engine"),
		AccessString: p.sp("accessString"), NoPasswordRequired: p.inOnly().bp("noPasswordRequired"), Passwords: p.list("passwords"), Tags: cacheTags(p)}
	if am, ok := p.inOnly().obj("authenticationMode"); ok {
		in.AuthenticationMode = &ect.AuthenticationMode{Type: ect.InputAuthenticationType(am.s("type")), Passwords: am.list("passwords")}
	}
	out, err := c.cache().CreateUser(c.ctx, in)
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.UserId), aws.ToString(out.ARN), nil
}

func createReplicationGroup(c *calls, p props) (string, string, error) {
	c.op = "CreateReplicationGroup"
	out, err := c.cache().CreateReplicationGroup(c.ctx, &elasticache.CreateReplicationGroupInput{ReplicationGroupId: p.sp("replicationGroupId"),
		ReplicationGroupDescription: p.sp("description"), Engine: p.sp("engine"), EngineVersion: p.sp("engineVersion"),
		CacheNodeType: p.sp("nodeType"), NumCacheClusters: p.np("numCacheClusters"), Port: p.np("port"),
		AutomaticFailoverEnabled: p.inOnly().bp("automaticFailoverEnabled"), MultiAZEnabled: p.inOnly().bp("multiAzEnabled"),
		AtRestEncryptionEnabled: p.inOnly().bp("atRestEncryptionEnabled"), TransitEncryptionEnabled: p.inOnly().bp("transitEncryptionEnabled"),
		AuthToken: p.sp("authToken"), SecurityGroupIds: p.list("securityGroupIds"), CacheSubnetGroupName: p.sp("subnetGroupName"),
		UserGroupIds: p.list("userGroupIds"), KmsKeyId: p.sp("kmsKeyId"), Tags: cacheTags(p)})
	if err != nil {
		return "", "", err
	}
	return aws.ToString(out.ReplicationGroup.ReplicationGroupId), aws.ToString(out.ReplicationGroup.ARN), nil
}

func createECSCluster(c *calls, p props) (string, string, error) {
	c.op = "CreateCluster"
	out, err := c.ecs().CreateCluster(c.ctx, &ecs.CreateClusterInput{ClusterName: p.sp("name")})
	if err != nil {
		return "", "", err
	}
	arn := aws.ToString(out.Cluster.ClusterArn)
	return arn, arn, nil
}

func createBucket(c *calls, p props) (string, string, error) {
	c.op = "CreateBucket"
	in := &s3.CreateBucketInput{Bucket: p.sp("bucket")}
	if c.region != "us-east-1" {
		in.CreateBucketConfiguration = &s3t.CreateBucketConfiguration{LocationConstraint: s3t.BucketLocationConstraint(c.region)}
	}
	if _, err := c.s3().CreateBucket(c.ctx, in); err != nil {
		return "", "", err
	}
	if tags := p.tags(); len(tags) > 0 {
		c.op = "PutBucketTagging"
		var ts []s3t.Tag
		for _, t := range tags {
			ts = append(ts, s3t.Tag{Key: aws.String(t[0]), Value: aws.String(t[1])})
		}
		if _, err := c.s3().PutBucketTagging(c.ctx, &s3.PutBucketTaggingInput{Bucket: in.Bucket, Tagging: &s3t.Tagging{TagSet: ts}}); err != nil {
			return "", "", err
		}
	}
	return p.s("bucket"), "arn:aws:s3:::" + p.s("bucket"), nil
}

func createBucketPolicy(c *calls, p props) (string, string, error) {
	c.op = "PutBucketPolicy"
	_, err := c.s3().PutBucketPolicy(c.ctx, &s3.PutBucketPolicyInput{Bucket: p.sp("bucket"), Policy: p.sp("policy")})
	return p.s("bucket"), "", err
}

func createPAB(c *calls, p props) (string, string, error) {
	c.op = "PutPublicAccessBlock"
	_, err := c.s3().PutPublicAccessBlock(c.ctx, &s3.PutPublicAccessBlockInput{Bucket: p.sp("bucket"),
		PublicAccessBlockConfiguration: &s3t.PublicAccessBlockConfiguration{BlockPublicAcls: p.bp("blockPublicAcls"),
			BlockPublicPolicy: p.bp("blockPublicPolicy"), IgnorePublicAcls: p.bp("ignorePublicAcls"), RestrictPublicBuckets: p.bp("restrictPublicBuckets")}})
	return p.s("bucket"), "", err
}

func createVersioning(c *calls, p props) (string, string, error) {
	c.op = "PutBucketVersioning"
	vc, _ := p.obj("versioningConfiguration")
	_, err := c.s3().PutBucketVersioning(c.ctx, &s3.PutBucketVersioningInput{Bucket: p.sp("bucket"),
		VersioningConfiguration: &s3t.VersioningConfiguration{Status: s3t.BucketVersioningStatus(vc.s("status"))}})
	return p.s("bucket"), "", err
}

func createOwnership(c *calls, p props) (string, string, error) {
	c.op = "PutBucketOwnershipControls"
	var rules []s3t.OwnershipControlsRule
	if r, ok := p.obj("rule"); ok {
		rules = append(rules, s3t.OwnershipControlsRule{ObjectOwnership: s3t.ObjectOwnership(r.s("objectOwnership"))})
	}
	_, err := c.s3().PutBucketOwnershipControls(c.ctx, &s3.PutBucketOwnershipControlsInput{Bucket: p.sp("bucket"),
		OwnershipControls: &s3t.OwnershipControls{Rules: rules}})
	return p.s("bucket"), "", err
}

func createSSE(c *calls, p props) (string, string, error) {
	c.op = "PutBucketEncryption"
	var rules []s3t.ServerSideEncryptionRule
	for _, r := range p.objs("rules") {
		rule := s3t.ServerSideEncryptionRule{BucketKeyEnabled: r.bp("bucketKeyEnabled")}
		if d, ok := r.obj("applyServerSideEncryptionByDefault"); ok {
			rule.ApplyServerSideEncryptionByDefault = &s3t.ServerSideEncryptionByDefault{SSEAlgorithm: s3t.ServerSideEncryption(d.s("sseAlgorithm")),
				KMSMasterKeyID: d.sp("kmsMasterKeyId")}
		}
		rules = append(rules, rule)
	}
	_, err := c.s3().PutBucketEncryption(c.ctx, &s3.PutBucketEncryptionInput{Bucket: p.sp("bucket"),
		ServerSideEncryptionConfiguration: &s3t.ServerSideEncryptionConfiguration{Rules: rules}})
	return p.s("bucket"), "", err
}
