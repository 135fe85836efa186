package netpath

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/offline"
)

// Result is one network path's verdict.
type Result struct {
	// Path names the path: "cell-a: CloudFront → ALB:443".
	Path string `json:"path"`
	// Owner is the cell the path belongs to (a path between two cells:
	// the one it leaves).
	Owner string `json:"owner"`
	// Allowed: traffic can take the path.
	Allowed bool `json:"allowed"`
	// Finding: a required path that is not allowed, or a forbidden one
	// that is.
	Finding bool `json:"finding"`
	// Reason is what decides: the rules and routes that carry a path, what
	// is missing from a required one, or what opens a forbidden one.
	Reason string `json:"reason"`
	// Deciding are the logical names of the resources that decide.
	Deciding []string `json:"deciding,omitempty"`
}

// Report is the verdict on every required and forbidden network path.
type Report struct {
	Required  []Result `json:"required"`
	Forbidden []Result `json:"forbidden"`
}

// OK reports whether every required path is allowed and every forbidden
// one denied.
func (r Report) OK() bool { return len(r.Findings()) == 0 }

// Findings are the results that break the fleet's promise, required paths
// first.
func (r Report) Findings() []Result {
	var out []Result
	for _, x := range r.Required {
		if x.Finding {
			out = append(out, x)
		}
	}
	for _, x := range r.Forbidden {
		if x.Finding {
			out = append(out, x)
		}
	}
	return out
}

// Counts are the required paths allowed and the forbidden paths denied,
// of each's total.
func (r Report) Counts() (allowed, required, denied, forbidden int) {
	for _, x := range r.Required {
		if x.Allowed {
			allowed++
		}
	}
	for _, x := range r.Forbidden {
		if !x.Allowed {
			denied++
		}
	}
	return allowed, len(r.Required), denied, len(r.Forbidden)
}

// HTTPS is the port of every AWS API a task calls.
const HTTPS = 443

// Check decides every required and forbidden network path of a render.
//
// Required, for each cell: CloudFront's origin-facing servers reach the
// ALB on 443; the ALB reaches the tasks on their container port; the
// tasks reach the database and the cache on their ports and, on 443, SQS,
// ECR, CloudWatch Logs (through a NAT gateway, or interface endpoints
// with private DNS) and S3 (through the gateway endpoint); the migrator
// (when the cell has one) reaches the database, ECR, CloudWatch Logs and
// S3. Those are what a Fargate task needs to start and serve: its image
// from ECR with the layers from S3, its logs through awslogs ("Amazon ECR
// interface VPC endpoints", Amazon ECR User Guide).
//
// Forbidden: any path between two cells' VPCs (a peering connection, a
// transit gateway or VPN gateway both attach to, a route to the other's
// range, a security group rule naming the other's groups or range, an
// endpoint to the other's endpoint service) and any join of a cell's VPC
// to another network; the internet reaching a task, a database or a cache
// directly (a rule admitting public addresses, or a public address on
// it), or an ALB other than through CloudFront; a database or cache in a
// subnet routed to an internet gateway.
func Check(stacks []Stack) (Report, error) {
	m, err := build(stacks)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	for _, o := range m.owners {
		if o == offline.OwnerRouter {
			continue
		}
		rep.Required = append(rep.Required, m.required(m.cells[o])...)
	}
	rep.Forbidden = m.forbidden()
	return rep, nil
}

// verdict collects what decides a path.
type verdict struct {
	because  []string // what carries it
	missing  []string // what a required path lacks
	deciding []string
}

func (v *verdict) allow(why string, names ...string) {
	v.because = appendUnique(v.because, why)
	v.deciding = appendUnique(v.deciding, names...)
}

func (v *verdict) lack(why string, names ...string) {
	v.missing = appendUnique(v.missing, why)
	v.deciding = appendUnique(v.deciding, names...)
}

func (v *verdict) required(path, owner string) Result {
	r := Result{Path: path, Owner: owner, Allowed: len(v.missing) == 0, Deciding: v.deciding}
	r.Finding = !r.Allowed
	if r.Allowed {
		r.Reason = strings.Join(v.because, "; ")
	} else {
		r.Reason = strings.Join(v.missing, "; ")
	}
	return r
}

