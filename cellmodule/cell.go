// Package cellmodule is the cell template: one Pulumi ComponentResource that
// builds a complete, isolated copy of the application stack (network,
// Aurora, ElastiCache, SQS, the cell's S3 prefix, ECS service behind an ALB,
// and the alarms the wave gates read) from a validated spec.Cell.
package cellmodule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/acm"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ecs"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/elasticache"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lb"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/rds"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/route53"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/awsname"
	"github.com/cellctl/cellctl/internal/cellid"
	"github.com/cellctl/cellctl/waves/signal"
)

// TypeToken is the component's Pulumi type.
const TypeToken = "cellctl:index:Cell"

// Tag keys every taggable child carries.
const (
	TagCell      = "cell"
	TagManagedBy = "managed-by"
	ManagedBy    = "cellctl"
)

// Names and values other packages (router, waves, audits) rely on.
const (
	// CellIDHeader is the header the edge sets to the cell a request was routed to.
	CellIDHeader = "X-Cell-Id"
	// OriginVerifyHeader carries the fleet-wide secret CloudFront adds to every origin request.
	OriginVerifyHeader = "X-Origin-Verify"
	// RouterOriginID is the one origin of the router's CloudFront
	// distributions: its custom headers carry X-Origin-Verify, and the edge
	// function points each request at its cell's DNS name (router/edge).
	RouterOriginID = "cells"
	// CloudFrontPrefixList is the AWS-managed prefix list of CloudFront's origin-facing addresses.
	CloudFrontPrefixList = "com.amazonaws.global.cloudfront.origin-facing"
	// ContainerName is the name of the one container in the task definition.
	ContainerName = "app"
	// MisdirectedStatus is what the ALB answers to a request meant for another cell.
	MisdirectedStatus = "421"
	// TLSPolicy is the listener's security policy: TLS 1.3 with TLS 1.2 fallback,
	// which CloudFront's origin connections need.
	TLSPolicy = "ELBSecurityPolicy-TLS13-1-2-2021-06"
	// DatabaseName is the database Aurora creates in every cell.
	DatabaseName = "app"
	// DatabaseMasterUser is the master user whose password AWS manages. The
	// app never sees it: it is for the one-time grant and for operators.
	DatabaseMasterUser = "cellctl"
	// DatabaseAppUser is the database user the app connects as, with IAM
	// authentication (rds-db:connect); see DatabaseBootstrapSQL.
	DatabaseAppUser = "cellctl_app"
	// DatabaseMigratorUser is the database user the migration task
	// connects as (IAM authentication): it owns the schema when the cell
	// runs migrations (see DatabaseBootstrapStatements).
	DatabaseMigratorUser = "cellctl_migrator"
	// MigrationContainerName is the one container of the migration task.
	MigrationContainerName = "migrate"
	postgresPort           = 5432
	cachePort              = 6379
	httpsPort              = 443
)

// CellArgs are the inputs of one cell.
type CellArgs struct {
	// Spec is the cell's validated, baseline-merged configuration.
	Spec spec.Cell
	// OriginVerifySecret is the fleet-wide secret CloudFront sends in X-Origin-Verify
	// (a Pulumi secret from stack config cells:originVerifySecret). Never plaintext:
	// NewCell marks it secret even if the caller forgot to.
	OriginVerifySecret pulumi.StringInput
	// OriginVerifyNext, while `cellctl secret rotate` runs, is a second
	// value the ALB accepts beside OriginVerifySecret (stack config
	// cells:originVerifySecretNext, a Pulumi secret); nil outside a rotation.
	OriginVerifyNext pulumi.StringInput
	// Now is the clock of the final snapshot name of a release (nil:
	// time.Now); tests pin it.
	Now func() time.Time
	// DNSProvider, when set, configures the explicit provider the cell's
	// two DNS records (its name and its certificate's validation) are
	// written with: the fleet's zone in another account than the cell's,
	// reached through a role (cells:dnsAssumeRole) whose permissions can
	// be held to the cell's own names (the dnsRecordPolicy output). nil:
	// the records use the cell's own provider.
	DNSProvider *aws.ProviderArgs
	// FleetKey is the fleet bucket's customer managed key, which the task
	// role may use through S3 for the fleet bucket (the bucket's default
	// encryption). nil: the cell is rendered without a router (a test of
	// the template alone) and its task role gets no key statement.
	FleetKey *FleetKey
}

