package awsmodel

import (
	"reflect"
	"strings"
	"sync"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/acm"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudfront"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ecs"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/elasticache"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/kms"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lambda"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lb"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/rds"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/route53"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/s3"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/vpc"
)

// The property names come from the pulumi-aws SDK itself (the `pulumi:"…"`
// tags of each resource's Args and State structs), so the model can never
// drift from the provider version the programs compile against.

type elementTyper interface{ ElementType() reflect.Type }

// sdkTypes maps a type token to the SDK's (args, state) structs.
var sdkTypes = map[string][2]elementTyper{
	"aws:ec2/vpc:Vpc":                                           {ec2.VpcArgs{}, ec2.VpcState{}},
	"aws:ec2/subnet:Subnet":                                     {ec2.SubnetArgs{}, ec2.SubnetState{}},
	"aws:ec2/internetGateway:InternetGateway":                   {ec2.InternetGatewayArgs{}, ec2.InternetGatewayState{}},
	"aws:ec2/eip:Eip":                                           {ec2.EipArgs{}, ec2.EipState{}},
	"aws:ec2/natGateway:NatGateway":                             {ec2.NatGatewayArgs{}, ec2.NatGatewayState{}},
	"aws:ec2/routeTable:RouteTable":                             {ec2.RouteTableArgs{}, ec2.RouteTableState{}},
	"aws:ec2/route:Route":                                       {ec2.RouteArgs{}, ec2.RouteState{}},
	"aws:ec2/routeTableAssociation:RouteTableAssociation":       {ec2.RouteTableAssociationArgs{}, ec2.RouteTableAssociationState{}},
	"aws:ec2/vpcEndpoint:VpcEndpoint":                           {ec2.VpcEndpointArgs{}, ec2.VpcEndpointState{}},
	"aws:ec2/securityGroup:SecurityGroup":                       {ec2.SecurityGroupArgs{}, ec2.SecurityGroupState{}},
	"aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": {vpc.SecurityGroupIngressRuleArgs{}, vpc.SecurityGroupIngressRuleState{}},
	"aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule":   {vpc.SecurityGroupEgressRuleArgs{}, vpc.SecurityGroupEgressRuleState{}},
	"aws:rds/subnetGroup:SubnetGroup":                           {rds.SubnetGroupArgs{}, rds.SubnetGroupState{}},
	"aws:rds/clusterParameterGroup:ClusterParameterGroup":       {rds.ClusterParameterGroupArgs{}, rds.ClusterParameterGroupState{}},
	"aws:rds/cluster:Cluster":                                   {rds.ClusterArgs{}, rds.ClusterState{}},
	"aws:rds/clusterInstance:ClusterInstance":                   {rds.ClusterInstanceArgs{}, rds.ClusterInstanceState{}},
	"aws:elasticache/subnetGroup:SubnetGroup":                   {elasticache.SubnetGroupArgs{}, elasticache.SubnetGroupState{}},
	"aws:elasticache/user:User":                                 {elasticache.UserArgs{}, elasticache.UserState{}},
	"aws:elasticache/userGroup:UserGroup":                       {elasticache.UserGroupArgs{}, elasticache.UserGroupState{}},
	"aws:elasticache/replicationGroup:ReplicationGroup":         {elasticache.ReplicationGroupArgs{}, elasticache.ReplicationGroupState{}},
	"aws:sqs/queue:Queue":                                       {sqs.QueueArgs{}, sqs.QueueState{}},
	"aws:sqs/queuePolicy:QueuePolicy":                           {sqs.QueuePolicyArgs{}, sqs.QueuePolicyState{}},
	"aws:sqs/redriveAllowPolicy:RedriveAllowPolicy":             {sqs.RedriveAllowPolicyArgs{}, sqs.RedriveAllowPolicyState{}},
	"aws:iam/role:Role":                                         {iam.RoleArgs{}, iam.RoleState{}},
	"aws:iam/rolePolicy:RolePolicy":                             {iam.RolePolicyArgs{}, iam.RolePolicyState{}},
	"aws:iam/rolePolicyAttachment:RolePolicyAttachment":         {iam.RolePolicyAttachmentArgs{}, iam.RolePolicyAttachmentState{}},
	"aws:cloudwatch/logGroup:LogGroup":                          {cloudwatch.LogGroupArgs{}, cloudwatch.LogGroupState{}},
	"aws:cloudwatch/metricAlarm:MetricAlarm":                    {cloudwatch.MetricAlarmArgs{}, cloudwatch.MetricAlarmState{}},
	"aws:cloudwatch/dashboard:Dashboard":                        {cloudwatch.DashboardArgs{}, cloudwatch.DashboardState{}},
	"aws:ecs/cluster:Cluster":                                   {ecs.ClusterArgs{}, ecs.ClusterState{}},
	"aws:ecs/taskDefinition:TaskDefinition":                     {ecs.TaskDefinitionArgs{}, ecs.TaskDefinitionState{}},
	"aws:ecs/service:Service":                                   {ecs.ServiceArgs{}, ecs.ServiceState{}},
	"aws:lb/loadBalancer:LoadBalancer":                          {lb.LoadBalancerArgs{}, lb.LoadBalancerState{}},
	"aws:lb/targetGroup:TargetGroup":                            {lb.TargetGroupArgs{}, lb.TargetGroupState{}},
	"aws:lb/listener:Listener":                                  {lb.ListenerArgs{}, lb.ListenerState{}},
	"aws:lb/listenerRule:ListenerRule":                          {lb.ListenerRuleArgs{}, lb.ListenerRuleState{}},
	"aws:s3/bucketV2:BucketV2":                                  {s3.BucketV2Args{}, s3.BucketV2State{}},
	"aws:s3/bucketVersioningV2:BucketVersioningV2":              {s3.BucketVersioningV2Args{}, s3.BucketVersioningV2State{}},
	"aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2": {s3.BucketServerSideEncryptionConfigurationV2Args{}, s3.BucketServerSideEncryptionConfigurationV2State{}},
	"aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock":                                     {s3.BucketPublicAccessBlockArgs{}, s3.BucketPublicAccessBlockState{}},
	"aws:s3/bucketOwnershipControls:BucketOwnershipControls":                                     {s3.BucketOwnershipControlsArgs{}, s3.BucketOwnershipControlsState{}},
	"aws:kms/key:Key":                                                      {kms.KeyArgs{}, kms.KeyState{}},
	"aws:s3/bucketPolicy:BucketPolicy":                                     {s3.BucketPolicyArgs{}, s3.BucketPolicyState{}},
	"aws:s3/accessPoint:AccessPoint":                                       {s3.AccessPointArgs{}, s3.AccessPointState{}},
	"aws:lambda/function:Function":                                         {lambda.FunctionArgs{}, lambda.FunctionState{}},
	"aws:cloudfront/distribution:Distribution":                             {cloudfront.DistributionArgs{}, cloudfront.DistributionState{}},
	"aws:cloudfront/continuousDeploymentPolicy:ContinuousDeploymentPolicy": {cloudfront.ContinuousDeploymentPolicyArgs{}, cloudfront.ContinuousDeploymentPolicyState{}},
	"aws:cloudfront/cachePolicy:CachePolicy":                               {cloudfront.CachePolicyArgs{}, cloudfront.CachePolicyState{}},
	"aws:cloudfront/originRequestPolicy:OriginRequestPolicy":               {cloudfront.OriginRequestPolicyArgs{}, cloudfront.OriginRequestPolicyState{}},
	"aws:acm/certificate:Certificate":                                      {acm.CertificateArgs{}, acm.CertificateState{}},
	"aws:acm/certificateValidation:CertificateValidation":                  {acm.CertificateValidationArgs{}, acm.CertificateValidationState{}},
	"aws:route53/record:Record":                                            {route53.RecordArgs{}, route53.RecordState{}},
}