// peer is the other end of a rule: its groups, every address it may use
// (a rule's range must cover all of them), and the prefix lists that
// stand for it.
type peer struct {
	sgs   []string
	cidrs []netip.Prefix
	pls   []string
}

var anywhere4 = netip.MustParsePrefix("0.0.0.0/0")

// internet is a public service endpoint: any public address, so only a
// rule for every address covers it.
var internet = peer{cidrs: []netip.Prefix{anywhere4}}

func (m *model) peerOf(p *place) peer {
	pr := peer{sgs: p.sgs}
	for _, id := range p.subnets {
		if s := m.subnets[id]; s != nil {
			pr.cidrs = append(pr.cidrs, s.cidr)
		}
	}
	return pr
}

// match finds a rule of the groups that allows TCP on port to (egress) or
// from (ingress) the peer. A group's rules are all allowing and a
// resource's groups add up ("Security group rules", Amazon VPC User
// Guide), so any one rule suffices.
func (m *model) match(groups []string, egress bool, port int, pr peer) *sgRule {
	for _, g := range groups {
		sg := m.sgs[g]
		if sg == nil {
			continue
		}
		rules := sg.ingress
		if egress {
			rules = sg.egress
		}
		for _, r := range rules {
			if !protoMatches(r.proto, "tcp") || (r.proto != "-1" && (port < r.from || port > r.to)) {
				continue
			}
			if m.peerMatches(r, pr) {
				return r
			}
		}
	}
	return nil
}

func (m *model) peerMatches(r *sgRule, pr peer) bool {
	switch {
	case r.ref != "":
		return contains(pr.sgs, r.ref)
	case r.pl != "":
		if contains(pr.pls, r.pl) {
			return true
		}
		// A list the peer is not named by may still hold every address
		// it uses; a list of another region does not exist for the group.
		pl := m.prefixLists[r.pl]
		return pl != nil && pl.region == r.sg.region && len(pr.cidrs) > 0 && allCovered(pl.entries, pr.cidrs)
	default:
		return len(pr.cidrs) > 0 && allCovered([]netip.Prefix{r.cidr}, pr.cidrs)
	}
}

