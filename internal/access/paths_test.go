package access

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/policy"
)

// crossPaths are the written-out cross-account paths, "principal action
// resource+suffix" each.
func crossPaths(m *Model, isCell func(string) bool) map[string]bool {
	out := map[string]bool{}
	for _, p := range m.Forbidden(isCell) {
		if strings.Contains(p.Name, " across accounts (") {
			out[p.Principal+" "+p.Action+" "+p.Resource+p.Suffix] = true
		}
	}
	return out
}

// Every principal is tried on the data of every resource of another
// account — a router principal and one of neither a cell nor the router
// alike, each action once — except the resources declared shared, and the
// access points into a declared bucket; CheckForbidden decides the same
// paths as the written-out claim, and an allowed one names the statements
// that allow it.
func TestCrossAccountPathsLeaveOutDeclaredSharedParts(t *testing.T) {
	grant := apGrant(roleB, apB+"/object/cells/cell-b/*")
	m := withAccessPoint(t, doc(delegation()), &grant)
	m.Principal("cell-a/task").Owner, m.Principal("cell-b/task").Owner = "cell-a", "cell-b"
	m.AddPrincipal(&Principal{ARN: "arn:aws:iam::222222222222:role/audit", Account: acctB, Owner: "audit", Label: "audit/role"})
	for _, l := range []string{"bucket", "key", "ap-b"} {
		m.ResourceByLabel(l).Owner = "router"
	}
	isCell := func(o string) bool { return o == "cell-a" || o == "cell-b" }
	check := func(what string) ForbiddenReport {
		t.Helper()
		rep := m.CheckForbidden(isCell)
		full := m.CheckDenied(m.Forbidden(isCell))
		findings := 0
		for _, x := range full {
			if x.Finding {
				findings++
			}
		}
		if len(full) != rep.Total || findings != len(rep.Findings) || len(crossPaths(m, isCell)) != rep.CrossAccount {
			t.Fatalf("%s: written out %d paths (%d across accounts), %d findings; decided %d (%d), %d", what, len(full),
				len(crossPaths(m, isCell)), findings, rep.Total, rep.CrossAccount, len(rep.Findings))
		}
		return rep
	}

	rep := check("nothing declared")
	cross := crossPaths(m, isCell)
	for _, want := range []string{
		"cell-b/task kms:Decrypt key", "cell-b/task s3:GetObject bucket/probe", "cell-b/task s3:GetObject ap-b/object/probe",
		// The router's key administration is tried from a cell already;
		// a principal of no cell gets it as data only.
		"audit/role kms:Decrypt key", "audit/role s3:ListBucket bucket",
	} {
		if !cross[want] {
			t.Errorf("no cross-account path %s", want)
		}
	}
	for p := range cross {
		if strings.HasPrefix(p, "cell-a/") || strings.Contains(p, "kms:PutKeyPolicy") {
			t.Errorf("%s: the same account, or the administration family's", p)
		}
	}
	if len(rep.Findings) > 0 || rep.Denied != rep.Total {
		t.Fatalf("findings: %+v", rep.Findings)
	}

	m.DeclareShared(bkt)
	check("the bucket declared")
	for p := range crossPaths(m, isCell) {
		if strings.Contains(p, " bucket") || strings.Contains(p, " ap-b") {
			t.Errorf("%s: the bucket is declared shared, and the access point is its", p)
		}
	}

	// A direct grant of the undeclared key across accounts is a finding
	// naming both statements; declared, it is not one.
	key := m.ResourceByLabel("key")
	key.Policy.Doc.Statement = append(key.Policy.Doc.Statement, policy.Statement{Sid: "BDecrypts", Effect: policy.Allow,
		Principal: policy.AWSPrincipals(roleB), Action: policy.Values{"kms:Decrypt"}, Resource: policy.Values{"*"}})
	key.Policy = &Policy{Name: key.Policy.Name, Doc: key.Policy.Doc} // a fresh principal index
	b := m.Principal("cell-b/task")
	b.Identity[0].Doc.Statement = append(b.Identity[0].Doc.Statement, policy.Statement{Sid: "DirectKey", Effect: policy.Allow,
		Action: policy.Values{"kms:Decrypt"}, Resource: policy.Values{keyA}})
	rep = check("a direct grant of the key")
	if len(rep.Findings) != 1 || rep.Findings[0].Describe() != "cell-b/task kms:Decrypt key" ||
		!strings.HasSuffix(rep.Findings[0].Reason, "; allowed by b DirectKey (Allow), keypolicy BDecrypts (Allow)") {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	m.DeclareShared(keyA)
	if rep = check("the key declared"); len(rep.Findings) != 0 || rep.CrossAccount != 0 {
		t.Fatalf("declared: %d findings, %d cross-account paths", len(rep.Findings), rep.CrossAccount)
	}
}
