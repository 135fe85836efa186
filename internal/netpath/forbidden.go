package netpath

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/offline"
)

// privateRanges are the address ranges the internet does not route: RFC
// 1918, the shared address space a VPC may use (RFC 6598) and IPv6 unique
// local addresses ("VPC CIDR blocks", Amazon VPC User Guide).
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("fc00::/7"),
}

// public reports whether a range holds any internet address: one outside
// the private ranges and outside every VPC of the render.
func (m *model) public(p netip.Prefix) bool {
	for _, r := range privateRanges {
		if covers(r, p) {
			return false
		}
	}
	for _, v := range m.vpcs {
		for _, c := range v.cidrs {
			if covers(c, p) {
				return false
			}
		}
	}
	return true
}

// opening is something that lets traffic from one owner's VPC to
// another's.
type opening struct {
	what string
	name string
}

type pair struct{ from, to string }

// forbidden decides the forbidden paths: between every two owners'
// networks, every join of a cell's VPC to another network, and every
// exposure of a cell's workloads to the internet.
func (m *model) forbidden() []Result {
	var netOwners []string
	for _, o := range m.owners {
		if len(m.cells[o].vpcs) > 0 {
			netOwners = append(netOwners, o)
		}
	}
	open := m.crossOpenings()
	ranges := make(map[string]string, len(netOwners))
	for _, o := range netOwners {
		ranges[o] = m.ranges(o)
	}
	// n² paths: built by concatenation, one allocation each.
	out := make([]Result, 0, len(netOwners)*len(netOwners)+8*len(m.owners))
	for _, a := range netOwners {
		for _, b := range netOwners {
			if a == b {
				continue
			}
			path := a + " → " + b + ": VPC to VPC"
			ops := open[pair{a, b}]
			r := Result{Path: path, Owner: a, Allowed: len(ops) > 0, Finding: len(ops) > 0}
			if r.Allowed {
				var whats []string
				for _, o := range ops {
					whats = append(whats, o.what)
					r.Deciding = appendUnique(r.Deciding, o.name)
				}
				r.Reason = strings.Join(whats, "; ")
			} else {
				r.Reason = "no peering connection, shared transit or VPN gateway, route, security group rule or endpoint service joins " +
					ranges[a] + " to " + ranges[b]
			}
			out = append(out, r)
		}
	}
	for _, o := range m.owners {
		if o == offline.OwnerRouter {
			continue
		}
		c := m.cells[o]
		if len(c.vpcs) > 0 {
			out = append(out, m.joined(c))
		}
		for _, alb := range c.albs {
			out = append(out, m.albOnlyCloudFront(c, alb))
		}
		for _, p := range c.services {
			out = append(out, m.exposed(c, p))
		}
		for _, p := range c.tasks {
			out = append(out, m.exposed(c, p))
		}
		for _, p := range c.databases {
			out = append(out, m.exposed(c, p), m.igwRouted(c, p))
		}
		for _, p := range c.caches {
			out = append(out, m.exposed(c, p), m.igwRouted(c, p))
		}
	}
	return out
}

func (m *model) ranges(owner string) string {
	var cidrs []string
	for _, v := range m.cells[owner].vpcs {
		for _, c := range v.cidrs {
			cidrs = append(cidrs, c.String())
		}
	}
	return owner + "'s VPC (" + strings.Join(cidrs, ", ") + ")"
}

// closed is the result of a forbidden path: open (a finding) when
// anything opens it, each opening named.
func closed(path, owner string, ops []opening, denied string) Result {
	r := Result{Path: path, Owner: owner, Allowed: len(ops) > 0, Finding: len(ops) > 0, Reason: denied}
	if r.Allowed {
		var whats []string
		for _, o := range ops {
			whats = append(whats, o.what)
			r.Deciding = appendUnique(r.Deciding, o.name)
		}
		r.Reason = strings.Join(whats, "; ")
	}
	return r
}

// vpcOwners are the owner of each VPC id, and every VPC range with its
// owner.
func (m *model) vpcOwners() (map[string]string, []struct {
	owner string
	cidr  netip.Prefix
}) {
	owners := map[string]string{}
	var ranges []struct {
		owner string
		cidr  netip.Prefix
	}
	for id, v := range m.vpcs {
		owners[id] = v.owner
		for _, c := range v.cidrs {
			ranges = append(ranges, struct {
				owner string
				cidr  netip.Prefix
			}{v.owner, c})
		}
	}
	sort.Slice(ranges, func(i, j int) bool { return ranges[i].owner < ranges[j].owner })
	return owners, ranges
}

// joinsNetworks reports whether a route target connects the VPC to
// another network (so even a default route through it reaches other
// VPCs); an internet, NAT or egress-only gateway does not carry private
// ranges anywhere.
func joinsNetworks(target string) bool {
	switch target {
	case targetIGW, targetNAT, targetEgressOnly, targetEndpoint, "local":
		return false
	}
	return true
}

