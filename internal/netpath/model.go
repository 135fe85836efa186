// Package netpath decides, statically and from the rendered stacks alone,
// which network paths of the fleet are open: every path a cell needs
// (CloudFront to its ALB, the ALB to its tasks, the tasks to their
// database, cache and the AWS APIs, the migrator to the database) must be
// open, and no path may join one cell's network to another's or expose a
// task, database or cache to the internet.
//
// A path is open when the source's security groups let it out, the
// destination's let it in, a route carries it and the network ACLs of the
// subnets it crosses pass it both ways. Security groups are stateful: the
// response to an allowed request needs no rule ("Security group rules",
// Amazon VPC User Guide). Network ACLs are not: the response needs its own
// rule ("Control subnet traffic with network access control lists", Amazon
// VPC User Guide).
//
// It reads what the programs declare (VPCs, subnets, route tables and
// routes, internet and NAT gateways, VPC endpoints, security groups and
// their rules, network ACLs, peering connections, transit gateway and VPN
// attachments, and the workloads placed in them: load balancers, ECS
// services, one-off tasks, Aurora clusters, ElastiCache replication groups)
// and the managed prefix lists the programs looked up. Nothing is sent to
// AWS.
package netpath

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/props"
)

// Stack is one rendered stack, as the network model reads it: the
// render (offline.Stack), and the one-off tasks its operators start.
type Stack struct {
	offline.Stack
	// Tasks are the one-off tasks the stack's operators start with RunTask
	// (a rollout's migrator): their network configuration is not a
	// resource, it is handed to RunTask from the stack's outputs.
	Tasks []Task
}

// Task is the awsvpc network configuration a one-off task is started with.
type Task struct {
	// Name is how paths name it, e.g. "migrator".
	Name           string
	Subnets        []string
	SecurityGroups []string
}

// CloudFrontPrefixLists are the names of the AWS-managed prefix lists of
// CloudFront's origin-facing servers ("Use the CloudFront managed prefix
// list", CloudFront Developer Guide).
var CloudFrontPrefixLists = []string{"com.amazonaws.global.cloudfront.origin-facing", "com.amazonaws.global.ipv6.cloudfront.origin-facing"}

// model is the network of the whole render.
type model struct {
	owners []string // sorted, every owner with a network or a workload
	cells  map[string]*cellNet

	vpcs      map[string]*vpc
	subnets   map[string]*subnet
	rts       map[string]*routeTable
	sgs       map[string]*sgroup
	nacls     map[string]*nacl
	igws      map[string]*gateway
	nats      map[string]*natGateway
	endpoints []*endpoint
	// prefixLists are the managed prefix lists the render knows: looked
	// up by a program, or a gateway endpoint's.
	prefixLists map[string]*prefixList
	// joins are peering connections, transit gateway and VPN attachments
	// and RAM shares: everything that connects a VPC to another network.
	joins []*join
	// endpointServices are the PrivateLink services the render offers, by
	// service name.
	endpointServices map[string]*named
	// subnetGroups are the subnets of each database and cache subnet
	// group, by "<type>/<name or id>".
	subnetGroups map[string][]string
	// publicDB names the publicly accessible instances of each cluster.
	publicDB map[string][]string
	errs     []string
}

// named is a declared resource: its logical name and owner.
type named struct {
	name  string // logical name
	owner string
}

// cellNet is what one owner declares.
type cellNet struct {
	owner     string
	stack     string
	region    string
	vpcs      []*vpc
	albs      []*place
	services  []*place
	tasks     []*place
	databases []*place
	caches    []*place
	listeners map[string][]listener // by the load balancer's ARN
}

type listener struct {
	name string
	port int
}

type vpc struct {
	named
	id         string
	cidrs      []netip.Prefix
	dnsSupport bool
	dnsNames   bool
	// mainRTID and defaultACLID are AWS's main route table and default
	// network ACL (the VPC's outputs); a main route table association
	// replaces the main table.
	mainRTID, defaultACLID string
	mainRT                 *routeTable
	defaultACL             *nacl
}

type subnet struct {
	named
	id   string
	arn  string
	vpc  *vpc
	cidr netip.Prefix
	rt   *routeTable // explicit association; nil: the VPC's main table
	acl  *nacl       // explicit association; nil: the VPC's default ACL
}

// routeTable returns the table that routes the subnet: its explicit
// association, else the VPC's main route table ("Subnet route tables",
// Amazon VPC User Guide).
func (s *subnet) routeTable() *routeTable {
	if s.rt != nil {
		return s.rt
	}
	return s.vpc.mainRT
}

// networkACL returns the ACL that filters the subnet: its explicit
// association, else the VPC's default network ACL.
func (s *subnet) networkACL() *nacl {
	if s.acl != nil {
		return s.acl
	}
	return s.vpc.defaultACL
}

type routeTable struct {
	named
	id     string
	routes []*route
}

// Route targets.
const (
	targetIGW        = "internet gateway"
	targetEgressOnly = "egress-only internet gateway"
	targetNAT        = "NAT gateway"
	targetPeering    = "VPC peering connection"
	targetTGW        = "transit gateway"
	targetVGW        = "virtual private gateway"
	targetEndpoint   = "VPC endpoint"
	targetENI        = "network interface"
	targetOther      = "other target"
	targetCoreNet    = "core network"
)

