package awsmodel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsfacts"
)

// Reference is an input that names another resource, and the error AWS
// gives when that resource does not exist.
type Reference struct {
	// Property is a dotted path into the inputs; arrays are traversed
	// (e.g. "loadBalancers.targetGroupArn").
	Property string `json:"property"`
	// Target is the type token of the referenced resource.
	Target string `json:"target"`
	// Code and Message (with one %s for the value) form the AWS error.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Skip ignores values AWS resolves itself (e.g. "default").
	Skip func(value string) bool `json:"-"`
}

// RefValue is one concrete reference found in a resource's inputs.
type RefValue struct {
	Reference
	Value string `json:"value"`
}

// References returns the known references in inputs of typ.
func References(typ string, inputs resource.PropertyMap) []RefValue {
	spec := specs[typ]
	if spec == nil {
		return nil
	}
	var out []RefValue
	for _, ref := range spec.refs {
		for _, v := range values(inputs, ref.Property) {
			if v == "" || (ref.Skip != nil && ref.Skip(v)) {
				continue
			}
			out = append(out, RefValue{Reference: ref, Value: v})
		}
	}
	return out
}

// values collects the known strings at a dotted path, fanning out over
// arrays.
func values(m resource.PropertyMap, path string) []string {
	var out []string
	var walk func(v resource.PropertyValue, parts []string)
	walk = func(v resource.PropertyValue, parts []string) {
		v = unwrap(v)
		if v.IsNull() || v.ContainsUnknowns() {
			return
		}
		if v.IsArray() {
			for _, e := range v.ArrayValue() {
				walk(e, parts)
			}
			return
		}
		if len(parts) == 0 {
			if v.IsString() {
				out = append(out, v.StringValue())
			}
			return
		}
		if v.IsString() {
			// JSON documents (a queue's redrivePolicy) are walked too.
			var doc map[string]any
			if json.Unmarshal([]byte(v.StringValue()), &doc) == nil {
				v = resource.NewPropertyValue(doc)
			}
		}
		if v.IsObject() {
			if next, ok := v.ObjectValue()[resource.PropertyKey(parts[0])]; ok {
				walk(next, parts[1:])
			}
		}
	}
	walk(resource.NewObjectProperty(m), strings.Split(path, "."))
	return out
}

// uniqueRule is a name AWS requires to be unique within a scope.
type uniqueRule struct {
	// key returns the scope and name ("" when not applicable).
	key     func(env Env, out resource.PropertyMap) (scope, name string)
	code    string
	message string // fmt with the name (and, for "%[2]s", the scope)
	// silent is set where AWS does not refuse the duplicate but takes the
	// existing resource over (PutMetricAlarm overwrites an alarm of the
	// same name, PutDashboard a dashboard): the simulator refuses it with
	// HazardCode, since on AWS another stack's resource would change hands
	// without an error.
	silent string
}

// HazardCode is the simulator's code for a duplicate name AWS accepts
// silently (it is not an AWS error code: AWS answers with success).
const HazardCode = "SimulatedSilentTakeover"

