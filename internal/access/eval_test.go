package access

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/policy"
)

const (
	acctA = "111111111111"
	acctB = "222222222222"
	roleA = "arn:aws:iam::111111111111:role/cell-a-task"
	roleB = "arn:aws:iam::222222222222:role/cell-b-task"
	bkt   = "arn:aws:s3:::fleet"
	keyA  = "arn:aws:kms:us-east-1:111111111111:key/k1"
)

func doc(st ...policy.Statement) policy.Document { return policy.New(st...) }

func allow(actions, resources []string) policy.Statement {
	return policy.Statement{Sid: "Allow", Effect: policy.Allow, Action: actions, Resource: resources}
}

// fleet is a bucket in account A with a customer managed key, cell-a's role
// in A and cell-b's role in B.
func fleet(keyPolicy policy.Document, bucketPolicy *policy.Document) *Model {
	m := NewModel()
	m.AddPrincipal(&Principal{ARN: roleA, Account: acctA, Label: "cell-a/task", Identity: []Policy{{Name: "a", Doc: doc(
		allow([]string{"s3:PutObject", "s3:GetObject"}, []string{bkt + "/cells/cell-a/*"}),
		policy.Statement{Sid: "Key", Effect: policy.Allow, Action: policy.Values{"kms:GenerateDataKey", "kms:Decrypt"},
			Resource:  policy.Values{"arn:aws:kms:us-east-1:*:key/*"},
			Condition: policy.Conditions{"StringEquals": {"kms:ViaService": {"s3.us-east-1.amazonaws.com"}}}},
	)}}})
	m.AddPrincipal(&Principal{ARN: roleB, Account: acctB, Label: "cell-b/task", Identity: []Policy{{Name: "b", Doc: doc(
		allow([]string{"s3:PutObject", "s3:GetObject"}, []string{bkt + "/cells/cell-b/*"}),
		policy.Statement{Sid: "Key", Effect: policy.Allow, Action: policy.Values{"kms:GenerateDataKey", "kms:Decrypt"},
			Resource:  policy.Values{"arn:aws:kms:us-east-1:111111111111:key/*"},
			Condition: policy.Conditions{"StringEquals": {"kms:ViaService": {"s3.us-east-1.amazonaws.com"}}}},
	)}}})
	m.AddResource(&Resource{ARN: keyA, Account: acctA, Region: "us-east-1", Kind: KindKey, Label: "key", Policy: &Policy{Name: "keypolicy", Doc: keyPolicy}})
	b := &Resource{ARN: bkt, Account: acctA, Region: "us-east-1", Kind: KindBucket, Label: "bucket", Key: keyA, BucketKey: true}
	if bucketPolicy != nil {
		b.Policy = &Policy{Name: "bucketpolicy", Doc: *bucketPolicy}
	}
	m.AddResource(b)
	return m
}

func rootKeyPolicy(extra ...policy.Statement) policy.Document {
	return doc(append([]policy.Statement{{Sid: "Root", Effect: policy.Allow, Principal: policy.AWSPrincipals("arn:aws:iam::" + acctA + ":root"),
		Action: policy.Values{"kms:*"}, Resource: policy.Values{"*"}}}, extra...)...)
}

func TestSameAccountIdentityAllowAndTheKeyThroughIAM(t *testing.T) {
	m := fleet(rootKeyPolicy(), nil)
	v := m.Evaluate(Request{Principal: "cell-a/task", Action: "s3:PutObject", Resource: bkt + "/cells/cell-a/x"})
	if v.Decision != Allowed || len(v.Implied) != 1 || v.Implied[0].Request.Action != "kms:GenerateDataKey" {
		t.Fatalf("got %+v", v)
	}
	v = m.Evaluate(Request{Principal: "cell-a/task", Action: "s3:PutObject", Resource: bkt + "/cells/cell-b/x"})
	if v.Decision != ImplicitDeny {
		t.Fatalf("another prefix: got %s (%s)", v.Decision, v.Reason)
	}
}