type route struct {
	// name is the route's own logical name (aws:ec2/route:Route) or its
	// table's (an inline route).
	name   string
	table  *routeTable
	dest   netip.Prefix // zero when the destination is a prefix list
	destPL string
	target string // one of the target kinds
	via    string // the target's id
}

func (r *route) String() string {
	d := r.destPL
	if r.dest.IsValid() {
		d = r.dest.String()
	}
	return fmt.Sprintf("%s: %s → %s %s", r.name, d, r.target, r.via)
}

type gateway struct {
	named
	id  string
	vpc string
}

type natGateway struct {
	named
	id     string
	subnet string
	public bool
}

type endpoint struct {
	named
	id          string
	vpc         string
	service     string
	typ         string // Gateway, Interface, GatewayLoadBalancer
	routeTables []string
	subnets     []string
	sgs         []string
	privateDNS  bool
	prefixList  string
	cidrs       []netip.Prefix // a gateway endpoint's service ranges
}

// prefixList is a managed prefix list. Its id is regional: a rule names
// the list of its own region.
type prefixList struct {
	id      string
	name    string
	region  string
	entries []netip.Prefix
}

type sgroup struct {
	named
	id      string
	vpc     string
	region  string // the stack's: a rule's prefix list is this region's
	ingress []*sgRule
	egress  []*sgRule
}

type sgRule struct {
	name     string // logical name: the rule's, or its group's for an inline rule
	sg       *sgroup
	egress   bool
	proto    string // "-1" (all), "tcp", "udp", "icmp", …
	from, to int
	cidr     netip.Prefix // zero unless the peer is a CIDR
	pl       string       // the peer's prefix list id
	ref      string       // the peer's security group id
	refName  string       // the peer group's logical name
}

func (r *sgRule) peer() string {
	switch {
	case r.cidr.IsValid():
		return r.cidr.String()
	case r.pl != "":
		return r.pl
	case r.refName != "":
		return r.refName
	default:
		return r.ref
	}
}

func (r *sgRule) String() string {
	dir, way := "ingress", "from"
	if r.egress {
		dir, way = "egress", "to"
	}
	return fmt.Sprintf("%s (%s %s %s %s %s)", r.name, r.sg.name, dir, portsText(r.proto, r.from, r.to), way, r.peer())
}

type nacl struct {
	named
	id       string
	vpc      string
	declared bool // false: a VPC's default ACL nothing declares (allows all)
	// subnetIDs are the subnets the ACL resource itself associates.
	subnetIDs []string
	ingress   []*naclRule
	egress    []*naclRule
}

type naclRule struct {
	name     string
	num      int
	allow    bool
	proto    string
	cidr     netip.Prefix
	from, to int
}

// join connects a VPC to a network outside it.
type join struct {
	named
	kind string // "VPC peering connection", "transit gateway attachment", …
	vpcs []string
	via  string // the transit gateway or VPN gateway id; the peering connection's own id
	// shared is a RAM share's resource ARN.
	shared string
}

// place is a workload: where its network interfaces live and which
// security groups they carry.
type place struct {
	named
	label   string // "ALB", "task", "database", "cache", "migrator"
	sgs     []string
	subnets []string
	port    int // the port it listens on (0: none)
	// internal (a load balancer's) has no public addresses.
	internal bool
	// publicIP: the workload's interfaces get public addresses.
	publicIP bool
	// publicIPBy names what gives it one.
	publicIPBy string
	// ids are a load balancer's id and ARN (its listeners name it).
	ids []string
	// subnetGroup is a database's or cache's subnet group: its name, and
	// the key it is indexed by ("<type>/<name>").
	subnetGroup, subnetGroupKey string
	// clusterID is a database cluster's identifier (its instances name
	// it).
	clusterID string
}

