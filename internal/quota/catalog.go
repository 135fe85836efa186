// Package quota is the fleet's quota audit: the catalog of every AWS
// quota a cell fleet consumes, what one cell costs of each (counted from
// the rendered plan of the cell, never kept by hand), what the account
// uses and may use (read from AWS with internal/awsapi), and the verdict
// in cells of headroom. `cellctl quota` prints it; `cellctl up` runs the
// same check before it creates a cell.
package quota

import (
	"context"
	"fmt"
	"time"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awsfacts"
)

// Scope says what one value of a quota covers.
type Scope string

const (
	// ScopeAccount: one value for the whole account (IAM, CloudFront, S3).
	ScopeAccount Scope = "account"
	// ScopeRegion: one value per region.
	ScopeRegion Scope = "region"
	// ScopeAZ: one value per Availability Zone; the fullest zone counts.
	ScopeAZ Scope = "az"
	// ScopeGroup: one value per security group; every cell brings its own
	// groups, so cells never add up: the fullest group counts.
	ScopeGroup Scope = "security-group"
)

// Entry is one quota of the catalog.
type Entry struct {
	awsfacts.Quota
	Scope Scope `json:"scope"`
	// Reads says how usage is read: an AWS/Usage metric or an API call.
	Reads string `json:"reads"`
	// Resources names the resource types of the cell program whose
	// rendered instances the per-cell cost counts.
	Resources string `json:"resources"`
	// NoLimit, when set, says why AWS enforces no limit (the entry is
	// reported for its usage only).
	NoLimit string `json:"noLimit,omitempty"`
	// NoReader, when set, says why usage is not read: the row is
	// reported unknown, never 0.
	NoReader string `json:"noReader,omitempty"`
	// Doc cites where the code and the counting rule come from.
	Doc string `json:"doc"`
	// Router: the router's Lambda@Edge function consumes the quota, not
	// the cells. It is read in the router's account, in us-east-1 (where
	// the function lives) and in every Region of the fleet's cells (where
	// its replicas run for the viewers those Regions' edge caches serve).
	Router bool `json:"router,omitempty"`
	// EdgeRegionOnly: read only where the edge function lives (us-east-1).
	EdgeRegionOnly bool `json:"edgeRegionOnly,omitempty"`

	// derive computes the limit from the limits read of the same unit
	// (a quota Service Quotas has no code for); nil: Service Quotas.
	derive func(limits map[string]limitValue) limitValue

	// cost is what one rendered cell consumes (see cost.go).
	cost costFunc
	// read reads the account's usage in a region.
	read func(ctx context.Context, r *readers) (usage, error)
}

// usage is one reading: the amount and, for per-AZ and per-group quotas,
// which zone or group it is.
type usage struct {
	used  float64
	where string
	note  string
}

// FargateUsage is the AWS/Usage metric of Fargate On-Demand vCPUs
// (Amazon ECS Developer Guide, "AWS Fargate usage metrics").
var FargateUsage = awsapi.UsageMetric{Namespace: "AWS/Usage", Metric: "ResourceCount", Stat: "Maximum",
	Dimensions: map[string]string{"Service": "Fargate", "Type": "Resource", "Resource": "vCPU", "Class": "Standard/OnDemand"}}

// CloudWatchAlarms has no Service Quotas code: AWS sets no limit on the
// number of alarms (Amazon CloudWatch User Guide, "CloudWatch service
// quotas": "No limit on the total number of alarms per account").
var CloudWatchAlarms = awsfacts.Quota{Code: "monitoring/-", Name: "CloudWatch alarms"}

const vpcQuotasDoc = "Amazon VPC quotas (docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html) and Service Quotas codes"