// UniqueName is a name a live resource holds exclusively.
type UniqueName struct {
	Key     string `json:"key"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// Silent says AWS would accept the duplicate and take the existing
	// resource over (Code is then HazardCode).
	Silent bool `json:"silent,omitempty"`
}

// UniqueNames lists the exclusive names a resource of typ with these
// outputs holds; the simulator refuses a second resource with the same key.
func UniqueNames(typ string, env Env, outputs resource.PropertyMap) []UniqueName {
	spec := specs[typ]
	if spec == nil {
		return nil
	}
	env = env.normalized()
	var out []UniqueName
	for _, u := range spec.unique {
		scope, name := u.key(env, outputs)
		if name == "" {
			continue
		}
		msg := fmt.Sprintf(u.message, name)
		if strings.Count(u.message, "%s") > 1 {
			msg = fmt.Sprintf(u.message, name, scope)
		}
		un := UniqueName{Key: typ + "|" + scope + "|" + name, Code: u.code, Message: msg}
		if u.silent != "" {
			un.Code, un.Silent = HazardCode, true
			un.Message = fmt.Sprintf("simulated AWS refuses what AWS accepts silently: %s %s already exists and %s", u.message, name, u.silent)
		}
		out = append(out, un)
	}
	return out
}

func regionScoped(prop string) func(Env, resource.PropertyMap) (string, string) {
	return func(env Env, out resource.PropertyMap) (string, string) { return env.Region, str(out, prop) }
}

func globalScoped(prop string) func(Env, resource.PropertyMap) (string, string) {
	return func(env Env, out resource.PropertyMap) (string, string) { return "global", str(out, prop) }
}

// QuotaDef is an AWS service quota the simulator enforces: the quota
// (awsfacts, the product's AWS facts) and how resources consume it.
type QuotaDef struct {
	awsfacts.Quota
	// Scope says what one quota value covers: "region", "zone", "vpc",
	// "account", "load-balancer", "security-group".
	Scope string `json:"scope"`
	// Type is the resource type whose instances consume it.
	Type string `json:"type"`
	// ErrorCode and ErrorMessage are AWS's error when it is exceeded.
	ErrorCode    string `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
	// use returns the scope key and amount one resource consumes (amount 0
	// when it does not count).
	use func(env Env, out resource.PropertyMap, cloud Cloud) (string, float64)
	// implied are the resources of another type that consume the quota
	// through one AWS creates with them (a VPC's default security group).
	implied []impliedUse
}

// impliedUse is a resource type that consumes a quota through a resource
// AWS creates with it, which no program declares.
type impliedUse struct {
	Type string
	use  func(env Env, out resource.PropertyMap, cloud Cloud) (string, float64)
}

// Consumption is what one live resource uses of one quota.
type Consumption struct {
	Code   string  `json:"code"`
	Scope  string  `json:"scope"`
	Amount float64 `json:"amount"`
	// Implied: consumed through a resource AWS creates with this one (a
	// VPC's default security group). It counts toward usage; whether AWS
	// refuses the create itself when that quota is full is not documented,
	// so the simulator does not.
	Implied bool `json:"implied,omitempty"`
}

// QuotaUsage lists the quotas a live resource of typ consumes.
func QuotaUsage(typ string, env Env, outputs resource.PropertyMap, cloud Cloud) []Consumption {
	if !Counted(typ) {
		return nil
	}
	env = env.normalized()
	var out []Consumption
	for _, q := range quotaDefs {
		if q.Type == typ && q.use != nil {
			if scope, n := q.use(env, outputs, cloud); n > 0 {
				out = append(out, Consumption{Code: q.Code, Scope: scope, Amount: n})
			}
		}
		for _, im := range q.implied {
			if im.Type != typ {
				continue
			}
			if scope, n := im.use(env, outputs, cloud); n > 0 {
				out = append(out, Consumption{Code: q.Code, Scope: scope, Amount: n, Implied: true})
			}
		}
	}
	return out
}

// Counted reports whether resources of typ consume a quota the model
// knows, as the quota's own type or as one it implies (a VPC implies its
// default security group): what a reader that counts live resources must
// not skip.
func Counted(typ string) bool { return countedTypes()[typ] }

var countedTypes = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, q := range quotaDefs {
		if q.use != nil {
			m[q.Type] = true
		}
		for _, im := range q.implied {
			m[im.Type] = true
		}
	}
	return m
})