// Kind is the JSON-ish shape of an SDK property.
type Kind string

const (
	KindString  Kind = "string"
	KindBool    Kind = "boolean"
	KindNumber  Kind = "number"
	KindArray   Kind = "array"
	KindObject  Kind = "object"
	KindArchive Kind = "archive"
	KindAsset   Kind = "asset"
	KindAny     Kind = "any"
)

// Schema is the property surface of one resource type in pulumi-aws v6.83.4.
type Schema struct {
	// Inputs maps each input property to its kind.
	Inputs map[string]Kind
	// Outputs maps each output (state) property to its kind; "id" excluded.
	Outputs map[string]Kind
}

// ComputedOnly reports whether prop is an output that is not an input.
func (s Schema) ComputedOnly(prop string) bool {
	_, in := s.Inputs[prop]
	_, out := s.Outputs[prop]
	return out && !in
}

var (
	schemaOnce  sync.Once
	schemaCache map[string]Schema
)

// SchemaOf returns the SDK property surface of typ, and false for a type the
// model does not know.
func SchemaOf(typ string) (Schema, bool) {
	schemaOnce.Do(func() {
		schemaCache = make(map[string]Schema, len(sdkTypes))
		for tok, pair := range sdkTypes {
			schemaCache[tok] = Schema{
				Inputs:  fieldsOf(pair[0].ElementType()),
				Outputs: fieldsOf(pair[1].ElementType()),
			}
		}
	})
	s, ok := schemaCache[typ]
	return s, ok
}

func fieldsOf(t reflect.Type) map[string]Kind {
	out := map[string]Kind{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("pulumi")
		if tag == "" {
			continue
		}
		name := strings.Split(tag, ",")[0]
		out[name] = kindOf(f.Type)
	}
	return out
}

func kindOf(t reflect.Type) Kind {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Name() {
	case "Archive":
		return KindArchive
	case "Asset", "AssetOrArchive":
		return KindAsset
	}
	switch t.Kind() {
	case reflect.String:
		return KindString
	case reflect.Bool:
		return KindBool
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Float32, reflect.Float64:
		return KindNumber
	case reflect.Slice, reflect.Array:
		return KindArray
	case reflect.Map, reflect.Struct:
		return KindObject
	}
	return KindAny
}
