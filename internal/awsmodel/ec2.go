package awsmodel

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

const (
	tVpc        = "aws:ec2/vpc:Vpc"
	tSubnet     = "aws:ec2/subnet:Subnet"
	tIGW        = "aws:ec2/internetGateway:InternetGateway"
	tEIP        = "aws:ec2/eip:Eip"
	tNAT        = "aws:ec2/natGateway:NatGateway"
	tRouteTable = "aws:ec2/routeTable:RouteTable"
	tRoute      = "aws:ec2/route:Route"
	tRTA        = "aws:ec2/routeTableAssociation:RouteTableAssociation"
	tEndpoint   = "aws:ec2/vpcEndpoint:VpcEndpoint"
	tSG         = "aws:ec2/securityGroup:SecurityGroup"
	tIngress    = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
	tEgress     = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
)

var (
	refVpc    = Reference{Property: "vpcId", Target: tVpc, Code: "InvalidVpcID.NotFound", Message: "The vpc ID '%s' does not exist"}
	refSubnet = func(prop string) Reference {
		return Reference{Property: prop, Target: tSubnet, Code: "InvalidSubnetID.NotFound", Message: "The subnet ID '%s' does not exist"}
	}
	refSG = func(prop string) Reference {
		return Reference{Property: prop, Target: tSG, Code: "InvalidGroup.NotFound", Message: "The security group '%s' does not exist"}
	}
	refRouteTable = Reference{Property: "routeTableId", Target: tRouteTable, Code: "InvalidRouteTableID.NotFound", Message: "The routeTable ID '%s' does not exist"}
)

// ec2ARN is arn:aws:ec2:<region>:<account>:<kind>/<id>.
func (c *calc) ec2ARN(kind, id string) string { return c.env.regional("ec2", kind+"/"+id) }

// defaultVpcID is the id of the region's default VPC.
func defaultVpcID(env Env) string {
	return newRand([]byte("default-vpc:" + env.Account + env.Region)).ResourceID("vpc")
}

// DefaultResource is one resource AWS creates in an account, not a stack.
type DefaultResource struct {
	Type, ID string
	Outputs  resource.PropertyMap
}

// DefaultNetwork is what every region of an account holds before anyone
// creates anything (Amazon VPC User Guide, "Default VPCs": a default VPC
// with a /16 IPv4 block, 172.31.0.0/16 (EC2 API Reference,
// CreateDefaultVpc), and an internet gateway attached to it; "Default
// security groups for your VPCs": every VPC has a security group named
// default): the default VPC, its internet gateway and its default
// security group, with the ids the model gives them everywhere
// (defaultVpcID). They count toward VPCs, internet gateways and security
// groups per Region like any other. The default subnets, main route
// table and network ACL are left out: no quota the fleet consumes counts
// them.
func DefaultNetwork(env Env) []DefaultResource {
	env = env.normalized()
	vpc := defaultVpcID(env)
	r := newRand([]byte("default-vpc:" + env.Account + env.Region))
	igw, sg := r.ResourceID("igw"), r.ResourceID("sg")
	tags := map[string]any{}
	return []DefaultResource{
		{Type: tVpc, ID: vpc, Outputs: resource.NewPropertyMapFromMap(map[string]any{
			"cidrBlock": "172.31.0.0/16", "isDefault": true, "instanceTenancy": "default", "ownerId": env.Account,
			"arn": env.regional("ec2", "vpc/"+vpc), "tags": tags, "tagsAll": tags})},
		{Type: tIGW, ID: igw, Outputs: resource.NewPropertyMapFromMap(map[string]any{
			"vpcId": vpc, "ownerId": env.Account, "arn": env.regional("ec2", "internet-gateway/"+igw), "tags": tags, "tagsAll": tags})},
		{Type: tSG, ID: sg, Outputs: resource.NewPropertyMapFromMap(map[string]any{
			"name": "default", "description": "default VPC security group", "vpcId": vpc, "ownerId": env.Account,
			"arn": env.regional("ec2", "security-group/"+sg), "ingress": []any{}, "egress": []any{}, "tags": tags, "tagsAll": tags})},
	}
}

