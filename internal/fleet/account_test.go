package fleet

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// baselineWith is a fleet baseline (Pulumi.yaml) with extra config lines.
func baselineWith(extra string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(`name: cells
runtime: go
main: cmd/cells
stackConfigDir: stacks
config:
  cells:image: registry.example.com/app:1.0.0
  cells:fleetBucket: test-fleet-bucket
  cells:fleetDomain: cells.example.com
  cells:hostedZoneId: Z0123456789ABCDEFGHIJ
  cells:certificateArn: arn:aws:acm:us-east-1:123456789012:certificate/abc-123
  aws:region: us-east-1
` + extra)}
}

// A fleet baseline names the role every stack assumes; one cell moves to
// another account with the JSON form `pulumi config set` writes; a third
// declares only the account its default credentials reach.
func TestAccessFollowsTheCell(t *testing.T) {
	fsys := caseFS(t, nil)
	fsys["Pulumi.yaml"] = baselineWith(`  aws:assumeRole:
    value:
      roleArn: arn:aws:iam::123456789012:role/cellctl-deploy
      sessionName: cellctl
`)
	fsys["stacks/Pulumi.cell-b.yaml"] = &fstest.MapFile{Data: []byte(`config:
  cells:index: 2
  aws:assumeRole: '{"roleArn":"arn:aws:iam::222233334444:role/team/cellctl-deploy","externalId":"tenant-b","duration":"30m"}'
  aws:allowedAccountIds: ["222233334444"]
`)}
	f, err := LoadFS(fsys, "FLEET")
	if err != nil {
		t.Fatal(err)
	}
	a := f.Cell("cell-a")
	b := f.Cell("cell-b")
	want := Access{Account: "123456789012", Region: "us-east-1",
		Role: AssumeRole{RoleARN: "arn:aws:iam::123456789012:role/cellctl-deploy", SessionName: "cellctl"}}
	if got := a.Access(); got != want {
		t.Errorf("cell-a (baseline role) = %+v, want %+v", got, want)
	}
	want = Access{Account: "222233334444", Region: "us-east-1",
		Role: AssumeRole{RoleARN: "arn:aws:iam::222233334444:role/team/cellctl-deploy", ExternalID: "tenant-b", Duration: 30 * time.Minute}}
	if got := b.Access(); got != want {
		t.Errorf("cell-b (own role, JSON form) = %+v, want %+v", got, want)
	}
	if got := f.Router.Access(); got.Account != "123456789012" || got.Role.RoleARN != "arn:aws:iam::123456789012:role/cellctl-deploy" {
		t.Errorf("router inherits the baseline role: %+v", got)
	}
	if got := f.Accounts(); len(got) != 2 || got[0] != "123456789012" || got[1] != "222233334444" {
		t.Errorf("accounts = %v", got)
	}
	if a.Access().SameAccount(b.Access()) || !a.Access().SameAccount(f.Router.Access().InRegion("eu-west-1")) {
		t.Error("SameAccount compares account and credentials, not region")
	}
}

// With no account settings a stack reads with the default chain: the
// single-account fleets every existing user has keep working unchanged.
func TestAccessDefaultsToTheCallersAccount(t *testing.T) {
	f, err := LoadFS(caseFS(t, nil), "FLEET")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Cells {
		if got := c.Access(); got != (Access{Region: "us-east-1"}) || got.AccountLabel() != "default" {
			t.Errorf("%s: %+v", c.ID, got)
		}
	}
	if got := f.Accounts(); len(got) != 1 || got[0] != "" {
		t.Errorf("accounts = %q", got)
	}
}

// The fleet's zone lives in the home account: the baseline names the role
// cells' DNS records are written through; a cell in another account then
// writes and reads its zone through it, and a stack file may override it.
// The router has no such key: its viewer records are its own provider's.
func TestDNSRoleFollowsTheZone(t *testing.T) {
	fsys := caseFS(t, nil)
	fsys["Pulumi.yaml"] = baselineWith(`  cells:dnsAssumeRole:
    value:
      roleArn: arn:aws:iam::123456789012:role/cellctl-dns
`)
	fsys["stacks/Pulumi.cell-b.yaml"] = &fstest.MapFile{Data: []byte(`config:
  cells:index: 2
  aws:assumeRole:
    roleArn: arn:aws:iam::222233334444:role/cellctl-deploy
`)}
	f, err := LoadFS(fsys, "FLEET")
	if err != nil {
		t.Fatal(err)
	}
	want := Access{Account: "123456789012", Region: "us-east-1", Role: AssumeRole{RoleARN: "arn:aws:iam::123456789012:role/cellctl-dns"}}
	if got := f.Cell("cell-b").DNSAccess(); got != want {
		t.Errorf("cell-b's DNS access = %+v, want %+v", got, want)
	}
	if got := f.Cell("cell-b").Access(); got.Account != "222233334444" {
		t.Errorf("cell-b's own access = %+v", got)
	}

	fsys["stacks/Pulumi.router.yaml"] = &fstest.MapFile{Data: []byte(`config:
  cells:dnsAssumeRole:
    roleArn: arn:aws:iam::123456789012:role/cellctl-dns
`)}
	if _, err := LoadFS(fsys, "FLEET"); err == nil || !strings.Contains(err.Error(), "stacks/Pulumi.router.yaml:2") || !strings.Contains(err.Error(), "applies to cells only") {
		t.Errorf("the router's cells:dnsAssumeRole: %v", err)
	}
	fsys["stacks/Pulumi.router.yaml"] = &fstest.MapFile{Data: []byte("config: {}\n")}
	fsys["stacks/Pulumi.cell-b.yaml"] = &fstest.MapFile{Data: []byte(`config:
  cells:index: 2
  cells:dnsAssumeRole:
    roleArn: not-an-arn
`)}
	if _, err := LoadFS(fsys, "FLEET"); err == nil || !strings.Contains(err.Error(), "stacks/Pulumi.cell-b.yaml:4") || !strings.Contains(err.Error(), "is not an IAM role ARN") {
		t.Errorf("a malformed DNS role: %v", err)
	}
}
