package cellmodule

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/cellctl/cellctl/cellmodule/spec"
)

// SubnetLayout is how a cell's /16 is divided over the three AZs.
//
//	private  (app)  /19 × 3   10.N.0.0   – 10.N.95.255   8187 usable each: Fargate ENIs
//	public          /20 × 3   10.N.96.0  – 10.N.143.255  ALB nodes and NAT gateways
//	isolated (data) /21 × 3   10.N.144.0 – 10.N.167.255  Aurora and ElastiCache
//	spare                     10.N.168.0 – 10.N.255.255  reserved for later tiers
//
// Larger blocks come first so every block is aligned to its size.
type SubnetLayout struct {
	Public   [spec.AZCount]netip.Prefix
	Private  [spec.AZCount]netip.Prefix
	Isolated [spec.AZCount]netip.Prefix
}

// Tiers returns the layout as tier name → prefixes, in a stable order.
func (l SubnetLayout) Tiers() []struct {
	Name     string
	Prefixes [spec.AZCount]netip.Prefix
} {
	return []struct {
		Name     string
		Prefixes [spec.AZCount]netip.Prefix
	}{{"public", l.Public}, {"private", l.Private}, {"isolated", l.Isolated}}
}

// CarveSubnets divides a cell's VPC range (an IPv4 /16) into the three tiers.
func CarveSubnets(vpc netip.Prefix) (SubnetLayout, error) {
	var l SubnetLayout
	if !vpc.IsValid() || !vpc.Addr().Is4() || vpc.Bits() != 16 || vpc.Masked() != vpc {
		return l, fmt.Errorf("VPC range %s: a cell needs an IPv4 /16 such as 10.1.0.0/16", vpc)
	}
	for az := 0; az < spec.AZCount; az++ {
		var err error
		if l.Private[az], err = cidrSubnet(vpc, 3, az); err != nil {
			return l, err
		}
		if l.Public[az], err = cidrSubnet(vpc, 4, 6+az); err != nil {
			return l, err
		}
		if l.Isolated[az], err = cidrSubnet(vpc, 5, 18+az); err != nil {
			return l, err
		}
	}
	return l, nil
}

// cidrSubnet is Terraform's cidrsubnet for IPv4: the num-th block of
// base's length + newBits inside base.
func cidrSubnet(base netip.Prefix, newBits, num int) (netip.Prefix, error) {
	bits := base.Bits() + newBits
	if bits > 32 || num < 0 || num >= 1<<newBits {
		return netip.Prefix{}, fmt.Errorf("block %d of /%d does not fit in %s", num, bits, base)
	}
	a := base.Masked().Addr().As4()
	v := binary.BigEndian.Uint32(a[:]) + uint32(num)<<(32-bits)
	binary.BigEndian.PutUint32(a[:], v)
	return netip.PrefixFrom(netip.AddrFrom4(a), bits), nil
}