func allCovered(by, cidrs []netip.Prefix) bool {
	for _, c := range cidrs {
		ok := false
		for _, b := range by {
			if covers(b, c) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// groupNames names groups by their logical names.
func (m *model) groupNames(ids []string) string {
	if len(ids) == 0 {
		return "no security group"
	}
	var out []string
	for _, id := range ids {
		if sg := m.sgs[id]; sg != nil {
			out = append(out, sg.name)
		} else {
			out = append(out, id+" (not in the render)")
		}
	}
	return strings.Join(out, ", ")
}

// sgFlow checks both sides of a connection: the source's groups let it
// out and the destination's let it in. The response needs no rule.
func (m *model) sgFlow(v *verdict, src, dst *place, port int) {
	if r := m.match(src.sgs, true, port, m.peerOf(dst)); r != nil {
		v.allow(r.String(), r.name)
	} else {
		v.lack(fmt.Sprintf("no egress rule of %s allows tcp %d to the %s (%s or its subnets)", m.groupNames(src.sgs), port, dst.label, m.groupNames(dst.sgs)))
	}
	if r := m.match(dst.sgs, false, port, m.peerOf(src)); r != nil {
		v.allow(r.String(), r.name)
	} else {
		v.lack(fmt.Sprintf("no ingress rule of %s admits the %s (%s or its subnets) on tcp %d", m.groupNames(dst.sgs), src.label, m.groupNames(src.sgs), port))
	}
}

// placeSubnets resolves a workload's subnets; a subnet the render does not
// declare is a gap.
func (m *model) placeSubnets(v *verdict, p *place) []*subnet {
	if len(p.subnets) == 0 {
		v.lack(fmt.Sprintf("the %s (%s) has no subnet in the render", p.label, p.name))
		return nil
	}
	var out []*subnet
	for _, id := range p.subnets {
		if s := m.subnets[id]; s != nil {
			out = append(out, s)
		} else {
			v.lack(fmt.Sprintf("subnet %s of the %s (%s) is not in the render", id, p.label, p.name))
		}
	}
	return out
}

// localFlow checks a connection between two workloads: security groups,
// the route (in one VPC, the local route every route table has: "Subnet
// route tables", Amazon VPC User Guide) and the network ACLs between
// every pair of their subnets.
func (m *model) localFlow(v *verdict, src, dst *place, port int) {
	m.sgFlow(v, src, dst, port)
	from, to := m.placeSubnets(v, src), m.placeSubnets(v, dst)
	vpcs := map[*vpc]bool{}
	for _, s := range append(append([]*subnet{}, from...), to...) {
		vpcs[s.vpc] = true
	}
	switch {
	case len(vpcs) == 1:
		for x := range vpcs {
			v.allow("one VPC: the local route of "+x.name, x.name)
		}
	case len(vpcs) > 1:
		var names []string
		for x := range vpcs {
			names = append(names, x.name)
		}
		sort.Strings(names)
		v.lack(fmt.Sprintf("the %s and the %s are in different VPCs (%s): no route of a cell joins two VPCs", src.label, dst.label, strings.Join(names, ", ")))
		return
	}
	for _, a := range from {
		for _, b := range to {
			deciding, why := aclFlow(subnetHop(a), subnetHop(b), port)
			if why != "" {
				v.lack(why, deciding...)
				return
			}
			v.deciding = appendUnique(v.deciding, deciding...)
		}
	}
}

// defaultRoute is the route that carries traffic to a public address:
// the table's IPv4 default route (a more specific route to part of the
// internet is not modelled; the cell template declares none).
func defaultRoute(rt *routeTable) *route {
	for _, r := range rt.routes {
		if r.dest.IsValid() && r.dest.Addr().Is4() && r.dest.Bits() == 0 {
			return r
		}
	}
	return nil
}

func (m *model) describeRoute(r *route) string {
	d := r.destPL
	if r.dest.IsValid() {
		d = r.dest.String()
	}
	target := r.via
	switch r.target {
	case targetIGW:
		if g := m.igws[r.via]; g != nil {
			target = g.name
		}
	case targetNAT:
		if n := m.nats[r.via]; n != nil {
			target = n.name
		}
	}
	return fmt.Sprintf("%s: %s → %s %s", r.table.name, d, r.target, target)
}

// igwRoute reports whether the subnet's route table sends 0.0.0.0/0 to
// an internet gateway attached to its VPC: a public subnet.
func (m *model) igwRoute(s *subnet) (*route, *gateway) {
	r := defaultRoute(s.routeTable())
	if r == nil || r.target != targetIGW {
		return nil, nil
	}
	g := m.igws[r.via]
	if g == nil || g.vpc != s.vpc.id {
		return nil, nil
	}
	return r, g
}

// internetEgress checks that the workload reaches public endpoints on
// port: its groups let it out to every address, and each of its subnets
// routes 0.0.0.0/0 to a public NAT gateway in a public subnet of the VPC
// ("NAT gateways", Amazon VPC User Guide), or to the internet gateway
// when the workload has a public address. DNS resolution must be on for
// the names to resolve.
func (m *model) internetEgress(v *verdict, src *place, port int, what string) {
	if r := m.match(src.sgs, true, port, internet); r != nil {
		v.allow(r.String(), r.name)
	} else {
		v.lack(fmt.Sprintf("no egress rule of %s allows tcp %d to 0.0.0.0/0 (%s's public endpoint)", m.groupNames(src.sgs), port, what))
	}
	out := hop{cidrs: []netip.Prefix{anywhere4}}
	for _, s := range m.placeSubnets(v, src) {
		if !s.vpc.dnsSupport {
			v.lack(fmt.Sprintf("%s has DNS resolution off (enableDnsSupport: false): %s's name does not resolve", s.vpc.name, what), s.vpc.name)
		}
		rt := s.routeTable()
		r := defaultRoute(rt)
		switch {
		case r == nil:
			v.lack(fmt.Sprintf("%s (the route table of %s) has no route to 0.0.0.0/0: %s is out of reach", rt.name, s.name, what), rt.name)
		case r.target == targetNAT:
			nat := m.nats[r.via]
			if nat == nil {
				v.lack(fmt.Sprintf("%s routes 0.0.0.0/0 to NAT gateway %s, which is not in the render", rt.name, r.via), rt.name)
				continue
			}
			if !nat.public {
				v.lack(fmt.Sprintf("%s is a private NAT gateway: it does not reach the internet", nat.name), nat.name)
				continue
			}
			ns := m.subnets[nat.subnet]
			if ns == nil || ns.vpc != s.vpc {
				v.lack(fmt.Sprintf("%s is not in a subnet of %s", nat.name, s.vpc.name), nat.name)
				continue
			}
			ir, _ := m.igwRoute(ns)
			if ir == nil {
				v.lack(fmt.Sprintf("%s is in %s, whose route table %s has no 0.0.0.0/0 route to the VPC's internet gateway", nat.name, ns.name, ns.routeTable().name), nat.name, ns.routeTable().name)
				continue
			}
			v.allow(m.describeRoute(r)+" (in "+ns.name+", "+m.describeRoute(ir)+")", rt.name, nat.name, ns.routeTable().name)
			for _, f := range []struct{ a, b hop }{{subnetHop(s), subnetHop(ns)}, {subnetHop(ns), out}} {
				if deciding, why := aclFlow(f.a, f.b, port); why != "" {
					v.lack(why, deciding...)
				} else {
					v.deciding = appendUnique(v.deciding, deciding...)
				}
			}
		case r.target == targetIGW:
			if ir, _ := m.igwRoute(s); ir == nil {
				v.lack(fmt.Sprintf("%s routes 0.0.0.0/0 to %s, which is not attached to %s", rt.name, r.via, s.vpc.name), rt.name)
				continue
			}
			if !src.publicIP {
				v.lack(fmt.Sprintf("%s routes 0.0.0.0/0 to the internet gateway, but the %s has no public address: only a NAT gateway would carry it", rt.name, src.label), rt.name)
				continue
			}
			v.allow(m.describeRoute(r)+" ("+src.publicIPBy+")", rt.name)
			if deciding, why := aclFlow(subnetHop(s), out, port); why != "" {
				v.lack(why, deciding...)
			} else {
				v.deciding = appendUnique(v.deciding, deciding...)
			}
		default:
			v.lack(fmt.Sprintf("%s routes 0.0.0.0/0 to a %s (%s), not to a NAT or internet gateway", rt.name, r.target, r.via), rt.name)
		}
	}
}

// interfaceEndpoint is an interface endpoint of service in the VPC whose
// private DNS name answers for the service's default name: that needs the
// endpoint's private DNS and the VPC's DNS support and DNS hostnames
// ("Access an AWS service using an interface VPC endpoint", AWS
// PrivateLink Guide).
func (m *model) interfaceEndpoint(v *vpc, service string) *endpoint {
	for _, e := range m.endpoints {
		if e.vpc == v.id && e.typ == "Interface" && e.service == service && e.privateDNS && v.dnsSupport && v.dnsNames {
			return e
		}
	}
	return nil
}

// awsAPI checks that the workload reaches each of an AWS service's
// endpoints (com.amazonaws.<region>.<name>) on 443: through an interface
// endpoint in its VPC when one answers for the name, else through the
// internet path.
func (m *model) awsAPI(v *verdict, c *cellNet, src *place, what string, names ...string) {
	subs := m.placeSubnets(v, src)
	if len(subs) == 0 {
		return
	}
	viaInternet := false
	for _, n := range names {
		svc := "com.amazonaws." + c.region + "." + n
		if e := m.interfaceEndpoint(subs[0].vpc, svc); e != nil {
			ep := &place{named: e.named, label: svc + " endpoint", sgs: e.sgs, subnets: e.subnets}
			v.allow(fmt.Sprintf("%s answers for %s (private DNS)", e.name, svc), e.name)
			m.localFlow(v, src, ep, HTTPS)
			continue
		}
		viaInternet = true
	}
	if viaInternet {
		m.internetEgress(v, src, HTTPS, what)
	}
}

// s3Gateway checks that S3 traffic from the workload takes the VPC's S3
// gateway endpoint: the endpoint's route tables include the route table
// of each of its subnets (a gateway endpoint is a route to the service's
// prefix list in the tables it is associated with: "Gateway endpoints",
// AWS PrivateLink Guide), and its groups let it out to S3's ranges.
func (m *model) s3Gateway(v *verdict, c *cellNet, src *place) {
	svc := "com.amazonaws." + c.region + ".s3"
	for _, s := range m.placeSubnets(v, src) {
		rt := s.routeTable()
		var ep *endpoint
		for _, e := range m.endpoints {
			if e.vpc == s.vpc.id && e.typ == "Gateway" && e.service == svc && contains(e.routeTables, rt.id) && rt.id != "" {
				ep = e
				break
			}
		}
		if ep == nil {
			v.lack(fmt.Sprintf("no S3 gateway endpoint (%s) of %s is associated with %s, the route table of %s", svc, s.vpc.name, rt.name, s.name), rt.name)
			continue
		}
		v.allow(fmt.Sprintf("%s routes %s (%s → %s)", ep.name, rt.name, firstNonEmpty(ep.prefixList, "S3's prefix list"), svc), ep.name, rt.name)
		ranges := ep.cidrs
		if len(ranges) == 0 {
			ranges = []netip.Prefix{anywhere4}
		}
		pr := peer{cidrs: ranges}
		if ep.prefixList != "" {
			pr.pls = []string{ep.prefixList}
		}
		if r := m.match(src.sgs, true, HTTPS, pr); r != nil {
			v.allow(r.String(), r.name)
		} else {
			v.lack(fmt.Sprintf("no egress rule of %s allows tcp 443 to S3 (0.0.0.0/0 or the prefix list %s)", m.groupNames(src.sgs), ep.prefixList))
		}
		if deciding, why := aclFlow(subnetHop(s), hop{cidrs: ranges}, HTTPS); why != "" {
			v.lack(why, deciding...)
		} else {
			v.deciding = appendUnique(v.deciding, deciding...)
		}
	}
}

// cloudFront is the peer CloudFront's origin requests come from: the
// origin-facing managed prefix lists the render looked up in region (a
// prefix list's id is regional).
func (m *model) cloudFront(region string) (peer, []string) {
	var pr peer
	var names []string
	ids := make([]string, 0, len(m.prefixLists))
	for id := range m.prefixLists {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		pl := m.prefixLists[id]
		if contains(CloudFrontPrefixLists, pl.name) && pl.region == region {
			pr.pls = append(pr.pls, pl.id)
			pr.cidrs = append(pr.cidrs, pl.entries...)
			names = append(names, pl.id+" ("+pl.name+")")
		}
	}
	return pr, names
}

// required are a cell's required paths.
func (m *model) required(c *cellNet) []Result {
	var out []Result
	name := func(format string, args ...any) string { return c.owner + ": " + fmt.Sprintf(format, args...) }
	missing := func(path, what string) Result {
		v := &verdict{}
		v.lack(fmt.Sprintf("%s declares no %s", c.stack, what))
		return v.required(path, c.owner)
	}

	// CloudFront → ALB:443.
	cf, cfNames := m.cloudFront(c.region)
	if len(c.albs) == 0 {
		out = append(out, missing(name("CloudFront → ALB:%d", HTTPS), "application load balancer"))
	}
	for _, alb := range c.albs {
		v := &verdict{}
		if alb.internal {
			v.lack(fmt.Sprintf("%s is internal: it has no public address CloudFront can reach", alb.name), alb.name)
		}
		port := false
		for _, id := range alb.ids {
			for _, l := range c.listeners[id] {
				if l.port == HTTPS {
					port = true
					v.allow(fmt.Sprintf("%s listens on %d", l.name, HTTPS), l.name)
				}
			}
		}
		if !port {
			v.lack(fmt.Sprintf("%s has no listener on %d", alb.name, HTTPS), alb.name)
		}
		if len(cf.pls) == 0 {
			v.lack(fmt.Sprintf("the render does not look up CloudFront's origin-facing prefix list (%s): no rule can be read as admitting CloudFront", CloudFrontPrefixLists[0]))
		} else if r := m.match(alb.sgs, false, HTTPS, cf); r != nil {
			v.allow(r.String()+" = "+strings.Join(cfNames, ", "), r.name)
		} else {
			v.lack(fmt.Sprintf("no ingress rule of %s admits CloudFront's origin-facing prefix list %s on tcp %d", m.groupNames(alb.sgs), strings.Join(cfNames, ", "), HTTPS))
		}
		cfHop := hop{cidrs: cf.cidrs}
		if len(cfHop.cidrs) == 0 {
			cfHop.cidrs = []netip.Prefix{anywhere4}
		}
		for _, s := range m.placeSubnets(v, alb) {
			if r, g := m.igwRoute(s); r != nil {
				v.allow(fmt.Sprintf("%s is public (%s)", s.name, m.describeRoute(r)), s.routeTable().name, g.name)
			} else {
				v.lack(fmt.Sprintf("%s is not a public subnet: its route table %s has no 0.0.0.0/0 route to an internet gateway of %s", s.name, s.routeTable().name, s.vpc.name), s.routeTable().name)
			}
			if deciding, why := aclFlow(cfHop, subnetHop(s), HTTPS); why != "" {
				v.lack(why, deciding...)
			} else {
				v.deciding = appendUnique(v.deciding, deciding...)
			}
		}
		out = append(out, v.required(name("CloudFront → ALB:%d", HTTPS), c.owner))
	}

	tasks := c.services
	taskLabel := func(p *place) string {
		if len(c.services) > 1 {
			return "task (" + p.name + ")"
		}
		return "task"
	}
	if len(tasks) == 0 {
		out = append(out, missing(name("ALB → task"), "ECS service with a network configuration"))
	}
	for _, t := range tasks {
		tl := taskLabel(t)
		// ALB → task port.
		if len(c.albs) == 0 {
			out = append(out, missing(name("ALB → %s:%d", tl, t.port), "application load balancer"))
		}
		for _, alb := range c.albs {
			v := &verdict{}
			if t.port == 0 {
				v.lack(fmt.Sprintf("%s registers no container port with a load balancer", t.name), t.name)
			} else {
				m.localFlow(v, alb, t, t.port)
			}
			out = append(out, v.required(name("ALB → %s:%d", tl, t.port), c.owner))
		}
		out = append(out, m.toData(c, t, tl, name)...)
		out = append(out, m.toAPIs(c, t, tl, name, true)...)
	}
	for _, t := range c.tasks {
		for _, db := range c.databases {
			v := &verdict{}
			m.localFlow(v, t, db, db.port)
			out = append(out, v.required(name("%s → database:%d", t.label, db.port), c.owner))
		}
		if len(c.databases) == 0 {
			out = append(out, missing(name("%s → database", t.label), "database cluster"))
		}
		out = append(out, m.toAPIs(c, t, t.label, name, false)...)
	}
	return out
}

// toData are a task's paths to the cell's database and cache.
func (m *model) toData(c *cellNet, t *place, tl string, name func(string, ...any) string) []Result {
	var out []Result
	for _, kind := range []struct {
		label  string
		places []*place
		what   string
	}{{"database", c.databases, "database cluster"}, {"cache", c.caches, "cache replication group"}} {
		if len(kind.places) == 0 {
			v := &verdict{}
			v.lack(fmt.Sprintf("%s declares no %s", c.stack, kind.what))
			out = append(out, v.required(name("%s → %s", tl, kind.label), c.owner))
		}
		for _, d := range kind.places {
			v := &verdict{}
			m.localFlow(v, t, d, d.port)
			out = append(out, v.required(name("%s → %s:%d", tl, kind.label, d.port), c.owner))
		}
	}
	return out
}

// toAPIs are a task's HTTPS paths to the AWS APIs it calls: SQS (the
// app's queue; not the migrator's), ECR (ecr.api and ecr.dkr: the image),
// CloudWatch Logs (awslogs) and S3 (the bucket, and the image's layers).
func (m *model) toAPIs(c *cellNet, t *place, tl string, name func(string, ...any) string, app bool) []Result {
	var out []Result
	apis := []struct {
		what  string
		names []string
	}{{"ECR", []string{"ecr.api", "ecr.dkr"}}, {"CloudWatch Logs", []string{"logs"}}}
	if app {
		apis = append([]struct {
			what  string
			names []string
		}{{"SQS", []string{"sqs"}}}, apis...)
	}
	for _, api := range apis {
		v := &verdict{}
		m.awsAPI(v, c, t, api.what, api.names...)
		out = append(out, v.required(name("%s → %s:%d", tl, api.what, HTTPS), c.owner))
	}
	v := &verdict{}
	m.s3Gateway(v, c, t)
	out = append(out, v.required(name("%s → S3:%d (gateway endpoint)", tl, HTTPS), c.owner))
	return out
}
