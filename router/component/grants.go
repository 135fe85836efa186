package component

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/kms"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/s3"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/policy"
)

// CellGrant is a cell in another account than the fleet bucket's: its
// task role is granted its own prefix of the bucket through its own
// access point (a cross-account request needs the bucket owner's grant as
// well as the caller's identity policy: the access point's policy, to
// which the bucket policy delegates), and the use of the bucket's key
// through S3.
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

// grantRoles are the grants' task roles, resolved once for the bucket
// policy and the key policy.
func grantRoles(grants []CellGrant) pulumi.StringArrayOutput {
	roles := make(pulumi.StringArray, len(grants))
	for i, g := range grants {
		roles[i] = g.TaskRoleArn
	}
	return roles.ToStringArrayOutput()
}

// DelegationSid is the bucket policy statement that delegates the cells'
// grants to the bucket account's access points.
const DelegationSid = "DelegateToAccessPoints"

// delegationStatement is the bucket policy's one statement for every cell
// in another account: requests made through an access point the bucket's
// own account owns are decided by that access point's policy — "both the
// access point and the underlying bucket must permit the request", and a
// bucket delegates by allowing everyone on the condition
// s3:DataAccessPointAccount is its account (Amazon S3 User Guide,
// "Configuring IAM policies for using access points" and "Delegating
// access control to access points"). The account is fixed in
// s3:DataAccessPointArn too: Block Public Access calls a policy public
// unless it grants to fixed values of the keys it lists ("The meaning of
// public", Amazon S3 User Guide), and the copy of that list found while
// building this named neither key, so the policy gives S3 both forms
// (docs/ARCHITECTURE.md, "Known limits"). Only the actions
// a cell has on its prefix are delegated, so no access point policy can
// grant more. One statement whatever the number of cells: a statement
// pair per cell passed S3's 20 KB bucket policy limit at about 40 cells
// (awsmodel s3.bucket-policy-size).
func delegationStatement(partition, region, account, bucketArn string) policy.Statement {
	return policy.Statement{
		Sid:       DelegationSid,
		Effect:    policy.Allow,
		Principal: policy.AWSPrincipals("*"),
		Action:    append(append(policy.Values{}, spec.PrefixObjectActions...), spec.PrefixListActions...),
		Resource:  policy.Values{bucketArn, bucketArn + "/*"},
		Condition: policy.Conditions{
			"StringEquals": {"s3:DataAccessPointAccount": {account}},
			"ArnLike":      {"s3:DataAccessPointArn": {spec.AccessPointARN(partition, region, account, "*")}},
		},
		Scalar: []string{"Principal", "Condition"},
	}
}

// AccessPointPolicy is the policy of a cross-account cell's access point:
// the cell's task role, its own prefix through this access point, and
// nothing else (objects as <access point ARN>/object/<key>, the listing
// on the access point's ARN conditioned on s3:prefix; Amazon S3 User
// Guide, "Configuring IAM policies for using access points"). A grant
// whose role resolved empty (a destroyed, drained cell) has none: "{}",
// which removes an access point's policy (terraform-provider-aws's
// aws_s3_access_point deletes the policy for "" or "{}"), as AWS refuses
// a policy naming a principal that does not exist.
func AccessPointPolicy(accessPointArn, prefix, role string) (string, error) {
	if role == "" {
		return "{}", nil
	}
	return routerPolicy(
		policy.Statement{
			Sid:       "CellObjects",
			Effect:    policy.Allow,
			Principal: policy.AWSPrincipals(role),
			Action:    spec.PrefixObjectActions,
			Resource:  policy.Values{spec.AccessPointObjectARN(accessPointArn, prefix+"*")},
			Scalar:    []string{"Principal", "Resource"},
		},
		policy.Statement{
			Sid:       "CellList",
			Effect:    policy.Allow,
			Principal: policy.AWSPrincipals(role),
			Action:    spec.PrefixListActions,
			Resource:  policy.Values{accessPointArn},
			Condition: policy.Conditions{"StringLike": {"s3:prefix": {prefix, prefix + "*"}}},
			Scalar:    []string{"Principal", "Resource"},
		},
	).JSON()
}

