package access

import (
	"strings"

	"github.com/cellctl/cellctl/internal/policy"
)

// managed are the AWS managed policies the fleet's programs attach, with
// the statements AWS documents for their current version. AWS can add
// actions to a managed policy; cellctl's paths need only these.
var managed = map[string]policy.Document{
	// "AmazonECSTaskExecutionRolePolicy", AWS Managed Policy Reference
	// (version v1): pull from ECR and write to CloudWatch Logs, on any
	// resource.
	"service-role/AmazonECSTaskExecutionRolePolicy": policy.New(policy.Statement{
		Effect: policy.Allow,
		Action: policy.Values{
			"ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer",
			"ecr:BatchGetImage", "logs:CreateLogStream", "logs:PutLogEvents",
		},
		Resource: policy.Values{"*"},
	}),
	// "AWSLambdaBasicExecutionRole", AWS Managed Policy Reference: create
	// log groups and streams and put events, on any resource.
	"service-role/AWSLambdaBasicExecutionRole": policy.New(policy.Statement{
		Effect:   policy.Allow,
		Action:   policy.Values{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"},
		Resource: policy.Values{"*"},
	}),
}

// ManagedPolicy returns the recorded document of an AWS managed policy
// (arn:<partition>:iam::aws:policy/<path/name>).
func ManagedPolicy(arn string) (policy.Document, bool) {
	a, ok := ParseARN(arn)
	if !ok || a.Service != "iam" || a.Account != "aws" || !strings.HasPrefix(a.Resource, "policy/") {
		return policy.Document{}, false
	}
	doc, ok := managed[strings.TrimPrefix(a.Resource, "policy/")]
	return doc, ok
}