// Resource types the model reads.
const (
	tVPC              = "aws:ec2/vpc:Vpc"
	tVPCCIDR          = "aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation"
	tSubnet           = "aws:ec2/subnet:Subnet"
	tRouteTable       = "aws:ec2/routeTable:RouteTable"
	tDefaultRT        = "aws:ec2/defaultRouteTable:DefaultRouteTable"
	tRoute            = "aws:ec2/route:Route"
	tRTAssoc          = "aws:ec2/routeTableAssociation:RouteTableAssociation"
	tMainRTAssoc      = "aws:ec2/mainRouteTableAssociation:MainRouteTableAssociation"
	tIGW              = "aws:ec2/internetGateway:InternetGateway"
	tIGWAttach        = "aws:ec2/internetGatewayAttachment:InternetGatewayAttachment"
	tNAT              = "aws:ec2/natGateway:NatGateway"
	tEndpoint         = "aws:ec2/vpcEndpoint:VpcEndpoint"
	tEndpointRT       = "aws:ec2/vpcEndpointRouteTableAssociation:VpcEndpointRouteTableAssociation"
	tEndpointSubnet   = "aws:ec2/vpcEndpointSubnetAssociation:VpcEndpointSubnetAssociation"
	tEndpointSG       = "aws:ec2/vpcEndpointSecurityGroupAssociation:VpcEndpointSecurityGroupAssociation"
	tEndpointService  = "aws:ec2/vpcEndpointService:VpcEndpointService"
	tSG               = "aws:ec2/securityGroup:SecurityGroup"
	tDefaultSG        = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"
	tSGRule           = "aws:ec2/securityGroupRule:SecurityGroupRule"
	tIngress          = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
	tEgress           = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
	tNACL             = "aws:ec2/networkAcl:NetworkAcl"
	tDefaultNACL      = "aws:ec2/defaultNetworkAcl:DefaultNetworkAcl"
	tNACLRule         = "aws:ec2/networkAclRule:NetworkAclRule"
	tNACLAssoc        = "aws:ec2/networkAclAssociation:NetworkAclAssociation"
	tPeering          = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection"
	tPeeringAccepter  = "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter"
	tTGWAttach        = "aws:ec2transitgateway/vpcAttachment:VpcAttachment"
	tVPNGateway       = "aws:ec2/vpnGateway:VpnGateway"
	tVPNAttach        = "aws:ec2/vpnGatewayAttachment:VpnGatewayAttachment"
	tRAMAssoc         = "aws:ram/resourceAssociation:ResourceAssociation"
	tLB               = "aws:lb/loadBalancer:LoadBalancer"
	tALB              = "aws:alb/loadBalancer:LoadBalancer"
	tListener         = "aws:lb/listener:Listener"
	tALBListener      = "aws:alb/listener:Listener"
	tService          = "aws:ecs/service:Service"
	tDBCluster        = "aws:rds/cluster:Cluster"
	tDBInstance       = "aws:rds/clusterInstance:ClusterInstance"
	tDBSubnetGroup    = "aws:rds/subnetGroup:SubnetGroup"
	tCache            = "aws:elasticache/replicationGroup:ReplicationGroup"
	tCacheSubnetGroup = "aws:elasticache/subnetGroup:SubnetGroup"
	invokePrefixList  = "aws:ec2/getManagedPrefixList:getManagedPrefixList"
)

// res is one resource's plain inputs and outputs.
type res struct {
	s       Stack
	r       *offline.Resource
	in, out map[string]any
}

func (x res) id() string { return firstNonEmpty(x.r.ID, str(x.out, "id")) }

// build reads the rendered stacks into the network model. A CIDR, port or
// protocol that does not parse is an error: an unreadable rule is never
// read as "allows nothing".
func build(stacks []Stack) (*model, error) {
	m := &model{cells: map[string]*cellNet{}, vpcs: map[string]*vpc{}, subnets: map[string]*subnet{}, rts: map[string]*routeTable{},
		sgs: map[string]*sgroup{}, nacls: map[string]*nacl{}, igws: map[string]*gateway{}, nats: map[string]*natGateway{},
		prefixLists: map[string]*prefixList{}, endpointServices: map[string]*named{}, subnetGroups: map[string][]string{},
		publicDB: map[string][]string{}}
	// Two passes: the containers (VPCs, tables, groups, ACLs) first, then
	// what names them (routes, rules, associations, workloads).
	var later []res
	for _, s := range stacks {
		c := m.cell(s)
		for _, inv := range s.Invokes {
			if inv.Token == invokePrefixList && inv.Result != nil {
				m.addPrefixList(s.Region, props.Plain(inv.Result))
			}
		}
		for _, r := range s.Resources {
			if !r.Custom || !readType(r.Type) {
				continue
			}
			x := res{s: s, r: r, in: props.Plain(r.Inputs), out: map[string]any{}}
			if readsOutputs[r.Type] {
				x.out = props.Plain(r.Outputs)
			}
			if !m.container(c, x) {
				later = append(later, x)
			}
		}
	}
	for _, x := range later {
		m.member(m.cells[x.s.Owner], x)
	}
	// A VPC without a declared main route table or default ACL has AWS's:
	// the main table holds only the local route; the default ACL allows
	// all traffic both ways ("Default network ACL", Amazon VPC User Guide).
	for _, v := range m.vpcs {
		v.mainRT, v.defaultACL = m.rts[v.mainRTID], m.nacls[v.defaultACLID]
		if v.mainRT == nil {
			v.mainRT = &routeTable{named: named{name: v.name + " (main route table)", owner: v.owner}}
		}
		if v.defaultACL == nil {
			v.defaultACL = &nacl{named: named{name: v.name + " (default network ACL)", owner: v.owner}, vpc: v.id}
		}
	}
	for _, c := range m.cells {
		if len(c.vpcs)+len(c.albs)+len(c.services)+len(c.tasks)+len(c.databases)+len(c.caches) > 0 {
			m.owners = append(m.owners, c.owner)
		}
		for _, p := range append(append([]*place{}, c.databases...), c.caches...) {
			p.subnets = m.subnetGroups[p.subnetGroupKey]
			if by := m.publicDB[p.clusterID]; p.clusterID != "" && len(by) > 0 {
				p.publicIP, p.publicIPBy = true, strings.Join(by, ", ")+" (publiclyAccessible)"
			}
		}
	}
	sort.Strings(m.owners)
	for _, sg := range m.sgs {
		sortRules(sg.ingress)
		sortRules(sg.egress)
		for _, r := range append(append([]*sgRule{}, sg.ingress...), sg.egress...) {
			if p := m.sgs[r.ref]; p != nil {
				r.refName = p.name
			}
		}
	}
	for _, a := range m.nacls {
		sortACL(a.ingress)
		sortACL(a.egress)
		for _, id := range a.subnetIDs {
			if sn := m.subnets[id]; sn != nil && sn.acl == nil {
				sn.acl = a
			}
		}
	}
	if len(m.errs) > 0 {
		sort.Strings(m.errs)
		return nil, fmt.Errorf("reading the rendered network:\n  %s", strings.Join(m.errs, "\n  "))
	}
	return m, nil
}

