package awsmodel

import "github.com/pulumi/pulumi/sdk/v3/go/common/resource"

// samples are minimal valid inputs for every known type.
func samples() map[string]resource.PropertyMap {
	code := resource.NewArchiveProperty(mustArchive(map[string]any{"index.js": mustAsset("exports.handler=async()=>({status:'200'})")}))
	obj := func(kv ...any) resource.PropertyValue {
		m := resource.PropertyMap{}
		for i := 0; i < len(kv); i += 2 {
			m[resource.PropertyKey(kv[i].(string))] = pv(kv[i+1])
		}
		return resource.NewObjectProperty(m)
	}
	arr := func(vs ...resource.PropertyValue) resource.PropertyValue { return resource.NewArrayProperty(vs) }
	return map[string]resource.PropertyMap{
		tVpc:           {"cidrBlock": pv("10.1.0.0/16"), "tags": pv(map[string]string{"cell": "a"})},
		tSubnet:        {"vpcId": pv("vpc-0123456789abcdef0"), "cidrBlock": pv("10.1.0.0/24"), "availabilityZone": pv("us-east-1a")},
		tIGW:           {"vpcId": pv("vpc-0123456789abcdef0")},
		tEIP:           {"domain": pv("vpc")},
		tNAT:           {"subnetId": pv("subnet-0123456789abcdef0"), "allocationId": pv("eipalloc-0123456789abcdef0")},
		tRouteTable:    {"vpcId": pv("vpc-0123456789abcdef0")},
		tRoute:         {"routeTableId": pv("rtb-0123456789abcdef0"), "destinationCidrBlock": pv("0.0.0.0/0"), "gatewayId": pv("igw-0123456789abcdef0")},
		tRTA:           {"routeTableId": pv("rtb-0123456789abcdef0"), "subnetId": pv("subnet-0123456789abcdef0")},
		tEndpoint:      {"vpcId": pv("vpc-0123456789abcdef0"), "serviceName": pv("com.amazonaws.us-east-1.s3")},
		tSG:            {"vpcId": pv("vpc-0123456789abcdef0")},
		tIngress:       {"securityGroupId": pv("sg-0123456789abcdef0"), "ipProtocol": pv("tcp"), "fromPort": pv(5432), "toPort": pv(5432), "referencedSecurityGroupId": pv("sg-0fedcba9876543210")},
		tEgress:        {"securityGroupId": pv("sg-0123456789abcdef0"), "ipProtocol": pv("-1"), "cidrIpv4": pv("0.0.0.0/0")},
		tDBSubnetGroup: {"subnetIds": pv([]string{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1"})},
		tClusterParams: {"family": pv("aurora-postgresql16")},
		tCluster: {"engine": pv("aurora-postgresql"), "masterUsername": pv("app"), "manageMasterUserPassword": pv(true),
			"storageEncrypted": pv(true), "databaseName": pv("app"), "finalSnapshotIdentifier": pv("cell-a-final")},
		tClusterInstance:  {"clusterIdentifier": pv("cell-a-db"), "engine": pv("aurora-postgresql"), "instanceClass": pv("db.r6g.large")},
		tCacheSubnetGroup: {"subnetIds": pv([]string{"subnet-0123456789abcdef0"})},
		tCacheUser: {"userId": pv("cell-a-app"), "userName": pv("app"), "engine": pv("redis"), "accessString": pv("on ~* +@all"),
			"passwords": resource.MakeSecret(pv([]string{"0123456789abcdef0123"}))},
		tCacheUserGroup: {"userGroupId": pv("cell-a-users"), "engine": pv("redis"), "userIds": pv([]string{"default", "cell-a-app"})},
		tReplicationGroup: {"description": pv("cell a cache"), "nodeType": pv("cache.t4g.small"), "numCacheClusters": pv(2),
			"automaticFailoverEnabled": pv(true), "transitEncryptionEnabled": pv(true), "atRestEncryptionEnabled": pv(true),
			"authToken": resource.MakeSecret(pv("0123456789abcdef0123"))},
		tQueue:       {},
		tQueuePolicy: {"queueUrl": pv("https://sqs.us-east-1.amazonaws.com/123456789012/q"), "policy": pv(`{"Version":"2012-10-17","Statement":[]}`)},
		tRedriveAP:   {"queueUrl": pv("https://sqs.us-east-1.amazonaws.com/123456789012/q"), "redriveAllowPolicy": pv(`{"redrivePermission":"allowAll"}`)},
		tRole:        {"assumeRolePolicy": pv(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)},
		tRolePolicy:  {"role": pv("cell-a-task"), "policy": pv(`{"Version":"2012-10-17","Statement":[]}`)},
		tRolePA:      {"role": pv("cell-a-task"), "policyArn": pv("arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy")},
		tLogGroup:    {"retentionInDays": pv(30)},
		tAlarm: {"comparisonOperator": pv("GreaterThanThreshold"), "evaluationPeriods": pv(3), "metricName": pv("HTTPCode_Target_5XX_Count"),
			"namespace": pv("AWS/ApplicationELB"), "statistic": pv("Sum"), "period": pv(60), "threshold": pv(5)},
		tECSCluster: {},
		tDashboard:  dashboardSample(),
		tTaskDef: {"family": pv("cell-a-app"), "containerDefinitions": pv(`[{"name":"app","image":"nginx:1.27"}]`),
			"requiresCompatibilities": pv([]string{"FARGATE"}), "networkMode": pv("awsvpc"), "cpu": pv("256"), "memory": pv("512")},
		tECSService: {"cluster": pv("arn:aws:ecs:us-east-1:123456789012:cluster/cell-a"), "launchType": pv("FARGATE"), "desiredCount": pv(2),
			"taskDefinition":       pv("arn:aws:ecs:us-east-1:123456789012:task-definition/cell-a-app:1"),
			"networkConfiguration": obj("subnets", []string{"subnet-0123456789abcdef0"})},
		tLB:          {"subnets": pv([]string{"subnet-0123456789abcdef0", "subnet-0123456789abcdef1"})},
		tTargetGroup: {"port": pv(8080), "protocol": pv("HTTP"), "vpcId": pv("vpc-0123456789abcdef0"), "targetType": pv("ip")},
		tListener: {"loadBalancerArn": pv("arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/cell-a-alb/0123456789abcdef"),
			"port": pv(80), "defaultActions": arr(obj("type", "fixed-response", "fixedResponse", map[string]any{"contentType": "text/plain", "statusCode": "421"}))},
		tListenerRule: {"listenerArn": pv("arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/cell-a-alb/0123456789abcdef/fedcba9876543210"),
			"actions":    arr(obj("type", "forward", "targetGroupArn", "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/tg/0123456789abcdef")),
			"conditions": arr(obj("httpHeader", map[string]any{"httpHeaderName": "X-Cell-Id", "values": []any{"a"}}))},
		tBucket:           {},
		tBucketVersioning: {"bucket": pv("fleet-bucket"), "versioningConfiguration": obj("status", "Enabled")},
		tBucketSSE:        {"bucket": pv("fleet-bucket"), "rules": arr(obj("applyServerSideEncryptionByDefault", map[string]any{"sseAlgorithm": "aws:kms"}))},
		tBucketPAB:        {"bucket": pv("fleet-bucket"), "blockPublicAcls": pv(true)},
		tBucketOwnership:  {"bucket": pv("fleet-bucket"), "rule": obj("objectOwnership", "BucketOwnerEnforced")},
		tKMSKey:           {"description": pv("fleet bucket key"), "enableKeyRotation": pv(true)},
		tBucketPolicy:     {"bucket": pv("fleet-bucket"), "policy": pv(`{"Version":"2012-10-17","Statement":[]}`)},
		tAccessPoint:      {"bucket": pv("fleet-bucket"), "name": pv("cell-a-0123abcd")},
		tFunction: {"role": pv("arn:aws:iam::123456789012:role/edge"), "runtime": pv("nodejs24.x"), "handler": pv("index.handler"),
			"publish": pv(true), "code": code},
		tDistribution: {
			"enabled": pv(true),
			"origins": arr(obj("originId", "cell-a", "domainName", "cell-a-alb-1.us-east-1.elb.amazonaws.com",
				"customOriginConfig", map[string]any{"httpPort": 80, "httpsPort": 443, "originProtocolPolicy": "https-only", "originSslProtocols": []any{"TLSv1.2"}},
				"customHeaders", []any{map[string]any{"name": "X-Origin-Secret", "value": "s3cr3t"}})),
			"defaultCacheBehavior": obj("targetOriginId", "cell-a", "viewerProtocolPolicy", "redirect-to-https",
				"allowedMethods", []any{"GET", "HEAD"}, "cachedMethods", []any{"GET", "HEAD"},
				"cachePolicyId", "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
				"lambdaFunctionAssociations", []any{map[string]any{"eventType": "origin-request", "lambdaArn": "arn:aws:lambda:us-east-1:123456789012:function:edge:3"}}),
			"restrictions":      obj("geoRestriction", map[string]any{"restrictionType": "none"}),
			"viewerCertificate": obj("cloudfrontDefaultCertificate", true),
		},
		tCertificate: {"domainName": pv("cell-a.cells.example.com"), "validationMethod": pv("DNS")},
		tCertValid:   {"certificateArn": pv("arn:aws:acm:us-east-1:123456789012:certificate/0d9c5f3e-2b1a-4c7d-9e8f-1a2b3c4d5e6f")},
		tRecord: {"zoneId": pv("Z0123456789ABCDEFGHIJ"), "name": pv("cell-a.cells.example.com"), "type": pv("A"),
			"aliases": arr(obj("name", "cell-a-alb-1.us-east-1.elb.amazonaws.com", "zoneId", "Z35SXDOTRQ7X7K", "evaluateTargetHealth", true))},
		tCachePolicy: {"parametersInCacheKeyAndForwardedToOrigin": obj(
			"cookiesConfig", map[string]any{"cookieBehavior": "none"}, "headersConfig", map[string]any{"headerBehavior": "none"},
			"queryStringsConfig", map[string]any{"queryStringBehavior": "none"})},
		tCDPolicy: {"enabled": pv(false), "stagingDistributionDnsNames": obj("items", []string{"d111111abcdef8.cloudfront.net"}, "quantity", 1),
			"trafficConfig": obj("type", "SingleHeader", "singleHeaderConfig", map[string]any{"header": "aws-cf-cd-canary", "value": "on"})},
		tOriginRequestPolicy: {"cookiesConfig": obj("cookieBehavior", "none"), "headersConfig": obj("headerBehavior", "allViewer"),
			"queryStringsConfig": obj("queryStringBehavior", "all")},
	}
}

func mustArchive(assets map[string]any) *resource.Archive {
	a, err := resource.NewAssetArchive(assets)
	if err != nil {
		panic(err)
	}
	return a
}

func mustAsset(text string) *resource.Asset {
	a, err := resource.NewTextAsset(text)
	if err != nil {
		panic(err)
	}
	return a
}
