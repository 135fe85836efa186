package isolation

import (
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/offline"
)

const (
	home     = "123456789012"
	second   = "222233334444"
	cellRole = "arn:aws:iam::222233334444:role/cell-c-task-role-1a2b3c"
)

func withPolicy(typ, name, key, doc string) *offline.Resource {
	return &offline.Resource{Type: typ, Name: name, Custom: true, Inputs: resource.PropertyMap{resource.PropertyKey(key): resource.NewStringProperty(doc)}}
}

func grantsOf(t *testing.T, stack GrantStack) []string {
	t.Helper()
	var out []string
	for _, v := range CrossAccountGrants([]GrantStack{stack}, []DeclaredGrant{{Cell: "cell-c", TaskRoleArn: cellRole, Prefix: "cells/cell-c/"}}) {
		if v.Rule != RuleCrossAccountGrant {
			t.Fatalf("rule %s", v.Rule)
		}
		out = append(out, v.String())
	}
	return out
}

func TestDeclaredGrantsPass(t *testing.T) {
	bucket := `{"Statement":[
	 {"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::fleet/*"},
	 {"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":["s3:GetObject","s3:PutObject","s3:DeleteObject"],"Resource":"arn:aws:s3:::fleet/cells/cell-c/*"},
	 {"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::fleet","Condition":{"StringLike":{"s3:prefix":["cells/cell-c/","cells/cell-c/*"]}}}]}`
	key := `{"Statement":[
	 {"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::` + home + `:root"},"Action":"kms:*","Resource":"*"},
	 {"Effect":"Allow","Principal":{"AWS":["` + cellRole + `"]},"Action":["kms:Decrypt","kms:GenerateDataKey"],"Resource":"*","Condition":{"StringEquals":{"kms:ViaService":"s3.us-east-1.amazonaws.com"}}}]}`
	trust := `{"Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	got := grantsOf(t, GrantStack{Name: "router", Account: home, Resources: []*offline.Resource{
		withPolicy("aws:s3/bucketPolicy:BucketPolicy", "router-bucket-policy", "policy", bucket),
		withPolicy("aws:kms/key:Key", "router-bucket-key", "policy", key),
		withPolicy("aws:iam/role:Role", "router-edge-role", "assumeRolePolicy", trust),
	}})
	if len(got) != 0 {
		t.Fatalf("declared grants reported: %v", got)
	}
}

func TestUndeclaredGrantsAreFindings(t *testing.T) {
	for _, tc := range []struct {
		name, typ, key, doc, want string
	}{
		{"a trust of another account", "aws:iam/role:Role", "assumeRolePolicy",
			`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::999988887777:root"},"Action":"sts:AssumeRole"}]}`, "999988887777"},
		{"everyone", "aws:sqs/queuePolicy:QueuePolicy", "policy",
			`{"Statement":{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Resource":"*"}}`, "allows everyone"},
		{"a cell's role on a queue", "aws:sqs/queuePolicy:QueuePolicy", "policy",
			`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":"sqs:SendMessage","Resource":"*"}]}`, "its declared grant is its prefix"},
		{"another cell's prefix", "aws:s3/bucketPolicy:BucketPolicy", "policy",
			`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::fleet/cells/cell-a/*"}]}`, "outside its own prefix"},
		{"more than its actions", "aws:s3/bucketPolicy:BucketPolicy", "policy",
			`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":"s3:*","Resource":"arn:aws:s3:::fleet/cells/cell-c/*"}]}`, "s3:*"},
		{"listing the whole bucket", "aws:s3/bucketPolicy:BucketPolicy", "policy",
			`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::fleet"}]}`, "conditioned on s3:prefix"},
		{"listing another prefix", "aws:s3/bucketPolicy:BucketPolicy", "policy",
			`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::fleet","Condition":{"StringLike":{"s3:prefix":"cells/"}}}]}`, "outside its own prefix"},
		{"the key outside S3", "aws:kms/key:Key", "policy",
			`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":"kms:Decrypt","Resource":"*"}]}`, "kms:ViaService"},
		{"managing the key", "aws:kms/key:Key", "policy",
			`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":"kms:PutKeyPolicy","Resource":"*","Condition":{"StringEquals":{"kms:ViaService":"s3.us-east-1.amazonaws.com"}}}]}`, "kms:PutKeyPolicy"},
		{"an account id principal", "aws:s3/bucketPolicy:BucketPolicy", "policy",
			`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + second + `"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::fleet/cells/cell-c/*"}]}`, "account " + second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := grantsOf(t, GrantStack{Name: "router", Account: home, Resources: []*offline.Resource{withPolicy(tc.typ, "r", tc.key, tc.doc)}})
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Fatalf("findings %v, want one containing %q", got, tc.want)
			}
		})
	}
}

// A cell's own-account principals (its lane queue policy names its own
// task role) are not cross-account.
func TestOwnAccountPrincipalsAreNotGrants(t *testing.T) {
	doc := `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"` + cellRole + `"},"Action":"sqs:SendMessage","Resource":"*"}]}`
	if got := grantsOf(t, GrantStack{Name: "cell-c", Account: second, Resources: []*offline.Resource{withPolicy("aws:sqs/queuePolicy:QueuePolicy", "q", "policy", doc)}}); len(got) != 0 {
		t.Fatalf("%v", got)
	}
}