func sortRules(rs []*sgRule) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].name < rs[j].name })
}

func sortACL(rs []*naclRule) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].num < rs[j].num })
}

func (m *model) cell(s Stack) *cellNet {
	c := m.cells[s.Owner]
	if c == nil {
		c = &cellNet{owner: s.Owner, stack: s.Name, region: s.Region, listeners: map[string][]listener{}}
		m.cells[s.Owner] = c
		for _, t := range s.Tasks {
			c.tasks = append(c.tasks, &place{named: named{name: t.Name, owner: s.Owner}, label: t.Name,
				sgs: t.SecurityGroups, subnets: t.Subnets})
		}
	}
	return c
}

var readTypes = map[string]bool{}

func init() {
	for _, t := range []string{tVPC, tVPCCIDR, tSubnet, tRouteTable, tDefaultRT, tRoute, tRTAssoc, tMainRTAssoc, tIGW, tIGWAttach, tNAT,
		tEndpoint, tEndpointRT, tEndpointSubnet, tEndpointSG, tEndpointService, tSG, tDefaultSG, tSGRule, tIngress, tEgress, tNACL,
		tDefaultNACL, tNACLRule, tNACLAssoc, tPeering, tPeeringAccepter, tTGWAttach, tVPNGateway, tVPNAttach, tRAMAssoc, tLB, tALB,
		tListener, tALBListener, tService, tDBCluster, tDBInstance, tDBSubnetGroup, tCache, tCacheSubnetGroup} {
		readTypes[t] = true
	}
}

func readType(t string) bool { return readTypes[t] }

// readsOutputs are the types whose outputs the model reads (ids AWS
// assigns, ARNs, a gateway endpoint's prefix list): the others' outputs
// are not converted.
var readsOutputs = map[string]bool{tVPC: true, tSubnet: true, tEndpoint: true, tEndpointService: true, tPeeringAccepter: true,
	tLB: true, tALB: true, tDBSubnetGroup: true, tCacheSubnetGroup: true}

func (m *model) fail(x res, what string, err error) {
	m.errs = append(m.errs, fmt.Sprintf("%s: %s %s: %s: %v", x.s.Name, x.r.Type, x.r.Name, what, err))
}

func (m *model) addPrefixList(region string, out map[string]any) {
	pl := &prefixList{id: str(out, "id"), name: str(out, "name"), region: region}
	if pl.id == "" {
		return
	}
	for _, e := range list(out, "entries") {
		if em, ok := e.(map[string]any); ok {
			if p, err := netip.ParsePrefix(str(em, "cidr")); err == nil {
				pl.entries = append(pl.entries, p.Masked())
			}
		}
	}
	m.prefixLists[pl.id] = pl
}

// container reads the resources others name; it reports whether x was
// one.
func (m *model) container(c *cellNet, x res) bool {
	nm := named{name: x.r.Name, owner: x.s.Owner}
	switch x.r.Type {
	case tVPC:
		v := &vpc{named: nm, id: x.id(), dnsSupport: boolOr(x.in, "enableDnsSupport", true), dnsNames: boolOr(x.in, "enableDnsHostnames", false)}
		if p, ok := m.prefix(x, "cidrBlock", str(x.in, "cidrBlock")); ok {
			v.cidrs = append(v.cidrs, p)
		}
		m.vpcs[v.id] = v
		c.vpcs = append(c.vpcs, v)
		// AWS's main route table, default ACL and default security group
		// exist from the start; routes and rules the programs add to them
		// name their ids, and a program that adopts one (DefaultRouteTable,
		// DefaultNetworkAcl, DefaultSecurityGroup) declares it instead.
		v.mainRTID, v.defaultACLID = firstNonEmpty(str(x.out, "mainRouteTableId"), str(x.out, "defaultRouteTableId")), str(x.out, "defaultNetworkAclId")
		if id := v.mainRTID; id != "" && m.rts[id] == nil {
			m.rts[id] = &routeTable{named: named{name: x.r.Name + " (main route table)", owner: x.s.Owner}, id: id}
		}
		if id := v.defaultACLID; id != "" && m.nacls[id] == nil {
			m.nacls[id] = &nacl{named: named{name: x.r.Name + " (default network ACL)", owner: x.s.Owner}, id: id, vpc: v.id}
		}
		if id := str(x.out, "defaultSecurityGroupId"); id != "" && m.sgs[id] == nil {
			m.sgs[id] = defaultSG(nm, id, v.id, x.s.Region)
		}
	case tRouteTable:
		rt := &routeTable{named: nm, id: x.id()}
		m.rts[rt.id] = rt
		m.inlineRoutes(x, rt)
	case tDefaultRT:
		// The VPC's main table, adopted: its routes are the declared ones
		// (the provider removes the others).
		id := str(x.in, "defaultRouteTableId")
		rt := &routeTable{named: nm, id: id}
		m.rts[id] = rt
		m.inlineRoutes(x, rt)
	case tSG:
		// A group the provider creates has the rules declared and no
		// other: it removes the allow-all egress rule AWS adds to a new
		// group ("aws.ec2.SecurityGroup", Pulumi AWS registry).
		sg := &sgroup{named: nm, id: x.id(), vpc: str(x.in, "vpcId"), region: x.s.Region}
		m.sgs[sg.id] = sg
		m.inlineSGRules(x, sg)
	case tDefaultSG:
		// Adopting the default group replaces its rules with the declared
		// ones (same registry page, aws.ec2.DefaultSecurityGroup).
		sg := &sgroup{named: nm, id: x.id(), vpc: str(x.in, "vpcId"), region: x.s.Region}
		m.sgs[sg.id] = sg
		m.inlineSGRules(x, sg)
	case tNACL:
		a := &nacl{named: nm, id: x.id(), vpc: str(x.in, "vpcId"), declared: true, subnetIDs: strs(x.in, "subnetIds")}
		m.nacls[a.id] = a
		m.inlineACLRules(x, a)
	case tDefaultNACL:
		id := str(x.in, "defaultNetworkAclId")
		a := &nacl{named: nm, id: id, declared: true, subnetIDs: strs(x.in, "subnetIds")}
		m.nacls[id] = a
		m.inlineACLRules(x, a)
	case tEndpointService:
		if svc := str(x.out, "serviceName"); svc != "" {
			m.endpointServices[svc] = &nm
		}
	default:
		return false
	}
	return true
}

