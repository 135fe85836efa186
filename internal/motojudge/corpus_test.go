package motojudge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/motojudge"
)

const (
	tVpc      = "aws:ec2/vpc:Vpc"
	tSubnet   = "aws:ec2/subnet:Subnet"
	tSG       = "aws:ec2/securityGroup:SecurityGroup"
	tIngress  = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
	tRT       = "aws:ec2/routeTable:RouteTable"
	tEIP      = "aws:ec2/eip:Eip"
	tEndpoint = "aws:ec2/vpcEndpoint:VpcEndpoint"
	tRole     = "aws:iam/role:Role"
	tRolePol  = "aws:iam/rolePolicy:RolePolicy"
	tBucket   = "aws:s3/bucketV2:BucketV2"
	tBucketP  = "aws:s3/bucketPolicy:BucketPolicy"
	tQueue    = "aws:sqs/queue:Queue"
	tLB       = "aws:lb/loadBalancer:LoadBalancer"
	tTG       = "aws:lb/targetGroup:TargetGroup"
	tListener = "aws:lb/listener:Listener"
	tLogGroup = "aws:cloudwatch/logGroup:LogGroup"
	tKey      = "aws:kms/key:Key"
	tCluster  = "aws:rds/cluster:Cluster"
	tInstance = "aws:rds/clusterInstance:ClusterInstance"
	tDBSubnet = "aws:rds/subnetGroup:SubnetGroup"
	tDBParams = "aws:rds/clusterParameterGroup:ClusterParameterGroup"
	tCacheRG  = "aws:elasticache/replicationGroup:ReplicationGroup"
	tCacheSN  = "aws:elasticache/subnetGroup:SubnetGroup"
	tCacheU   = "aws:elasticache/user:User"
	tECS      = "aws:ecs/cluster:Cluster"
	tCert     = "aws:acm/certificate:Certificate"
)

// fixture is a resource the corpus's cases stand on (a VPC for a
// subnet), created in both judges first.
type fixture struct {
	key, typ, name string
	in             func(ids map[string]string) map[string]any
}

var fixtures = []fixture{
	{"vpc", tVpc, "mj-vpc", func(map[string]string) map[string]any { return map[string]any{"cidrBlock": "10.50.0.0/16"} }},
	{"subnet-a", tSubnet, "mj-subnet-a", func(id map[string]string) map[string]any {
		return map[string]any{"vpcId": id["vpc"], "cidrBlock": "10.50.0.0/24", "availabilityZone": "us-east-1a"}
	}},
	{"subnet-b", tSubnet, "mj-subnet-b", func(id map[string]string) map[string]any {
		return map[string]any{"vpcId": id["vpc"], "cidrBlock": "10.50.1.0/24", "availabilityZone": "us-east-1b"}
	}},
	{"sg", tSG, "mj-sg", func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-sg", "description": "motojudge", "vpcId": id["vpc"]}
	}},
	{"role", tRole, "mj-role", func(map[string]string) map[string]any {
		return map[string]any{"name": "mj-role", "assumeRolePolicy": assumeECS}
	}},
	{"igw", "aws:ec2/internetGateway:InternetGateway", "mj-igw", func(id map[string]string) map[string]any { return map[string]any{"vpcId": id["vpc"]} }},
	{"bucket", tBucket, "mj-bucket", func(map[string]string) map[string]any { return map[string]any{"bucket": "mj-judge-bucket"} }},
	{"lb", tLB, "mj-lb", func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-lb", "loadBalancerType": "application", "subnets": []any{id["subnet-a"], id["subnet-b"]}, "securityGroups": []any{id["sg"]}}
	}},
	{"db-subnets", tDBSubnet, "mj-db-subnets", func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-db-subnets", "subnetIds": []any{id["subnet-a"], id["subnet-b"]}}
	}},
	{"cluster", tCluster, "mj-cluster", func(id map[string]string) map[string]any {
		return map[string]any{"clusterIdentifier": "mj-cluster", "engine": "aurora-postgresql", "engineVersion": "16.4",
			"masterUsername": "cellctl", "manageMasterUserPassword": true, "dbSubnetGroupName": "mj-db-subnets", "skipFinalSnapshot": true}
	}},
	{"logs", tLogGroup, "mj-logs", func(map[string]string) map[string]any { return map[string]any{"name": "/mj/logs-dup"} }},
	{"listener", tListener, "mj-listener", func(id map[string]string) map[string]any {
		return map[string]any{"loadBalancerArn": id["lb"], "port": 80, "protocol": "HTTP",
			"defaultActions": []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "404"}}}}
	}},
	{"cache-subnets", tCacheSN, "mj-cache-subnets", func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-cache-subnets", "subnetIds": []any{id["subnet-a"], id["subnet-b"]}}
	}},
}

const assumeECS = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

// badCase is one input AWS refuses (per doc), sent to both judges.
type badCase struct {
	desc, typ string
	in        func(id map[string]string) map[string]any
	doc       string
}

func manyTags(n int) map[string]any {
	tags := map[string]any{}
	for i := 0; i < n; i++ {
		tags[fmt.Sprintf("k%02d", i)] = "v"
	}
	return tags
}

// bigPolicy is an IAM-shaped policy document of at least n bytes.
func bigPolicy(n int) string {
	var stmts []string
	for i := 0; len(strings.Join(stmts, ",")) < n; i++ {
		stmts = append(stmts, fmt.Sprintf(`{"Sid":"S%04d","Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::mj-judge-bucket/prefix-%04d/*"}`, i, i))
	}
	return `{"Version":"2012-10-17","Statement":[` + strings.Join(stmts, ",") + `]}`
}

func bigBucketPolicy(n int) string {
	var stmts []string
	for i := 0; len(strings.Join(stmts, ",")) < n; i++ {
		stmts = append(stmts, fmt.Sprintf(`{"Sid":"S%04d","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:root"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::mj-judge-bucket/prefix-%04d/*"}`, i, i))
	}
	return `{"Version":"2012-10-17","Statement":[` + strings.Join(stmts, ",") + `]}`
}