// Catalog is every quota the fleet consumes, in report order.
var Catalog = []Entry{
	{Quota: awsfacts.VPCsPerRegion, Scope: ScopeRegion, Reads: "ec2:DescribeVpcs", Resources: "aws:ec2/vpc:Vpc", Doc: vpcQuotasDoc,
		cost: modelCost, read: count((*awsapi.Inventory).VPCs)},
	{Quota: awsfacts.InternetGatewaysPerRegion, Scope: ScopeRegion, Reads: "ec2:DescribeInternetGateways", Resources: "aws:ec2/internetGateway:InternetGateway", Doc: vpcQuotasDoc,
		cost: modelCost, read: count((*awsapi.Inventory).InternetGateways)},
	{Quota: awsfacts.NATGatewaysPerAZ, Scope: ScopeAZ, Reads: "ec2:DescribeNatGateways + ec2:DescribeSubnets (zone of each gateway)", Resources: "aws:ec2/natGateway:NatGateway", Doc: vpcQuotasDoc,
		cost: modelCost, read: readNAT},
	{Quota: awsfacts.ElasticIPs, Scope: ScopeRegion, Reads: "ec2:DescribeAddresses (domain vpc)", Resources: "aws:ec2/eip:Eip (per-AZ NAT: 3, single: 1)", Doc: "Amazon EC2 User Guide, Elastic IP address quota",
		cost: modelCost, read: count((*awsapi.Inventory).ElasticIPs)},
	{Quota: awsfacts.SecurityGroupsPerRegion, Scope: ScopeRegion, Reads: "ec2:DescribeSecurityGroups", Resources: "aws:ec2/securityGroup:SecurityGroup", Doc: vpcQuotasDoc + ` ("VPC security groups per Region"; AWS has no per-VPC count quota)`,
		cost: modelCost, read: readSGCount},
	{Quota: awsfacts.RulesPerSecurityGroup, Scope: ScopeGroup, Reads: "ec2:DescribeSecurityGroups + ec2:DescribeManagedPrefixLists (a prefix list counts as its max entries)", Resources: "aws:vpc/securityGroup{Ingress,Egress}Rule:*", Doc: vpcQuotasDoc,
		cost: modelCost, read: readSGRules},
	{Quota: awsfacts.GatewayEndpointsPerRegion, Scope: ScopeRegion, Reads: "ec2:DescribeVpcEndpoints (type Gateway)", Resources: "aws:ec2/vpcEndpoint:VpcEndpoint", Doc: vpcQuotasDoc,
		cost: modelCost, read: count((*awsapi.Inventory).GatewayEndpoints)},
	{Quota: awsfacts.DBClusters, Scope: ScopeRegion, Reads: "rds:DescribeDBClusters", Resources: "aws:rds/cluster:Cluster", Doc: "Amazon RDS User Guide, Quotas in Amazon RDS",
		cost: modelCost, read: count((*awsapi.Inventory).DBClusters)},
	{Quota: awsfacts.DBInstances, Scope: ScopeRegion, Reads: "rds:DescribeDBInstances", Resources: "aws:rds/clusterInstance:ClusterInstance", Doc: "Amazon RDS User Guide, Quotas in Amazon RDS",
		cost: modelCost, read: count((*awsapi.Inventory).DBInstances)},
	{Quota: awsfacts.CacheNodesPerRegion, Scope: ScopeRegion, Reads: "elasticache:DescribeCacheClusters (sum of NumCacheNodes)", Resources: "aws:elasticache/replicationGroup:ReplicationGroup (its nodes)", Doc: "Amazon ElastiCache User Guide, Quotas for ElastiCache",
		cost: modelCost, read: count((*awsapi.Inventory).CacheNodes)},
	{Quota: awsfacts.ApplicationLoadBalancersPerRegion, Scope: ScopeRegion, Reads: "elasticloadbalancing:DescribeLoadBalancers (type application)", Resources: "aws:lb/loadBalancer:LoadBalancer (application)", Doc: "Elastic Load Balancing, Quotas for your Application Load Balancers",
		cost: modelCost, read: readALBs},
	{Quota: awsfacts.TargetGroupsPerRegion, Scope: ScopeRegion, Reads: "elasticloadbalancing:DescribeTargetGroups", Resources: "aws:lb/targetGroup:TargetGroup", Doc: "Elastic Load Balancing, Quotas for your Application Load Balancers",
		cost: modelCost, read: count((*awsapi.Inventory).TargetGroups)},
	{Quota: awsfacts.FargateOnDemandVCPU, Scope: ScopeRegion, Reads: "cloudwatch:GetMetricData AWS/Usage ResourceCount (Service=Fargate, Type=Resource, Resource=vCPU, Class=Standard/OnDemand)", Resources: "aws:ecs/service:Service desiredCount × its task definition's cpu / 1024", Doc: "Amazon ECS Developer Guide, AWS Fargate usage metrics; Amazon ECS service quotas",
		cost: fargateCost, read: readFargate},
	{Quota: CloudWatchAlarms, Scope: ScopeRegion, Reads: "cloudwatch:DescribeAlarms", Resources: "aws:cloudwatch/metricAlarm:MetricAlarm", NoLimit: "AWS sets no limit on the number of alarms", Doc: `Amazon CloudWatch User Guide, CloudWatch service quotas ("No limit on the total number of alarms per account")`,
		cost: typeCost("aws:cloudwatch/metricAlarm:MetricAlarm"), read: readAlarms},
	{Quota: awsfacts.RolesPerAccount, Scope: ScopeAccount, Reads: "iam:ListRoles", Resources: "aws:iam/role:Role", Doc: "IAM User Guide, IAM and AWS STS quotas",
		cost: modelCost, read: count((*awsapi.Inventory).Roles)},
	{Quota: awsfacts.DistributionsPerAccount, Scope: ScopeAccount, Reads: "cloudfront:ListDistributions", Resources: "aws:cloudfront/distribution:Distribution (the router's, which carries the Lambda@Edge function)", NoReader: "cloudfront:ListDistributions (REST-XML) is not read by this version", Doc: "Amazon CloudFront Developer Guide, Quotas (general quotas on distributions; Lambda@Edge)",
		cost: modelCost},
	{Quota: awsfacts.LambdaCodeStorage, Scope: ScopeRegion, Router: true, EdgeRegionOnly: true,
		Reads:     "lambda:GetAccountSettings (AccountUsage.TotalCodeSize: every function version and layer version, in GiB)",
		Resources: "the router's edge function: each routing-table change publishes a version of the package's size (old ones pruned to cells:edgeVersionsKept and those a distribution runs)",
		Doc:       `AWS Lambda Developer Guide, "Lambda quotas" (Compute and storage: 75 GB, "Each function version and layer version consumes storage"); AWS Lambda API Reference, AccountUsage; Service Quotas code L-2ACBD22F (unit Gigabytes)`,
		read:      readCodeStorage},
	{Quota: awsfacts.LambdaConcurrentExecutions, Scope: ScopeRegion, Router: true,
		Reads:     "cloudwatch:GetMetricData AWS/Lambda ConcurrentExecutions (account level, Maximum over 15 min)",
		Resources: "the router's Lambda@Edge replicas (every viewer request runs the origin-request function in the Region of its regional edge cache) and every other function of the Region",
		Doc:       `Amazon CloudFront Developer Guide, "Quotas on Lambda@Edge" (Concurrent executions: "AWS Lambda manages the concurrency quotas for Lambda@Edge. All Lambda functions in the AWS Region share this quota", 1,000 in each Region); AWS Lambda Developer Guide, "Lambda quotas"`,
		read:      readConcurrency},
	{Quota: EdgeRequestsPerSecond, Scope: ScopeRegion, Router: true,
		Reads:     "cloudwatch:GetMetricData AWS/Lambda Invocations of us-east-1.<edge function>, per Region (not read by this version)",
		Resources: "every viewer request of the router's distributions (caching disabled: the origin-request function runs on each)",
		NoReader:  "Lambda@Edge's requests per second are not measured by this version (a plan cannot know viewer traffic; the router's replicas publish their Invocations in each Region they run in)",
		Doc:       `Amazon CloudFront Developer Guide, "Quotas on Lambda@Edge" ("Lambda@Edge requests per second (each supported AWS Region)" 10,000; "each instance of your Lambda@Edge function can serve up to 10 requests per second. The total invocation limit is 10 times your concurrency limit"; raised through the AWS Support Center — Service Quotas has no code for it)`,
		derive:    tenTimesConcurrency},
	{Quota: awsfacts.GeneralPurposeBuckets, Scope: ScopeAccount, Reads: "s3:ListBuckets", Resources: "aws:s3/bucketV2:BucketV2 (the router's fleet bucket; cells own a prefix)", NoReader: "s3:ListBuckets (REST-XML) is not read by this version", Doc: "Amazon S3 User Guide, Bucket quotas",
		cost: modelCost},
}