// crossOpenings finds everything that lets one owner's VPC reach
// another's: peering connections between them, a transit or VPN gateway
// both attach to, routes to the other's ranges, security group rules
// naming the other's groups or ranges, interface endpoints of the other's
// endpoint services.
func (m *model) crossOpenings() map[pair][]opening {
	out := map[pair][]opening{}
	add := func(from, to string, o opening) {
		if from == "" || to == "" || from == to {
			return
		}
		out[pair{from, to}] = append(out[pair{from, to}], o)
	}
	vpcOwner, ranges := m.vpcOwners()
	overlapping := func(p netip.Prefix, except string) []string {
		var owners []string
		for _, r := range ranges {
			if r.owner != except && r.cidr.Overlaps(p) {
				owners = appendUnique(owners, r.owner)
			}
		}
		return owners
	}
	// Peering connections and shared gateways.
	byGateway := map[string][]*join{}
	for _, j := range m.joins {
		switch {
		case strings.HasPrefix(j.kind, "VPC peering"):
			if len(j.vpcs) == 2 {
				a, b := vpcOwner[j.vpcs[0]], vpcOwner[j.vpcs[1]]
				o := opening{fmt.Sprintf("%s %s peers %s and %s", j.kind, j.name, j.vpcs[0], j.vpcs[1]), j.name}
				add(a, b, o)
				add(b, a, o)
			}
		case j.via != "":
			byGateway[j.via] = append(byGateway[j.via], j)
		}
	}
	for gw, js := range byGateway {
		for _, x := range js {
			for _, y := range js {
				if len(x.vpcs) == 0 || len(y.vpcs) == 0 {
					continue
				}
				add(vpcOwner[x.vpcs[0]], vpcOwner[y.vpcs[0]], opening{fmt.Sprintf("%s and %s attach to the same gateway %s", x.name, y.name, gw), x.name})
			}
		}
	}
	// Routes.
	rts := make([]*routeTable, 0, len(m.rts))
	for _, rt := range m.rts {
		rts = append(rts, rt)
	}
	sort.Slice(rts, func(i, j int) bool { return rts[i].name < rts[j].name })
	for _, rt := range rts {
		for _, r := range rt.routes {
			if !r.dest.IsValid() || r.target == "local" {
				continue
			}
			if r.dest.Bits() == 0 && !joinsNetworks(r.target) {
				continue
			}
			for _, o := range overlapping(r.dest, rt.owner) {
				add(rt.owner, o, opening{fmt.Sprintf("%s routes %s, which holds %s, to a %s (%s)", r.name, r.dest, m.ranges(o), r.target, r.via), r.name})
			}
		}
	}
	// Security group rules: egress opens the group's owner towards the
	// peer; ingress opens the peer towards the group's owner.
	sgs := make([]*sgroup, 0, len(m.sgs))
	for _, sg := range m.sgs {
		sgs = append(sgs, sg)
	}
	sort.Slice(sgs, func(i, j int) bool { return sgs[i].name < sgs[j].name })
	for _, sg := range sgs {
		for _, r := range append(append([]*sgRule{}, sg.egress...), sg.ingress...) {
			var peers []string
			switch {
			case r.ref != "":
				if p := m.sgs[r.ref]; p != nil && p.owner != sg.owner {
					peers = []string{p.owner}
				}
			case r.cidr.IsValid() && r.cidr.Bits() > 0:
				peers = overlapping(r.cidr, sg.owner)
			}
			for _, p := range peers {
				o := opening{fmt.Sprintf("%s names %s", r, m.ranges(p)), r.name}
				if r.ref != "" {
					o.what = fmt.Sprintf("%s names %s's security group %s", r, p, m.sgs[r.ref].name)
				}
				if r.egress {
					add(sg.owner, p, o)
				} else {
					add(p, sg.owner, o)
				}
			}
		}
	}
	// Endpoints of another owner's endpoint service (PrivateLink).
	for _, e := range m.endpoints {
		if svc := m.endpointServices[e.service]; svc != nil {
			add(vpcOwner[e.vpc], svc.owner, opening{fmt.Sprintf("%s connects to %s's endpoint service %s (%s)", e.name, svc.owner, svc.name, e.service), e.name})
		}
	}
	return out
}

