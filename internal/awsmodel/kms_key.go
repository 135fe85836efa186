package awsmodel

import (
	"fmt"
	"github.com/cellctl/cellctl/internal/policy"
	"slices"
	"strings"
)

// A customer managed KMS key (pulumi-aws aws:kms/key:Key, CreateKey).
// The fleet bucket always has one, so that a cell in another account can
// read what it wrote: objects encrypted under the AWS managed key aws/s3
// cannot be read from another account, because an AWS managed key's policy
// cannot be changed to grant it ("AWS managed keys", AWS KMS Developer
// Guide; "Using encryption for cross-account operations", Amazon S3 User
// Guide).
//
// Sources: the KMS API Reference, CreateKey (Description up to 8192
// characters, KeyUsage, KeySpec, BypassPolicyLockoutSafetyCheck), and
// terraform-provider-aws internal/service/kms/key.go (the validators the
// bridged provider runs before the API: deletion_window_in_days 7–30,
// rotation_period_in_days 90–2560, key rotation for symmetric encryption
// keys only).
const tKMSKey = "aws:kms/key:Key"

// KMS key usages and specs (CreateKey, KeyUsage and KeySpec).
var (
	kmsKeyUsages = []string{"ENCRYPT_DECRYPT", "SIGN_VERIFY", "GENERATE_VERIFY_MAC", "KEY_AGREEMENT"}
	kmsKeySpecs  = []string{"SYMMETRIC_DEFAULT", "RSA_2048", "RSA_3072", "RSA_4096", "ECC_NIST_P256", "ECC_NIST_P384",
		"ECC_NIST_P521", "ECC_SECG_P256K1", "HMAC_224", "HMAC_256", "HMAC_384", "HMAC_512", "SM2"}
)

// KMSLockoutMessage is CreateKey's MalformedPolicyDocumentException when
// the key policy would not let the account change it again.
const KMSLockoutMessage = "The new key policy will not allow you to update the key policy in the future."

func init() {
	register(&typeSpec{
		token:    tKMSKey,
		api:      apiInfo{"KMS", "KMS Key", ops("CreateKey", "PutKeyPolicy", "ScheduleKeyDeletion", "DescribeKey")},
		replace:  []string{"customerMasterKeySpec", "keyUsage", "multiRegion", "customKeyStoreId", "xksKeyId"},
		defaults: map[string]any{"bypassPolicyLockoutSafetyCheck": false},
		outDefaults: map[string]any{
			"description": "", "keyUsage": "ENCRYPT_DECRYPT", "customerMasterKeySpec": "SYMMETRIC_DEFAULT",
			"isEnabled": true, "enableKeyRotation": false, "multiRegion": false, "deletionWindowInDays": 30,
			"customKeyStoreId": "", "xksKeyId": "",
		},
		compute: func(c *calc) error {
			id := c.r.UUID("key-id")
			c.id = id
			c.set("keyId", id)
			c.set("arn", c.env.regional("kms", "key/"+id))
			if c.s("policy") == "" {
				// CreateKey without a policy attaches the default key
				// policy: the account may use and manage the key through IAM.
				c.set("policy", defaultKeyPolicy(c.env))
			}
			if c.s("rotationPeriodInDays") == "" && c.in["enableKeyRotation"].IsBool() && c.in["enableKeyRotation"].BoolValue() {
				c.set("rotationPeriodInDays", 365)
			}
			return nil
		},
		validate: func(v *validator) {
			if v.has("policy") {
				validPolicyDoc(v, "policy")
			}
			if v.known("description") && len(v.s("description")) > 8192 {
				v.fail("description", "expected length of description to be in the range (0 - 8192)")
			}
			v.enum("keyUsage", kmsKeyUsages...)
			v.enum("customerMasterKeySpec", kmsKeySpecs...)
			v.intRange("deletionWindowInDays", 7, 30)
			v.intRange("rotationPeriodInDays", 90, 2560)
			if v.known("enableKeyRotation") && v.in["enableKeyRotation"].IsBool() && v.in["enableKeyRotation"].BoolValue() {
				if spec := v.s("customerMasterKeySpec"); spec != "" && spec != "SYMMETRIC_DEFAULT" {
					v.fail("enableKeyRotation", "key rotation is supported only on symmetric encryption KMS keys (customerMasterKeySpec SYMMETRIC_DEFAULT)")
				}
			}
		},
	})

	rules = append(rules, Rule{
		ID: "kms.key-policy-lockout",
		Doc: "AWS KMS API Reference, CreateKey: BypassPolicyLockoutSafetyCheck — the key policy must allow the " +
			"principal that makes the CreateKey request to make a subsequent PutKeyPolicy request",
		Code:    "MalformedPolicyDocumentException",
		applies: types(tKMSKey),
		check: func(r ruleInput) string {
			if !known(r.in, "policy") || str(r.in, "policy") == "" {
				return ""
			}
			if b, ok := r.in["bypassPolicyLockoutSafetyCheck"]; ok && b.IsBool() && b.BoolValue() {
				return ""
			}
			if keyPolicyLetsAccountManage(str(r.in, "policy"), r.env.Account) {
				return ""
			}
			return KMSLockoutMessage
		},
	})
}

// defaultKeyPolicy is the key policy KMS attaches when CreateKey has none
// (policy.DefaultKeyPolicy, "Default key policy", AWS KMS Developer Guide).
func defaultKeyPolicy(env Env) string {
	doc, _ := policy.DefaultKeyPolicy(env.normalized().Partition, env.Account).JSON()
	return doc
}

// keyPolicyLetsAccountManage reports whether an unconditioned Allow
// statement of policy lets the account (its root, and so its IAM
// principals) call kms:PutKeyPolicy: the caller of CreateKey is one of
// them.
func keyPolicyLetsAccountManage(doc, account string) bool {
	d, err := policy.Parse(doc)
	if err != nil {
		return false
	}
	for _, s := range d.Statement {
		if s.Effect != policy.Allow || len(s.Condition) > 0 {
			continue
		}
		if !slices.ContainsFunc(s.Action, func(a string) bool {
			return a == "*" || strings.EqualFold(a, "kms:*") || strings.EqualFold(a, "kms:PutKeyPolicy") || strings.EqualFold(a, "kms:Put*")
		}) {
			continue
		}
		for _, p := range s.Principal.AWS() {
			if p == "*" || p == account || p == fmt.Sprintf("arn:aws:iam::%s:root", account) ||
				(strings.HasPrefix(p, "arn:") && strings.HasSuffix(p, ":iam::"+account+":root")) {
				return true
			}
		}
	}
	return false
}
