package cellmodule

import (
	"net/netip"
	"testing"

	"github.com/cellctl/cellctl/cellmodule/spec"
)

func TestCarveSubnetsFitsTheVPCWithoutOverlap(t *testing.T) {
	for _, index := range []int{0, 1, 7, 255} {
		c := spec.Cell{Index: index}
		vpc := netip.MustParsePrefix(c.CIDR())
		l, err := CarveSubnets(vpc)
		if err != nil {
			t.Fatalf("index %d: %v", index, err)
		}
		var all []netip.Prefix
		for _, tier := range l.Tiers() {
			for _, p := range tier.Prefixes {
				if !vpc.Contains(p.Addr()) || p.Bits() < vpc.Bits() {
					t.Errorf("%s subnet %s is outside the VPC %s", tier.Name, p, vpc)
				}
				if p.Masked() != p {
					t.Errorf("%s subnet %s is not aligned", tier.Name, p)
				}
				all = append(all, p)
			}
		}
		if len(all) != 3*spec.AZCount {
			t.Fatalf("got %d subnets, want %d", len(all), 3*spec.AZCount)
		}
		for i := range all {
			for j := i + 1; j < len(all); j++ {
				if all[i].Overlaps(all[j]) {
					t.Errorf("index %d: %s overlaps %s", index, all[i], all[j])
				}
			}
		}
	}
}

func TestCarveSubnetsLayout(t *testing.T) {
	l, err := CarveSubnets(netip.MustParsePrefix("10.7.0.0/16"))
	if err != nil {
		t.Fatal(err)
	}
	want := SubnetLayout{
		Private:  [3]netip.Prefix{netip.MustParsePrefix("10.7.0.0/19"), netip.MustParsePrefix("10.7.32.0/19"), netip.MustParsePrefix("10.7.64.0/19")},
		Public:   [3]netip.Prefix{netip.MustParsePrefix("10.7.96.0/20"), netip.MustParsePrefix("10.7.112.0/20"), netip.MustParsePrefix("10.7.128.0/20")},
		Isolated: [3]netip.Prefix{netip.MustParsePrefix("10.7.144.0/21"), netip.MustParsePrefix("10.7.152.0/21"), netip.MustParsePrefix("10.7.160.0/21")},
	}
	if l != want {
		t.Errorf("layout = %+v\nwant %+v", l, want)
	}
}

func TestCarveSubnetsRejectsWhatIsNotACellRange(t *testing.T) {
	for _, bad := range []string{"10.1.0.0/24", "10.1.0.0/8", "10.1.2.0/16", "fd00::/16"} {
		if _, err := CarveSubnets(netip.MustParsePrefix(bad)); err == nil {
			t.Errorf("CarveSubnets(%s) succeeded, want an error", bad)
		}
	}
	if _, err := CarveSubnets(netip.Prefix{}); err == nil {
		t.Error("CarveSubnets(zero prefix) succeeded, want an error")
	}
}