func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func fixed(m map[string]any) func(map[string]string) map[string]any {
	return func(map[string]string) map[string]any { return m }
}

var (
	ec2Codes = "EC2 API Reference, Error codes for the Amazon EC2 API"
	goodTG   = map[string]any{"name": "mj-tg-x", "port": 80, "protocol": "HTTP", "targetType": "ip"}
	goodRG   = map[string]any{"replicationGroupId": "mj-rg-x", "description": "motojudge", "engine": "valkey", "engineVersion": "8.0",
		"nodeType": "cache.r7g.large", "numCacheClusters": 2, "automaticFailoverEnabled": true, "subnetGroupName": "mj-cache-subnets"}
	goodCluster = map[string]any{"clusterIdentifier": "mj-cluster-x", "engine": "aurora-postgresql", "engineVersion": "16.4",
		"masterUsername": "cellctl", "manageMasterUserPassword": true, "dbSubnetGroupName": "mj-db-subnets", "skipFinalSnapshot": true}
)

func sgRule(kv ...any) func(map[string]string) map[string]any {
	return func(id map[string]string) map[string]any {
		out := with(map[string]any{"securityGroupId": id["sg"], "ipProtocol": "tcp", "fromPort": 443, "toPort": 443, "cidrIpv4": "10.0.0.0/8"}, kv...)
		for k, v := range out {
			if v == nil {
				delete(out, k)
			}
		}
		return out
	}
}

func subnet(cidr, az string) func(map[string]string) map[string]any {
	return func(id map[string]string) map[string]any {
		return map[string]any{"vpcId": id["vpc"], "cidrBlock": cidr, "availabilityZone": az}
	}
}

func tg(kv ...any) func(map[string]string) map[string]any {
	return func(id map[string]string) map[string]any { return with(with(goodTG, "vpcId", id["vpc"]), kv...) }
}

func queue(kv ...any) func(map[string]string) map[string]any {
	return fixed(with(map[string]any{"name": "mj-queue-x"}, kv...))
}

func logGroup(kv ...any) func(map[string]string) map[string]any {
	return fixed(with(map[string]any{"name": "/mj/logs-x"}, kv...))
}