// defaultSG is a VPC's default security group as AWS creates it: all
// traffic in from the group itself, all traffic out ("Default security
// groups for your VPCs", Amazon VPC User Guide).
func defaultSG(nm named, id, vpcID, region string) *sgroup {
	sg := &sgroup{named: named{name: nm.name + " (default security group)", owner: nm.owner}, id: id, vpc: vpcID, region: region}
	sg.ingress = []*sgRule{{name: sg.name, sg: sg, proto: "-1", from: 0, to: 65535, ref: id}}
	sg.egress = []*sgRule{{name: sg.name, sg: sg, egress: true, proto: "-1", from: 0, to: 65535, cidr: netip.MustParsePrefix("0.0.0.0/0")},
		{name: sg.name, sg: sg, egress: true, proto: "-1", from: 0, to: 65535, cidr: netip.MustParsePrefix("::/0")}}
	return sg
}

func (m *model) inlineRoutes(x res, rt *routeTable) {
	for _, e := range list(x.in, "routes") {
		rm, _ := e.(map[string]any)
		if rm == nil {
			continue
		}
		m.addRoute(x, rt, x.r.Name, rm, "cidrBlock", "ipv6CidrBlock", "destinationPrefixListId")
	}
}

func (m *model) addRoute(x res, rt *routeTable, name string, in map[string]any, cidrKey, v6Key, plKey string) {
	r := &route{name: name, table: rt, destPL: str(in, plKey)}
	for _, k := range []string{cidrKey, v6Key} {
		if v := str(in, k); v != "" {
			if p, ok := m.prefix(x, k, v); ok {
				r.dest = p
			}
		}
	}
	if !r.dest.IsValid() && r.destPL == "" {
		m.fail(x, "route", fmt.Errorf("a route without a destination"))
		return
	}
	for _, t := range []struct{ key, kind string }{
		{"natGatewayId", targetNAT}, {"vpcPeeringConnectionId", targetPeering}, {"transitGatewayId", targetTGW},
		{"egressOnlyGatewayId", targetEgressOnly}, {"networkInterfaceId", targetENI}, {"vpcEndpointId", targetEndpoint},
		{"coreNetworkArn", targetCoreNet}, {"carrierGatewayId", targetOther}, {"localGatewayId", targetOther}, {"instanceId", targetENI},
		{"gatewayId", ""},
	} {
		id := str(in, t.key)
		if id == "" {
			continue
		}
		r.via, r.target = id, t.kind
		if t.kind == "" {
			// gatewayId names an internet gateway, a virtual private
			// gateway or the local route's "local".
			switch {
			case strings.HasPrefix(id, "igw-"):
				r.target = targetIGW
			case strings.HasPrefix(id, "vgw-"):
				r.target = targetVGW
			case id == "local":
				r.target = "local"
			default:
				r.target = targetOther
			}
		}
		break
	}
	if r.target == "" {
		m.fail(x, "route", fmt.Errorf("a route to %s without a target", r))
		return
	}
	rt.routes = append(rt.routes, r)
}

func (m *model) inlineSGRules(x res, sg *sgroup) {
	for _, dir := range []string{"ingress", "egress"} {
		for _, e := range list(x.in, dir) {
			rm, _ := e.(map[string]any)
			if rm == nil {
				continue
			}
			base := sgRule{name: x.r.Name, sg: sg, egress: dir == "egress"}
			m.expandSGRule(x, base, rm, "protocol", "securityGroups", rm["self"] == true)
		}
	}
}

