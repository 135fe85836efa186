package cellmodule

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/elasticache"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/rds"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/awsname"
)

// parameterGroupFamily maps an Aurora PostgreSQL engine version ("16" or
// "16.4") to its parameter group family ("aurora-postgresql16").
func parameterGroupFamily(engineVersion string) (string, error) {
	major, _, _ := strings.Cut(engineVersion, ".")
	if n, err := strconv.Atoi(major); err != nil || n < 10 {
		return "", fmt.Errorf("auroraEngineVersion %q: allowed is an Aurora PostgreSQL major such as \"16\" or an exact minor such as \"16.4\"", engineVersion)
	}
	return "aurora-postgresql" + major, nil
}

// FinalSnapshotID is the identifier of the snapshot Aurora takes when the
// cell's cluster is deleted. Snapshot identifiers are unique per account
// and region and outlive the cluster, so every release (the update `cellctl
// destroy --release-protected` runs right before the delete) names its
// own: "<prefix>-<id>-final-<UTC time>" (internal/awsname). A cell
// recreated and destroyed again never collides with its earlier snapshot
// (DBClusterSnapshotAlreadyExists), nor with another fleet's.
func FinalSnapshotID(cell awsname.Cell, releasing bool, at time.Time) string {
	return cell.FinalSnapshot(releasing, at)
}

// dataAPI reports whether AWS offers the RDS Data API for the cell's
// Aurora cluster (its region, engine version and instance class: none on
// T classes, so a burstable cell keeps the psql bootstrap).
func dataAPI(s spec.Cell) bool {
	return s.DataAPIProblem() == nil
}

func (b *builder) isolatedSubnetIDs() pulumi.StringArray {
	ids := pulumi.StringArray{}
	for _, sn := range b.cell.Network.IsolatedSubnets {
		ids = append(ids, sn.ID())
	}
	return ids
}