// EdgeRequestsPerSecond is Lambda@Edge's requests per second in a Region:
// ten times the Region's Lambda concurrency (awsfacts.EdgeRequestsPerExecution).
// Service Quotas has no code for it, so its code here is cellctl's own.
var EdgeRequestsPerSecond = awsfacts.Quota{Code: "lambda-edge/requests-per-second", Name: "Lambda@Edge requests per second",
	Default: awsfacts.EdgeRequestsPerExecution * awsfacts.LambdaConcurrentExecutions.Default, Adjustable: true}

// Lookup finds a catalog entry by its code.
func Lookup(code string) (Entry, bool) {
	for _, e := range Catalog {
		if e.Code == code {
			return e, true
		}
	}
	return Entry{}, false
}

func count(f func(*awsapi.Inventory, context.Context) (int, error)) func(context.Context, *readers) (usage, error) {
	return func(ctx context.Context, r *readers) (usage, error) {
		n, err := f(r.inv, ctx)
		return usage{used: float64(n)}, err
	}
}

func readNAT(ctx context.Context, r *readers) (usage, error) {
	byAZ, err := r.inv.NATGatewaysByAZ(ctx)
	if err != nil {
		return usage{}, err
	}
	u := usage{where: "every zone empty"}
	first := true
	for az, n := range byAZ {
		if first || float64(n) > u.used || float64(n) == u.used && az < u.where {
			u.used, u.where, first = float64(n), az, false
		}
	}
	return u, nil
}