// accessPoints are the fleet bucket's access points, one per cell in
// another account, each with its own policy (AccessPointPolicy), named
// spec.AccessPointName. An access point policy is limited to 20 KB as a
// bucket policy is (awsmodel s3.access-point-policy-size); one cell's
// grant is about 500 bytes.
func (r *Router) accessPoints(ctx *pulumi.Context, name string, args *RouterArgs, where location, parent pulumi.ResourceOption) error {
	for _, g := range args.CellGrants {
		apName := spec.AccessPointName(args.BucketName, g.Cell)
		arn := spec.AccessPointARN(where.partition, where.region, where.account, apName)
		prefix := g.Prefix
		policy := g.TaskRoleArn.ToStringOutput().ApplyT(func(role string) (string, error) {
			return AccessPointPolicy(arn, prefix, role)
		}).(pulumi.StringOutput)
		ap, err := s3.NewAccessPoint(ctx, name+"-"+g.Cell+"-access-point", &s3.AccessPointArgs{
			Bucket: r.Bucket.ID(),
			Name:   pulumi.String(apName),
			Policy: policy,
		}, parent)
		if err != nil {
			return err
		}
		r.AccessPoints = append(r.AccessPoints, ap)
	}
	return nil
}

// location is where the router's bucket lives.
type location struct{ partition, account, region string }

func (r *Router) locate(ctx *pulumi.Context) (location, error) {
	id, err := aws.GetCallerIdentity(ctx, &aws.GetCallerIdentityArgs{}, pulumi.Parent(r))
	if err != nil {
		return location{}, fmt.Errorf("looking up the router's account for the fleet bucket: %w", err)
	}
	region, err := aws.GetRegion(ctx, &aws.GetRegionArgs{}, pulumi.Parent(r))
	if err != nil {
		return location{}, fmt.Errorf("looking up the router's region for the fleet bucket: %w", err)
	}
	part, err := aws.GetPartition(ctx, &aws.GetPartitionArgs{}, pulumi.Parent(r))
	if err != nil {
		return location{}, fmt.Errorf("looking up the AWS partition: %w", err)
	}
	return location{partition: part.Partition, account: id.AccountId, region: region.Name}, nil
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
	statements := []policy.Statement{{
		Sid:       "OwningAccount",
		Effect:    policy.Allow,
		Principal: policy.AWSPrincipals(fmt.Sprintf("arn:%s:iam::%s:root", partition, account)),
		Action:    policy.Values{"kms:*"},
		Resource:  policy.Values{"*"},
		Scalar:    []string{"Principal", "Action", "Resource"},
	}}
	var arns []string
	for _, r := range roles {
		if r != "" {
			arns = append(arns, r)
		}
	}
	if len(arns) > 0 {
		// The roles stay a list even when there is one: the text this
		// policy has always had (routerPolicy).
		statements = append(statements, policy.Statement{
			Sid:       "CellsThroughS3",
			Effect:    policy.Allow,
			Principal: policy.AWSPrincipals(arns...),
			Action:    spec.FleetKeyActions,
			Resource:  policy.Values{"*"},
			Condition: policy.Conditions{"StringEquals": {
				"kms:ViaService":                  {spec.ViaS3(region)},
				spec.FleetKeyEncryptionContextKey: {bucketArn},
			}},
			Scalar: []string{"Resource", "Condition"},
		})
	}
	return routerPolicy(statements...).JSON()
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
func (r *Router) bucketKey(ctx *pulumi.Context, name string, where location, roles pulumi.StringArrayOutput, tags pulumi.StringMap, parent pulumi.ResourceOption) (*kms.Key, error) {
	policy := pulumi.All(r.Bucket.Arn, roles).ApplyT(func(vs []any) (string, error) {
		bucketArn, _ := vs[0].(string)
		arns, _ := vs[1].([]string)
		return BucketKeyPolicy(where.partition, where.account, where.region, bucketArn, arns)
	}).(pulumi.StringOutput)
	return kms.NewKey(ctx, name+"-bucket-key", &kms.KeyArgs{
		Description:       pulumi.String("cellctl fleet bucket: every cell reads and writes its own prefix through S3"),
		EnableKeyRotation: pulumi.Bool(true),
		Policy:            policy,
		Tags:              tags,
	}, parent, pulumi.Protect(true), pulumi.RetainOnDelete(true))
}