// database creates the Aurora PostgreSQL cluster. The master password is
// generated and kept by AWS in Secrets Manager (manageMasterUserPassword);
// neither config nor state ever holds it.
func (b *builder) database() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	family, err := parameterGroupFamily(s.AuroraEngineVersion)
	if err != nil {
		return err
	}
	name := b.name("db-subnets")
	subnets, err := rds.NewSubnetGroup(ctx, name, &rds.SubnetGroupArgs{
		Description: pulumi.String("cellctl " + s.ID + ": isolated subnets"),
		SubnetIds:   b.isolatedSubnetIDs(),
		Tags:        b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	name = b.name("db-params")
	params, err := rds.NewClusterParameterGroup(ctx, name, &rds.ClusterParameterGroupArgs{
		Family:      pulumi.String(family),
		Description: pulumi.String("cellctl " + s.ID + ": TLS required"),
		Parameters: rds.ClusterParameterGroupParameterArray{
			rds.ClusterParameterGroupParameterArgs{Name: pulumi.String("rds.force_ssl"), Value: pulumi.String("1")},
		},
		Tags: b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	name = b.name("db")
	c.Database, err = rds.NewCluster(ctx, name, &rds.ClusterArgs{
		// Named after the cell, not autonamed: operators find "cell-a-db"
		// in the console, and the cluster is never replaced (protected).
		ClusterIdentifier:                pulumi.String(s.Names().DBCluster()),
		Engine:                           pulumi.String("aurora-postgresql"),
		EngineVersion:                    pulumi.String(s.AuroraEngineVersion),
		DatabaseName:                     pulumi.String(DatabaseName),
		MasterUsername:                   pulumi.String(DatabaseMasterUser),
		ManageMasterUserPassword:         pulumi.Bool(true),
		Port:                             pulumi.Int(postgresPort),
		DbSubnetGroupName:                subnets.Name,
		DbClusterParameterGroupName:      params.Name,
		VpcSecurityGroupIds:              pulumi.StringArray{c.SG.Database.ID()},
		StorageEncrypted:                 pulumi.Bool(true),
		DeletionProtection:               pulumi.Bool(!b.spec.Releasing),
		SkipFinalSnapshot:                pulumi.Bool(false),
		FinalSnapshotIdentifier:          pulumi.String(FinalSnapshotID(s.Names(), s.Releasing, b.now())),
		BackupRetentionPeriod:            pulumi.Int(s.AuroraBackupRetentionDays),
		CopyTagsToSnapshot:               pulumi.Bool(true),
		IamDatabaseAuthenticationEnabled: pulumi.Bool(true),
		// The RDS Data API, so the control plane runs the bootstrap
		// statements (DatabaseBootstrapStatements) over HTTPS without a
		// process in the VPC. On where AWS offers it for the cluster's
		// region, version and instance class (spec.Cell.DataAPIProblem); elsewhere the
		// bootstrap stays an operator's psql session (dbBootstrapSql),
		// and a cell there cannot run migrations (the loader refuses).
		EnableHttpEndpoint: pulumi.Bool(dataAPI(s)),
		Tags:               b.tags(name),
	}, b.opts(pulumi.Protect(!b.spec.Releasing))...)
	if err != nil {
		return err
	}
	for i := 1; i <= s.AuroraInstances; i++ {
		name := b.name(fmt.Sprintf("db-%d", i))
		inst, err := rds.NewClusterInstance(ctx, name, &rds.ClusterInstanceArgs{
			ClusterIdentifier: c.Database.ID(),
			Engine:            pulumi.String("aurora-postgresql"),
			InstanceClass:     pulumi.String(s.AuroraInstanceClass),
			// A major pin ("16") lets AWS patch minors in the maintenance
			// window; the provider keeps reporting "16", so no diff follows.
			// An exact minor ("16.4") would be patched away from and the next
			// up would try to downgrade, so automatic upgrades go off.
			AutoMinorVersionUpgrade: pulumi.Bool(!s.PinsMinor()),
			DbSubnetGroupName:       subnets.Name,
			PubliclyAccessible:      pulumi.Bool(false),
			CopyTagsToSnapshot:      pulumi.Bool(true),
			Tags:                    b.tags(name),
		}, b.opts()...)
		if err != nil {
			return err
		}
		c.DatabaseInstances = append(c.DatabaseInstances, inst)
	}
	c.DatabaseSecretArn = c.Database.MasterUserSecrets.ApplyT(func(secrets []rds.ClusterMasterUserSecret) (string, error) {
		if len(secrets) == 0 || secrets[0].SecretArn == nil || *secrets[0].SecretArn == "" {
			return "", errors.New("the Aurora cluster reports no AWS-managed master user secret")
		}
		return *secrets[0].SecretArn, nil
	}).(pulumi.StringOutput)
	return nil
}

// DefaultCacheUserPassword derives the password of a cell's switched-off
// "default" cache user: 64 hex characters (ElastiCache allows 16 to 128).
func DefaultCacheUserPassword(originSecret, cellID string) string {
	mac := hmac.New(sha256.New, []byte(originSecret))
	mac.Write([]byte("cellctl/elasticache-default-user/" + cellID))
	return hex.EncodeToString(mac.Sum(nil))
}

// cache creates the ElastiCache replication group with RBAC: the app user
// authenticates with IAM, the mandatory "default" user is switched off.
func (b *builder) cache() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	name := b.name("cache-subnets")
	subnets, err := elasticache.NewSubnetGroup(ctx, name, &elasticache.SubnetGroupArgs{
		Description: pulumi.String("cellctl " + s.ID + ": isolated subnets"),
		SubnetIds:   b.isolatedSubnetIDs(),
		Tags:        b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	// For IAM authentication the user id must equal the user name.
	appUser := s.Names().CacheAppUser()
	name = b.name("cache-user")
	c.CacheUser, err = elasticache.NewUser(ctx, name, &elasticache.UserArgs{
		UserId:             pulumi.String(appUser),
		UserName:           pulumi.String(appUser),
		Engine:             pulumi.String(s.CacheEngine),
		AccessString:       pulumi.String("on ~* +@all"),
		AuthenticationMode: elasticache.UserAuthenticationModeArgs{Type: pulumi.String("iam")},
		Tags:               b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	// Every user group must contain a user named "default", and a VALKEY
	// group only takes users that authenticate (password or IAM). Ours is
	// switched off ("off -@all": it can neither log in nor run anything)
	// and gets a password nobody needs to know: derived from the fleet's
	// origin-verify secret and the cell id (HMAC-SHA256), a Pulumi secret
	// in state, never an output. Rotating that secret rotates it too.
	name = b.name("cache-default-user")
	password := pulumi.ToSecret(b.originSecret.ToStringOutput().ApplyT(func(secret string) string {
		return DefaultCacheUserPassword(secret, s.ID)
	})).(pulumi.StringOutput)
	c.CacheDefaultUser, err = elasticache.NewUser(ctx, name, &elasticache.UserArgs{
		UserId:       pulumi.String(s.Names().CacheDefaultUser()),
		UserName:     pulumi.String("default"),
		Engine:       pulumi.String(s.CacheEngine),
		AccessString: pulumi.String("off -@all"),
		AuthenticationMode: elasticache.UserAuthenticationModeArgs{
			Type:      pulumi.String("password"),
			Passwords: pulumi.StringArray{password},
		},
		Tags: b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	defaultUser := c.CacheDefaultUser
	name = b.name("cache-users")
	group, err := elasticache.NewUserGroup(ctx, name, &elasticache.UserGroupArgs{
		UserGroupId: pulumi.String(s.Names().CacheUserGroup()),
		Engine:      pulumi.String(s.CacheEngine),
		UserIds:     pulumi.StringArray{defaultUser.UserId, c.CacheUser.UserId},
		Tags:        b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	failover := s.CacheNodes >= 2
	name = b.name("cache")
	c.Cache, err = elasticache.NewReplicationGroup(ctx, name, &elasticache.ReplicationGroupArgs{
		Description:              pulumi.String("cellctl " + s.ID + " cache"),
		Engine:                   pulumi.String(s.CacheEngine),
		EngineVersion:            pulumi.String(s.CacheEngineVersion),
		NodeType:                 pulumi.String(s.CacheNodeType),
		NumCacheClusters:         pulumi.Int(s.CacheNodes),
		Port:                     pulumi.Int(cachePort),
		SubnetGroupName:          subnets.Name,
		SecurityGroupIds:         pulumi.StringArray{c.SG.Cache.ID()},
		AtRestEncryptionEnabled:  pulumi.Bool(true),
		TransitEncryptionEnabled: pulumi.Bool(true),
		AutomaticFailoverEnabled: pulumi.Bool(failover),
		MultiAzEnabled:           pulumi.Bool(failover),
		UserGroupIds:             pulumi.StringArray{group.UserGroupId},
		Tags:                     b.tags(name),
	}, b.opts(pulumi.Protect(!b.spec.Releasing))...)
	return err
}

// queues creates the work queue and its dead-letter queue.
func (b *builder) queues() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	var err error
	name := b.name("dlq")
	c.DeadLetterQueue, err = sqs.NewQueue(ctx, name, &sqs.QueueArgs{
		SqsManagedSseEnabled: pulumi.Bool(true),
		// Standard queues keep a message's original enqueue time when it is
		// dead-lettered, so the DLQ keeps messages for the maximum, 14 days.
		MessageRetentionSeconds: pulumi.Int(14 * 24 * 3600),
		Tags:                    b.tags(name),
	}, b.opts(pulumi.Protect(!b.spec.Releasing))...)
	if err != nil {
		return err
	}
	redrive := c.DeadLetterQueue.Arn.ApplyT(func(dlqArn string) (string, error) {
		j, err := json.Marshal(struct {
			DeadLetterTargetArn string `json:"deadLetterTargetArn"`
			MaxReceiveCount     int    `json:"maxReceiveCount"`
		}{dlqArn, s.QueueMaxReceiveCount})
		return string(j), err
	}).(pulumi.StringOutput)
	name = b.name("queue")
	c.Queue, err = sqs.NewQueue(ctx, name, &sqs.QueueArgs{
		SqsManagedSseEnabled:     pulumi.Bool(true),
		VisibilityTimeoutSeconds: pulumi.Int(s.QueueVisibilityTimeoutSeconds),
		RedrivePolicy:            redrive,
		Tags:                     b.tags(name),
	}, b.opts(pulumi.Protect(!b.spec.Releasing))...)
	if err != nil {
		return err
	}
	lanes := b.laneQueueArns()
	allow := c.Queue.Arn.ApplyT(func(queueArn string) (string, error) {
		return redriveAllowPolicy(append([]string{queueArn}, lanes...))
	}).(pulumi.StringOutput)
	admitted, err := sqs.NewRedriveAllowPolicy(ctx, b.name("dlq-redrive-allow"), &sqs.RedriveAllowPolicyArgs{
		QueueUrl:           c.DeadLetterQueue.Url,
		RedriveAllowPolicy: allow,
	}, b.opts()...)
	if err != nil {
		return err
	}
	if err := b.laneQueues(redrive, admitted); err != nil {
		return err
	}
	for _, q := range []struct {
		suffix string
		queue  *sqs.Queue
	}{{"queue-policy", c.Queue}, {"dlq-policy", c.DeadLetterQueue}} {
		doc := q.queue.Arn.ApplyT(func(arn string) (string, error) {
			return tlsOnlyQueuePolicy(arn).JSON()
		}).(pulumi.StringOutput)
		if _, err := sqs.NewQueuePolicy(ctx, b.name(q.suffix), &sqs.QueuePolicyArgs{
			QueueUrl: q.queue.Url,
			Policy:   doc,
		}, b.opts()...); err != nil {
			return err
		}
	}
	return nil
}
