package cellmodule

import (
	"fmt"
	"strings"

	"github.com/cellctl/cellctl/cellmodule/spec"
	iampolicy "github.com/cellctl/cellctl/internal/policy"
)

// PolicyDocument is an IAM or resource policy: the one typed document
// (internal/policy) the access evaluator and the audits read back.
// Policies are built from these types and encoded with encoding/json,
// never assembled as strings.
type PolicyDocument = iampolicy.Document

// PolicyStatement is one statement.
type PolicyStatement = iampolicy.Statement

func policy(statements ...PolicyStatement) PolicyDocument {
	return iampolicy.New(statements...)
}

// assumeRolePolicy lets ECS tasks assume a role, optionally only on behalf of
// one account (the confused-deputy guard AWS recommends for task roles).
func assumeRolePolicy(sourceAccount string) PolicyDocument {
	st := PolicyStatement{
		Effect:    "Allow",
		Principal: iampolicy.ServicePrincipals("ecs-tasks.amazonaws.com"),
		Action:    []string{"sts:AssumeRole"},
	}
	if sourceAccount != "" {
		st.Condition = iampolicy.Conditions{
			"StringEquals": {"aws:SourceAccount": {sourceAccount}},
		}
	}
	return policy(st)
}

// tlsOnlyQueuePolicy denies every SQS action on the queue over plain HTTP.
func tlsOnlyQueuePolicy(queueArn string) PolicyDocument {
	return policy(PolicyStatement{
		Sid:       "DenyInsecureTransport",
		Effect:    "Deny",
		Principal: iampolicy.Everyone(),
		Action:    []string{"sqs:*"},
		Resource:  []string{queueArn},
		Condition: iampolicy.Conditions{
			"Bool": {"aws:SecureTransport": {"false"}},
		},
	})
}

// taskRolePolicyInput is what the task role may touch.
type taskRolePolicyInput struct {
	BucketArn     string // arn:<partition>:s3:::<bucket>
	Prefix        string // cells/<id>/
	QueueArn      string
	CacheGroupArn string // the replication group
	CacheUserArn  string
	DBUserArn     string // arn:<partition>:rds-db:<region>:<account>:dbuser:<cluster resource id>/<user>
	// FleetKey lets S3 use the fleet bucket's customer managed key on the
	// task's behalf (the bucket's default encryption: every object the
	// task writes or reads under its prefix goes through it).
	FleetKey *FleetKey
	// Account is the cell's own account (its caller identity).
	Account string
	// AccessPoint is the fleet bucket's access point of this cell when
	// the bucket is in another account (FleetKey.AccessPointARN); "" in
	// the bucket's own account.
	AccessPoint string
}

// FleetKey is where the fleet bucket's customer managed key lives. The
// bucket is always encrypted with it (SSE-KMS), so every cell's task role
// needs it: an upload needs kms:GenerateDataKey and a download kms:Decrypt
// on the bucket's key ("Using server-side encryption with AWS KMS keys
// (SSE-KMS)", Amazon S3 User Guide). In the key's own account the key
// policy's account statement lets IAM policies grant it ("Key policies in
// AWS KMS", AWS KMS Developer Guide); across accounts the caller's identity
// policy must allow it as well as the key policy ("Allowing users in other
// accounts to use a KMS key", AWS KMS Developer Guide). Either way, this
// statement is the task role's half.
type FleetKey struct {
	// Account is the bucket's account ("" when the fleet does not name
	// it: the cell's own when SharesAccount, else any account — still
	// only through S3 in Region, for the fleet bucket).
	Account string
	// Region is the bucket's region.
	Region string
	// SharesAccount says the bucket is in the cell's own account (neither
	// the cell nor the router names another).
	SharesAccount bool
}

// AccessPointARN is the ARN of the fleet bucket's access point for cell
// when the bucket lives in another account than the cell's ("" when it
// shares the cell's account): a cross-account cell reaches its prefix
// only through it, because the bucket policy delegates cross-account
// access to the bucket account's access points (router/component). The
// account is "*" where the fleet does not name the bucket's (the access
// point's own policy still names only this cell's role).
func (k FleetKey) AccessPointARN(partition, bucket, cell string) string {
	if k.SharesAccount {
		return ""
	}
	account := k.Account
	if account == "" {
		account = "*"
	}
	return spec.AccessPointARN(partition, k.Region, account, spec.AccessPointName(bucket, cell))
}

// keyStatement is the task role's use of the fleet bucket key: through S3
// only (kms:ViaService), and only for the fleet bucket — with S3 Bucket
// Keys enabled (the router enables them) S3 passes the bucket's ARN, not
// the object's, as the encryption context ("Configuring your bucket to use
// an S3 Bucket Key with SSE-KMS for new objects", Amazon S3 User Guide:
// "You need to update your IAM policies to use the bucket ARN for the
// encryption context"). A writer that turns the Bucket Key off for one
// request makes S3 pass the object's ARN instead, and that request is
// refused before anything is written. The cell cannot name the key itself (the router
// creates it after the cells), so the resource is any key of the
// bucket's account and region.
func (k FleetKey) keyStatement(partition, ownAccount, bucketArn string) PolicyStatement {
	account := k.Account
	if account == "" && k.SharesAccount {
		account = ownAccount
	}
	if account == "" {
		account = "*"
	}
	return PolicyStatement{
		Sid:      "FleetBucketKeyThroughS3",
		Effect:   "Allow",
		Action:   spec.FleetKeyActions,
		Resource: []string{fmt.Sprintf("arn:%s:kms:%s:%s:key/*", partition, k.Region, account)},
		Condition: iampolicy.Conditions{"StringEquals": {
			"kms:ViaService":                  {spec.ViaS3(k.Region)},
			spec.FleetKeyEncryptionContextKey: {bucketArn},
		}},
	}
}

