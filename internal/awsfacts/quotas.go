// Package awsfacts holds what cellctl knows about AWS itself — Service
// Quotas codes and defaults, CloudWatch namespaces and metric names — as
// plain data for the product (the quota audit, the wave gates, the cell
// template's alarms) and for the simulator, which enforces and serves the
// same facts. No AWS SDK or Pulumi import: anything may use it.
package awsfacts

import "strings"

// Quota is an AWS service quota as Service Quotas names it. Sources: the
// Service Quotas console and `aws service-quotas
// list-aws-default-service-quotas --service-code <code>` (docs.aws.amazon.com/servicequotas).
type Quota struct {
	// Code is "<service code>/<quota code>", e.g. "vpc/L-F678F1CE": the
	// ServiceCode and QuotaCode of GetServiceQuota.
	Code string `json:"code"`
	Name string `json:"name"`
	// Default is AWS's default value.
	Default float64 `json:"default"`
	// Adjustable: Service Quotas lists the quota as adjustable (the
	// "Adjustable" column of each service's quota table; a request raises
	// it). A quota not known to be adjustable is treated as a hard limit:
	// `cellctl plan --strict` fails on it rather than ask for an increase.
	Adjustable bool `json:"adjustable"`
}

// ServiceCode is the Service Quotas service code ("vpc").
func (q Quota) ServiceCode() string { s, _, _ := strings.Cut(q.Code, "/"); return s }

// QuotaCode is the Service Quotas quota code ("L-F678F1CE").
func (q Quota) QuotaCode() string { _, c, _ := strings.Cut(q.Code, "/"); return c }

// The quotas a cell fleet consumes.
var (
	VPCsPerRegion                     = Quota{Code: "vpc/L-F678F1CE", Name: "VPCs per Region", Default: 5, Adjustable: true}
	ElasticIPs                        = Quota{Code: "ec2/L-0263D0A3", Name: "EC2-VPC Elastic IPs", Default: 5, Adjustable: true}
	NATGatewaysPerAZ                  = Quota{Code: "vpc/L-FE5A380F", Name: "NAT gateways per Availability Zone", Default: 5, Adjustable: true}
	InternetGatewaysPerRegion         = Quota{Code: "vpc/L-A4707A72", Name: "Internet gateways per Region", Default: 5, Adjustable: true}
	SubnetsPerVPC                     = Quota{Code: "vpc/L-407747CB", Name: "Subnets per VPC", Default: 200, Adjustable: true}
	RouteTablesPerVPC                 = Quota{Code: "vpc/L-589F43AA", Name: "Route tables per VPC", Default: 200, Adjustable: true}
	SecurityGroupsPerRegion           = Quota{Code: "vpc/L-E79EC296", Name: "VPC security groups per Region", Default: 2500, Adjustable: true}
	RulesPerSecurityGroup             = Quota{Code: "vpc/L-0EA8095F", Name: "Inbound or outbound rules per security group", Default: 60, Adjustable: true}
	GatewayEndpointsPerRegion         = Quota{Code: "vpc/L-1B52E74A", Name: "Gateway VPC endpoints per Region", Default: 20, Adjustable: true}
	ApplicationLoadBalancersPerRegion = Quota{Code: "elasticloadbalancing/L-53DA6B97", Name: "Application Load Balancers per Region", Default: 50, Adjustable: true}
	NetworkLoadBalancersPerRegion     = Quota{Code: "elasticloadbalancing/L-69A177A2", Name: "Network Load Balancers per Region", Default: 50, Adjustable: true}
	TargetGroupsPerRegion             = Quota{Code: "elasticloadbalancing/L-B22855CB", Name: "Target Groups per Region", Default: 3000, Adjustable: true}
	ListenersPerALB                   = Quota{Code: "elasticloadbalancing/L-B6DF7632", Name: "Listeners per Application Load Balancer", Default: 50}
	RulesPerALB                       = Quota{Code: "elasticloadbalancing/L-CE3125E5", Name: "Rules per Application Load Balancer", Default: 100, Adjustable: true}
	DBClusters                        = Quota{Code: "rds/L-952B80B8", Name: "DB clusters", Default: 40, Adjustable: true}
	DBInstances                       = Quota{Code: "rds/L-7B6409FD", Name: "DB instances", Default: 40, Adjustable: true}
	DBSubnetGroups                    = Quota{Code: "rds/L-48C6BF8D", Name: "DB subnet groups", Default: 50, Adjustable: true}
	// L-8C334AD1 is "Nodes per cluster (Memcached)"; the regional node
	// quota is L-DFE45DF3 (Service Quotas, Amazon ElastiCache).
	CacheNodesPerRegion     = Quota{Code: "elasticache/L-DFE45DF3", Name: "Nodes per Region", Default: 300, Adjustable: true}
	RolesPerAccount         = Quota{Code: "iam/L-FE177D64", Name: "Roles per account", Default: 1000, Adjustable: true}
	GeneralPurposeBuckets   = Quota{Code: "s3/L-DC2B2D3D", Name: "General purpose buckets", Default: 10000, Adjustable: true}
	DistributionsPerAccount = Quota{Code: "cloudfront/L-24B04930", Name: "Web distributions per AWS account", Default: 500, Adjustable: true}
	ServicesPerCluster      = Quota{Code: "ecs/L-9EF96962", Name: "Services per cluster", Default: 5000}
	// FargateOnDemandVCPU is the vCPUs of running Fargate On-Demand tasks
	// (`aws service-quotas list-aws-default-service-quotas --service-code
	// fargate`: 4000; new accounts are often applied a lower value).
	FargateOnDemandVCPU = Quota{Code: "fargate/L-3032A538", Name: "Fargate On-Demand vCPU resource count", Default: 4000, Adjustable: true}
	// LambdaCodeStorage is Lambda's per-Region storage for .zip function
	// code and layers, in GB as Service Quotas states it (its unit is
	// Gigabytes; GetAccountSettings' AccountLimit.TotalCodeSize is the
	// same limit in bytes, 75 × 2^30). Every published version keeps its
	// own copy of the code (AWS Lambda Developer Guide, "Lambda quotas",
	// Compute and storage: "Each function version and layer version
	// consumes storage", 75 GB, adjustable).
	LambdaCodeStorage = Quota{Code: "lambda/L-2ACBD22F", Name: "Function and layer storage", Default: 75, Adjustable: true}
	// LambdaConcurrentExecutions is Lambda's per-Region concurrency
	// (AWS Lambda Developer Guide, "Lambda quotas": 1,000, adjustable).
	// Lambda@Edge replicas run in the Region of the regional edge cache
	// that serves a viewer and count against that Region's quota with
	// every other function there (Amazon CloudFront Developer Guide,
	// "Quotas on Lambda@Edge": "All Lambda functions in the AWS Region
	// share this quota").
	LambdaConcurrentExecutions = Quota{Code: "lambda/L-B99A9384", Name: "Concurrent executions", Default: 1000, Adjustable: true}
)

