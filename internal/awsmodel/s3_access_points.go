package awsmodel

import (
	"fmt"
	"strings"
)

// tAccessPoint is an S3 access point of a general purpose bucket: how the
// fleet bucket grants a cell in another account its prefix without a
// bucket policy statement per cell (router/component).
const tAccessPoint = "aws:s3/accessPoint:AccessPoint"

// S3PolicyMaxBytes is the size limit of a bucket policy and of an access
// point policy: 20 KB ("Bucket policies are limited to 20 KB in size",
// Amazon S3 User Guide, "Bucket policies for Amazon S3"; "Access point
// policies are limited to 20 KB in size", Amazon S3 User Guide, "Access
// points restrictions and limitations"). S3 counts the document without
// its white space, as IAM does.
const S3PolicyMaxBytes = 20 * 1024

// S3PolicySize is a policy document's size as S3 counts it against
// S3PolicyMaxBytes (white space outside strings dropped).
func S3PolicySize(doc string) int { return policySize(doc) }

// validAccessPointName is S3's naming rule for access points (Amazon S3
// User Guide, "Access points naming rules, restrictions, and
// limitations"): 3 to 50 characters, lowercase letters, numbers and
// hyphens, beginning with a letter or number, not beginning or ending
// with a hyphen, not ending with -s3alias or -ext-s3alias (reserved for
// aliases).
func validAccessPointName(n string) string {
	switch {
	case len(n) < 3 || len(n) > 50:
		return "access point names must be between 3 and 50 characters long"
	case !regexp_(`^[a-z0-9][a-z0-9-]*[a-z0-9]$`).MatchString(n):
		return "only lowercase letters, numbers and hyphens allowed; must begin and end with a letter or number"
	case strings.HasSuffix(n, "-s3alias"):
		return "access point names must not end with -s3alias (reserved for access point aliases)"
	}
	return ""
}

// AccessPointARN is an access point's ARN
// (arn:<partition>:s3:<region>:<account>:accesspoint/<name>).
func AccessPointARN(env Env, name string) string {
	env = env.normalized()
	return fmt.Sprintf("arn:%s:s3:%s:%s:accesspoint/%s", env.Partition, env.Region, env.Account, name)
}

func init() {
	register(&typeSpec{
		token: tAccessPoint,
		// terraform-provider-aws's aws_s3_access_point: CreateAccessPoint,
		// then PutAccessPointPolicy when a policy is set; every argument
		// but the policy replaces the access point.
		api:              apiInfo{"S3 Control", "S3 Access Point", ops("CreateAccessPoint", "PutAccessPointPolicy", "DeleteAccessPoint", "GetAccessPoint")},
		required:         []string{"bucket"},
		name:             &autoName{prop: "name", maxLen: 50, lower: true, unique: true},
		replaceAllExcept: []string{"policy"},
		refs:             []Reference{refBucket},
		outDefaults: map[string]any{
			"policy": "", "hasPublicAccessPolicy": false, "endpoints": map[string]any{},
			"publicAccessBlockConfiguration": map[string]any{"blockPublicAcls": true, "blockPublicPolicy": true,
				"ignorePublicAcls": true, "restrictPublicBuckets": true},
		},
		compute: func(c *calc) error {
			name := c.outStr("name")
			account := c.s("accountId")
			if account == "" {
				account = c.env.Account
			}
			c.id = account + ":" + name
			c.set("accountId", account)
			c.def("bucketAccountId", account)
			env := c.env
			env.Account = account
			c.set("arn", AccessPointARN(env, name))
			c.set("alias", name+"-"+newRand([]byte("accesspoint:"+account+":"+c.env.Region+":"+name)).Hex("alias", 34)+"-s3alias")
			c.set("domainName", fmt.Sprintf("%s-%s.s3-accesspoint.%s.%s", name, account, c.env.Region, c.env.DNSSuffix()))
			origin := "Internet"
			if _, ok := c.in["vpcConfiguration"]; ok && known(c.in, "vpcConfiguration") {
				origin = "VPC"
			}
			c.set("networkOrigin", origin)
			return nil
		},
		validate: func(v *validator) {
			if v.known("name") {
				if reason := validAccessPointName(v.s("name")); reason != "" {
					v.fail("name", "validating S3 Access Point (%s) name: %s", v.s("name"), reason)
				}
			}
			// "" or "{}" is no policy: terraform-provider-aws's update
			// deletes the access point's policy for either.
			if v.known("policy") && v.s("policy") != "" && v.s("policy") != "{}" {
				validPolicyDoc(v, "policy")
			}
		},
	})

	sizeRule := func(id, doc string, typ string) Rule {
		return Rule{
			ID: id, Doc: doc,
			// The code S3-compatible servers answer with (MinIO's
			// PolicyTooLarge, "Policy exceeds the maximum allowed document
			// size."); AWS's list of S3 error codes names none for it.
			Code:    "PolicyTooLarge",
			applies: types(typ),
			check: func(r ruleInput) string {
				if !known(r.in, "policy") {
					return ""
				}
				if n := policySize(str(r.in, "policy")); n > S3PolicyMaxBytes {
					return fmt.Sprintf("Policy exceeds the maximum allowed document size. (%d bytes without white space; the limit is %d)", n, S3PolicyMaxBytes)
				}
				return ""
			},
		}
	}
	rules = append(rules,
		sizeRule("s3.bucket-policy-size", "Amazon S3 User Guide, Bucket policies for Amazon S3: bucket policies are limited to 20 KB in size; "+
			"PutBucketPolicy refuses a larger one", tBucketPolicy),
		sizeRule("s3.access-point-policy-size", "Amazon S3 User Guide, Access points restrictions and limitations: access point policies are "+
			"limited to 20 KB in size; PutAccessPointPolicy refuses a larger one", tAccessPoint),
	)
}