// corpus: at least 60 inputs AWS refuses, each with the document that
// says so. moto accepting one is expected (it is lax); moto refusing one
// awsmodel accepts is a rule awsmodel lacks.
var corpus = []badCase{
	// CIDRs.
	{"VPC block larger than /16", tVpc, fixed(map[string]any{"cidrBlock": "10.0.0.0/15"}), "Amazon VPC User Guide, VPC CIDR blocks: between /16 and /28; " + ec2Codes + " (InvalidVpc.Range)"},
	{"VPC block smaller than /28", tVpc, fixed(map[string]any{"cidrBlock": "10.0.0.0/29"}), "Amazon VPC User Guide, VPC CIDR blocks: between /16 and /28"},
	{"VPC block not an address", tVpc, fixed(map[string]any{"cidrBlock": "10.0.0.300/16"}), "EC2 API Reference, CreateVpc: CidrBlock (an IPv4 CIDR)"},
	{"VPC block not a CIDR", tVpc, fixed(map[string]any{"cidrBlock": "not-a-cidr"}), "EC2 API Reference, CreateVpc: CidrBlock"},
	{"VPC block with host bits", tVpc, fixed(map[string]any{"cidrBlock": "10.0.0.1/16"}), "EC2 API Reference, CreateVpc: CidrBlock (a network address)"},
	{"subnet outside its VPC", tSubnet, subnet("10.60.0.0/24", "us-east-1a"), "EC2 API Reference, CreateSubnet; " + ec2Codes + " (InvalidSubnet.Range)"},
	{"subnet overlapping a sibling", tSubnet, subnet("10.50.0.128/25", "us-east-1a"), "EC2 API Reference, CreateSubnet; " + ec2Codes + " (InvalidSubnet.Conflict)"},
	{"subnet smaller than /28", tSubnet, subnet("10.50.9.0/29", "us-east-1a"), "Amazon VPC User Guide, Subnet CIDR blocks: between /16 and /28"},
	{"subnet larger than its VPC", tSubnet, subnet("10.50.0.0/15", "us-east-1a"), "EC2 API Reference, CreateSubnet (a subset of the VPC's block)"},
	{"subnet block not a CIDR", tSubnet, subnet("10.50.7.0/33", "us-east-1a"), "EC2 API Reference, CreateSubnet: CidrBlock"},
	{"subnet in another region's zone", tSubnet, subnet("10.50.8.0/24", "us-west-2a"), "EC2 API Reference, CreateSubnet: AvailabilityZone (a zone of the request's region)"},
	{"ingress rule CIDR /33", tIngress, sgRule("cidrIpv4", "10.0.0.0/33"), "EC2 API Reference, AuthorizeSecurityGroupIngress: IpRanges CidrIp"},
	{"ingress rule ports reversed", tIngress, sgRule("fromPort", 90, "toPort", 80), "EC2 API Reference, IpPermission: FromPort/ToPort (a range)"},
	{"ingress rule port past 65535", tIngress, sgRule("toPort", 70000), "EC2 API Reference, IpPermission: ToPort (0-65535)"},
	{"ingress rule unknown protocol", tIngress, sgRule("ipProtocol", "tcpx"), "EC2 API Reference, IpPermission: IpProtocol (tcp, udp, icmp, icmpv6, -1 or a protocol number)"},
	{"ingress rule description with '<'", tIngress, sgRule("description", "from <anywhere>"), "EC2 API Reference, IpRange: Description (a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*)"},
	{"route with a malformed destination", tRT, func(id map[string]string) map[string]any {
		return map[string]any{"vpcId": id["vpc"], "routes": []any{map[string]any{"cidrBlock": "0.0.0.0/40", "gatewayId": id["igw"]}}}
	}, "EC2 API Reference, CreateRoute: DestinationCidrBlock"},
	{"VPC endpoint policy not JSON", tEndpoint, func(id map[string]string) map[string]any {
		return map[string]any{"vpcId": id["vpc"], "serviceName": "com.amazonaws.us-east-1.s3", "vpcEndpointType": "Gateway", "policy": "{not json"}
	}, "EC2 API Reference, CreateVpcEndpoint: PolicyDocument (a valid JSON policy)"},
	// Names and descriptions.
	{"security group name starting sg-", tSG, func(id map[string]string) map[string]any {
		return map[string]any{"name": "sg-mine", "description": "motojudge", "vpcId": id["vpc"]}
	}, "EC2 API Reference, CreateSecurityGroup: GroupName (cannot start with sg-)"},
	{"security group description over 255", tSG, func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-sg-long", "description": strings.Repeat("d", 256), "vpcId": id["vpc"]}
	}, "EC2 API Reference, CreateSecurityGroup: Description (up to 255 characters)"},
	{"security group description not ASCII", tSG, func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-sg-utf", "description": "café", "vpcId": id["vpc"]}
	}, "EC2 API Reference, CreateSecurityGroup: Description (a-zA-Z0-9. _-:/()#,@[]+=&;{}!$*)"},
	{"security group name over 255", tSG, func(id map[string]string) map[string]any {
		return map[string]any{"name": strings.Repeat("n", 256), "description": "motojudge", "vpcId": id["vpc"]}
	}, "EC2 API Reference, CreateSecurityGroup: GroupName (up to 255 characters)"},
	{"role name of 65 characters", tRole, fixed(map[string]any{"name": strings.Repeat("r", 65), "assumeRolePolicy": assumeECS}), "IAM API Reference, CreateRole: RoleName (1-64 characters)"},
	{"role name with a space", tRole, fixed(map[string]any{"name": "mj role", "assumeRolePolicy": assumeECS}), "IAM API Reference, CreateRole: RoleName ([\\w+=,.@-]+)"},
	{"role path without slashes", tRole, fixed(map[string]any{"name": "mj-role-path", "path": "cells", "assumeRolePolicy": assumeECS}), "IAM API Reference, CreateRole: Path (begins and ends with /)"},
	{"role session duration under an hour", tRole, fixed(map[string]any{"name": "mj-role-dur", "maxSessionDuration": 100, "assumeRolePolicy": assumeECS}), "IAM API Reference, CreateRole: MaxSessionDuration (3600-43200)"},
	{"role trust policy not JSON", tRole, fixed(map[string]any{"name": "mj-role-json", "assumeRolePolicy": "{nope"}), "IAM API Reference, CreateRole: AssumeRolePolicyDocument; Error MalformedPolicyDocument"},
	{"role description over 1000", tRole, fixed(map[string]any{"name": "mj-role-desc", "description": strings.Repeat("d", 1001), "assumeRolePolicy": assumeECS}), "IAM API Reference, CreateRole: Description (0-1000 characters)"},
	{"role policy name with '!'", tRolePol, fixed(map[string]any{"name": "mj!policy", "role": "mj-role", "policy": bigPolicy(10)}), "IAM API Reference, PutRolePolicy: PolicyName ([\\w+=,.@-]+)"},
	{"role policy not JSON", tRolePol, fixed(map[string]any{"name": "mj-policy-json", "role": "mj-role", "policy": "{nope"}), "IAM API Reference, PutRolePolicy: PolicyDocument; Error MalformedPolicyDocument"},
	{"bucket name in capitals", tBucket, fixed(map[string]any{"bucket": "MJ-Judge-Bucket"}), "Amazon S3 User Guide, General purpose bucket naming rules (lowercase)"},
	{"bucket name of 2 characters", tBucket, fixed(map[string]any{"bucket": "mj"}), "Amazon S3 User Guide, General purpose bucket naming rules (3-63 characters)"},
	{"bucket name of 64 characters", tBucket, fixed(map[string]any{"bucket": strings.Repeat("b", 64)}), "Amazon S3 User Guide, General purpose bucket naming rules (3-63 characters)"},
	{"bucket name like an IP address", tBucket, fixed(map[string]any{"bucket": "192.168.5.4"}), "Amazon S3 User Guide, General purpose bucket naming rules (not an IP address)"},
	{"bucket name with an underscore", tBucket, fixed(map[string]any{"bucket": "mj_judge"}), "Amazon S3 User Guide, General purpose bucket naming rules (letters, numbers, dots, hyphens)"},
	{"queue name of 81 characters", tQueue, queue("name", strings.Repeat("q", 81)), "Amazon SQS API Reference, CreateQueue: QueueName (up to 80 characters)"},
	{"queue name with a dot", tQueue, queue("name", "mj.queue"), "Amazon SQS API Reference, CreateQueue: QueueName (alphanumerics, hyphens, underscores)"},
	{"FIFO queue name without .fifo", tQueue, queue("name", "mj-fifo", "fifoQueue", true), "Amazon SQS API Reference, CreateQueue: QueueName (a FIFO queue's ends in .fifo)"},
	{"load balancer name of 33 characters", tLB, func(id map[string]string) map[string]any {
		return map[string]any{"name": strings.Repeat("l", 33), "loadBalancerType": "application", "subnets": []any{id["subnet-a"], id["subnet-b"]}}
	}, "Elastic Load Balancing API Reference, CreateLoadBalancer: Name (at most 32 characters)"},
	{"load balancer name starting internal-", tLB, func(id map[string]string) map[string]any {
		return map[string]any{"name": "internal-mj", "loadBalancerType": "application", "subnets": []any{id["subnet-a"], id["subnet-b"]}}
	}, "Elastic Load Balancing API Reference, CreateLoadBalancer: Name (must not begin with internal-)"},
	{"load balancer name ending in a hyphen", tLB, func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-lb-", "loadBalancerType": "application", "subnets": []any{id["subnet-a"], id["subnet-b"]}}
	}, "Elastic Load Balancing API Reference, CreateLoadBalancer: Name (must not begin or end with a hyphen)"},
	{"target group name of 33 characters", tTG, tg("name", strings.Repeat("t", 33)), "Elastic Load Balancing API Reference, CreateTargetGroup: Name (at most 32 characters)"},
	{"target group name with an underscore", tTG, tg("name", "mj_tg"), "Elastic Load Balancing API Reference, CreateTargetGroup: Name (alphanumerics and hyphens)"},
	{"log group name with '!'", tLogGroup, logGroup("name", "/mj/bad!name"), "CloudWatch Logs API Reference, CreateLogGroup: logGroupName ([\\.\\-_/#A-Za-z0-9]+)"},
	{"log group name of 513 characters", tLogGroup, logGroup("name", "/"+strings.Repeat("g", 512)), "CloudWatch Logs API Reference, CreateLogGroup: logGroupName (1-512 characters)"},
	{"cluster identifier starting with a digit", tCluster, fixed(with(goodCluster, "clusterIdentifier", "1mj-cluster")), "Amazon RDS API Reference, CreateDBCluster: DBClusterIdentifier (first character a letter)"},
	{"cluster identifier with two hyphens", tCluster, fixed(with(goodCluster, "clusterIdentifier", "mj--cluster")), "Amazon RDS API Reference, CreateDBCluster: DBClusterIdentifier (no two consecutive hyphens)"},
	{"cluster identifier of 64 characters", tCluster, fixed(with(goodCluster, "clusterIdentifier", "m"+strings.Repeat("c", 63))), "Amazon RDS API Reference, CreateDBCluster: DBClusterIdentifier (1-63 characters)"},
	{"DB subnet group named default", tDBSubnet, func(id map[string]string) map[string]any {
		return map[string]any{"name": "default", "subnetIds": []any{id["subnet-a"], id["subnet-b"]}}
	}, "Amazon RDS API Reference, CreateDBSubnetGroup: DBSubnetGroupName (must not be default)"},
	{"replication group id with an underscore", tCacheRG, fixed(with(goodRG, "replicationGroupId", "mj_rg")), "ElastiCache API Reference, CreateReplicationGroup: ReplicationGroupId (letters, digits, hyphens)"},
	{"replication group id of 41 characters", tCacheRG, fixed(with(goodRG, "replicationGroupId", "m"+strings.Repeat("r", 40))), "ElastiCache API Reference, CreateReplicationGroup: ReplicationGroupId (1-40 characters)"},
	{"cache user id starting with a digit", tCacheU, fixed(map[string]any{"userId": "1mj", "userName": "mj", "engine": "valkey", "accessString": "on ~* +@all",
		"authenticationMode": map[string]any{"type": "iam"}}), "ElastiCache API Reference, CreateUser: UserId (first character a letter)"},
	{"cache subnet group name with capitals", tCacheSN, func(id map[string]string) map[string]any {
		return map[string]any{"name": "MJ-Cache", "subnetIds": []any{id["subnet-a"]}}
	}, "ElastiCache API Reference, CreateCacheSubnetGroup: CacheSubnetGroupName (stored lowercase; pulumi-aws refuses capitals)"},
	{"ECS cluster name with a space", tECS, fixed(map[string]any{"name": "mj cluster"}), "Amazon ECS API Reference, CreateCluster: clusterName (letters, numbers, underscores, hyphens)"},
	// Enums and ranges.
	{"log retention of 2 days", tLogGroup, logGroup("retentionInDays", 2), "CloudWatch Logs API Reference, PutRetentionPolicy: retentionInDays (possible values)"},
	{"log retention of 4000 days", tLogGroup, logGroup("retentionInDays", 4000), "CloudWatch Logs API Reference, PutRetentionPolicy: retentionInDays (possible values)"},
	{"VPC tenancy host", tVpc, fixed(map[string]any{"cidrBlock": "10.70.0.0/16", "instanceTenancy": "host"}), "EC2 API Reference, CreateVpc: InstanceTenancy (default, dedicated)"},
	{"Elastic IP domain classic", tEIP, fixed(map[string]any{"domain": "classic"}), "EC2 API Reference, AllocateAddress: Domain (vpc, standard)"},
	{"load balancer type classic", tLB, func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-lb-type", "loadBalancerType": "classic", "subnets": []any{id["subnet-a"], id["subnet-b"]}}
	}, "Elastic Load Balancing API Reference, CreateLoadBalancer: Type (application, network, gateway)"},
	{"target group protocol HTTPX", tTG, tg("protocol", "HTTPX"), "Elastic Load Balancing API Reference, CreateTargetGroup: Protocol (valid values)"},
	{"target group type container", tTG, tg("targetType", "container"), "Elastic Load Balancing API Reference, CreateTargetGroup: TargetType (instance, ip, lambda, alb)"},
	{"target group port 0", tTG, tg("port", 0), "Elastic Load Balancing API Reference, CreateTargetGroup: Port (1-65535)"},
	{"target group health check every 400s", tTG, tg("healthCheck", map[string]any{"interval": 400}), "Elastic Load Balancing API Reference, CreateTargetGroup: HealthCheckIntervalSeconds (5-300)"},
	{"target group deregistration delay 4000s", tTG, tg("deregistrationDelay", 4000), "Elastic Load Balancing User Guide, Target group attributes: deregistration_delay.timeout_seconds (0-3600)"},
	{"listener port 0", tListener, func(id map[string]string) map[string]any {
		return map[string]any{"loadBalancerArn": id["lb"], "port": 0, "protocol": "HTTP",
			"defaultActions": []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "404"}}}}
	}, "Elastic Load Balancing API Reference, CreateListener: Port (1-65535)"},
	{"listener protocol HTTPZ", tListener, func(id map[string]string) map[string]any {
		return map[string]any{"loadBalancerArn": id["lb"], "port": 8080, "protocol": "HTTPZ",
			"defaultActions": []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "404"}}}}
	}, "Elastic Load Balancing API Reference, CreateListener: Protocol (valid values)"},
	{"KMS key usage SIGN", tKey, fixed(map[string]any{"description": "mj", "keyUsage": "SIGN"}), "AWS KMS API Reference, CreateKey: KeyUsage (SIGN_VERIFY, ENCRYPT_DECRYPT, GENERATE_VERIFY_MAC, KEY_AGREEMENT)"},
	{"KMS key spec RSA_1024", tKey, fixed(map[string]any{"description": "mj", "customerMasterKeySpec": "RSA_1024"}), "AWS KMS API Reference, CreateKey: KeySpec (valid values)"},
	{"KMS rotation on an RSA key", tKey, fixed(map[string]any{"description": "mj", "customerMasterKeySpec": "RSA_2048", "keyUsage": "ENCRYPT_DECRYPT", "enableKeyRotation": true}), "AWS KMS API Reference, EnableKeyRotation (symmetric encryption keys only)"},
	{"KMS description over 8192", tKey, fixed(map[string]any{"description": strings.Repeat("k", 8193)}), "AWS KMS API Reference, CreateKey: Description (0-8192 characters)"},
	{"queue delay of 1000s", tQueue, queue("delaySeconds", 1000), "Amazon SQS API Reference, CreateQueue: DelaySeconds (0-900)"},
	{"queue retention of 30s", tQueue, queue("messageRetentionSeconds", 30), "Amazon SQS API Reference, CreateQueue: MessageRetentionPeriod (60-1209600)"},
	{"queue visibility of 50000s", tQueue, queue("visibilityTimeoutSeconds", 50000), "Amazon SQS API Reference, CreateQueue: VisibilityTimeout (0-43200)"},
	{"queue max message of 500 bytes", tQueue, queue("maxMessageSize", 500), "Amazon SQS API Reference, CreateQueue: MaximumMessageSize (1024-262144)"},
	{"replication group engine memcached", tCacheRG, fixed(with(goodRG, "engine", "memcached")), "ElastiCache API Reference, CreateReplicationGroup: Engine (redis, valkey)"},
	{"replication group of 7 clusters", tCacheRG, fixed(with(goodRG, "numCacheClusters", 7)), "ElastiCache API Reference, CreateReplicationGroup: NumCacheClusters (at most 6)"},
	{"Multi-AZ without automatic failover", tCacheRG, fixed(with(goodRG, "multiAzEnabled", true, "automaticFailoverEnabled", false)), "ElastiCache API Reference, CreateReplicationGroup: MultiAZEnabled (needs AutomaticFailoverEnabled)"},
	{"certificate validated by SMS", tCert, fixed(map[string]any{"domainName": "mj.example.com", "validationMethod": "SMS"}), "AWS Certificate Manager API Reference, RequestCertificate: ValidationMethod (EMAIL, DNS)"},
	// References and combinations moto checks itself.
	{"load balancer in one subnet", tLB, func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-lb-x", "loadBalancerType": "application", "subnets": []any{id["subnet-a"]}}
	}, "Elastic Load Balancing API Reference, CreateLoadBalancer: Subnets (an Application Load Balancer: at least two Availability Zones)"},
	{"HTTPS listener without a certificate", tListener, func(id map[string]string) map[string]any {
		return map[string]any{"loadBalancerArn": id["lb"], "port": 8443, "protocol": "HTTPS",
			"defaultActions": []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "404"}}}}
	}, "Elastic Load Balancing API Reference, CreateListener: Certificates (required for HTTPS)"},
	{"fixed response status 99", tListener, func(id map[string]string) map[string]any {
		return map[string]any{"loadBalancerArn": id["lb"], "port": 8081, "protocol": "HTTP",
			"defaultActions": []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "99"}}}}
	}, "Elastic Load Balancing API Reference, FixedResponseActionConfig: StatusCode (2XX, 4XX or 5XX)"},
	{"fixed response content type text/xml", tListener, func(id map[string]string) map[string]any {
		return map[string]any{"loadBalancerArn": id["lb"], "port": 8082, "protocol": "HTTP",
			"defaultActions": []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/xml", "statusCode": "404"}}}}
	}, "Elastic Load Balancing API Reference, FixedResponseActionConfig: ContentType (text/plain, text/css, text/html, application/javascript, application/json)"},
	{"health check timeout not under the interval", tTG, tg("healthCheck", map[string]any{"interval": 10, "timeout": 20}), "Elastic Load Balancing User Guide, Health checks for target groups: HealthCheckTimeoutSeconds (less than the interval)"},
	{"rule priority 0", "aws:lb/listenerRule:ListenerRule", func(id map[string]string) map[string]any {
		return map[string]any{"listenerArn": id["listener"], "priority": 0,
			"actions":    []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "404"}}},
			"conditions": []any{map[string]any{"pathPattern": map[string]any{"values": []any{"/x"}}}}}
	}, "Elastic Load Balancing API Reference, CreateRule: Priority (1-50000)"},
	{"rule priority 50001", "aws:lb/listenerRule:ListenerRule", func(id map[string]string) map[string]any {
		return map[string]any{"listenerArn": id["listener"], "priority": 50001,
			"actions":    []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "404"}}},
			"conditions": []any{map[string]any{"pathPattern": map[string]any{"values": []any{"/y"}}}}}
	}, "Elastic Load Balancing API Reference, CreateRule: Priority (1-50000)"},
	{"rule with six conditions", "aws:lb/listenerRule:ListenerRule", func(id map[string]string) map[string]any {
		var conds []any
		for i := 0; i < 6; i++ {
			conds = append(conds, map[string]any{"pathPattern": map[string]any{"values": []any{fmt.Sprintf("/p%d", i)}}})
		}
		return map[string]any{"listenerArn": id["listener"], "priority": 7,
			"actions":    []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "404"}}},
			"conditions": conds}
	}, "Elastic Load Balancing User Guide, Quotas: conditions per rule (5)"},
	{"ingress rule from a group that does not exist", tIngress, sgRule("cidrIpv4", nil, "referencedSecurityGroupId", "sg-0123456789abcdef0"), "EC2 API Reference, Error codes (InvalidGroup.NotFound)"},
	{"subnet in a VPC that does not exist", tSubnet, fixed(map[string]any{"vpcId": "vpc-0123456789abcdef0", "cidrBlock": "10.50.30.0/24"}), "EC2 API Reference, Error codes (InvalidVpcID.NotFound)"},
	{"security group name taken in the VPC", tSG, func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-sg", "description": "again", "vpcId": id["vpc"]}
	}, "EC2 API Reference, Error codes (InvalidGroup.Duplicate)"},
	{"VPC endpoint for an unknown service", tEndpoint, func(id map[string]string) map[string]any {
		return map[string]any{"vpcId": id["vpc"], "serviceName": "com.amazonaws.us-east-1.nosuch", "vpcEndpointType": "Gateway"}
	}, "EC2 API Reference, Error codes (InvalidServiceName)"},
	{"role name taken", tRole, fixed(map[string]any{"name": "mj-role", "assumeRolePolicy": assumeECS}), "IAM API Reference, CreateRole: Errors (EntityAlreadyExists)"},
	{"inline policy on a role that does not exist", tRolePol, fixed(map[string]any{"name": "mj-policy-orphan", "role": "mj-no-such-role", "policy": bigPolicy(10)}), "IAM API Reference, PutRolePolicy: Errors (NoSuchEntity)"},
	{"KMS key policy not JSON", tKey, fixed(map[string]any{"description": "mj", "policy": "{nope"}), "AWS KMS API Reference, CreateKey: Errors (MalformedPolicyDocumentException)"},
	{"bucket policy not JSON", tBucketP, fixed(map[string]any{"bucket": "mj-judge-bucket", "policy": "{nope"}), "Amazon S3 API Reference, Error responses (MalformedPolicy)"},
	{"bucket versioning status On", "aws:s3/bucketVersioningV2:BucketVersioningV2", fixed(map[string]any{"bucket": "mj-judge-bucket", "versioningConfiguration": map[string]any{"status": "On"}}), "Amazon S3 API Reference, PutBucketVersioning: Status (Enabled, Suspended)"},
	{"bucket encryption AES128", "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2", fixed(map[string]any{"bucket": "mj-judge-bucket",
		"rules": []any{map[string]any{"applyServerSideEncryptionByDefault": map[string]any{"sseAlgorithm": "AES128"}}}}), "Amazon S3 API Reference, ServerSideEncryptionByDefault: SSEAlgorithm (AES256, aws:kms, aws:kms:dsse)"},
	{"redrive to a queue that does not exist", tQueue, queue("redrivePolicy", `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:mj-no-such-dlq","maxReceiveCount":5}`), "Amazon SQS API Reference, CreateQueue: RedrivePolicy deadLetterTargetArn (an existing queue)"},
	{"content-based deduplication on a standard queue", tQueue, queue("contentBasedDeduplication", true), "Amazon SQS API Reference, CreateQueue: ContentBasedDeduplication (FIFO queues only)"},
	{"password user without a password", tCacheU, fixed(map[string]any{"userId": "mj-user-x", "userName": "mj", "engine": "valkey", "accessString": "on ~* +@all",
		"authenticationMode": map[string]any{"type": "password"}}), "ElastiCache API Reference, AuthenticationMode: Passwords (required for the password type)"},
	{"cache subnet group of a subnet that does not exist", tCacheSN, fixed(map[string]any{"name": "mj-cache-x", "subnetIds": []any{"subnet-0123456789abcdef0"}}), "ElastiCache API Reference, CreateCacheSubnetGroup: Errors (InvalidSubnet)"},
	{"DB subnet group in one zone", tDBSubnet, func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-db-x", "subnetIds": []any{id["subnet-a"]}}
	}, "Amazon RDS API Reference, CreateDBSubnetGroup: Errors (DBSubnetGroupDoesNotCoverEnoughAZs: at least two Availability Zones)"},
	{"DB subnet group of a subnet that does not exist", tDBSubnet, fixed(map[string]any{"name": "mj-db-x", "subnetIds": []any{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1"}}), "Amazon RDS API Reference, CreateDBSubnetGroup: Errors (InvalidSubnet)"},
	{"cluster without a master user name", tCluster, fixed(map[string]any{"clusterIdentifier": "mj-cluster-x", "engine": "aurora-postgresql", "engineVersion": "16.4",
		"manageMasterUserPassword": true, "dbSubnetGroupName": "mj-db-subnets", "skipFinalSnapshot": true}), "Amazon RDS API Reference, CreateDBCluster: MasterUsername (required for Aurora unless restoring)"},
	{"cluster with a managed and a given password", tCluster, fixed(with(goodCluster, "masterPassword", "a-long-enough-password")), "Amazon RDS API Reference, CreateDBCluster: ManageMasterUserPassword (not with MasterUserPassword)"},
	{"instance of another engine than its cluster", tInstance, fixed(map[string]any{"identifier": "mj-instance-x", "clusterIdentifier": "mj-cluster", "engine": "aurora-mysql", "instanceClass": "db.r6g.large"}), "Amazon RDS API Reference, CreateDBInstance: Engine (the cluster's)"},
	{"instance of a cluster that does not exist", tInstance, fixed(map[string]any{"identifier": "mj-instance-x", "clusterIdentifier": "mj-no-such-cluster", "engine": "aurora-postgresql", "instanceClass": "db.r6g.large"}), "Amazon RDS API Reference, CreateDBInstance: Errors (DBClusterNotFoundFault)"},
	{"log group that exists", tLogGroup, fixed(map[string]any{"name": "/mj/logs-dup"}), "CloudWatch Logs API Reference, CreateLogGroup: Errors (ResourceAlreadyExistsException)"},
	{"certificate with 11 alternative names", tCert, fixed(map[string]any{"domainName": "mj.example.com", "validationMethod": "DNS",
		"subjectAlternativeNames": []any{"a.example.com", "b.example.com", "c.example.com", "d.example.com", "e.example.com", "f.example.com", "g.example.com", "h.example.com", "i.example.com", "j.example.com", "k.example.com"}}),
		"AWS Certificate Manager User Guide, Quotas: domain names per certificate (10 by default)"},
	// Versions and classes.
	{"Aurora PostgreSQL 16.99", tCluster, fixed(with(goodCluster, "engineVersion", "16.99")), "Aurora PostgreSQL releases; Amazon RDS API Reference, CreateDBCluster: EngineVersion"},
	{"engine aurora-postgres", tCluster, fixed(with(goodCluster, "engine", "aurora-postgres")), "Amazon RDS API Reference, CreateDBCluster: Engine (valid values)"},
	{"parameter group family aurora-postgresql99", tDBParams, fixed(map[string]any{"name": "mj-params", "family": "aurora-postgresql99", "description": "mj"}), "Amazon RDS API Reference, CreateDBClusterParameterGroup: DBParameterGroupFamily"},
	{"Valkey 5.0", tCacheRG, fixed(with(goodRG, "engineVersion", "5.0")), "Amazon ElastiCache User Guide, Supported engine versions (Valkey 7.2 onward)"},
	{"instance class db.x9.huge", tInstance, fixed(map[string]any{"identifier": "mj-instance-x", "clusterIdentifier": "mj-cluster", "engine": "aurora-postgresql", "instanceClass": "db.x9.huge"}), "Amazon Aurora User Guide, Supported DB engines for DB instance classes"},
	// Policy sizes.
	{"inline role policy over 10,240 characters", tRolePol, fixed(map[string]any{"name": "mj-policy-big", "role": "mj-role", "policy": bigPolicy(10300)}), "IAM User Guide, IAM and AWS STS quotas: role policy size (10,240 characters)"},
	{"trust policy over 2,048 characters", tRole, fixed(map[string]any{"name": "mj-role-trust", "assumeRolePolicy": strings.Replace(bigPolicy(2100), `"Action":"s3:GetObject","Resource":"arn:aws:s3:::mj-judge-bucket`, `"Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"sts:AssumeRole","Resource":"arn:aws:s3:::x`, -1)}), "IAM User Guide, IAM and AWS STS quotas: role trust policy length (2,048 characters)"},
	{"bucket policy over 20 KB", tBucketP, fixed(map[string]any{"bucket": "mj-judge-bucket", "policy": bigBucketPolicy(21000)}), "Amazon S3 User Guide, Bucket policies (a bucket policy is limited to 20 KB)"},
	{"KMS key policy over 32 KB", tKey, fixed(map[string]any{"description": "mj", "policy": bigBucketPolicy(33000)}), "AWS KMS Developer Guide, Quotas: key policy document size (32 KB)"},
	// Tag counts and tag limits.
	{"VPC with 51 tags", tVpc, fixed(map[string]any{"cidrBlock": "10.71.0.0/16", "tags": manyTags(51)}), "Tagging AWS resources, Tag naming limits: 50 tags per resource"},
	{"subnet tag key of 129 characters", tSubnet, func(id map[string]string) map[string]any {
		return map[string]any{"vpcId": id["vpc"], "cidrBlock": "10.50.20.0/24", "tags": map[string]any{strings.Repeat("k", 129): "v"}}
	}, "Tagging AWS resources, Tag naming limits: key 1-128 characters"},
	{"VPC tag value of 257 characters", tVpc, fixed(map[string]any{"cidrBlock": "10.72.0.0/16", "tags": map[string]any{"k": strings.Repeat("v", 257)}}), "Tagging AWS resources, Tag naming limits: value 0-256 characters"},
	{"security group tag key aws:", tSG, func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-sg-aws", "description": "mj", "vpcId": id["vpc"], "tags": map[string]any{"aws:owner": "me"}}
	}, "Tagging AWS resources, Tag naming limits: the aws: prefix is reserved"},
	{"role with 51 tags", tRole, fixed(map[string]any{"name": "mj-role-tags", "assumeRolePolicy": assumeECS, "tags": manyTags(51)}), "IAM API Reference, CreateRole: Tags (at most 50)"},
	{"queue with 51 tags", tQueue, queue("name", "mj-queue-tags", "tags", manyTags(51)), "Amazon SQS Developer Guide, Quotas: tags per queue (50)"},
	{"KMS key with 51 tags", tKey, fixed(map[string]any{"description": "mj", "tags": manyTags(51)}), "AWS KMS API Reference, CreateKey: Tags (50 per key)"},
	{"load balancer with 51 tags", tLB, func(id map[string]string) map[string]any {
		return map[string]any{"name": "mj-lb-tags", "loadBalancerType": "application", "subnets": []any{id["subnet-a"], id["subnet-b"]}, "tags": manyTags(51)}
	}, "Elastic Load Balancing API Reference, CreateLoadBalancer: Tags (at most 50)"},
	{"cluster with 51 tags", tCluster, fixed(with(goodCluster, "clusterIdentifier", "mj-cluster-tags", "tags", manyTags(51))), "Amazon RDS User Guide, Tagging: up to 50 tags per resource"},
	{"log group with 51 tags", tLogGroup, logGroup("name", "/mj/logs-tags", "tags", manyTags(51)), "CloudWatch Logs API Reference, CreateLogGroup: tags (at most 50)"},
	{"bucket with 51 tags", tBucket, fixed(map[string]any{"bucket": "mj-judge-tags", "tags": manyTags(51)}), "Amazon S3 API Reference, PutBucketTagging (up to 50 tags)"},
}

// knownWrong lists corpus cases where moto's answer is its own, not
// AWS's, with why (keyed by the case's description).
var knownWrong = map[string]string{
	"redrive to a queue that does not exist": "moto answers AWS.SimpleQueueService.NonExistentQueue; SQS answers InvalidParameterValue " +
		"\"Value {...} for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.\" (the error AWS returned, quoted in serverless/serverless#5215)",
}

// verdict is awsmodel's answer: refused (before AWS by pulumi-aws's
// validation, Code ""; or by an API rule with Code).
type verdict struct {
	refused bool
	code    string
	msg     string
	outputs resource.PropertyMap
	id, arn string
}

// modelVerdict is awsmodel's answer as a create meets it on
// `--cloud sim`: pulumi-aws's validation (Check), the names that must be
// free and the resources that must exist (awsmodel's UniqueNames and
// References, which internal/sim enforces over an account; the checked
// inputs stand in for the outputs a name is read from), then the API
// rules (the mock's Outputs).
func modelVerdict(m *awsmodel.Mock, typ, name string, in resource.PropertyMap) verdict {
	if _, failures := awsmodel.Check(awsmodel.CheckRequest{Type: typ, Name: name, News: in}); len(failures) > 0 {
		return verdict{refused: true, msg: fmt.Sprintf("%s: %s", failures[0].Property, failures[0].Reason)}
	}
	checked, _ := awsmodel.Check(awsmodel.CheckRequest{Type: typ, Name: name, News: in})
	env := awsmodel.DefaultEnv()
	for _, mine := range awsmodel.UniqueNames(typ, env, checked) {
		for _, other := range m.List(typ) {
			for _, theirs := range awsmodel.UniqueNames(typ, env, other.Outputs) {
				if theirs.Key == mine.Key && !mine.Silent {
					return verdict{refused: true, code: mine.Code, msg: mine.Message}
				}
			}
		}
	}
	for _, ref := range awsmodel.References(typ, in) {
		if ref.Code == "" {
			continue
		}
		if t, _, ok := m.Lookup(ref.Value); !ok || t != ref.Target {
			return verdict{refused: true, code: ref.Code, msg: fmt.Sprintf(ref.Message, ref.Value)}
		}
	}
	id, outs, err := m.NewResource(typ, name, in, "")
	if err != nil {
		var ae *awsmodel.APIError
		if errors.As(err, &ae) {
			return verdict{refused: true, code: ae.Code, msg: ae.Message}
		}
		return verdict{refused: true, msg: err.Error()}
	}
	v := verdict{outputs: outs, id: id}
	if arn, ok := outs["arn"]; ok && arn.IsString() {
		v.arn = arn.StringValue()
	}
	return v
}

// Judgement classes of one case.
const (
	agreed     = "agreed"
	motoLax    = "moto lax"
	bothAccept = "both accept"
	known      = "known wrong"
	notJudged  = "not judged"
	disagree   = "DISAGREE"
)

// compare is the differential's rule: moto's refusal is evidence, its
// acceptance is not. An awsmodel refusal with no code is pulumi-aws's
// own validation (the request never reaches AWS): any moto refusal
// agrees with it.
func compare(desc string, model verdict, moto motojudge.Outcome) (string, string) {
	switch {
	case !moto.Judged:
		return notJudged, moto.NotJudged
	case !moto.Refused() && model.refused:
		return motoLax, fmt.Sprintf("awsmodel refuses (%s), moto accepted", codeOr(model))
	case !moto.Refused():
		return bothAccept, "awsmodel and moto both accept it"
	case knownWrong[desc] != "":
		return known, fmt.Sprintf("moto %s: %s", moto, knownWrong[desc])
	case !model.refused:
		return disagree, fmt.Sprintf("awsmodel accepts, moto %s", moto)
	case model.code == "" || model.code == moto.Code:
		return agreed, fmt.Sprintf("awsmodel %s, moto %s", codeOr(model), moto.Code)
	}
	return disagree, fmt.Sprintf("awsmodel refuses with %s (%s), moto %s", model.code, model.msg, moto)
}

func codeOr(v verdict) string {
	if v.code == "" {
		return "before AWS: " + v.msg
	}
	return v.code
}

// setup creates the fixtures in a fresh moto and a fresh awsmodel mock
// and returns both, with the mock's id of each fixture.
func setup(t *testing.T, srv *motojudge.Server) (*motojudge.Judge, *awsmodel.Mock, map[string]string) {
	t.Helper()
	ctx := context.Background()
	srv.Reset(t)
	j := srv.NewJudge()
	m := awsmodel.NewMock(awsmodel.DefaultEnv())
	ids := map[string]string{}
	for _, f := range fixtures {
		in := resource.NewPropertyMapFromMap(f.in(ids))
		v := modelVerdict(m, f.typ, f.name, in)
		if v.refused {
			t.Fatalf("fixture %s: awsmodel refuses: %s", f.key, codeOr(v))
		}
		got := j.Create(ctx, "us-east-1", f.typ, in, v.outputs, v.id, v.arn)
		if !got.Judged || got.Refused() {
			t.Fatalf("fixture %s: moto %s", f.key, got)
		}
		ids[f.key] = v.id
	}
	return j, m, ids
}

// unique gives case i's names ending in "-x" (the shared good inputs)
// a suffix of their own: a second case reusing a name would be refused
// by both judges for a reason that is not the case's.
func unique(in resource.PropertyMap, i int) resource.PropertyMap {
	for _, k := range []resource.PropertyKey{"name", "replicationGroupId", "clusterIdentifier", "identifier"} {
		if v, ok := in[k]; ok && v.IsString() && strings.HasSuffix(v.StringValue(), "-x") {
			in[k] = resource.NewStringProperty(fmt.Sprintf("%s%03d", strings.TrimSuffix(v.StringValue(), "x"), i))
		}
	}
	return in
}

// TestBadInputsAgreeWithMoto sends the corpus to both judges.
func TestBadInputsAgreeWithMoto(t *testing.T) {
	if len(corpus) < 60 {
		t.Fatalf("the corpus has %d cases; the differential promises at least 60", len(corpus))
	}
	srv := motoServer(t)
	j, m, ids := setup(t, srv)
	ctx := context.Background()
	counts := map[string]int{}
	for i, c := range corpus {
		in := unique(resource.NewPropertyMapFromMap(c.in(ids)), i)
		name := fmt.Sprintf("mj-case-%03d", i)
		model := modelVerdict(m, c.typ, name, in)
		moto := j.Create(ctx, "us-east-1", c.typ, in, model.outputs, model.id, model.arn)
		class, why := compare(c.desc, model, moto)
		counts[class]++
		line := fmt.Sprintf("%-12s %s (%s): %s [%s]", class, c.desc, c.typ, why, c.doc)
		if class == disagree {
			t.Error(line)
		} else {
			t.Log(line)
		}
	}
	t.Logf("moto judge, bad inputs: %d cases, %d agreed, %d moto lax, %d both accept, %d known wrong, %d not judged, %d disagree",
		len(corpus), counts[agreed], counts[motoLax], counts[bothAccept], counts[known], counts[notJudged], counts[disagree])
}