// EdgeRequestsPerExecution is how many requests per second one
// Lambda@Edge instance serves at most; Lambda@Edge's requests per second in
// a Region are this times the Region's concurrency (Amazon CloudFront
// Developer Guide, "Quotas on Lambda@Edge": "each instance of your
// Lambda@Edge function can serve up to 10 requests per second. The total
// invocation limit is 10 times your concurrency limit"; the same table
// lists "Lambda@Edge requests per second (each supported AWS Region)"
// 10,000, raised through the AWS Support Center: Service Quotas has no code
// for it).
const EdgeRequestsPerExecution = 10

// GiB is the unit Service Quotas states Lambda's code storage in.
const GiB = 1 << 30

// Quotas lists every quota above.
var Quotas = []Quota{
	VPCsPerRegion,
	ElasticIPs,
	NATGatewaysPerAZ,
	InternetGatewaysPerRegion,
	SubnetsPerVPC,
	RouteTablesPerVPC,
	SecurityGroupsPerRegion,
	RulesPerSecurityGroup,
	GatewayEndpointsPerRegion,
	ApplicationLoadBalancersPerRegion,
	NetworkLoadBalancersPerRegion,
	TargetGroupsPerRegion,
	ListenersPerALB,
	RulesPerALB,
	DBClusters,
	DBInstances,
	DBSubnetGroups,
	CacheNodesPerRegion,
	RolesPerAccount,
	GeneralPurposeBuckets,
	DistributionsPerAccount,
	ServicesPerCluster,
	FargateOnDemandVCPU,
	LambdaCodeStorage,
	LambdaConcurrentExecutions,
}