// Network holds the cell's VPC and everything routing-related in it.
type Network struct {
	VPC               *ec2.Vpc
	AvailabilityZones []string // the three AZ names, index-aligned with the subnets
	Layout            SubnetLayout
	PublicSubnets     []*ec2.Subnet
	PrivateSubnets    []*ec2.Subnet
	IsolatedSubnets   []*ec2.Subnet
	InternetGateway   *ec2.InternetGateway
	NATGateways       []*ec2.NatGateway
	PublicRouteTable  *ec2.RouteTable
	// PrivateRouteTables has one table per AZ in both NAT modes, so switching
	// the mode only rewrites routes.
	PrivateRouteTables []*ec2.RouteTable
	IsolatedRouteTable *ec2.RouteTable
	S3Endpoint         *ec2.VpcEndpoint
}

// SecurityGroups are the four groups of a cell.
type SecurityGroups struct {
	ALB, Service, Database, Cache *ec2.SecurityGroup
}

// Alarms are the metric alarms the wave gates read.
type Alarms struct {
	FiveXXRate, P99Latency, UnhealthyTasks *cloudwatch.MetricAlarm
	// CapacityWarning is CellCapacityWarning (nil when the cell publishes
	// no capacity); the wave gates do not read it.
	CapacityWarning *cloudwatch.MetricAlarm
}

// Cell is one deployed cell.
type Cell struct {
	pulumi.ResourceState

	ID      string
	Network Network
	SG      SecurityGroups

	Database          *rds.Cluster
	DatabaseInstances []*rds.ClusterInstance
	// DatabaseSecretArn is the ARN of the AWS-managed master user secret.
	DatabaseSecretArn pulumi.StringOutput

	Cache     *elasticache.ReplicationGroup
	CacheUser *elasticache.User
	// CacheDefaultUser is the mandatory "default" user: switched off, with
	// a generated password (a Pulumi secret) because a VALKEY user group
	// only takes users that authenticate.
	CacheDefaultUser *elasticache.User

	// DNSName is <cell id>.<fleetDomain>, an alias of the ALB and the origin
	// CloudFront connects to.
	DNSName   string
	DNSRecord *route53.Record
	// Certificate and CertificateValidation exist when the cell requests
	// its own certificate (no cells:certificateArn).
	Certificate           *acm.Certificate
	CertificateValidation *acm.CertificateValidation
	// CertificateArn is the listener's certificate.
	CertificateArn pulumi.StringOutput

	Queue           *sqs.Queue
	DeadLetterQueue *sqs.Queue
	// LaneQueues are the per-lane queues (cells:laneQueues), lane k at
	// index k; LaneQueuePolicies their policies. Empty without lane queues.
	LaneQueues        []*sqs.Queue
	LaneQueuePolicies []*sqs.QueuePolicy

	ExecutionRole  *iam.Role
	TaskRole       *iam.Role
	TaskRolePolicy *iam.RolePolicy
	LogGroup       *cloudwatch.LogGroup
	EcsCluster     *ecs.Cluster
	TaskDefinition *ecs.TaskDefinition
	Service        *ecs.Service
	// Migration is the migration task and what it runs with; its fields
	// are nil when the cell runs no migrations (cells:migrationCommand).
	Migration Migration

	LoadBalancer *lb.LoadBalancer
	TargetGroup  *lb.TargetGroup
	Listener     *lb.Listener
	ListenerRule *lb.ListenerRule

	Alarms Alarms

	// Outputs is what the stack program exports as the cell stack's outputs.
	Outputs pulumi.Map
}

