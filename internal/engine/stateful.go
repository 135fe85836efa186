package engine

import (
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
)

// stateful names the resource types whose replacement or deletion loses
// something a new resource does not bring back: data, an address other
// systems know, or the network everything else lives in.
var stateful = map[string]string{
	"aws:rds/cluster:Cluster":                           "the database and its data",
	"aws:rds/clusterInstance:ClusterInstance":           "a database instance (the cluster's capacity while it is rebuilt)",
	"aws:elasticache/replicationGroup:ReplicationGroup": "the cache and its data",
	"aws:sqs/queue:Queue":                               "the queue and the messages in it",
	"aws:s3/bucket:Bucket":                              "the bucket and its objects",
	"aws:s3/bucketV2:BucketV2":                          "the bucket and its objects",
	"aws:ec2/eip:Eip":                                   "the Elastic IP: the cell's egress address changes (partners' allow-lists break)",
	"aws:ec2/natGateway:NatGateway":                     "the private subnets' egress while it is rebuilt",
	"aws:ec2/vpc:Vpc":                                   "the cell's network: everything in it is rebuilt",
	"aws:ec2/subnet:Subnet":                             "a subnet: every resource in it is rebuilt",
	"aws:lb/loadBalancer:LoadBalancer":                  "the ALB and its DNS name (CloudFront's origin for the cell)",
	"aws:secretsmanager/secret:Secret":                  "a secret and its value",
}

// changeWarning says what a planned step loses when it replaces or
// deletes a protected or stateful resource; "" for any other step.
func changeWarning(m apitype.StepEventMetadata) string {
	switch m.Op {
	case apitype.OpReplace, apitype.OpCreateReplacement, apitype.OpDeleteReplaced, apitype.OpDelete,
		apitype.OpDiscardReplaced, apitype.OpImportReplacement:
	default:
		return ""
	}
	verb := "replaces"
	if m.Op == apitype.OpDelete {
		verb = "deletes"
	}
	protected := m.Old != nil && m.Old.Protect
	what, isStateful := stateful[m.Type]
	switch {
	case protected && isStateful:
		return verb + " a protected resource — " + what + "; pulumi refuses it during the up, after changing other resources"
	case protected:
		return verb + " a protected resource; pulumi refuses it during the up, after changing other resources"
	case isStateful:
		return verb + " " + what
	}
	return ""
}