func TestAnObjectWriteWithoutTheKeyIsDenied(t *testing.T) {
	m := fleet(rootKeyPolicy(), nil)
	p := m.Principal("cell-a/task")
	p.Identity[0].Doc.Statement = p.Identity[0].Doc.Statement[:1] // no kms: statement
	v := m.Evaluate(Request{Principal: "cell-a/task", Action: "s3:PutObject", Resource: bkt + "/cells/cell-a/x"})
	if v.Decision != ImplicitDeny || !strings.Contains(v.Reason, "kms:GenerateDataKey") {
		t.Fatalf("got %s: %s", v.Decision, v.Reason)
	}
}

func TestAKeyPolicyWithoutTheRootDoesNotEnableIAM(t *testing.T) {
	m := fleet(doc(policy.Statement{Sid: "Admin", Effect: policy.Allow, Principal: policy.AWSPrincipals("arn:aws:iam::" + acctA + ":role/admin"),
		Action: policy.Values{"kms:*"}, Resource: policy.Values{"*"}}), nil)
	v := m.Evaluate(Request{Principal: "cell-a/task", Action: "s3:PutObject", Resource: bkt + "/cells/cell-a/x"})
	if v.Decision != ImplicitDeny {
		t.Fatalf("got %s: %s", v.Decision, v.Reason)
	}
}

func TestCrossAccountNeedsBothSides(t *testing.T) {
	m := fleet(rootKeyPolicy(), nil)
	v := m.Evaluate(Request{Principal: "cell-b/task", Action: "s3:PutObject", Resource: bkt + "/cells/cell-b/x"})
	if v.Decision != ImplicitDeny || !strings.Contains(v.Reason, "both") {
		t.Fatalf("no bucket grant: got %s: %s", v.Decision, v.Reason)
	}
	bp := doc(policy.Statement{Sid: "CellB", Effect: policy.Allow, Principal: policy.AWSPrincipals(roleB),
		Action: policy.Values{"s3:PutObject", "s3:GetObject"}, Resource: policy.Values{bkt + "/cells/cell-b/*"}})
	m = fleet(rootKeyPolicy(), &bp)
	v = m.Evaluate(Request{Principal: "cell-b/task", Action: "s3:PutObject", Resource: bkt + "/cells/cell-b/x"})
	if v.Decision != ImplicitDeny || !strings.Contains(v.Reason, "kms:GenerateDataKey") {
		t.Fatalf("bucket grant, no key grant: got %s: %s", v.Decision, v.Reason)
	}
	m = fleet(rootKeyPolicy(policy.Statement{Sid: "CellsThroughS3", Effect: policy.Allow, Principal: policy.AWSPrincipals(roleB),
		Action: policy.Values{"kms:GenerateDataKey", "kms:Decrypt"}, Resource: policy.Values{"*"},
		Condition: policy.Conditions{"StringEquals": {"kms:ViaService": {"s3.us-east-1.amazonaws.com"}}}}), &bp)
	v = m.Evaluate(Request{Principal: "cell-b/task", Action: "s3:GetObject", Resource: bkt + "/cells/cell-b/x"})
	if v.Decision != Allowed {
		t.Fatalf("both grants: got %s: %s", v.Decision, v.Reason)
	}
	// The key statement holds only through S3.
	v = m.Evaluate(Request{Principal: "cell-b/task", Action: "kms:Decrypt", Resource: keyA})
	if v.Decision != ImplicitDeny {
		t.Fatalf("direct kms:Decrypt: got %s: %s", v.Decision, v.Reason)
	}
}

func TestAnExplicitDenyWins(t *testing.T) {
	bp := doc(policy.Statement{Sid: "TLSOnly", Effect: policy.Deny, Principal: policy.Everyone(), Action: policy.Values{"s3:*"},
		Resource: policy.Values{bkt, bkt + "/*"}, Condition: policy.Conditions{"Bool": {"aws:SecureTransport": {"false"}}}})
	m := fleet(rootKeyPolicy(), &bp)
	req := Request{Principal: "cell-a/task", Action: "s3:GetObject", Resource: bkt + "/cells/cell-a/x"}
	if v := m.Evaluate(req); v.Decision != Allowed {
		t.Fatalf("over TLS: got %s: %s", v.Decision, v.Reason)
	}
	req.Context = map[string][]string{"aws:SecureTransport": {"false"}}
	if v := m.Evaluate(req); v.Decision != ExplicitDeny || v.Deciding[0].Sid != "TLSOnly" {
		t.Fatalf("plain HTTP: got %+v", v)
	}
}