// AlarmNames returns the CloudWatch alarm names of a cell, keyed as in the
// alarmNames stack output; the names are defined once, in internal/awsname
// (through waves/signal).
func AlarmNames(cell awsname.Cell) map[string]string { return signal.AlarmNames(cell) }

// StoragePrefix is the key prefix a cell owns in the fleet bucket.
func StoragePrefix(cellID string) string { return "cells/" + cellID + "/" }

// MaxIDLength bounds a cell id so every name derived from it fits AWS limits
// (the one rule: internal/cellid).
const MaxIDLength = cellid.MaxLength

// validate checks what the template itself relies on; the fleet loader has
// already checked ranges and shapes, but a program must not panic on a
// hand-built spec.
func validate(name string, args *CellArgs) error {
	if args == nil {
		return errors.New("cellmodule: NewCell needs CellArgs, got nil")
	}
	s := args.Spec
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch {
	case s.ID == "":
		bad("cell id is empty")
	case cellid.Check(s.ID) != nil:
		// The one cell-id rule (internal/cellid): it also keeps ids clear
		// of AWS's reserved name prefixes ("sg-", "internal-").
		bad("%v", cellid.Check(s.ID))
	}
	if err := awsname.CheckPrefix(s.NamePrefix); err != nil {
		bad("namePrefix: %v", err)
	}
	if name != s.ID {
		bad("component name %q must equal the cell id %q", name, s.ID)
	}
	if s.Index < 0 || s.Index > 255 {
		bad("index %d: allowed is an integer from 0 to 255", s.Index)
	}
	for field, v := range map[string]string{
		"region": s.Region, "image": s.Image, "fleetBucket": s.FleetBucket,
		"fleetDomain": s.FleetDomain, "hostedZoneId": s.HostedZoneID, "healthCheckPath": s.HealthCheckPath,
		"auroraInstanceClass": s.AuroraInstanceClass, "cacheNodeType": s.CacheNodeType,
		"cacheEngineVersion": s.CacheEngineVersion,
	} {
		if strings.TrimSpace(v) == "" {
			bad("%s is empty", field)
		}
	}
	if s.NATMode != spec.NATPerAZ && s.NATMode != spec.NATSingle {
		bad("natMode %q: allowed are %q and %q", s.NATMode, spec.NATPerAZ, spec.NATSingle)
	}
	if _, err := parameterGroupFamily(s.AuroraEngineVersion); err != nil {
		errs = append(errs, err)
	}
	if s.FleetDomain != "" && len(s.DNSName()) > 64 {
		// The cell's name is its certificate's first domain name: ACM allows 64.
		bad("%s is %d characters; the cell's DNS name (its certificate's domain) is at most 64", s.DNSName(), len(s.DNSName()))
	}
	if s.CacheEngine != "valkey" && s.CacheEngine != "redis" {
		bad("cacheEngine %q: allowed are \"valkey\" and \"redis\"", s.CacheEngine)
	} else if err := awsfacts.CacheIAMAuthProblem(s.CacheEngine, s.CacheEngineVersion); err != nil && s.CacheEngineVersion != "" {
		// The app's cache user authenticates with IAM (see cache()).
		bad("cacheEngineVersion: %v", err)
	}
	positive := map[string]int{
		"auroraInstances": s.AuroraInstances, "auroraBackupRetentionDays": s.AuroraBackupRetentionDays,
		"cacheNodes": s.CacheNodes, "queueMaxReceiveCount": s.QueueMaxReceiveCount,
		"taskCpu": s.TaskCPU, "taskMemory": s.TaskMemory, "logRetentionDays": s.LogRetentionDays,
		"alarmP99LatencyMs": s.AlarmP99LatencyMs, "alarmEvalPeriods": s.AlarmEvalPeriods,
	}
	for field, v := range positive {
		if v < 1 {
			bad("%s is %d; it must be at least 1", field, v)
		}
	}
	if s.ContainerPort < 1 || s.ContainerPort > 65535 {
		bad("containerPort %d: allowed is 1 to 65535", s.ContainerPort)
	}
	if s.DesiredCount < 0 {
		bad("desiredCount %d must not be negative", s.DesiredCount)
	}
	if s.QueueVisibilityTimeoutSeconds < 0 || s.QueueVisibilityTimeoutSeconds > 43200 {
		bad("queueVisibilityTimeoutSeconds %d: allowed is 0 to 43200", s.QueueVisibilityTimeoutSeconds)
	}
	if s.Alarm5xxRatePercent <= 0 {
		bad("alarm5xxRatePercent %g must be positive", s.Alarm5xxRatePercent)
	}
	if err := s.MigrationsProblem(); err != nil {
		bad("%v", err)
	}
	if s.RunsMigrations() && s.MigrationTimeoutSeconds < 1 {
		bad("migrationTimeoutSeconds is %d; it must be at least 1", s.MigrationTimeoutSeconds)
	}
	if err := s.LanesProblem(); err != nil {
		bad("lanes %d, laneShardSize %d: %v", s.Lanes, s.LaneShardSize, err)
	}
	if args.OriginVerifySecret == nil {
		bad("OriginVerifySecret is nil; pass the secret config value cells:originVerifySecret")
	}
	if len(errs) == 0 {
		return nil
	}
	id := s.ID
	if id == "" {
		id = name
	}
	return fmt.Errorf("cellmodule: cell %q: %w", id, errors.Join(errs...))
}

