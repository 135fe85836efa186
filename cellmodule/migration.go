package cellmodule

import (
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ecs"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/vpc"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Schema migrations. With cells:migrationCommand the cell carries what a
// rollout needs to run the release's migrations as a one-off ECS task
// before it updates the service: a task definition (the service's image,
// the migration command), a task role whose one permission is logging in
// to the cell's database as cellctl_migrator, and a security group that
// reaches only the database and HTTPS. The rollout starts the task with
// RunTask from the `migration` output and waits for it (at most
// timeoutSeconds). Without the key the cell has none of these and no
// `migration` output: a fleet without migrations pays for nothing.

// Migration is what the cell holds for its migrations (nil fields when
// the cell runs none).
type Migration struct {
	Role           *iam.Role
	RolePolicy     *iam.RolePolicy
	SecurityGroup  *ec2.SecurityGroup
	TaskDefinition *ecs.TaskDefinition
}

// MigrationOutput is the stack output a rollout starts the migration task
// from: its cluster, task definition and awsvpc network configuration
// ("subnets", "securityGroups").
const MigrationOutput = "migration"

// MigrationLogStreamPrefix is the awslogs stream prefix of the migration
// container: its streams are migrate/migrate/<task id>.
const MigrationLogStreamPrefix = "migrate"

// migration creates the migration task and what it runs with.
func (b *builder) migration() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	if !s.RunsMigrations() {
		return nil
	}
	m := &c.Migration

	// The role: the same trust as the task role (ECS tasks, on behalf of
	// this account only) and rds-db:connect as cellctl_migrator, nothing
	// else — no bucket, queue or cache, and not the app's database user.
	trust, err := assumeRolePolicy(b.account).JSON()
	if err != nil {
		return err
	}
	name := b.name("migrator-role")
	m.Role, err = iam.NewRole(ctx, name, &iam.RoleArgs{
		Description:      pulumi.String("cellctl " + s.ID + ": schema migrations; only the database user " + DatabaseMigratorUser),
		AssumeRolePolicy: pulumi.String(trust),
		Tags:             b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	doc := c.Database.ClusterResourceId.ApplyT(func(id string) (string, error) {
		return migratorRolePolicy(DBUserARN(b.partition, s.Region, b.account, id, DatabaseMigratorUser)).JSON()
	}).(pulumi.StringOutput)
	m.RolePolicy, err = iam.NewRolePolicy(ctx, b.name("migrator-policy"), &iam.RolePolicyArgs{
		Role:   m.Role.Name,
		Policy: doc,
	}, b.opts()...)
	if err != nil {
		return err
	}

	// The security group: no ingress (nothing connects to a migration
	// task); egress to the database on 5432 and HTTPS anywhere. HTTPS is
	// what a Fargate task needs to start and report: the image is pulled
	// from ECR (its API and registry endpoints through the NAT gateway,
	// its layers from S3 through the gateway endpoint) and awslogs ships
	// the output to CloudWatch Logs, all over 443 from the task's own
	// network interface. The service's group does the same
	// (service-out-https). An IAM auth token is signed locally, so logging
	// in to the database needs no other call.
	name = b.name("migrate-sg")
	m.SecurityGroup, err = ec2.NewSecurityGroup(ctx, name, &ec2.SecurityGroupArgs{
		VpcId:       c.Network.VPC.ID(),
		Description: pulumi.String("cellctl " + s.ID + ": schema migration tasks"),
		Tags:        b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	rules := []struct {
		suffix  string
		ingress bool
		on      *ec2.SecurityGroup
		port    int
		peer    *ec2.SecurityGroup // nil: 0.0.0.0/0
		desc    string
	}{
		{"migrate-out-https", false, m.SecurityGroup, httpsPort, nil, "HTTPS to ECR and CloudWatch Logs (via NAT / S3 endpoint)"},
		{"migrate-out-db", false, m.SecurityGroup, postgresPort, c.SG.Database, "to Aurora"},
		{"db-in-migrate", true, c.SG.Database, postgresPort, m.SecurityGroup, "PostgreSQL from the schema migration tasks"},
	}
	for _, r := range rules {
		name := b.name(r.suffix)
		if r.ingress {
			_, err = vpc.NewSecurityGroupIngressRule(ctx, name, &vpc.SecurityGroupIngressRuleArgs{
				SecurityGroupId:           r.on.ID(),
				IpProtocol:                pulumi.String("tcp"),
				FromPort:                  pulumi.Int(r.port),
				ToPort:                    pulumi.Int(r.port),
				ReferencedSecurityGroupId: r.peer.ID(),
				Description:               pulumi.String(r.desc),
				Tags:                      b.tags(name),
			}, b.opts()...)
		} else {
			args := &vpc.SecurityGroupEgressRuleArgs{
				SecurityGroupId: r.on.ID(),
				IpProtocol:      pulumi.String("tcp"),
				FromPort:        pulumi.Int(r.port),
				ToPort:          pulumi.Int(r.port),
				Description:     pulumi.String(r.desc),
				Tags:            b.tags(name),
			}
			if r.peer != nil {
				args.ReferencedSecurityGroupId = r.peer.ID()
			} else {
				args.CidrIpv4 = pulumi.String("0.0.0.0/0")
			}
			_, err = vpc.NewSecurityGroupEgressRule(ctx, name, args, b.opts()...)
		}
		if err != nil {
			return err
		}
	}

	// The task definition: the service's image, size and environment,
	// but the migrator's database user, no port and the migration
	// command. Like the service, it gets no secret and a read-only root
	// file system with a scratch /tmp.
	containers := b.containerJSON(func(env map[string]string, logGroup string) containerDefinition {
		delete(env, "PORT")
		env["DB_USER"] = DatabaseMigratorUser
		def := b.appContainer(MigrationContainerName, MigrationLogStreamPrefix, logGroup, env)
		def.Command = s.MigrationCommand
		return def
	})
	name = b.name("migrate-task")
	// A task started from the output must find its role's grant and its
	// execution role's managed policy in place.
	m.TaskDefinition, err = ecs.NewTaskDefinition(ctx, name, b.taskDefinitionArgs(name, s.Names().MigrationTaskFamily(), m.Role.Arn, containers),
		b.opts(pulumi.DependsOn(append([]pulumi.Resource{m.RolePolicy}, b.execPolicies...)))...)
	return err
}

// migrationOutputs exports what a rollout needs to run the migration task
// (RunTask: cluster, task definition, awsvpc subnets and security group;
// GetLogEvents: the log group and stream prefix), or nothing without
// migrations. The commands themselves are configuration (deployedSpec).
func (b *builder) migrationOutputs() error {
	s, c := b.spec, b.cell
	if !s.RunsMigrations() {
		return nil
	}
	subnets := pulumi.StringArray{}
	for _, sn := range c.Network.PrivateSubnets {
		subnets = append(subnets, sn.ID())
	}
	c.Outputs[MigrationOutput] = pulumi.Map{
		"cluster":         c.EcsCluster.Arn,
		"taskDefinition":  c.Migration.TaskDefinition.Arn,
		"container":       pulumi.String(MigrationContainerName),
		"subnets":         subnets,
		"securityGroups":  pulumi.StringArray{c.Migration.SecurityGroup.ID()},
		"logGroup":        c.LogGroup.Name,
		"logStreamPrefix": pulumi.String(MigrationLogStreamPrefix),
		"timeoutSeconds":  pulumi.Int(s.MigrationTimeoutSeconds),
	}
	return nil
}