// DBUserARN is the resource rds-db:connect names: one database user of one
// cluster (by its resource id, which a recreated cluster does not reuse).
func DBUserARN(partition, region, account, clusterResourceID, user string) string {
	return fmt.Sprintf("arn:%s:rds-db:%s:%s:dbuser:%s/%s", partition, region, account, clusterResourceID, user)
}

// taskRolePolicy grants the app exactly its own prefix, its own queue and its
// own cache. The DLQ is left out on purpose: SQS moves messages there with
// the source queue's own permissions, and redrive back is an operator action.
func taskRolePolicy(in taskRolePolicyInput) PolicyDocument {
	doc := taskRoleStatements(in)
	if in.FleetKey != nil {
		partition := strings.SplitN(in.BucketArn, ":", 3)[1]
		doc.Statement = append(doc.Statement, in.FleetKey.keyStatement(partition, in.Account, in.BucketArn))
	}
	return doc
}

func taskRoleStatements(in taskRolePolicyInput) PolicyDocument {
	doc := policy(
		PolicyStatement{
			Sid:      "CellObjects",
			Effect:   "Allow",
			Action:   spec.PrefixObjectActions,
			Resource: []string{in.BucketArn + "/" + in.Prefix + "*"},
		},
		PolicyStatement{
			Sid:      "ListCellPrefix",
			Effect:   "Allow",
			Action:   spec.PrefixListActions,
			Resource: []string{in.BucketArn},
			Condition: iampolicy.Conditions{
				"StringLike": {"s3:prefix": {in.Prefix, in.Prefix + "*"}},
			},
		},
		PolicyStatement{
			Sid:    "CellQueue",
			Effect: "Allow",
			Action: []string{
				"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage",
				"sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes",
			},
			Resource: []string{in.QueueArn},
		},
		PolicyStatement{
			Sid:      "CellDatabaseIAMAuth",
			Effect:   "Allow",
			Action:   []string{"rds-db:connect"},
			Resource: []string{in.DBUserArn},
		},
		PolicyStatement{
			Sid:      "CellCacheIAMAuth",
			Effect:   "Allow",
			Action:   []string{"elasticache:Connect"},
			Resource: []string{in.CacheGroupArn, in.CacheUserArn},
		},
	)
	if in.AccessPoint != "" {
		// Through an access point the request's resource is the access
		// point's ARN (objects: <ARN>/object/<key>), and the caller's
		// identity policy must allow that ARN (Amazon S3 User Guide,
		// "Configuring IAM policies for using access points").
		doc.Statement = append(doc.Statement,
			PolicyStatement{
				Sid:      "CellObjectsThroughAccessPoint",
				Effect:   "Allow",
				Action:   spec.PrefixObjectActions,
				Resource: []string{spec.AccessPointObjectARN(in.AccessPoint, in.Prefix+"*")},
			},
			PolicyStatement{
				Sid:      "ListCellPrefixThroughAccessPoint",
				Effect:   "Allow",
				Action:   spec.PrefixListActions,
				Resource: []string{in.AccessPoint},
				Condition: iampolicy.Conditions{
					"StringLike": {"s3:prefix": {in.Prefix, in.Prefix + "*"}},
				},
			})
	}
	return doc
}

// executionRolePolicy is what ECS needs to start the cell's tasks: pull
// the image (ECR's authorization token has no resource ARN; the image may
// live in any repository the fleet names) and create and write the log
// streams of the cell's own log group — the actions of the AWS managed
// AmazonECSTaskExecutionRolePolicy ("Amazon ECS task execution IAM role",
// Amazon ECS Developer Guide), with logs scoped to one group.
func executionRolePolicy(partition, region, account, logGroup string) PolicyDocument {
	return policy(
		PolicyStatement{
			Sid:      "PullImage",
			Effect:   "Allow",
			Action:   []string{"ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:BatchGetImage"},
			Resource: []string{"*"},
		},
		PolicyStatement{
			Sid:      "CellLogStreams",
			Effect:   "Allow",
			Action:   []string{"logs:CreateLogStream", "logs:PutLogEvents"},
			Resource: []string{fmt.Sprintf("arn:%s:logs:%s:%s:log-group:%s:log-stream:*", partition, region, account, logGroup)},
		},
	)
}

// migratorRolePolicy is the migration task's one permission: logging in
// to the cell's database as cellctl_migrator with an IAM token.
func migratorRolePolicy(dbUserArn string) PolicyDocument {
	return policy(PolicyStatement{
		Sid:      "CellDatabaseMigratorIAMAuth",
		Effect:   "Allow",
		Action:   []string{"rds-db:connect"},
		Resource: []string{dbUserArn},
	})
}