// PublicIPFor derives the public IPv4 address behind an Elastic IP
// allocation id, so an EIP and the NAT gateway using it agree.
func PublicIPFor(allocationID string) string {
	r := newRand([]byte("eip:" + allocationID))
	firsts := []byte{3, 18, 34, 44, 52, 54, 100}
	b := r.stream("ip", 4)
	return fmtIP([]byte{firsts[int(b[0])%len(firsts)], b[1], b[2], 1 + b[3]%253})
}

func publicDNS(ip, region string) string {
	host := "ec2-" + strings.ReplaceAll(ip, ".", "-")
	if region == "us-east-1" {
		return host + ".compute-1.amazonaws.com"
	}
	return host + "." + region + ".compute.amazonaws.com"
}

// hostIn picks a host address in cidr, skipping the five AWS reserves.
func hostIn(cidr string, r Rand, label string) string {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() {
		return fmtIP([]byte{10, byte(r.Intn(label+"b", 256)), byte(r.Intn(label+"c", 256)), byte(4 + r.Intn(label+"d", 250))})
	}
	size := 1 << (32 - p.Bits())
	if size < 8 {
		return p.Addr().String()
	}
	off := 4 + r.Intn(label, size-5)
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n += uint32(off)
	return fmtIP([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

func init() {
	ec2Ops := func(verb string) [4]string {
		return ops("Create"+verb, "Modify"+verb+"Attribute", "Delete"+verb, "Describe"+verb+"s")
	}

	register(&typeSpec{
		token:   tVpc,
		api:     apiInfo{"EC2", "EC2 VPC", ec2Ops("Vpc")},
		replace: []string{"cidrBlock", "ipv4IpamPoolId", "ipv4NetmaskLength"},
		outDefaults: map[string]any{
			"enableDnsSupport": true, "enableDnsHostnames": false, "instanceTenancy": "default",
			"enableNetworkAddressUsageMetrics": false, "assignGeneratedIpv6CidrBlock": false,
			"ipv6AssociationId": "", "ipv6CidrBlock": "", "ipv6CidrBlockNetworkBorderGroup": "",
		},
		compute: func(c *calc) error {
			c.id = c.r.ResourceID("vpc")
			c.set("arn", c.ec2ARN("vpc", c.id))
			c.set("ownerId", c.env.Account)
			c.set("defaultSecurityGroupId", c.r.ResourceID("sg"))
			rtb := c.r.ResourceID("rtb")
			c.set("mainRouteTableId", rtb)
			c.set("defaultRouteTableId", rtb)
			c.set("defaultNetworkAclId", c.r.ResourceID("acl"))
			c.set("dhcpOptionsId", newRand([]byte("dopt:"+c.env.Account+c.env.Region)).ResourceID("dopt"))
			return nil
		},
		validate: func(v *validator) {
			if !v.has("cidrBlock") && !v.has("ipv4IpamPoolId") {
				v.fail("cidrBlock", "one of `cidrBlock,ipv4IpamPoolId` must be specified")
			}
			v.cidr("cidrBlock", 16, 28)
			v.enum("instanceTenancy", "default", "dedicated")
		},
	})

	register(&typeSpec{
		token:    tSubnet,
		api:      apiInfo{"EC2", "EC2 Subnet", ec2Ops("Subnet")},
		required: []string{"vpcId"},
		replace:  []string{"vpcId", "cidrBlock", "availabilityZone", "availabilityZoneId", "outpostArn", "ipv6Native"},
		refs:     []Reference{refVpc},
		outDefaults: map[string]any{
			"mapPublicIpOnLaunch": false, "assignIpv6AddressOnCreation": false, "enableDns64": false,
			"enableResourceNameDnsARecordOnLaunch": false, "enableResourceNameDnsAaaaRecordOnLaunch": false,
			"ipv6Native": false, "privateDnsHostnameTypeOnLaunch": "ip-name", "mapCustomerOwnedIpOnLaunch": false,
			"enableLniAtDeviceIndex": 0, "ipv6CidrBlock": "", "ipv6CidrBlockAssociationId": "",
			"customerOwnedIpv4Pool": "", "outpostArn": "",
		},
		compute: func(c *calc) error {
			zones := Zones(c.env.Region)
			az, azID := c.s("availabilityZone"), c.s("availabilityZoneId")
			var names []string
			for _, z := range zones {
				names = append(names, z.Name)
				if az == "" && azID != "" && z.ID == azID {
					az = z.Name
				}
			}
			switch {
			case az == "" && azID != "":
				return c.apiErr(OpCreate, "InvalidParameterValue", "Value (%s) for parameter availabilityZoneId is invalid. Subnets can currently only be created in the following availability zones: %s.", azID, strings.Join(names, ", "))
			case az == "":
				az = zones[c.r.Intn("az", len(zones))].Name
			case !slices.Contains(names, az):
				return c.apiErr(OpCreate, "InvalidParameterValue", "Value (%s) for parameter availabilityZone is invalid. Subnets can currently only be created in the following availability zones: %s.", az, strings.Join(names, ", "))
			}
			id, _ := ZoneID(az)
			c.set("availabilityZone", az)
			c.set("availabilityZoneId", id)
			c.id = c.r.ResourceID("subnet")
			c.set("arn", c.ec2ARN("subnet", c.id))
			c.set("ownerId", c.env.Account)
			return nil
		},
		validate: func(v *validator) {
			if ipv6, _ := boolean(v.in, "ipv6Native"); !ipv6 && !v.has("cidrBlock") {
				v.fail("cidrBlock", "cidrBlock is required unless ipv6Native is true")
			}
			v.cidr("cidrBlock", 16, 28)
		},
	})

	register(&typeSpec{
		token: tIGW,
		api:   apiInfo{"EC2", "EC2 Internet Gateway", ec2Ops("InternetGateway")},
		refs:  []Reference{refVpc},
		compute: func(c *calc) error {
			c.id = c.r.ResourceID("igw")
			c.set("arn", c.ec2ARN("internet-gateway", c.id))
			c.set("ownerId", c.env.Account)
			return nil
		},
	})

	register(&typeSpec{
		token:   tEIP,
		api:     apiInfo{"EC2", "EC2 EIP", ops("AllocateAddress", "AssociateAddress", "ReleaseAddress", "DescribeAddresses")},
		replace: []string{"address", "customerOwnedIpv4Pool", "domain", "networkBorderGroup", "publicIpv4Pool", "vpc", "ipamPoolId"},
		outDefaults: map[string]any{
			"domain": "vpc", "vpc": true, "publicIpv4Pool": "amazon", "associationId": "", "carrierIp": "",
			"customerOwnedIp": "", "customerOwnedIpv4Pool": "", "instance": "", "networkInterface": "",
			"privateDns": "", "privateIp": "", "ptrRecord": "", "ipamPoolId": "",
		},
		compute: func(c *calc) error {
			c.id = "eipalloc-0" + c.r.Hex("id:eipalloc", 16)
			c.set("allocationId", c.id)
			c.set("arn", c.ec2ARN("elastic-ip", c.id))
			ip := PublicIPFor(c.id)
			c.set("publicIp", ip)
			c.set("publicDns", publicDNS(ip, c.env.Region))
			c.set("networkBorderGroup", c.env.Region)
			return nil
		},
		validate: func(v *validator) { v.enum("domain", "vpc", "standard") },
	})

	register(&typeSpec{
		token:    tNAT,
		api:      apiInfo{"EC2", "EC2 NAT Gateway", ops("CreateNatGateway", "AssociateNatGatewayAddress", "DeleteNatGateway", "DescribeNatGateways")},
		required: []string{"subnetId"},
		replace:  []string{"allocationId", "connectivityType", "privateIp", "subnetId"},
		refs: []Reference{refSubnet("subnetId"),
			{Property: "allocationId", Target: tEIP, Code: "InvalidAllocationID.NotFound", Message: "The allocation ID '%s' does not exist"}},
		outDefaults: map[string]any{
			"connectivityType": "public", "secondaryAllocationIds": []string{}, "secondaryPrivateIpAddressCount": 0,
			"secondaryPrivateIpAddresses": []string{},
		},
		compute: func(c *calc) error {
			public := c.s("connectivityType") != "private"
			if public && c.s("allocationId") == "" {
				return c.apiErr(OpCreate, "MissingParameter", "The request must include the AllocationId parameter. Add the required parameter and retry the request.")
			}
			c.id = c.r.ResourceID("nat")
			if public {
				c.set("publicIp", PublicIPFor(c.s("allocationId")))
				c.set("associationId", c.r.ResourceID("eipassoc"))
			} else {
				c.set("publicIp", "")
				c.set("associationId", "")
			}
			if c.s("privateIp") == "" {
				cidr := ""
				if _, sn, ok := c.lookup(c.s("subnetId")); ok {
					cidr = str(sn, "cidrBlock")
				}
				c.set("privateIp", hostIn(cidr, c.r, "private-ip"))
			}
			c.set("networkInterfaceId", c.r.ResourceID("eni"))
			return nil
		},
		validate: func(v *validator) { v.enum("connectivityType", "public", "private") },
	})

	register(&typeSpec{
		token:       tRouteTable,
		api:         apiInfo{"EC2", "Route Table", ec2Ops("RouteTable")},
		required:    []string{"vpcId"},
		replace:     []string{"vpcId"},
		refs:        []Reference{refVpc, {Property: "routes.natGatewayId", Target: tNAT, Code: "InvalidNatGatewayID.NotFound", Message: "The natGateway ID '%s' does not exist"}},
		outDefaults: map[string]any{"routes": []string{}, "propagatingVgws": []string{}},
		compute: func(c *calc) error {
			c.id = c.r.ResourceID("rtb")
			c.set("arn", c.ec2ARN("route-table", c.id))
			c.set("ownerId", c.env.Account)
			return nil
		},
		validate: func(v *validator) {
			for i, rt := range objects(v.in, "routes") {
				if known(rt, "cidrBlock") {
					if reason := checkCIDR(str(rt, "cidrBlock"), 0, 32); reason != "" {
						v.fail(fmt.Sprintf("routes[%d].cidrBlock", i), "%s", reason)
					}
				}
			}
		},
	})

	register(&typeSpec{
		token:    tRoute,
		api:      apiInfo{"EC2", "Route", ops("CreateRoute", "ReplaceRoute", "DeleteRoute", "DescribeRouteTables")},
		required: []string{"routeTableId"},
		replace:  []string{"routeTableId", "destinationCidrBlock", "destinationIpv6CidrBlock", "destinationPrefixListId"},
		refs: []Reference{refRouteTable,
			{Property: "natGatewayId", Target: tNAT, Code: "InvalidNatGatewayID.NotFound", Message: "The natGateway ID '%s' does not exist"},
			{Property: "gatewayId", Target: tIGW, Code: "InvalidGatewayID.NotFound", Message: "The gateway ID '%s' does not exist",
				Skip: func(v string) bool { return !strings.HasPrefix(v, "igw-") }}},
		unique: []uniqueRule{{
			key: func(_ Env, out resourceMap) (string, string) {
				dest := str(out, "destinationCidrBlock") + str(out, "destinationIpv6CidrBlock") + str(out, "destinationPrefixListId")
				return str(out, "routeTableId"), dest
			},
			code: "RouteAlreadyExists", message: "The route identified by %s already exists.",
		}},
		outDefaults: map[string]any{"origin": "CreateRoute", "state": "active", "instanceId": "", "instanceOwnerId": ""},
		compute: func(c *calc) error {
			dest := c.s("destinationCidrBlock") + c.s("destinationIpv6CidrBlock") + c.s("destinationPrefixListId")
			c.id = fmt.Sprintf("r-%s%d", c.s("routeTableId"), hashcode(dest))
			return nil
		},
		validate: func(v *validator) { v.cidr("destinationCidrBlock", 0, 32) },
	})

	register(&typeSpec{
		token:    tRTA,
		api:      apiInfo{"EC2", "Route Table Association", ops("AssociateRouteTable", "ReplaceRouteTableAssociation", "DisassociateRouteTable", "DescribeRouteTables")},
		required: []string{"routeTableId"},
		replace:  []string{"subnetId", "gatewayId"},
		refs:     []Reference{refRouteTable, refSubnet("subnetId")},
		unique: []uniqueRule{{
			key: func(_ Env, out resourceMap) (string, string) {
				return "association", str(out, "subnetId") + str(out, "gatewayId")
			},
			code: "Resource.AlreadyAssociated", message: "the specified association for route table with %s conflicts with an existing association",
		}},
		compute: func(c *calc) error {
			c.id = c.r.ResourceID("rtbassoc")
			return nil
		},
		validate: func(v *validator) {
			if v.has("subnetId") == v.has("gatewayId") {
				v.fail("subnetId", "exactly one of `gatewayId,subnetId` must be specified")
			}
		},
	})

	register(&typeSpec{
		token:    tEndpoint,
		api:      apiInfo{"EC2", "EC2 VPC Endpoint", ops("CreateVpcEndpoint", "ModifyVpcEndpoint", "DeleteVpcEndpoints", "DescribeVpcEndpoints")},
		required: []string{"vpcId"},
		replace:  []string{"vpcId", "serviceName", "vpcEndpointType", "serviceRegion", "resourceConfigurationArn", "serviceNetworkArn"},
		refs:     []Reference{refVpc, refSubnet("subnetIds"), refSG("securityGroupIds"), {Property: "routeTableIds", Target: tRouteTable, Code: "InvalidRouteTableId.NotFound", Message: "The routeTable ID '%s' does not exist"}},
		outDefaults: map[string]any{
			"vpcEndpointType": "Gateway", "state": "available", "requesterManaged": false, "dnsEntries": []string{},
			"networkInterfaceIds": []string{}, "privateDnsEnabled": false, "routeTableIds": []string{},
			"securityGroupIds": []string{}, "subnetIds": []string{}, "subnetConfigurations": []string{},
			"policy": `{"Statement":[{"Action":"*","Effect":"Allow","Principal":"*","Resource":"*"}],"Version":"2008-10-17"}`,
		},
		compute: func(c *calc) error {
			svc := c.s("serviceName")
			region := c.s("serviceRegion")
			if region == "" {
				region = c.env.Region
			}
			typ := c.s("vpcEndpointType")
			if typ == "" {
				typ = "Gateway"
			}
			short := ""
			if p := strings.Split(svc, "."); len(p) >= 4 && p[0] == "com" && p[1] == "amazonaws" {
				if p[2] != region {
					return c.apiErr(OpCreate, "InvalidServiceName", "The Vpc Endpoint Service '%s' does not exist", svc)
				}
				short = strings.Join(p[3:], ".")
			}
			c.id = c.r.ResourceID("vpce")
			c.set("arn", c.ec2ARN("vpc-endpoint", c.id))
			c.set("ownerId", c.env.Account)
			c.set("serviceRegion", region)
			ri := regionOf(region)
			switch {
			case typ == "Gateway" && short == "s3":
				c.set("prefixListId", ri.s3PrefixList)
				c.set("cidrBlocks", s3Ranges(region))
				c.set("ipAddressType", "")
			case typ == "Gateway" && short == "dynamodb":
				c.set("prefixListId", ri.dynamoPrefixList)
				c.set("cidrBlocks", []string{"3.218.180.0/22", "52.94.0.0/22", "52.119.224.0/20"})
				c.set("ipAddressType", "")
			case typ == "Gateway":
				return c.apiErr(OpCreate, "InvalidParameter", "Endpoint type (Gateway) does not match available service types ([Interface]).")
			default:
				c.set("prefixListId", "")
				c.set("cidrBlocks", []string{})
				c.def("ipAddressType", "ipv4")
			}
			return nil
		},
		validate: func(v *validator) {
			v.enum("vpcEndpointType", "Gateway", "GatewayLoadBalancer", "Interface", "Resource", "ServiceNetwork")
			v.jsonDoc("policy")
			if !v.has("serviceName") && !v.has("resourceConfigurationArn") && !v.has("serviceNetworkArn") {
				v.fail("serviceName", "one of `resourceConfigurationArn,serviceName,serviceNetworkArn` must be specified")
			}
		},
	})

	reSGName := regexp_(`^[\x20-\x7E]+$`)
	register(&typeSpec{
		token:    tSG,
		api:      apiInfo{"EC2", "Security Group", ops("CreateSecurityGroup", "ModifySecurityGroupRules", "DeleteSecurityGroup", "DescribeSecurityGroups")},
		name:     &autoName{prop: "name", maxLen: 255, unique: true},
		defaults: map[string]any{"description": "Managed by Pulumi"},
		replace:  []string{"name", "namePrefix", "description", "vpcId"},
		refs:     []Reference{refVpc},
		unique: []uniqueRule{{
			key: func(env Env, out resourceMap) (string, string) {
				vpc := str(out, "vpcId")
				if vpc == "" {
					vpc = defaultVpcID(env)
				}
				return vpc, str(out, "name")
			},
			code: "InvalidGroup.Duplicate", message: "The security group '%s' already exists for VPC '%s'",
		}},
		outDefaults: map[string]any{"ingress": []string{}, "egress": []string{}, "namePrefix": "", "revokeRulesOnDelete": false},
		compute: func(c *calc) error {
			c.id = c.r.ResourceID("sg")
			c.set("arn", c.ec2ARN("security-group", c.id))
			c.set("ownerId", c.env.Account)
			c.def("vpcId", defaultVpcID(c.env))
			return nil
		},
		validate: func(v *validator) {
			v.name("name", 255, reSGName, "printable ASCII")
			if strings.HasPrefix(v.s("name"), "sg-") {
				v.fail("name", "name cannot start with sg-")
			}
			v.name("description", 255, reSGName, "printable ASCII")
			for _, dir := range []string{"ingress", "egress"} {
				for i, r := range objects(v.in, dir) {
					for j, cidr := range strings_(r, "cidrBlocks") {
						if reason := checkCIDR(cidr, 0, 32); reason != "" {
							v.fail(fmt.Sprintf("%s[%d].cidrBlocks[%d]", dir, i, j), "%s", reason)
						}
					}
				}
			}
		},
	})

	for _, rule := range []struct{ tok, noun, dir, verb string }{
		{tIngress, "VPC Security Group Ingress Rule", "ingress", "Ingress"},
		{tEgress, "VPC Security Group Egress Rule", "egress", "Egress"},
	} {
		dir := rule.dir
		register(&typeSpec{
			token:    rule.tok,
			api:      apiInfo{"EC2", rule.noun, ops("AuthorizeSecurityGroup"+rule.verb, "ModifySecurityGroupRules", "RevokeSecurityGroup"+rule.verb, "DescribeSecurityGroupRules")},
			required: []string{"ipProtocol", "securityGroupId"},
			replace:  []string{"securityGroupId"},
			refs:     []Reference{refSG("securityGroupId"), refSG("referencedSecurityGroupId")},
			unique: []uniqueRule{{
				key: func(_ Env, out resourceMap) (string, string) {
					src := str(out, "cidrIpv4") + str(out, "cidrIpv6") + str(out, "prefixListId") + str(out, "referencedSecurityGroupId")
					from, _ := number(out, "fromPort")
					to, _ := number(out, "toPort")
					return str(out, "securityGroupId") + "/" + dir, fmt.Sprintf("%s %s %g-%g", normProto(str(out, "ipProtocol")), src, from, to)
				},
				code: "InvalidPermission.Duplicate", message: "the specified rule \"peer: %s\" already exists",
			}},
			compute: func(c *calc) error {
				c.id = c.r.ResourceID("sgr")
				c.set("securityGroupRuleId", c.id)
				c.set("arn", c.ec2ARN("security-group-rule", c.id))
				return nil
			},
			validate: validateSGRule,
		})
	}
}

func normProto(p string) string {
	switch strings.ToLower(p) {
	case "all", "-1":
		return "-1"
	case "6":
		return "tcp"
	case "17":
		return "udp"
	case "1":
		return "icmp"
	}
	return strings.ToLower(p)
}

func validateSGRule(v *validator) {
	srcs := 0
	for _, k := range []string{"cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId"} {
		if v.has(k) {
			srcs++
		}
	}
	if srcs != 1 {
		v.fail("cidrIpv4", "exactly one of `cidrIpv4,cidrIpv6,prefixListId,referencedSecurityGroupId` must be specified")
	}
	v.cidr("cidrIpv4", 0, 32)
	if !v.known("ipProtocol") {
		return
	}
	proto := normProto(v.s("ipProtocol"))
	switch proto {
	case "-1", "tcp", "udp", "icmp", "icmpv6":
	default:
		if n, err := strconv.Atoi(proto); err != nil || n < 0 || n > 255 {
			v.fail("ipProtocol", "invalid IP protocol %q: expected -1, tcp, udp, icmp, icmpv6 or a protocol number 0-255", v.s("ipProtocol"))
			return
		}
	}
	if proto == "tcp" || proto == "udp" {
		from, okF := number(v.in, "fromPort")
		to, okT := number(v.in, "toPort")
		if (!okF && !unknown(v.in, "fromPort")) || (!okT && !unknown(v.in, "toPort")) {
			v.fail("fromPort", "fromPort and toPort are required when ipProtocol is %s", proto)
			return
		}
		if okF && (from < 0 || from > 65535) {
			v.fail("fromPort", "expected fromPort to be in the range (0 - 65535), got %g", from)
		}
		if okT && (to < 0 || to > 65535) {
			v.fail("toPort", "expected toPort to be in the range (0 - 65535), got %g", to)
		}
		if okF && okT && from > to {
			v.fail("fromPort", "fromPort (%g) must not be greater than toPort (%g)", from, to)
		}
	}
}

// s3Ranges are the published S3 CIDRs of a region's gateway prefix list.
func s3Ranges(region string) []string {
	if region == "us-east-1" {
		return []string{"16.15.176.0/20", "16.15.192.0/18", "18.34.0.0/19", "18.34.232.0/21", "3.5.0.0/19", "52.216.0.0/15", "54.231.0.0/16"}
	}
	r := newRand([]byte("s3-ranges:" + region))
	b := r.stream("cidr", 4)
	return []string{fmt.Sprintf("52.%d.0.0/16", 200+int(b[0])%55), fmt.Sprintf("3.5.%d.0/21", int(b[1])%32*8), fmt.Sprintf("18.34.%d.0/19", int(b[2])%8*32)}
}

// hashcode is terraform's create.StringHashcode (crc32, non-negative).
func hashcode(s string) uint32 {
	var crc uint32 = 0xffffffff
	for i := 0; i < len(s); i++ {
		crc ^= uint32(s[i])
		for j := 0; j < 8; j++ {
			if crc&1 == 1 {
				crc = (crc >> 1) ^ 0xedb88320
			} else {
				crc >>= 1
			}
		}
	}
	v := ^crc
	if int32(v) < 0 {
		return uint32(-int32(v))
	}
	return v
}
