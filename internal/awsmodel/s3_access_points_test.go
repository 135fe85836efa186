package awsmodel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// bucketPolicyOf is a bucket policy of n statements of about 510
// characters each once white space is dropped: the size a per-cell grant
// took before the fleet bucket delegated to access points (router
// component, issue 36).
func bucketPolicyOf(n int) string {
	var stmts []string
	for i := 0; i < n; i++ {
		role := fmt.Sprintf("arn:aws:iam::%012d:role/cell-%03d-task-role-abcdef0", 200000000000+i, i)
		stmts = append(stmts,
			fmt.Sprintf(`{"Sid":"Cell%03dObjects","Effect":"Allow","Principal":{"AWS":%q},"Action":["s3:GetObject","s3:PutObject","s3:DeleteObject"],"Resource":"arn:aws:s3:::fleet-bucket/cells/cell-%03d/*"}`, i, role, i),
			fmt.Sprintf(`{"Sid":"Cell%03dList","Effect":"Allow","Principal":{"AWS":%q},"Action":["s3:ListBucket"],"Resource":"arn:aws:s3:::fleet-bucket","Condition":{"StringLike":{"s3:prefix":["cells/cell-%03d/","cells/cell-%03d/*"]}}}`, i, role, i, i))
	}
	return `{"Version":"2012-10-17","Statement":[` + strings.Join(stmts, ",") + `]}`
}

// s3PolicyCases feed the size limits of S3's bucket and access point
// policies.
func s3PolicyCases() []ruleCase {
	ap := func(policy string) resource.PropertyMap {
		return resource.PropertyMap{"bucket": pv("fleet-bucket"), "name": pv("cell-a-0123abcd"), "policy": pv(policy)}
	}
	return []ruleCase{
		{rule: "s3.bucket-policy-size", typ: tBucketPolicy,
			// 41 cells of the old per-cell grant pass 20 KB; 39 did not.
			bad:      resource.PropertyMap{"bucket": pv("fleet-bucket"), "policy": pv(bucketPolicyOf(41))},
			ok:       resource.PropertyMap{"bucket": pv("fleet-bucket"), "policy": pv(bucketPolicyOf(39))},
			contains: "Policy exceeds the maximum allowed document size"},
		{rule: "s3.access-point-policy-size", typ: tAccessPoint,
			bad: ap(bucketPolicyOf(41)), ok: ap(bucketPolicyOf(1)), contains: "Policy exceeds the maximum allowed document size"},
	}
}

// TestOldPerCellGrantsPassTheBucketPolicyLimitNear40Cells measures the
// design issue 36 retired: a bucket policy statement pair per
// cross-account cell passes S3's 20 KB at about 40 cells.
func TestOldPerCellGrantsPassTheBucketPolicyLimitNear40Cells(t *testing.T) {
	rule, _ := RuleByID("s3.bucket-policy-size")
	first := 0
	for n := 1; n <= 256 && first == 0; n++ {
		in := resource.PropertyMap{"bucket": pv("fleet-bucket"), "policy": pv(bucketPolicyOf(n))}
		if rule.check(ruleInput{typ: tBucketPolicy, in: in}) != "" {
			first = n
		}
	}
	if first < 35 || first > 45 {
		t.Fatalf("the old design first passes 20 KB at %d cells, want about 40", first)
	}
	t.Logf("per-cell bucket grants pass 20 KB at %d cells (%d bytes per cell)", first, policySize(bucketPolicyOf(2))-policySize(bucketPolicyOf(1)))
}

// TestAccessPointNamesAndOutputs: an access point's ARN, alias and
// domain follow S3's forms, and a name S3 refuses is refused.
func TestAccessPointNamesAndOutputs(t *testing.T) {
	m := NewMock(Env{Region: "eu-west-1"})
	mustCreate(t, m, tBucket, "fleet", resource.PropertyMap{"bucket": pv("fleet-bucket")})
	id, out, err := m.NewResource(tAccessPoint, "ap", resource.PropertyMap{"bucket": pv("fleet-bucket"), "name": pv("cell-a-0123abcd")}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"arn":           "arn:aws:s3:eu-west-1:123456789012:accesspoint/cell-a-0123abcd",
		"domainName":    "cell-a-0123abcd-123456789012.s3-accesspoint.eu-west-1.amazonaws.com",
		"networkOrigin": "Internet",
		"accountId":     "123456789012",
	}
	if id != "123456789012:cell-a-0123abcd" {
		t.Errorf("id %q", id)
	}
	for k, v := range want {
		if got := str(out, k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if a := str(out, "alias"); !strings.HasPrefix(a, "cell-a-0123abcd-") || !strings.HasSuffix(a, "-s3alias") {
		t.Errorf("alias %q", a)
	}
	for _, bad := range []string{"ab", "Cell-a", "-cell", "cell-", "cell_a", "cell.a", "cell-a-s3alias", strings.Repeat("a", 51)} {
		if _, _, err := m.NewResource(tAccessPoint, "bad-"+bad, resource.PropertyMap{"bucket": pv("fleet-bucket"), "name": pv(bad)}, ""); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
}
