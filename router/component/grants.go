package component

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/kms"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule/spec"
)

// CellGrant is a cell in another account than the fleet bucket's: its
// task role is granted its own prefix of the bucket by the bucket policy
// (a cross-account request needs the bucket owner's grant as well as the
// caller's identity policy), and the use of the bucket's key through S3.
type CellGrant struct {
	Cell string
	// Prefix is the cell's own prefix ("cells/<id>/").
	Prefix string
	// TaskRoleArn is the cell's task role (its stack's taskRoleArn). It
	// may resolve to "" for a drained cell whose stack no longer has one
	// (destroyed): there is no role left to grant, and AWS refuses a
	// bucket or key policy naming a principal that does not exist.
	TaskRoleArn pulumi.StringInput
}

// GrantSid is the bucket policy statement id of a cell's grant.
func GrantSid(cell, what string) string {
	return "Cell" + sidSafe(cell) + what
}

func sidSafe(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			out = append(out, r)
		}
	}
	return string(out)
}

// grantRoles are the grants' task roles, resolved once for the bucket
// policy and the key policy.
func grantRoles(grants []CellGrant) pulumi.StringArrayOutput {
	roles := make(pulumi.StringArray, len(grants))
	for i, g := range grants {
		roles[i] = g.TaskRoleArn
	}
	return roles.ToStringArrayOutput()
}

// cellGrantStatements are the bucket policy's statements for the cells in
// other accounts: each task role its own prefix, and nothing else. A
// grant whose role resolved empty (a destroyed, drained cell) has none.
func cellGrantStatements(bucketArn string, grants []CellGrant, roles []string) []map[string]any {
	var out []map[string]any
	for i, g := range grants {
		if roles[i] == "" {
			continue
		}
		out = append(out,
			map[string]any{
				"Sid":       GrantSid(g.Cell, "Objects"),
				"Effect":    "Allow",
				"Principal": map[string]any{"AWS": roles[i]},
				"Action":    spec.PrefixObjectActions,
				"Resource":  bucketArn + "/" + g.Prefix + "*",
			},
			map[string]any{
				"Sid":       GrantSid(g.Cell, "List"),
				"Effect":    "Allow",
				"Principal": map[string]any{"AWS": roles[i]},
				"Action":    spec.PrefixListActions,
				"Resource":  bucketArn,
				"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": []string{g.Prefix, g.Prefix + "*"}}},
			})
	}
	return out
}

// BucketKeyPolicy is the fleet bucket key's policy. The owning account's
// root gets kms:* unconditioned: that is what lets IAM policies in the
// account grant the key — the cells in the router's account use it through
// their task policies alone — and KMS refuses a policy that would lock the
// account out ("Key policies in AWS KMS" and CreateKey's
// BypassPolicyLockoutSafetyCheck, AWS KMS Developer Guide and API
// Reference). The task roles of cells in other accounts get their own
// statement, through S3 only and only for the fleet bucket (the bucket's
// ARN is the encryption context with S3 Bucket Keys enabled), because a
// cross-account caller needs the key policy's allow as well as its own
// ("Allowing users in other accounts to use a KMS key"); it is left out
// when there is none, as a statement with an empty principal list is not a
// valid policy. Empty roles (destroyed cells) are skipped.
func BucketKeyPolicy(partition, account, region, bucketArn string, roles []string) (string, error) {
	statements := []map[string]any{{
		"Sid":       "OwningAccount",
		"Effect":    "Allow",
		"Principal": map[string]any{"AWS": fmt.Sprintf("arn:%s:iam::%s:root", partition, account)},
		"Action":    "kms:*",
		"Resource":  "*",
	}}
	var arns []string
	for _, r := range roles {
		if r != "" {
			arns = append(arns, r)
		}
	}
	if len(arns) > 0 {
		statements = append(statements, map[string]any{
			"Sid":       "CellsThroughS3",
			"Effect":    "Allow",
			"Principal": map[string]any{"AWS": arns},
			"Action":    spec.FleetKeyActions,
			"Resource":  "*",
			"Condition": map[string]any{"StringEquals": map[string]any{
				"kms:ViaService":                  spec.ViaS3(region),
				spec.FleetKeyEncryptionContextKey: bucketArn,
			}},
		})
	}
	return policyJSON(map[string]any{"Version": "2012-10-17", "Statement": statements})
}

// bucketKey is the customer managed key of the fleet bucket, always: one
// encryption configuration for every fleet, so no change to the fleet
// (a cell moving to another account, the last one leaving) ever switches
// the bucket's encryption under running cells. Objects under the AWS
// managed key aws/s3 could not be read from another account (its key
// policy cannot be changed, "AWS managed keys", AWS KMS Developer Guide).
//
// Its lifetime is the objects': every object written since it became the
// bucket's default is encrypted under it, and deleting it makes them
// unreadable for good ("Deleting AWS KMS keys", AWS KMS Developer Guide).
// So it is protected (an update that drops it, or a destroy, fails instead
// of scheduling its deletion) and retained on delete (even a released
// protection only forgets it); retiring it is the operator's documented
// procedure (docs/LIFECYCLE.md, "The fleet bucket's key"), never a
// cellctl step.
func (r *Router) bucketKey(ctx *pulumi.Context, name string, roles pulumi.StringArrayOutput, tags pulumi.StringMap, parent pulumi.ResourceOption) (*kms.Key, error) {
	id, err := aws.GetCallerIdentity(ctx, &aws.GetCallerIdentityArgs{}, pulumi.Parent(r))
	if err != nil {
		return nil, fmt.Errorf("looking up the router's account for the fleet bucket key: %w", err)
	}
	region, err := aws.GetRegion(ctx, &aws.GetRegionArgs{}, pulumi.Parent(r))
	if err != nil {
		return nil, fmt.Errorf("looking up the router's region for the fleet bucket key: %w", err)
	}
	part, err := aws.GetPartition(ctx, &aws.GetPartitionArgs{}, pulumi.Parent(r))
	if err != nil {
		return nil, fmt.Errorf("looking up the AWS partition: %w", err)
	}
	policy := pulumi.All(r.Bucket.Arn, roles).ApplyT(func(vs []any) (string, error) {
		bucketArn, _ := vs[0].(string)
		arns, _ := vs[1].([]string)
		return BucketKeyPolicy(part.Partition, id.AccountId, region.Name, bucketArn, arns)
	}).(pulumi.StringOutput)
	return kms.NewKey(ctx, name+"-bucket-key", &kms.KeyArgs{
		Description:       pulumi.String("cellctl fleet bucket: every cell reads and writes its own prefix through S3"),
		EnableKeyRotation: pulumi.Bool(true),
		Policy:            policy,
		Tags:              tags,
	}, parent, pulumi.Protect(true), pulumi.RetainOnDelete(true))
}
