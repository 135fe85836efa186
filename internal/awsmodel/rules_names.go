package awsmodel

import (
	"fmt"
	"regexp"

	"github.com/cellctl/cellctl/internal/awsname"
)

// nameRule is one AWS name limit the programs rely on: the cell id becomes
// part of every one of these names, which is why cell ids are short.
type nameRule struct {
	typ, prop string
	max       int
	pattern   *regexp.Regexp
	allowed   string // the character set, in words
	doc       string
	code      string
}

// The limits are internal/awsname's constants: the names the programs
// build are cut to the very numbers these rules check.
var nameRules = []nameRule{
	{tLB, "name", 32, regexp_(`^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`), "alphanumerics and inner hyphens",
		"Elastic Load Balancing API Reference, CreateLoadBalancer: Name (at most 32 characters)", "ValidationError"},
	{tTargetGroup, "name", 32, regexp_(`^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`), "alphanumerics and inner hyphens",
		"Elastic Load Balancing API Reference, CreateTargetGroup: Name (at most 32 characters)", "ValidationError"},
	{tReplicationGroup, "replicationGroupId", 40, regexp_(`^[a-zA-Z][a-zA-Z0-9]*(-[a-zA-Z0-9]+)*$`), "a letter, then alphanumerics and single inner hyphens",
		"ElastiCache API Reference, CreateReplicationGroup: ReplicationGroupId (1-40 characters)", "InvalidParameterValue"},
	{tCacheUser, "userId", awsname.MaxCacheUserID, regexp_(`^[a-zA-Z][a-zA-Z0-9-]*$`), "a letter, then alphanumerics and hyphens",
		"ElastiCache API Reference, CreateUser: UserId (at most 40 characters)", "InvalidParameterValue"},
	{tCacheUserGroup, "userGroupId", awsname.MaxCacheUserID, regexp_(`^[a-zA-Z][a-zA-Z0-9-]*$`), "a letter, then alphanumerics and hyphens",
		"ElastiCache API Reference, CreateUserGroup: UserGroupId (at most 40 characters)", "InvalidParameterValue"},
	{tCluster, "clusterIdentifier", awsname.MaxDBIdentifier, reRDSIdentifier, "a lowercase letter, then lowercase alphanumerics and single inner hyphens",
		"Amazon RDS API Reference, CreateDBCluster: DBClusterIdentifier (1-63 characters)", "InvalidParameterValue"},
	{tCluster, "finalSnapshotIdentifier", awsname.MaxSnapshotIdentifier, regexp_(`^[a-zA-Z][a-zA-Z0-9]*(-[a-zA-Z0-9]+)*$`), "a letter, then alphanumerics and single inner hyphens",
		"Amazon RDS API Reference, DeleteDBCluster: FinalDBSnapshotIdentifier (1-255 letters, numbers or hyphens; first a letter; no trailing or double hyphen)", "InvalidParameterValue"},
	{tClusterInstance, "identifier", awsname.MaxDBIdentifier, reRDSIdentifier, "a lowercase letter, then lowercase alphanumerics and single inner hyphens",
		"Amazon RDS API Reference, CreateDBInstance: DBInstanceIdentifier (1-63 characters)", "InvalidParameterValue"},
	{tRole, "name", 64, reIAMName, "alphanumerics and +=,.@_-",
		"IAM API Reference, CreateRole: RoleName (1-64 characters)", "ValidationError"},
	{tFunction, "name", 64, regexp_(`^[a-zA-Z0-9_-]+$`), "alphanumerics, hyphens and underscores",
		"Lambda API Reference, CreateFunction: FunctionName (at most 64 characters)", "InvalidParameterValueException"},
	{tQueue, "name", awsname.MaxQueueName, regexp_(`^[a-zA-Z0-9_-]+(\.fifo)?$`), "alphanumerics, hyphens and underscores",
		"Amazon SQS API Reference, CreateQueue: QueueName (at most 80 characters)", "InvalidParameterValue"},
	{tLogGroup, "name", awsname.MaxLogGroupName, regexp_(`^[\.\-_/#A-Za-z0-9]+$`), "a-z, A-Z, 0-9, '_', '-', '/', '.' and '#'",
		"CloudWatch Logs API Reference, CreateLogGroup: logGroupName (1-512 characters)", "InvalidParameterException"},
	{tSG, "name", 255, regexp_(`^[a-zA-Z0-9. _\-:/()#,@\[\]+=&;{}!$*]+$`), "a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*",
		"EC2 API Reference, CreateSecurityGroup: GroupName (up to 255 characters)", "InvalidParameterValue"},
	{tAlarm, "name", awsname.MaxAlarmName, regexp_(`^[^\x00-\x1f\x7f]+$`), "UTF-8 characters without ASCII control characters",
		"Amazon CloudWatch API Reference, PutMetricAlarm: AlarmName (1-255 characters)", "InvalidParameterValue"},
	{tDashboard, "dashboardName", awsname.MaxDashboardName, regexp_(`^[A-Za-z0-9_-]+$`), "A-Z, a-z, 0-9, '-' and '_'",
		"Amazon CloudWatch API Reference, PutDashboard: DashboardName (up to 255 characters)", "InvalidParameterInput"},
	{tTaskDef, "family", awsname.MaxTaskFamily, regexp_(`^[a-zA-Z0-9_-]+$`), "letters, numbers, underscores and hyphens",
		"Amazon ECS API Reference, RegisterTaskDefinition: family (up to 255 characters)", "ClientException"},
}

func init() {
	for _, n := range nameRules {
		rules = append(rules, Rule{
			ID:      "names." + n.typ + "." + n.prop,
			Doc:     n.doc + ": " + n.allowed,
			Code:    n.code,
			applies: types(n.typ),
			check: func(r ruleInput) string {
				if !known(r.in, n.prop) {
					return ""
				}
				v := str(r.in, n.prop)
				if v == "" {
					return ""
				}
				if len(v) > n.max || !n.pattern.MatchString(v) {
					return fmt.Sprintf("%s %q is invalid: at most %d characters of %s (it has %d)", n.prop, v, n.max, n.allowed, len(v))
				}
				return ""
			},
		})
	}
}

// IAM-authenticated ElastiCache users need their user name to equal their
// user id (ElastiCache User Guide, "Authenticating with IAM",
// Limitations): awsname cuts the app user's id, and the user name is the
// same string.
func init() {
	rules = append(rules, Rule{
		ID:      "elasticache.iam-user-name-equals-id",
		Doc:     `Amazon ElastiCache User Guide, "Authenticating with IAM", Limitations: for an IAM-enabled user the username and user id must be identical`,
		Code:    "InvalidParameterValue",
		applies: types(tCacheUser),
		check: func(r ruleInput) string {
			if !known(r.in, "userId") || !known(r.in, "userName") || str(object(r.in, "authenticationMode"), "type") != "iam" {
				return ""
			}
			if id, name := str(r.in, "userId"), str(r.in, "userName"); id != name {
				return fmt.Sprintf("user %s authenticates with IAM, so its user name must equal its user id, got user name %q", id, name)
			}
			return ""
		},
	})
}
