package awsmodel

import (
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// A key policy that grants another account's role the use of the key but
// leaves the owning account no way to change the policy again: KMS
// refuses it at CreateKey (unless the safety check is bypassed).
func kmsKeyCases() []ruleCase {
	cellOnly := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222233334444:role/cell-c-task"},"Action":["kms:Decrypt","kms:GenerateDataKey"],"Resource":"*"}]}`
	withRoot := `{"Version":"2012-10-17","Statement":[{"Sid":"Owner","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:root"},"Action":"kms:*","Resource":"*"},` +
		`{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222233334444:role/cell-c-task"},"Action":["kms:Decrypt","kms:GenerateDataKey"],"Resource":"*"}]}`
	env := Env{Partition: "aws", Account: "123456789012", Region: "us-east-1"}
	return []ruleCase{
		{rule: "kms.key-policy-lockout", typ: tKMSKey, env: env, bad: resource.PropertyMap{"policy": pv(cellOnly)},
			ok: resource.PropertyMap{"policy": pv(withRoot)}, contains: "will not allow you to update the key policy"},
		{rule: "kms.key-policy-lockout", typ: tKMSKey, env: env, bad: resource.PropertyMap{"policy": pv(strings.Replace(withRoot, "123456789012:root", "999999999999:root", 1))},
			ok: resource.PropertyMap{"policy": pv(cellOnly), "bypassPolicyLockoutSafetyCheck": pv(true)}, contains: "will not allow"},
	}
}

func TestKMSKeyWithoutPolicyGetsTheDefaultKeyPolicy(t *testing.T) {
	id, out := create(t, tKMSKey, "router-bucket-key", resource.PropertyMap{"enableKeyRotation": pv(true)}, testEnv)
	if str(out, "arn") != "arn:aws:kms:us-east-1:123456789012:key/"+id || str(out, "keyId") != id {
		t.Fatalf("arn %q, keyId %q, id %q", str(out, "arn"), str(out, "keyId"), id)
	}
	if !keyPolicyLetsAccountManage(str(out, "policy"), "123456789012") {
		t.Fatalf("default key policy %s does not let the account manage the key", str(out, "policy"))
	}
	if v := out["rotationPeriodInDays"]; !v.IsNumber() || v.NumberValue() != 365 {
		t.Fatalf("rotationPeriodInDays = %v, want KMS's default 365", v)
	}
}

func TestKMSKeyValidators(t *testing.T) {
	for _, tc := range []struct {
		in   resource.PropertyMap
		want string
	}{
		{resource.PropertyMap{"deletionWindowInDays": pv(3)}, "deletionWindowInDays"},
		{resource.PropertyMap{"rotationPeriodInDays": pv(30)}, "rotationPeriodInDays"},
		{resource.PropertyMap{"keyUsage": pv("DECRYPT")}, "keyUsage"},
		{resource.PropertyMap{"enableKeyRotation": pv(true), "customerMasterKeySpec": pv("RSA_2048"), "keyUsage": pv("SIGN_VERIFY")}, "symmetric"},
	} {
		_, failures := Check(CheckRequest{Type: tKMSKey, Name: "k", News: tc.in})
		if len(failures) == 0 || !strings.Contains(string(failures[0].Property)+" "+failures[0].Reason, tc.want) {
			t.Errorf("%v: failures %v, want one about %s", tc.in, failures, tc.want)
		}
	}
}