// expandSGRule adds one rule per peer of a rule that names several (the
// ec2 forms take lists of CIDRs, prefix lists and groups).
func (m *model) expandSGRule(x res, base sgRule, in map[string]any, protoKey, groupsKey string, self bool) {
	proto, from, to, err := ports(in, protoKey)
	if err != nil {
		m.fail(x, "ports", err)
		return
	}
	base.proto, base.from, base.to = proto, from, to
	add := func(r sgRule) {
		rr := r
		if rr.egress {
			rr.sg.egress = append(rr.sg.egress, &rr)
		} else {
			rr.sg.ingress = append(rr.sg.ingress, &rr)
		}
	}
	for _, k := range []string{"cidrBlocks", "ipv6CidrBlocks"} {
		for _, c := range strs(in, k) {
			if p, ok := m.prefix(x, k, c); ok {
				r := base
				r.cidr = p
				add(r)
			}
		}
	}
	for _, pl := range strs(in, "prefixListIds") {
		r := base
		r.pl = pl
		add(r)
	}
	groups := strs(in, groupsKey)
	if g := str(in, "sourceSecurityGroupId"); g != "" {
		groups = append(groups, g)
	}
	if self {
		groups = append(groups, base.sg.id)
	}
	for _, g := range groups {
		r := base
		r.ref = groupID(g)
		add(r)
	}
}

func (m *model) inlineACLRules(x res, a *nacl) {
	for _, dir := range []string{"ingress", "egress"} {
		for _, e := range list(x.in, dir) {
			rm, _ := e.(map[string]any)
			if rm == nil {
				continue
			}
			r := m.aclRule(x, x.r.Name, rm, "ruleNo", "action")
			if r == nil {
				continue
			}
			if dir == "egress" {
				a.egress = append(a.egress, r)
			} else {
				a.ingress = append(a.ingress, r)
			}
		}
	}
}

func (m *model) aclRule(x res, name string, in map[string]any, numKey, actionKey string) *naclRule {
	proto, from, to, err := ports(in, "protocol")
	if err != nil {
		m.fail(x, "ports", err)
		return nil
	}
	r := &naclRule{name: name, num: num(in, numKey), proto: proto, from: from, to: to}
	switch strings.ToLower(str(in, actionKey)) {
	case "allow":
		r.allow = true
	case "deny":
	default:
		m.fail(x, actionKey, fmt.Errorf("unknown network ACL action %q", str(in, actionKey)))
		return nil
	}
	c := firstNonEmpty(str(in, "cidrBlock"), str(in, "ipv6CidrBlock"))
	p, ok := m.prefix(x, "cidrBlock", c)
	if !ok {
		return nil
	}
	r.cidr = p
	return r
}