// joined is the forbidden path from a cell's VPC to any other network: a
// cell attaches to no peering connection, transit gateway or VPN gateway
// and shares no subnet, because an attachment whose other end the render
// does not show cannot be proven not to reach another cell.
func (m *model) joined(c *cellNet) Result {
	mine := map[string]bool{}
	for _, v := range c.vpcs {
		mine[v.id] = true
	}
	subnetARNs := map[string]string{}
	for _, s := range m.subnets {
		if s.vpc.owner == c.owner && s.arn != "" {
			subnetARNs[s.arn] = s.name
		}
	}
	var ops []opening
	for _, j := range m.joins {
		hit := false
		for _, v := range j.vpcs {
			hit = hit || mine[v]
		}
		if hit {
			ops = append(ops, opening{fmt.Sprintf("%s %s attaches %s to %s", j.kind, j.name, m.ranges(c.owner), firstNonEmpty(j.via, "another network")), j.name})
		}
		if sn, ok := subnetARNs[j.shared]; ok && j.shared != "" {
			ops = append(ops, opening{fmt.Sprintf("%s shares %s with other accounts (AWS RAM): their workloads would run inside the cell's VPC", j.name, sn), j.name})
		}
	}
	return closed(c.owner+": VPC → another network (peering, transit gateway, VPN, shared subnet)", c.owner, ops,
		fmt.Sprintf("no peering connection, transit gateway or VPN attachment or subnet share involves %s", m.ranges(c.owner)))
}

// publicIngress are the ingress rules of groups that admit internet
// addresses: a public range, or a prefix list the render does not show to
// be private. A group the render does not declare cannot be read.
func (m *model) publicIngress(groups []string, except func(*sgRule) bool) []opening {
	var ops []opening
	for _, g := range groups {
		sg := m.sgs[g]
		if sg == nil {
			ops = append(ops, opening{fmt.Sprintf("security group %s is not in the render: its rules cannot be read", g), g})
			continue
		}
		for _, r := range sg.ingress {
			if except != nil && except(r) {
				continue
			}
			switch {
			case r.cidr.IsValid() && m.public(r.cidr):
				ops = append(ops, opening{fmt.Sprintf("%s admits internet addresses", r), r.name})
			case r.pl != "":
				pl := m.prefixLists[r.pl]
				if pl == nil || len(pl.entries) == 0 {
					ops = append(ops, opening{fmt.Sprintf("%s admits prefix list %s, whose entries the render does not show", r, r.pl), r.name})
					continue
				}
				for _, e := range pl.entries {
					if m.public(e) {
						ops = append(ops, opening{fmt.Sprintf("%s admits %s (%s), internet addresses", r, pl.name, r.pl), r.name})
						break
					}
				}
			}
		}
	}
	return ops
}

// exposed is the forbidden path from the internet straight to a task,
// database or cache: an ingress rule admitting internet addresses, or a
// public address on it (a task's assignPublicIp, an Aurora instance's
// publiclyAccessible), opens it.
func (m *model) exposed(c *cellNet, p *place) Result {
	ops := m.publicIngress(p.sgs, nil)
	if p.publicIP {
		ops = append(ops, opening{fmt.Sprintf("%s gives the %s a public address", p.publicIPBy, p.label), p.name})
	}
	label := p.label
	if p.label == "task" && len(c.services) > 1 {
		label = "task (" + p.name + ")"
	}
	return closed(fmt.Sprintf("%s: internet → %s", c.owner, label), c.owner, ops,
		fmt.Sprintf("no ingress rule of %s admits internet addresses and the %s has no public address", m.groupNames(p.sgs), p.label))
}

// albOnlyCloudFront is the forbidden path from the internet to the ALB
// around CloudFront: any ingress rule admitting internet addresses other
// than CloudFront's origin-facing prefix list opens it (and with it a way
// past the edge function's routing).
func (m *model) albOnlyCloudFront(c *cellNet, alb *place) Result {
	cf, _ := m.cloudFront(c.region)
	ops := m.publicIngress(alb.sgs, func(r *sgRule) bool { return r.pl != "" && contains(cf.pls, r.pl) })
	return closed(fmt.Sprintf("%s: internet → ALB, around CloudFront", c.owner), c.owner, ops,
		fmt.Sprintf("the only ingress from internet addresses to %s is CloudFront's origin-facing prefix list", m.groupNames(alb.sgs)))
}

// igwRouted is the forbidden placement of a database or cache in a
// subnet whose route table has a route to an internet gateway (a public
// subnet).
func (m *model) igwRouted(c *cellNet, p *place) Result {
	var ops []opening
	if len(p.subnets) == 0 {
		ops = append(ops, opening{fmt.Sprintf("the %s's subnet group %q is not in the render: where it runs cannot be read", p.label, p.subnetGroup), p.name})
	}
	for _, id := range p.subnets {
		s := m.subnets[id]
		if s == nil {
			ops = append(ops, opening{fmt.Sprintf("subnet %s of the %s is not in the render", id, p.label), p.name})
			continue
		}
		rt := s.routeTable()
		for _, r := range rt.routes {
			if r.target == targetIGW {
				ops = append(ops, opening{fmt.Sprintf("%s is in %s, whose route table routes to an internet gateway (%s)", p.name, s.name, m.describeRoute(r)), r.name})
			}
		}
	}
	return closed(fmt.Sprintf("%s: %s in a subnet routed to an internet gateway", c.owner, p.label), c.owner, ops,
		fmt.Sprintf("no route table of the %s's subnets routes to an internet gateway", p.label))
}
