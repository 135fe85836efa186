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
	// TaskRoleArn is the cell's task role (its stack's taskRoleArn).
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
// other accounts: each task role its own prefix, and nothing else.
func cellGrantStatements(bucketArn string, grants []CellGrant, roles []string) []map[string]any {
	var out []map[string]any
	for i, g := range grants {
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

// bucketKey is the customer managed key of the fleet bucket when cells
// live in other accounts: objects under the AWS managed key aws/s3 cannot
// be read from another account (its key policy cannot be changed to allow
// it). The key policy keeps the owning account in charge (KMS refuses a
// policy that would lock it out) and lets each cell's task role use the
// key only through S3 in the bucket's region.
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
	policy := roles.ApplyT(func(arns []string) (string, error) {
		return policyJSON(map[string]any{
			"Version": "2012-10-17",
			"Statement": []map[string]any{
				{
					"Sid":       "OwningAccount",
					"Effect":    "Allow",
					"Principal": map[string]any{"AWS": fmt.Sprintf("arn:%s:iam::%s:root", part.Partition, id.AccountId)},
					"Action":    "kms:*",
					"Resource":  "*",
				},
				{
					"Sid":       "CellsThroughS3",
					"Effect":    "Allow",
					"Principal": map[string]any{"AWS": arns},
					"Action":    spec.FleetKeyActions,
					"Resource":  "*",
					"Condition": map[string]any{"StringEquals": map[string]any{"kms:ViaService": "s3." + region.Name + ".amazonaws.com"}},
				},
			},
		})
	}).(pulumi.StringOutput)
	return kms.NewKey(ctx, name+"-bucket-key", &kms.KeyArgs{
		Description:       pulumi.String("cellctl fleet bucket: cells in other accounts read and write their own prefixes"),
		EnableKeyRotation: pulumi.Bool(true),
		Policy:            policy,
		Tags:              tags,
	}, parent)
}