// member reads the resources that name a container.
func (m *model) member(c *cellNet, x res) {
	nm := named{name: x.r.Name, owner: x.s.Owner}
	switch x.r.Type {
	case tVPCCIDR:
		if v := m.vpcs[str(x.in, "vpcId")]; v != nil {
			if p, ok := m.prefix(x, "cidrBlock", str(x.in, "cidrBlock")); ok {
				v.cidrs = append(v.cidrs, p)
			}
		}
	case tSubnet:
		v := m.vpcs[str(x.in, "vpcId")]
		if v == nil {
			m.fail(x, "vpcId", fmt.Errorf("no VPC %q in the render", str(x.in, "vpcId")))
			return
		}
		sn := &subnet{named: nm, id: x.id(), arn: str(x.out, "arn"), vpc: v}
		if p, ok := m.prefix(x, "cidrBlock", firstNonEmpty(str(x.in, "cidrBlock"), str(x.in, "ipv6CidrBlock"))); ok {
			sn.cidr = p
		}
		m.subnets[sn.id] = sn
	case tRoute:
		rt := m.rts[str(x.in, "routeTableId")]
		if rt == nil {
			m.fail(x, "routeTableId", fmt.Errorf("no route table %q in the render", str(x.in, "routeTableId")))
			return
		}
		m.addRoute(x, rt, x.r.Name, x.in, "destinationCidrBlock", "destinationIpv6CidrBlock", "destinationPrefixListId")
	case tIGW:
		m.igws[x.id()] = &gateway{named: nm, id: x.id(), vpc: str(x.in, "vpcId")}
	case tIGWAttach:
		if g := m.igws[str(x.in, "internetGatewayId")]; g != nil {
			g.vpc = str(x.in, "vpcId")
		}
	case tNAT:
		ct := firstNonEmpty(str(x.in, "connectivityType"), "public")
		m.nats[x.id()] = &natGateway{named: nm, id: x.id(), subnet: str(x.in, "subnetId"), public: ct == "public"}
	case tEndpoint:
		e := &endpoint{named: nm, id: x.id(), vpc: str(x.in, "vpcId"), service: str(x.in, "serviceName"),
			typ: firstNonEmpty(str(x.in, "vpcEndpointType"), "Gateway"), routeTables: strs(x.in, "routeTableIds"),
			subnets: strs(x.in, "subnetIds"), sgs: strs(x.in, "securityGroupIds"), prefixList: str(x.out, "prefixListId")}
		// The provider creates an interface endpoint without private DNS
		// unless asked (privateDnsEnabled defaults to false, "aws.ec2.VpcEndpoint",
		// Pulumi AWS registry): without it the service's default name
		// still resolves to its public addresses.
		e.privateDNS = boolOr(x.in, "privateDnsEnabled", false)
		for _, cb := range strs(x.out, "cidrBlocks") {
			if p, err := netip.ParsePrefix(cb); err == nil {
				e.cidrs = append(e.cidrs, p.Masked())
			}
		}
		if e.prefixList != "" && m.prefixLists[e.prefixList] == nil {
			m.prefixLists[e.prefixList] = &prefixList{id: e.prefixList, name: e.service, region: x.s.Region, entries: e.cidrs}
		}
		m.endpoints = append(m.endpoints, e)
	case tEndpointRT, tEndpointSubnet, tEndpointSG:
		id := str(x.in, "vpcEndpointId")
		for _, e := range m.endpoints {
			if e.id != id {
				continue
			}
			switch x.r.Type {
			case tEndpointRT:
				e.routeTables = append(e.routeTables, str(x.in, "routeTableId"))
			case tEndpointSubnet:
				e.subnets = append(e.subnets, str(x.in, "subnetId"))
			default:
				e.sgs = append(e.sgs, str(x.in, "securityGroupId"))
			}
		}
	case tRTAssoc:
		rt := m.rts[str(x.in, "routeTableId")]
		sn := m.subnets[str(x.in, "subnetId")]
		if rt != nil && sn != nil {
			sn.rt = rt
		}
	case tMainRTAssoc:
		if v := m.vpcs[str(x.in, "vpcId")]; v != nil {
			v.mainRTID = str(x.in, "routeTableId")
		}
	case tSGRule:
		sg := m.sgs[str(x.in, "securityGroupId")]
		if sg == nil {
			m.fail(x, "securityGroupId", fmt.Errorf("no security group %q in the render", str(x.in, "securityGroupId")))
			return
		}
		m.expandSGRule(x, sgRule{name: x.r.Name, sg: sg, egress: str(x.in, "type") == "egress"}, x.in, "protocol", "", x.in["self"] == true)
	case tIngress, tEgress:
		sg := m.sgs[str(x.in, "securityGroupId")]
		if sg == nil {
			m.fail(x, "securityGroupId", fmt.Errorf("no security group %q in the render", str(x.in, "securityGroupId")))
			return
		}
		proto, from, to, err := ports(x.in, "ipProtocol")
		if err != nil {
			m.fail(x, "ports", err)
			return
		}
		r := &sgRule{name: x.r.Name, sg: sg, egress: x.r.Type == tEgress, proto: proto, from: from, to: to,
			pl: str(x.in, "prefixListId"), ref: groupID(str(x.in, "referencedSecurityGroupId"))}
		if c := firstNonEmpty(str(x.in, "cidrIpv4"), str(x.in, "cidrIpv6")); c != "" {
			if p, ok := m.prefix(x, "cidr", c); ok {
				r.cidr = p
			}
		}
		if !r.cidr.IsValid() && r.pl == "" && r.ref == "" {
			m.fail(x, "peer", fmt.Errorf("a rule without a CIDR, prefix list or security group"))
			return
		}
		if r.egress {
			sg.egress = append(sg.egress, r)
		} else {
			sg.ingress = append(sg.ingress, r)
		}
	case tNACLRule:
		a := m.nacls[str(x.in, "networkAclId")]
		if a == nil {
			m.fail(x, "networkAclId", fmt.Errorf("no network ACL %q in the render", str(x.in, "networkAclId")))
			return
		}
		r := m.aclRule(x, x.r.Name, x.in, "ruleNumber", "ruleAction")
		if r == nil {
			return
		}
		// Adding a rule to a default ACL nothing declared makes it a
		// declared one: its two allow-all rules (100) stay.
		if !a.declared {
			a.declared = true
			a.ingress = append(a.ingress, allowAll(a.name, 100))
			a.egress = append(a.egress, allowAll(a.name, 100))
		}
		if x.in["egress"] == true {
			a.egress = append(a.egress, r)
		} else {
			a.ingress = append(a.ingress, r)
		}
	case tNACLAssoc:
		if a, sn := m.nacls[str(x.in, "networkAclId")], m.subnets[str(x.in, "subnetId")]; a != nil && sn != nil {
			sn.acl = a
		}
	case tPeering:
		m.joins = append(m.joins, &join{named: nm, kind: "VPC peering connection", via: x.id(),
			vpcs: []string{str(x.in, "vpcId"), str(x.in, "peerVpcId")}})
	case tPeeringAccepter:
		m.joins = append(m.joins, &join{named: nm, kind: "VPC peering connection (accepter)", via: str(x.in, "vpcPeeringConnectionId"),
			vpcs: []string{str(x.out, "vpcId"), str(x.out, "peerVpcId")}})
	case tTGWAttach:
		m.joins = append(m.joins, &join{named: nm, kind: "transit gateway attachment", via: str(x.in, "transitGatewayId"),
			vpcs: []string{str(x.in, "vpcId")}})
	case tVPNGateway:
		if v := str(x.in, "vpcId"); v != "" {
			m.joins = append(m.joins, &join{named: nm, kind: "virtual private gateway", via: x.id(), vpcs: []string{v}})
		}
	case tVPNAttach:
		m.joins = append(m.joins, &join{named: nm, kind: "virtual private gateway attachment", via: str(x.in, "vpnGatewayId"),
			vpcs: []string{str(x.in, "vpcId")}})
	case tRAMAssoc:
		m.joins = append(m.joins, &join{named: nm, kind: "resource share", shared: str(x.in, "resourceArn")})
	case tLB, tALB:
		if t := str(x.in, "loadBalancerType"); t != "" && t != "application" {
			return
		}
		p := &place{named: nm, label: "ALB", sgs: strs(x.in, "securityGroups"), subnets: strs(x.in, "subnets"),
			internal: x.in["internal"] == true}
		for _, e := range list(x.in, "subnetMappings") {
			if sm, ok := e.(map[string]any); ok && str(sm, "subnetId") != "" {
				p.subnets = append(p.subnets, str(sm, "subnetId"))
			}
		}
		// The listeners name the load balancer by its ARN (its id).
		p.ids = []string{x.id(), str(x.out, "arn")}
		c.albs = append(c.albs, p)
	case tListener, tALBListener:
		arn := str(x.in, "loadBalancerArn")
		c.listeners[arn] = append(c.listeners[arn], listener{name: x.r.Name, port: num(x.in, "port")})
	case tService:
		nc, _ := x.in["networkConfiguration"].(map[string]any)
		if nc == nil {
			return // not awsvpc: no interface of its own
		}
		p := &place{named: nm, label: "task", sgs: strs(nc, "securityGroups"), subnets: strs(nc, "subnets")}
		if nc["assignPublicIp"] == true {
			p.publicIP, p.publicIPBy = true, x.r.Name+" (assignPublicIp)"
		}
		for _, e := range list(x.in, "loadBalancers") {
			if lb, ok := e.(map[string]any); ok && num(lb, "containerPort") > 0 {
				p.port = num(lb, "containerPort")
			}
		}
		c.services = append(c.services, p)
	case tDBCluster:
		p := &place{named: nm, label: "database", sgs: strs(x.in, "vpcSecurityGroupIds"), port: num(x.in, "port")}
		if p.port == 0 {
			p.port = enginePort(str(x.in, "engine"))
		}
		p.subnetGroup = str(x.in, "dbSubnetGroupName")
		p.subnetGroupKey = tDBSubnetGroup + "/" + p.subnetGroup
		p.clusterID = firstNonEmpty(x.id(), str(x.in, "clusterIdentifier"))
		c.databases = append(c.databases, p)
	case tDBInstance:
		// An instance AWS gives a public address ("Working with a DB
		// instance in a VPC", Aurora User Guide).
		if x.in["publiclyAccessible"] == true {
			id := str(x.in, "clusterIdentifier")
			m.publicDB[id] = append(m.publicDB[id], x.r.Name)
		}
	case tDBSubnetGroup, tCacheSubnetGroup:
		ids := strs(x.in, "subnetIds")
		for _, k := range []string{x.id(), str(x.out, "name"), str(x.in, "name")} {
			if k != "" {
				m.subnetGroups[x.r.Type+"/"+k] = ids
			}
		}
	case tCache:
		p := &place{named: nm, label: "cache", sgs: strs(x.in, "securityGroupIds"), port: num(x.in, "port")}
		if p.port == 0 {
			p.port = 6379 // Redis OSS and Valkey's default port
		}
		p.subnetGroup = str(x.in, "subnetGroupName")
		p.subnetGroupKey = tCacheSubnetGroup + "/" + p.subnetGroup
		c.caches = append(c.caches, p)
	}
}