func TestAnUnknownConditionKeyIsUndecidable(t *testing.T) {
	m := fleet(rootKeyPolicy(), nil)
	p := m.Principal("cell-a/task")
	p.Identity = []Policy{{Name: "a", Doc: doc(policy.Statement{Sid: "Odd", Effect: policy.Allow, Action: policy.Values{"s3:GetObject"},
		Resource: policy.Values{"*"}, Condition: policy.Conditions{"StringEquals": {"aws:RequestedRegion": {"us-east-1"}}}})}}
	v := m.Evaluate(Request{Principal: "cell-a/task", Action: "s3:GetObject", Resource: bkt + "/cells/cell-a/x"})
	if v.Decision != Undecidable || !strings.Contains(v.Reason, "aws:RequestedRegion") {
		t.Fatalf("got %s: %s", v.Decision, v.Reason)
	}
}

func TestConditionOperators(t *testing.T) {
	cases := []struct {
		op      string
		got     []string
		present bool
		want    []string
		holds   bool
	}{
		{"StringLike", []string{"cells/cell-a/x"}, true, []string{"cells/cell-a/", "cells/cell-a/*"}, true},
		{"StringLike", []string{"cells/cell-b/"}, true, []string{"cells/cell-a/", "cells/cell-a/*"}, false},
		{"StringLike", nil, false, []string{"cells/cell-a/*"}, false},
		{"StringNotEquals", nil, false, []string{"x"}, true},
		{"StringEqualsIfExists", nil, false, []string{"x"}, true},
		{"StringNotEquals", []string{"x"}, true, []string{"x"}, false},
		{"ArnLike", []string{"arn:aws:cloudfront::1:distribution/E1"}, true, []string{"arn:aws:cloudfront::1:distribution/*"}, true},
		{"Bool", []string{"true"}, true, []string{"false"}, false},
		{"Null", nil, false, []string{"true"}, true},
		{"Null", []string{"v"}, true, []string{"true"}, false},
		{"ForAllValues:StringEquals", []string{"A", "B"}, true, []string{"A", "B", "C"}, true},
		{"ForAllValues:StringEquals", []string{"A", "D"}, true, []string{"A", "B"}, false},
		{"ForAnyValue:StringEquals", []string{"A", "D"}, true, []string{"D"}, true},
	}
	for _, c := range cases {
		got, err := condition(c.op, c.got, c.present, c.want)
		if err != nil || got != c.holds {
			t.Errorf("%s %v (present %v) against %v: got %v, %v; want %v", c.op, c.got, c.present, c.want, got, err, c.holds)
		}
	}
	if _, err := condition("NumericLessThan", []string{"1"}, true, []string{"2"}); err == nil {
		t.Error("an operator cellctl does not evaluate must be undecidable")
	}
}

func TestTrustPolicyDecidesRoleAssumption(t *testing.T) {
	m := NewModel()
	m.AddPrincipal(&Principal{ARN: "ecs-tasks.amazonaws.com", Service: true, Label: "ecs-tasks"})
	m.AddPrincipal(&Principal{ARN: "lambda.amazonaws.com", Service: true, Label: "lambda"})
	m.AddResource(&Resource{ARN: roleA, Account: acctA, Kind: KindRole, Label: "role", Policy: &Policy{Name: "trust", Doc: doc(policy.Statement{
		Effect: policy.Allow, Principal: policy.ServicePrincipals("ecs-tasks.amazonaws.com"), Action: policy.Values{"sts:AssumeRole"},
		Condition: policy.Conditions{"StringEquals": {"aws:SourceAccount": {acctA}}}})}})
	ok := m.Evaluate(Request{Principal: "ecs-tasks", Action: "sts:AssumeRole", Resource: roleA, Context: map[string][]string{"aws:SourceAccount": {acctA}}})
	if ok.Decision != Allowed {
		t.Fatalf("ecs-tasks: got %s: %s", ok.Decision, ok.Reason)
	}
	for _, req := range []Request{
		{Principal: "ecs-tasks", Action: "sts:AssumeRole", Resource: roleA, Context: map[string][]string{"aws:SourceAccount": {acctB}}},
		{Principal: "lambda", Action: "sts:AssumeRole", Resource: roleA},
	} {
		if v := m.Evaluate(req); v.Decision != ImplicitDeny {
			t.Errorf("%s: got %s: %s", req, v.Decision, v.Reason)
		}
	}
}

