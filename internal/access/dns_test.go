package access

import (
	"testing"

	"github.com/cellctl/cellctl/internal/offline"
)

// cell-a's DNS role with the policy cellmodule.DNSRecordPolicy exports,
// and cell-b's record in the same zone.
func dnsFleet(t *testing.T, names string) *Model {
	t.Helper()
	m := NewModel()
	stack := func(id string) offline.Stack {
		return offline.Stack{Name: id, Owner: id, Account: acctA, Region: "us-east-1", Partition: "aws"}
	}
	m.addRecord(stack("cell-a"), "cell-a/dns", "Z1", "cell-a.cells.example.com")
	m.addRecord(stack("cell-b"), "cell-b/dns", "Z1", "cell-b.cells.example.com")
	doc := `{"Statement":[{"Action":"route53:ChangeResourceRecordSets","Condition":{"ForAllValues:StringLike":{"route53:ChangeResourceRecordSetsNormalizedRecordNames":` + names + `}},"Effect":"Allow","Resource":"arn:aws:route53:::hostedzone/Z1","Sid":"CellRecordsOnly"}],"Version":"2012-10-17"}`
	if err := m.AddDNSRole("cell-a", "arn:aws:iam::"+acctB+":role/cellctl-dns", doc); err != nil {
		t.Fatal(err)
	}
	return m
}

// Route 53 puts the record names in the condition key normalized
// (lowercase, no trailing dot, other characters as octal escapes): a
// request for Cell-A.Cells.Example.COM. is a request for
// cell-a.cells.example.com, and the wildcard record *.… is \052.…, which
// only a policy's StringLike "*" matches.
func TestRecordNamesAreNormalizedBeforeMatching(t *testing.T) {
	m := dnsFleet(t, `["cell-a.cells.example.com","_*.cell-a.cells.example.com"]`)
	zone := HostedZoneARN("aws", "Z1")
	if got := m.ResourceByLabel(HostedZoneLabel("Z1")); got == nil || got.Account != acctB || got.Kind != KindHostedZone {
		t.Fatalf("the zone, in the DNS role's account: %+v", got)
	}
	for _, tc := range []struct {
		names []string
		want  Decision
	}{
		{[]string{"cell-a.cells.example.com"}, Allowed},
		{[]string{"Cell-A.Cells.Example.COM."}, Allowed},
		{[]string{"_3F2A.cell-a.cells.example.com."}, Allowed},
		{[]string{"cell-a.cells.example.com", "_x.cell-a.cells.example.com"}, Allowed},
		{[]string{"cell-b.cells.example.com"}, ImplicitDeny},
		{[]string{"cell-a.cells.example.com", "cell-b.cells.example.com"}, ImplicitDeny},
		{[]string{"*.cell-a.cells.example.com"}, ImplicitDeny},
		{[]string{"x.cell-a.cells.example.com"}, ImplicitDeny},
	} {
		v := m.Evaluate(Request{Principal: DNSRoleLabel("cell-a"), Action: "route53:ChangeResourceRecordSets", Resource: zone,
			Context: map[string][]string{NormalizedRecordNamesKey: tc.names}})
		if v.Decision != tc.want {
			t.Errorf("%v: %s (%s), want %s", tc.names, v.Decision, v.Reason, tc.want)
		}
	}
}

func TestNormalizeRecordName(t *testing.T) {
	for in, want := range map[string]string{
		"Cell-A.Cells.Example.COM.": "cell-a.cells.example.com",
		"*.App.Example.com.":        `\052.app.example.com`,
		`\052.app.example.com`:      `\052.app.example.com`,
		"a b.example.com":           `a\040b.example.com`,
		"_x.Y":                      "_x.y",
	} {
		if got := NormalizeRecordName(in); got != want {
			t.Errorf("NormalizeRecordName(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every rendered record is a forbidden target of every principal of
// another owner: a DNS role loosened to the whole domain reaches cell-b's
// name, and the finding names the statement that allows it.
func TestALoosenedDNSRoleReachesAnotherCellsRecord(t *testing.T) {
	isCell := func(o string) bool { return o == "cell-a" || o == "cell-b" }
	if rep := dnsFleet(t, `["cell-a.cells.example.com","_*.cell-a.cells.example.com"]`).CheckForbidden(isCell); len(rep.Findings) != 0 || rep.Total != 1 || rep.Denied != 1 {
		t.Fatalf("as exported: %+v", rep)
	}
	rep := dnsFleet(t, `["*.cells.example.com"]`).CheckForbidden(isCell)
	if len(rep.Findings) != 1 {
		t.Fatalf("loosened: %+v", rep)
	}
	f := rep.Findings[0]
	if f.Path.Principal != DNSRoleLabel("cell-a") || f.Path.Context[NormalizedRecordNamesKey][0] != "cell-b.cells.example.com" ||
		f.Decision != Allowed || len(f.Deciding) != 1 || f.Deciding[0].Sid != "CellRecordsOnly" {
		t.Fatalf("finding: %+v", f)
	}
}