// enginePort is an Aurora engine's default port ("Aurora DB cluster
// endpoint connections", Aurora User Guide).
func enginePort(engine string) int {
	if strings.Contains(engine, "postgres") {
		return 5432
	}
	return 3306
}

func allowAll(name string, num int) *naclRule {
	return &naclRule{name: name, num: num, allow: true, proto: "-1", from: 0, to: 65535, cidr: netip.MustParsePrefix("0.0.0.0/0")}
}

// groupID is a security group reference without its account ("111122223333/sg-…"
// names a peer VPC's group).
func groupID(ref string) string {
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		return ref[i+1:]
	}
	return ref
}

func (m *model) prefix(x res, key, v string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		m.fail(x, key, fmt.Errorf("%q is not a CIDR", v))
		return netip.Prefix{}, false
	}
	return p.Masked(), true
}

// ports reads a rule's protocol and port range. "-1" (or "all") is every
// protocol and port; so is a protocol other than TCP, UDP and ICMP, whose
// rules apply to all ports ("Security group rules", Amazon VPC User
// Guide).
func ports(in map[string]any, protoKey string) (string, int, int, error) {
	proto := strings.ToLower(str(in, protoKey))
	switch proto {
	case "-1", "all":
		return "-1", 0, 65535, nil
	case "6":
		proto = "tcp"
	case "17":
		proto = "udp"
	case "1":
		proto = "icmp"
	case "tcp", "udp", "icmp", "icmpv6", "58":
	case "":
		return "", 0, 0, fmt.Errorf("no protocol")
	default:
		return proto, 0, 65535, nil
	}
	from, to := num(in, "fromPort"), num(in, "toPort")
	if proto == "tcp" || proto == "udp" {
		if from < 0 || to > 65535 || from > to {
			return "", 0, 0, fmt.Errorf("port range %d-%d", from, to)
		}
	}
	return proto, from, to, nil
}

func portsText(proto string, from, to int) string {
	switch {
	case proto == "-1":
		return "all traffic"
	case from == to:
		return fmt.Sprintf("%s %d", proto, from)
	default:
		return fmt.Sprintf("%s %d-%d", proto, from, to)
	}
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func num(m map[string]any, k string) int {
	switch v := m[k].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case string:
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil {
			return n
		}
	}
	return 0
}

func boolOr(m map[string]any, k string, def bool) bool {
	if b, ok := m[k].(bool); ok {
		return b
	}
	return def
}

func list(m map[string]any, k string) []any {
	l, _ := m[k].([]any)
	return l
}

func strs(m map[string]any, k string) []string {
	var out []string
	for _, e := range list(m, k) {
		if s, ok := e.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
