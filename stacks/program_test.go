package stacks_test

import (
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/stacks"
)

// TestDNSProviderCarriesTheEmulatorSettings: a cell's DNS provider (with
// cells:dnsAssumeRole) is an explicit provider, which inherits nothing
// from the stack: rehearsing against a local emulator, it must take the
// stack's endpoints, path-style S3 and skip flags, or its records would
// be written to AWS while the rest of the cell goes to the emulator. It
// passed only the region and the role.
func TestDNSProviderCarriesTheEmulatorSettings(t *testing.T) {
	dir := fleettest.Demo(t)
	fleettest.Edit(t, dir, "stacks/Pulumi.cell-a.yaml", func(s string) string {
		return s + "  cells:dnsAssumeRole:\n    roleArn: arn:aws:iam::123456789012:role/cellctl-dns\n" +
			"  aws:endpoints:\n    - route53: http://127.0.0.1:5000\n      sts: http://127.0.0.1:5000\n" +
			"  aws:s3UsePathStyle: true\n  aws:skipCredentialsValidation: true\n  aws:skipRequestingAccountId: true\n"
	})
	f := fleettest.Load(t, dir)
	key := f.ConfigKey(fleet.OriginVerifyKey)
	rec, _, err := offline.Run(offline.Options{Project: f.Project, Stack: "cell-a", SecretKeys: []string{key},
		Config: map[string]string{key: "s3cret",
			"aws:endpoints":                 `[{"route53":"http://127.0.0.1:5000","sts":"http://127.0.0.1:5000"}]`,
			"aws:s3UsePathStyle":            "true",
			"aws:skipCredentialsValidation": "true",
			"aws:skipRequestingAccountId":   "true",
		}}, awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: "123456789012", Region: "us-east-1"}), stacks.Program(f))
	if err != nil {
		t.Fatal(err)
	}
	p := rec.ByName("cell-a-dns-provider")
	if p == nil {
		t.Fatal("no DNS provider")
	}
	in := p.Inputs
	if !strings.Contains(in["endpoints"].String(), "http://127.0.0.1:5000") || !strings.Contains(in["endpoints"].String(), "route53") {
		t.Errorf("the DNS provider's endpoints: %v", in["endpoints"])
	}
	for _, k := range []string{"s3UsePathStyle", "skipCredentialsValidation", "skipRequestingAccountId"} {
		if v := in[resourceKey(k)]; !strings.Contains(v.String(), "true") {
			t.Errorf("the DNS provider's %s: %v, want true", k, v)
		}
	}
	if in["region"].StringValue() != "us-east-1" || !strings.Contains(in["assumeRole"].String(), "cellctl-dns") {
		t.Errorf("region %v, assumeRole %v", in["region"], in["assumeRole"])
	}
}

func resourceKey(k string) resource.PropertyKey { return resource.PropertyKey(k) }
