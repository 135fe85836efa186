package awsmodel

import (
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// An adopted subnet (read with no recorded inputs) gets its inputs from its
// live state, including what AWS chose itself (availabilityZoneId). The
// program never sets those: the next up must update nothing, never
// replace the subnet, which would conflict with its own CIDR.
func TestAdoptedResourceKeepsWhatAWSChose(t *testing.T) {
	state := resource.NewPropertyMapFromMap(map[string]any{
		"vpcId":              "vpc-1",
		"cidrBlock":          "10.1.112.0/20",
		"availabilityZone":   "us-east-1b",
		"availabilityZoneId": "use1-az2",
		"ipv6Native":         false,
	})
	olds := InputsFromState("aws:ec2/subnet:Subnet", nil, state, nil)
	news := resource.NewPropertyMapFromMap(map[string]any{
		"vpcId":            "vpc-1",
		"cidrBlock":        "10.1.112.0/20",
		"availabilityZone": "us-east-1b",
		"__defaults":       []any{},
	})
	d := Diff("aws:ec2/subnet:Subnet", olds, news, nil)
	if len(d.ChangedKeys) != 0 || len(d.ReplaceKeys) != 0 {
		t.Fatalf("adopted subnet: changed %v, replace %v; want no change", d.ChangedKeys, d.ReplaceKeys)
	}
	// What the program does ask for is still compared.
	news["cidrBlock"] = resource.NewStringProperty("10.1.128.0/20")
	if d := Diff("aws:ec2/subnet:Subnet", olds, news, nil); len(d.ReplaceKeys) == 0 {
		t.Fatalf("a new CIDR on an adopted subnet: %+v, want a replacement", d)
	}
	// Without adoption (inputs recorded at create), dropping a key is a change.
	recorded := news.Copy()
	recorded["availabilityZoneId"] = resource.NewStringProperty("use1-az2")
	recorded["cidrBlock"] = resource.NewStringProperty("10.1.112.0/20")
	news["cidrBlock"] = resource.NewStringProperty("10.1.112.0/20")
	if d := Diff("aws:ec2/subnet:Subnet", recorded, news, nil); len(d.ChangedKeys) == 0 {
		t.Fatalf("a recorded input dropped: no change reported")
	}
}
