package access

import (
	"testing"

	"github.com/cellctl/cellctl/internal/policy"
)

const apB = "arn:aws:s3:us-east-1:111111111111:accesspoint/cell-b-0123abcd"

// delegation is the bucket policy statement that hands cross-account
// access to the bucket account's access points (router/component).
func delegation() policy.Statement {
	return policy.Statement{Sid: "Delegate", Effect: policy.Allow, Principal: policy.AWSPrincipals("*"),
		Action:   policy.Values{"s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:ListBucket"},
		Resource: policy.Values{bkt, bkt + "/*"},
		Condition: policy.Conditions{
			"StringEquals": {"s3:DataAccessPointAccount": {acctA}},
			"ArnLike":      {"s3:DataAccessPointArn": {"arn:aws:s3:us-east-1:111111111111:accesspoint/*"}},
		}}
}

// withAccessPoint is the fleet of eval_test.go with cell-b (account B)
// granted its prefix through its access point in account A, and its
// identity policy allowing that access point.
func withAccessPoint(t *testing.T, bucketPolicy policy.Document, apPolicy *policy.Document) *Model {
	t.Helper()
	m := fleet(rootKeyPolicy(policy.Statement{Sid: "B", Effect: policy.Allow, Principal: policy.AWSPrincipals(roleB),
		Action: policy.Values{"kms:Decrypt", "kms:GenerateDataKey"}, Resource: policy.Values{"*"},
		Condition: policy.Conditions{"StringEquals": {"kms:ViaService": {"s3.us-east-1.amazonaws.com"}}}}), &bucketPolicy)
	b := m.Principal("cell-b/task")
	b.Identity[0].Doc.Statement = append(b.Identity[0].Doc.Statement,
		allow([]string{"s3:PutObject", "s3:GetObject"}, []string{apB + "/object/cells/cell-b/*"}))
	ap := &Resource{ARN: apB, Account: acctA, Region: "us-east-1", Kind: KindAccessPoint, Label: "ap-b"}
	if apPolicy != nil {
		ap.Policy = &Policy{Name: "ap-b policy", Doc: *apPolicy}
	}
	m.AddResource(ap)
	if err := m.AttachAccessPoint("ap-b", "bucket"); err != nil {
		t.Fatal(err)
	}
	return m
}

func apGrant(principal, res string) policy.Document {
	return doc(policy.Statement{Sid: "Cell", Effect: policy.Allow, Principal: policy.AWSPrincipals(principal),
		Action: policy.Values{"s3:GetObject", "s3:PutObject"}, Resource: policy.Values{res}})
}

// A request through an access point needs the caller's identity policy
// and the access point's policy on the access point's ARN, and the
// bucket's policy on the bucket's — which a delegation statement gives
// only to requests through the bucket account's access points (Amazon S3
// User Guide, "Configuring IAM policies for using access points").
func TestAccessPointRequestsNeedTheAccessPointAndTheBucket(t *testing.T) {
	grant := apGrant(roleB, apB+"/object/cells/cell-b/*")
	for _, tc := range []struct {
		name   string
		bucket policy.Document
		ap     *policy.Document
		req    Request
		want   Decision
	}{
		{"granted and delegated", doc(delegation()), &grant,
			Request{Principal: "cell-b/task", Action: "s3:PutObject", Resource: apB + "/object/cells/cell-b/x"}, Allowed},
		{"the bucket does not delegate", doc(), &grant,
			Request{Principal: "cell-b/task", Action: "s3:PutObject", Resource: apB + "/object/cells/cell-b/x"}, ImplicitDeny},
		{"no access point policy", doc(delegation()), nil,
			Request{Principal: "cell-b/task", Action: "s3:PutObject", Resource: apB + "/object/cells/cell-b/x"}, ImplicitDeny},
		{"another prefix through its own access point", doc(delegation()), &grant,
			Request{Principal: "cell-b/task", Action: "s3:PutObject", Resource: apB + "/object/cells/cell-a/x"}, ImplicitDeny},
		{"the delegation does not open the bucket itself", doc(delegation()), &grant,
			Request{Principal: "cell-b/task", Action: "s3:PutObject", Resource: bkt + "/cells/cell-b/x"}, ImplicitDeny},
		{"a bucket Deny applies through the access point", doc(delegation(), policy.Statement{Sid: "NoPuts", Effect: policy.Deny,
			Principal: policy.Everyone(), Action: policy.Values{"s3:PutObject"}, Resource: policy.Values{bkt + "/*"}}), &grant,
			Request{Principal: "cell-b/task", Action: "s3:PutObject", Resource: apB + "/object/cells/cell-b/x"}, ExplicitDeny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := withAccessPoint(t, tc.bucket, tc.ap)
			v := m.Evaluate(tc.req)
			if v.Decision != tc.want {
				t.Fatalf("got %s (%s), want %s", v.Decision, v.Reason, tc.want)
			}
			if v.Decision == Allowed && (len(v.Implied) != 1 || v.Implied[0].Request.Resource != keyA ||
				v.Implied[0].Request.Context["kms:EncryptionContext:aws:s3:arn"][0] != bkt) {
				t.Fatalf("the write through the access point must use the bucket's key with the bucket's ARN as context: %+v", v.Implied)
			}
		})
	}
}

// The isolation claim covers the access points: another cell never
// reaches a cell's prefix through that cell's access point, and a cell
// never leaves its prefix through its own.
func TestForbiddenPathsGoThroughAccessPoints(t *testing.T) {
	wide := apGrant(roleB, apB+"/object/*")
	m := withAccessPoint(t, doc(delegation()), &wide)
	b := m.Principal("cell-b/task")
	b.Owner, m.Principal("cell-a/task").Owner = "cell-b", "cell-a"
	b.Identity[0].Doc.Statement = append(b.Identity[0].Doc.Statement, allow([]string{"s3:GetObject"}, []string{apB + "/object/*"}))
	m.ResourceByLabel("bucket").Owner = "router"
	m.ResourceByLabel("ap-b").Owner = "router"
	for _, p := range []struct{ owner, prefix string }{{"cell-a", "cells/cell-a/"}, {"cell-b", "cells/cell-b/"}} {
		if err := m.AddPrefix("bucket", p.owner, p.prefix); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.SetAccessPointOwner("ap-b", "cell-b"); err != nil {
		t.Fatal(err)
	}
	isCell := func(o string) bool { return o == "cell-a" || o == "cell-b" }
	rep := m.CheckForbidden(isCell)
	found := false
	for _, f := range rep.Findings {
		if f.Path.Principal == "cell-b/task" && f.Path.Resource == "ap-b" && f.Path.Suffix == "/object/cells/cell-a/probe" {
			found = true
		}
	}
	if !found {
		t.Fatalf("an access point policy wider than its cell's prefix was not found: %+v", rep.Findings)
	}
	if len(m.Forbidden(isCell)) != rep.Total {
		t.Fatalf("written-out claim %d paths, decided %d", len(m.Forbidden(isCell)), rep.Total)
	}
}