func readSGCount(ctx context.Context, r *readers) (usage, error) {
	sg, err := r.securityGroups(ctx)
	return usage{used: float64(sg.Count)}, err
}

func readSGRules(ctx context.Context, r *readers) (usage, error) {
	sg, err := r.securityGroups(ctx)
	if err == nil && sg.RulesErr != nil {
		return usage{}, sg.RulesErr
	}
	where := sg.Fullest
	if where == "" {
		where = "no security group"
	}
	return usage{used: float64(sg.MostRules), where: where}, err
}

func readALBs(ctx context.Context, r *readers) (usage, error) {
	byType, err := r.inv.LoadBalancers(ctx)
	return usage{used: float64(byType["application"])}, err
}

func readAlarms(ctx context.Context, r *readers) (usage, error) {
	n, err := r.cw.AlarmCount(ctx)
	return usage{used: float64(n)}, err
}

func readFargate(ctx context.Context, r *readers) (usage, error) {
	u, err := r.cw.ReadUsage(ctx, FargateUsage, r.now)
	if err != nil {
		return usage{}, err
	}
	if u.NoData {
		// AWS publishes the metric only while tasks run: no datapoint in
		// the window means no Fargate vCPU is in use (a read error is
		// reported as unknown above, never as this).
		return usage{used: 0, note: fmt.Sprintf("no AWS/Usage datapoint in the last %s: no Fargate task running", awsapi.UsageWindow)}, nil
	}
	return usage{used: u.Value, note: "AWS/Usage at " + u.At.Format(time.RFC3339)}, nil
}

func readCodeStorage(ctx context.Context, r *readers) (usage, error) {
	cs, err := r.lambda.CodeStorage(ctx)
	if err != nil {
		return usage{}, err
	}
	return usage{used: float64(cs.UsedBytes) / awsfacts.GiB, note: fmt.Sprintf("%d bytes of code in %d function(s)", cs.UsedBytes, cs.Functions)}, nil
}

// LambdaConcurrency is Lambda's account-level ConcurrentExecutions metric
// (AWS Lambda Developer Guide, "Monitoring concurrency": the metric with
// no dimension is the Region's total across functions).
var LambdaConcurrency = awsapi.UsageMetric{Namespace: "AWS/Lambda", Metric: "ConcurrentExecutions", Stat: "Maximum"}

func readConcurrency(ctx context.Context, r *readers) (usage, error) {
	u, err := r.cw.ReadUsage(ctx, LambdaConcurrency, r.now)
	if err != nil {
		return usage{}, err
	}
	if u.NoData {
		// Lambda publishes the metric only while a function runs.
		return usage{used: 0, note: fmt.Sprintf("no AWS/Lambda ConcurrentExecutions datapoint in the last %s: no function ran", awsapi.UsageWindow)}, nil
	}
	return usage{used: u.Value, note: "AWS/Lambda at " + u.At.Format(time.RFC3339)}, nil
}

// tenTimesConcurrency is Lambda@Edge's requests per second: ten times the
// Region's concurrent executions as read.
func tenTimesConcurrency(limits map[string]limitValue) limitValue {
	c, ok := limits[awsfacts.LambdaConcurrentExecutions.Code]
	if !ok {
		return limitValue{err: fmt.Errorf("%s was not read", awsfacts.LambdaConcurrentExecutions.Code)}
	}
	if c.err != nil {
		return limitValue{err: fmt.Errorf("derived from %s: %w", awsfacts.LambdaConcurrentExecutions.Code, c.err)}
	}
	return limitValue{value: awsfacts.EdgeRequestsPerExecution * c.value, source: "10 × " + awsfacts.LambdaConcurrentExecutions.Code}
}