func TestAWSManagedKeyRefusesAnotherAccount(t *testing.T) {
	m := NewModel()
	m.AddPrincipal(&Principal{ARN: roleB, Account: acctB, Label: "b", Identity: []Policy{{Name: "b", Doc: doc(allow([]string{"s3:GetObject", "kms:Decrypt"}, []string{"*"}))}}})
	managed := m.AddAWSManagedKey("aws", "us-east-1", acctA, "s3")
	bp := doc(policy.Statement{Sid: "B", Effect: policy.Allow, Principal: policy.AWSPrincipals(roleB), Action: policy.Values{"s3:GetObject"}, Resource: policy.Values{bkt + "/*"}})
	m.AddResource(&Resource{ARN: bkt, Account: acctA, Region: "us-east-1", Kind: KindBucket, Label: "bucket", Key: managed.ARN, Policy: &Policy{Name: "bp", Doc: bp}})
	v := m.Evaluate(Request{Principal: "b", Action: "s3:GetObject", Resource: bkt + "/x"})
	if v.Decision != ImplicitDeny {
		t.Fatalf("got %s: %s", v.Decision, v.Reason)
	}
}

func TestWildcard(t *testing.T) {
	for _, c := range []struct {
		p, s string
		fold bool
		want bool
	}{
		{"s3:Get*", "s3:GetObject", true, true},
		{"s3:get*", "S3:GetObject", true, true},
		{"arn:aws:s3:::b/cells/cell-a/*", "arn:aws:s3:::b/cells/cell-a/x/y", false, true},
		{"arn:aws:s3:::b/cells/cell-a/*", "arn:aws:s3:::b/cells/cell-ab/x", false, false},
		{"a?c", "abc", false, true},
		{"*a*b*", "xxaxxbxx", false, true},
		{"*a*b", "xxaxxbxx", false, false},
	} {
		if got := wildcard(c.p, c.s, c.fold); got != c.want {
			t.Errorf("wildcard(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}

// The bucket key grants hold only for the fleet bucket's encryption
// context (with S3 Bucket Keys, the bucket's ARN): the iam-simulate judge
// cannot see this key, so it is decided here.
func TestEncryptionContextConditions(t *testing.T) {
	m := fleet(rootKeyPolicy(), nil)
	p := m.Principal("cell-a/task")
	p.Identity[0].Doc.Statement[1].Condition["StringEquals"]["kms:EncryptionContext:aws:s3:arn"] = policy.Values{bkt}
	ok := m.Evaluate(Request{Principal: "cell-a/task", Action: "s3:PutObject", Resource: bkt + "/cells/cell-a/x"})
	if ok.Decision != Allowed || ok.Implied[0].Request.Context["kms:EncryptionContext:aws:s3:arn"][0] != bkt {
		t.Fatalf("the fleet bucket: got %+v", ok)
	}
	other := m.Evaluate(Request{Principal: "cell-a/task", Action: "kms:GenerateDataKey", Resource: keyA, Context: map[string][]string{
		"kms:ViaService": {"s3.us-east-1.amazonaws.com"}, "kms:EncryptionContext:aws:s3:arn": {"arn:aws:s3:::another-bucket"}}})
	if other.Decision != ImplicitDeny {
		t.Fatalf("another bucket under the same key: got %s: %s", other.Decision, other.Reason)
	}
	// Without Bucket Keys the context is the object's ARN, which the
	// bucket-ARN condition does not match.
	m.ResourceByLabel("bucket").BucketKey = false
	if v := m.Evaluate(Request{Principal: "cell-a/task", Action: "s3:PutObject", Resource: bkt + "/cells/cell-a/x"}); v.Decision != ImplicitDeny {
		t.Fatalf("object-level context: got %s: %s", v.Decision, v.Reason)
	}
}
