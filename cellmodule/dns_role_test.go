package cellmodule

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// With cells:dnsAssumeRole the cell's two records — its name and its
// certificate's validation — are written by an explicit provider that
// assumes the zone account's role, and nothing else is; the cell exports
// the least-privilege policy that role needs (its own names only).
func TestDNSRecordsUseTheDNSRoleProvider(t *testing.T) {
	s := testSpec("cell-c", 3, "us-east-1", "single")
	const role = "arn:aws:iam::123456789012:role/cellctl-dns"
	r, err := runCellArgs(s, newTestModel(s.Region), nil, func(a *CellArgs) {
		a.DNSProvider = &aws.ProviderArgs{AssumeRole: &aws.ProviderAssumeRoleArgs{RoleArn: pulumi.String(role)}}
	})
	if err != nil {
		t.Fatal(err)
	}
	p := r.rec.ByName("cell-c-dns-provider")
	if p == nil {
		t.Fatal("no DNS provider")
	}
	if ar := p.Inputs["assumeRole"]; !strings.Contains(ar.String(), role) || p.Inputs["region"].StringValue() != "us-east-1" {
		t.Errorf("the DNS provider's inputs: %v", p.Inputs)
	}
	for _, res := range r.rec.Resources() {
		if !res.Custom || strings.HasPrefix(res.Type, "pulumi:providers:") {
			continue
		}
		onDNS := strings.Contains(res.Provider, "cell-c-dns-provider")
		wantDNS := res.Type == "aws:route53/record:Record"
		if onDNS != wantDNS {
			t.Errorf("%s %s: provider %q (records, and only records, use the DNS provider)", res.Type, res.Name, res.Provider)
		}
	}
	policy, _ := r.outputs["dnsRecordPolicy"].Value.(string)
	var doc struct {
		Statement []struct {
			Action    any
			Resource  any
			Condition map[string]map[string][]string
		}
	}
	if err := json.Unmarshal([]byte(policy), &doc); err != nil {
		t.Fatalf("dnsRecordPolicy %q: %v", policy, err)
	}
	names := doc.Statement[0].Condition["ForAllValues:StringLike"]["route53:ChangeResourceRecordSetsNormalizedRecordNames"]
	if doc.Statement[0].Action != "route53:ChangeResourceRecordSets" || len(names) != 2 || names[0] != s.DNSName() || names[1] != "_*."+s.DNSName() ||
		doc.Statement[0].Resource != "arn:aws:route53:::hostedzone/"+s.HostedZoneID {
		t.Errorf("the record policy must allow the cell's own names only: %s", policy)
	}

	// Without the role: no provider, no policy.
	plain := cachedRun(t, testCells()[0])
	if plain.rec.ByName("cell-a-dns-provider") != nil || plain.outputs["dnsRecordPolicy"].Value != nil {
		t.Error("a cell without cells:dnsAssumeRole has a DNS provider or policy")
	}
}
