package netpath

import (
	"fmt"
	"net/netip"
)

// Ephemeral ports: the response to a request goes back to the client's
// ephemeral port, which depends on the client (a NAT gateway and Elastic
// Load Balancing use 1024-65535). A network ACL is stateless, so it must
// pass the response on the whole range ("Ephemeral ports", "Network ACL
// rules", Amazon VPC User Guide).
const (
	ephemeralFrom = 1024
	ephemeralTo   = 65535
)

// passes reports whether the ACL passes every TCP packet between every
// address of peers and the subnet on ports from-to, in one direction
// (egress: leaving the subnet towards peers). Rules are evaluated from
// the lowest number up and the first match decides; a packet no rule
// matches is denied by the final "*" rule ("Network ACL rules", Amazon VPC
// User Guide).
//
// A rule that matches only part of the traffic (part of a range or of the
// ports) is read conservatively: a partial deny fails the check, a partial
// allow does not pass it and the walk goes on. Traffic that only several
// allow rules together pass is therefore reported as not passed.
func (a *nacl) passes(egress bool, peers []netip.Prefix, from, to int) (bool, string) {
	if !a.declared {
		return true, ""
	}
	rules := a.ingress
	dir, way := "inbound", "from"
	if egress {
		rules = a.egress
		dir, way = "outbound", "to"
	}
	for _, peer := range peers {
		passed := false
		for _, r := range rules {
			if !protoMatches(r.proto, "tcp") || !r.cidr.Overlaps(peer) || !portsOverlap(r, from, to) {
				continue
			}
			if !r.allow {
				return false, fmt.Sprintf("%s rule %d of %s denies %s tcp %s %s %s", dir, r.num, a.name, dir, portRange(from, to), way, peer)
			}
			if covers(r.cidr, peer) && (r.proto == "-1" || (r.from <= from && r.to >= to)) {
				passed = true
				break
			}
		}
		if !passed {
			return false, fmt.Sprintf("no %s rule of %s allows tcp %s %s %s (its final rule * denies it)", dir, a.name, portRange(from, to), way, peer)
		}
	}
	return true, ""
}

func portsOverlap(r *naclRule, from, to int) bool {
	return r.proto == "-1" || (r.from <= to && r.to >= from)
}

func portRange(from, to int) string {
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d-%d", from, to)
}

// covers reports whether outer contains every address of inner.
func covers(outer, inner netip.Prefix) bool {
	return outer.Bits() <= inner.Bits() && outer.Contains(inner.Addr())
}

// protoMatches reports whether a rule's protocol covers proto.
func protoMatches(rule, proto string) bool {
	return rule == "-1" || rule == proto
}

// hop is one end of a flow as the network ACLs see it: a subnet of the
// VPC, or addresses outside it (subnet nil).
type hop struct {
	subnet *subnet
	cidrs  []netip.Prefix
}

func subnetHop(s *subnet) hop { return hop{subnet: s, cidrs: []netip.Prefix{s.cidr}} }

// aclFlow checks the network ACLs a TCP connection from a to b on port
// crosses: a's outbound and b's inbound for the request, b's outbound and
// a's inbound for the response on the ephemeral ports. Traffic inside
// one subnet crosses no ACL. It returns the ACLs that decided (declared
// ones) and why it fails.
func aclFlow(a, b hop, port int) (deciding []string, why string) {
	if a.subnet != nil && a.subnet == b.subnet {
		return nil, ""
	}
	type check struct {
		h      hop
		egress bool
		peers  []netip.Prefix
		from   int
		to     int
		what   string
	}
	var checks []check
	if a.subnet != nil {
		checks = append(checks,
			check{a, true, b.cidrs, port, port, "the request"},
			check{a, false, b.cidrs, ephemeralFrom, ephemeralTo, "the response"})
	}
	if b.subnet != nil {
		checks = append(checks,
			check{b, false, a.cidrs, port, port, "the request"},
			check{b, true, a.cidrs, ephemeralFrom, ephemeralTo, "the response"})
	}
	for _, c := range checks {
		acl := c.h.subnet.networkACL()
		ok, reason := acl.passes(c.egress, c.peers, c.from, c.to)
		if !ok {
			return deciding, fmt.Sprintf("%s: %s (network ACLs are stateless: %s needs its own rule)", c.h.subnet.name, reason, c.what)
		}
		if acl.declared {
			deciding = appendUnique(deciding, acl.name)
		}
	}
	return deciding, ""
}

func appendUnique(list []string, vs ...string) []string {
	for _, v := range vs {
		found := false
		for _, x := range list {
			if x == v {
				found = true
				break
			}
		}
		if !found && v != "" {
			list = append(list, v)
		}
	}
	return list
}