// NewCell builds one cell. name must be the cell id.
func NewCell(ctx *pulumi.Context, name string, args *CellArgs, opts ...pulumi.ResourceOption) (*Cell, error) {
	if err := validate(name, args); err != nil {
		return nil, err
	}
	s := args.Spec
	cell := &Cell{ID: s.ID}
	if err := ctx.RegisterComponentResource(TypeToken, name, cell, opts...); err != nil {
		return nil, err
	}
	now := args.Now
	if now == nil {
		now = time.Now
	}
	cell.DNSName = s.DNSName()
	b := &builder{ctx: ctx, cell: cell, spec: s, originSecret: args.OriginVerifySecret, originNext: args.OriginVerifyNext, now: now, dnsProviderArgs: args.DNSProvider, fleetKey: args.FleetKey}
	steps := []func() error{
		b.dnsProvider, b.lookups, b.network, b.securityGroups, b.database, b.cache, b.queues,
		b.roles, b.lanePolicies, b.certificate, b.service, b.migration, b.dnsRecord, b.alarms, b.outputs, b.moreOutputs,
		b.migrationOutputs, b.deployedOutput,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, fmt.Errorf("cell %s: %w", s.ID, err)
		}
	}
	if err := ctx.RegisterResourceOutputs(cell, cell.Outputs); err != nil {
		return nil, err
	}
	return cell, nil
}

// builder carries what the steps of NewCell share.
type builder struct {
	ctx          *pulumi.Context
	cell         *Cell
	spec         spec.Cell
	originSecret pulumi.StringInput
	originNext   pulumi.StringInput
	now          func() time.Time
	// dnsProviderArgs and dnsOpts: the DNS records' explicit provider.
	dnsProviderArgs *aws.ProviderArgs
	dnsOpts         []pulumi.ResourceOption
	fleetKey        *FleetKey

	partition     string
	account       string
	prefixListID  string
	bucketArn     string
	objectsArn    string
	execPolicies  []pulumi.Resource
	alarmNamesMap map[string]string
}

// name derives a child's logical name from the cell id.
func (b *builder) name(suffix string) string { return b.spec.ID + "-" + suffix }

// tags are put on every taggable child.
func (b *builder) tags(name string) pulumi.StringMap {
	return pulumi.StringMap{
		TagCell:      pulumi.String(b.spec.ID),
		TagManagedBy: pulumi.String(ManagedBy),
		"Name":       pulumi.String(name),
	}
}

// opts parents a child to the cell.
func (b *builder) opts(extra ...pulumi.ResourceOption) []pulumi.ResourceOption {
	return append([]pulumi.ResourceOption{pulumi.Parent(b.cell)}, extra...)
}