// QuotaDefs lists the quotas the model knows, by code.
func QuotaDefs() []QuotaDef {
	out := append([]QuotaDef(nil), quotaDefs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// QuotaDefByCode finds a quota by its code ("vpc/L-F678F1CE"), by its bare
// quota code ("L-F678F1CE") or by its name, case-insensitively.
func QuotaDefByCode(code string) (QuotaDef, bool) {
	for _, q := range quotaDefs {
		if strings.EqualFold(q.Code, code) || strings.EqualFold(q.Name, code) ||
			strings.EqualFold(q.Code[strings.Index(q.Code, "/")+1:], code) {
			return q, true
		}
	}
	return QuotaDef{}, false
}

func countRegion(env Env, _ resource.PropertyMap, _ Cloud) (string, float64) { return env.Region, 1 }
func countAccount(Env, resource.PropertyMap, Cloud) (string, float64)        { return "account", 1 }
func countBy(prop string) func(Env, resource.PropertyMap, Cloud) (string, float64) {
	return func(_ Env, out resource.PropertyMap, _ Cloud) (string, float64) {
		if v := str(out, prop); v != "" {
			return v, 1
		}
		return "", 0
	}
}

// egress is the outbound half of the rules-per-security-group quota, which
// AWS counts separately for inbound and outbound rules.
func egress(q awsfacts.Quota) awsfacts.Quota {
	return awsfacts.Quota{Code: q.Code + "#egress", Name: "Outbound rules per security group", Default: q.Default}
}

var quotaDefs = []QuotaDef{
	{Quota: awsfacts.VPCsPerRegion, Scope: "region", Type: "aws:ec2/vpc:Vpc",
		ErrorCode: "VpcLimitExceeded", ErrorMessage: "The maximum number of VPCs has been reached.", use: countRegion},
	{Quota: awsfacts.ElasticIPs, Scope: "region", Type: "aws:ec2/eip:Eip",
		ErrorCode: "AddressLimitExceeded", ErrorMessage: "The maximum number of addresses has been reached.", use: countRegion},
	{Quota: awsfacts.NATGatewaysPerAZ, Scope: "zone", Type: "aws:ec2/natGateway:NatGateway",
		ErrorCode: "NatGatewayLimitExceeded", ErrorMessage: "The maximum number of NAT Gateways has been reached.",
		use: func(env Env, out resource.PropertyMap, cloud Cloud) (string, float64) {
			if cloud != nil {
				if _, sn, ok := cloud.Lookup(str(out, "subnetId")); ok && str(sn, "availabilityZone") != "" {
					return str(sn, "availabilityZone"), 1
				}
			}
			return env.Region + "?", 1
		}},
	{Quota: awsfacts.InternetGatewaysPerRegion, Scope: "region", Type: "aws:ec2/internetGateway:InternetGateway",
		ErrorCode: "InternetGatewayLimitExceeded", ErrorMessage: "The maximum number of internet gateways has been reached.", use: countRegion},
	{Quota: awsfacts.SubnetsPerVPC, Scope: "vpc", Type: "aws:ec2/subnet:Subnet",
		ErrorCode: "SubnetLimitExceeded", ErrorMessage: "The maximum number of subnets has been reached.", use: countBy("vpcId")},
	{Quota: awsfacts.RouteTablesPerVPC, Scope: "vpc", Type: "aws:ec2/routeTable:RouteTable",
		ErrorCode: "RouteTableLimitExceeded", ErrorMessage: "The maximum number of route tables has been reached.", use: countBy("vpcId")},
	{Quota: awsfacts.SecurityGroupsPerRegion, Scope: "region", Type: "aws:ec2/securityGroup:SecurityGroup",
		ErrorCode: "SecurityGroupLimitExceeded", ErrorMessage: "The maximum number of security groups has been reached.", use: countRegion,
		// Every VPC comes with a default security group (Amazon VPC User
		// Guide, "Default security groups for your VPCs"), which
		// DescribeSecurityGroups lists and the quota counts: a cell's VPC
		// costs one more group than its program declares.
		// The default VPC's own group is one of the region's default
		// resources (DefaultNetwork), counted there.
		implied: []impliedUse{{Type: tVpc, use: func(env Env, out resource.PropertyMap, _ Cloud) (string, float64) {
			if v, ok := out["isDefault"]; ok && v.IsBool() && v.BoolValue() {
				return "", 0
			}
			return env.Region, 1
		}}}},
	{Quota: awsfacts.RulesPerSecurityGroup, Scope: "security-group", Type: "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
		ErrorCode: "RulesPerSecurityGroupLimitExceeded", ErrorMessage: "The maximum number of rules per security group has been reached.",
		use: func(env Env, out resource.PropertyMap, _ Cloud) (string, float64) {
			return str(out, "securityGroupId") + "/ingress", sgRuleWeight(env, out)
		}},
	{Quota: egress(awsfacts.RulesPerSecurityGroup), Scope: "security-group", Type: "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
		ErrorCode: "RulesPerSecurityGroupLimitExceeded", ErrorMessage: "The maximum number of rules per security group has been reached.",
		use: func(env Env, out resource.PropertyMap, _ Cloud) (string, float64) {
			return str(out, "securityGroupId") + "/egress", sgRuleWeight(env, out)
		}},
	{Quota: awsfacts.GatewayEndpointsPerRegion, Scope: "region", Type: "aws:ec2/vpcEndpoint:VpcEndpoint",
		ErrorCode: "VpcEndpointLimitExceeded", ErrorMessage: "The maximum number of VPC endpoints has been reached.",
		use: func(env Env, out resource.PropertyMap, _ Cloud) (string, float64) {
			if t := str(out, "vpcEndpointType"); t == "" || t == "Gateway" {
				return env.Region, 1
			}
			return "", 0
		}},
	{Quota: awsfacts.ApplicationLoadBalancersPerRegion, Scope: "region", Type: "aws:lb/loadBalancer:LoadBalancer",
		ErrorCode: "TooManyLoadBalancers", ErrorMessage: "The quota for the number of load balancers has been reached",
		use: func(env Env, out resource.PropertyMap, _ Cloud) (string, float64) {
			if t := str(out, "loadBalancerType"); t == "" || t == "application" {
				return env.Region, 1
			}
			return "", 0
		}},
	{Quota: awsfacts.NetworkLoadBalancersPerRegion, Scope: "region", Type: "aws:lb/loadBalancer:LoadBalancer",
		ErrorCode: "TooManyLoadBalancers", ErrorMessage: "The quota for the number of load balancers has been reached",
		use: func(env Env, out resource.PropertyMap, _ Cloud) (string, float64) {
			if str(out, "loadBalancerType") == "network" {
				return env.Region, 1
			}
			return "", 0
		}},
	{Quota: awsfacts.TargetGroupsPerRegion, Scope: "region", Type: "aws:lb/targetGroup:TargetGroup",
		ErrorCode: "TooManyTargetGroups", ErrorMessage: "The quota for the number of target groups has been reached", use: countRegion},
	{Quota: awsfacts.ListenersPerALB, Scope: "load-balancer", Type: "aws:lb/listener:Listener",
		ErrorCode: "TooManyListeners", ErrorMessage: "The quota for the number of listeners per load balancer has been reached", use: countBy("loadBalancerArn")},
	{Quota: awsfacts.RulesPerALB, Scope: "load-balancer", Type: "aws:lb/listenerRule:ListenerRule",
		ErrorCode: "TooManyRules", ErrorMessage: "The quota for the number of rules per load balancer has been reached",
		use: func(_ Env, out resource.PropertyMap, _ Cloud) (string, float64) {
			if lb := loadBalancerOfListener(str(out, "listenerArn")); lb != "" {
				return lb, 1
			}
			return "", 0
		}},
	{Quota: awsfacts.DBClusters, Scope: "region", Type: "aws:rds/cluster:Cluster",
		ErrorCode: "DBClusterQuotaExceededFault", ErrorMessage: "The user attempted to create a new DB cluster and the user has already reached the maximum allowed DB cluster quota.", use: countRegion},
	{Quota: awsfacts.DBInstances, Scope: "region", Type: "aws:rds/clusterInstance:ClusterInstance",
		ErrorCode: "InstanceQuotaExceeded", ErrorMessage: "DB Instance quota exceeded.", use: countRegion},
	{Quota: awsfacts.DBSubnetGroups, Scope: "region", Type: "aws:rds/subnetGroup:SubnetGroup",
		ErrorCode: "DBSubnetGroupQuotaExceeded", ErrorMessage: "The request would result in the user exceeding the allowed number of DB subnet groups.", use: countRegion},
	{Quota: awsfacts.CacheNodesPerRegion, Scope: "region", Type: "aws:elasticache/replicationGroup:ReplicationGroup",
		ErrorCode: "NodeQuotaForCustomerExceeded", ErrorMessage: "The request cannot be processed because it would exceed the allowed number of cache nodes per customer.",
		use: func(env Env, out resource.PropertyMap, _ Cloud) (string, float64) {
			return env.Region, float64(cacheNodes(out))
		}},
	{Quota: awsfacts.RolesPerAccount, Scope: "account", Type: "aws:iam/role:Role",
		ErrorCode: "LimitExceeded", ErrorMessage: "Cannot exceed quota for RolesPerAccount: 1000", use: countAccount},
	{Quota: awsfacts.GeneralPurposeBuckets, Scope: "account", Type: "aws:s3/bucketV2:BucketV2",
		ErrorCode: "TooManyBuckets", ErrorMessage: "You have attempted to create more buckets than allowed", use: countAccount},
	{Quota: awsfacts.DistributionsPerAccount, Scope: "account", Type: "aws:cloudfront/distribution:Distribution",
		ErrorCode: "TooManyDistributions", ErrorMessage: "Your request contains more CloudFront distributions than are allowed per AWS account.", use: countAccount},
	{Quota: awsfacts.ServicesPerCluster, Scope: "ecs-cluster", Type: "aws:ecs/service:Service",
		ErrorCode: "LimitExceededException", ErrorMessage: "The maximum number of services per cluster has been reached.", use: countBy("cluster")},
	// Served by the simulator's Service Quotas for the quota audit, not
	// enforced on create: AWS accepts the service and fails to place its
	// tasks, which the simulator does not model (use is nil).
	{Quota: awsfacts.FargateOnDemandVCPU, Scope: "region", Type: "aws:ecs/service:Service"},
	// Served for the quota audit, not enforced on create: a publish past
	// the storage limit fails with CodeStorageExceededException, which
	// the simulator does not model (its versions are not sized as AWS
	// zips them); concurrency is a runtime limit (throttling, a 503 at
	// the edge), never a create error.
	{Quota: awsfacts.LambdaCodeStorage, Scope: "region", Type: "aws:lambda/function:Function",
		ErrorCode: "CodeStorageExceededException", ErrorMessage: "Code storage limit exceeded."},
	{Quota: awsfacts.LambdaConcurrentExecutions, Scope: "region", Type: "aws:lambda/function:Function"},
}

// cacheNodes counts the nodes of an ElastiCache replication group.
func cacheNodes(out resource.PropertyMap) int {
	if groups, ok := number(out, "numNodeGroups"); ok && groups > 0 && str(out, "clusterMode") == "enabled" {
		replicas, _ := number(out, "replicasPerNodeGroup")
		return int(groups * (replicas + 1))
	}
	if n, ok := number(out, "numCacheClusters"); ok && n > 0 {
		return int(n)
	}
	return 1
}

// loadBalancerOfListener extracts the load balancer ARN from a listener
// ARN (…:listener/app/name/lbhex/listenerhex).
func loadBalancerOfListener(arn string) string {
	i := strings.Index(arn, ":listener/")
	if i < 0 {
		return ""
	}
	parts := strings.Split(arn[i+len(":listener/"):], "/")
	if len(parts) < 3 {
		return ""
	}
	return arn[:i] + ":loadbalancer/" + strings.Join(parts[:3], "/")
}

// sgRuleWeight is how much of the rules-per-group quota one rule uses: a
// rule that references a managed prefix list counts as the list's maximum
// entries (the CloudFront origin-facing list weighs 55 of the 60), every
// other rule as one. (Amazon VPC User Guide, Security group quotas.)
func sgRuleWeight(env Env, out resource.PropertyMap) float64 {
	if id := str(out, "prefixListId"); id != "" {
		return PrefixListWeight(env, id)
	}
	return 1
}
