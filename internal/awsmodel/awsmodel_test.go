package awsmodel

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
)

var testEnv = Env{Partition: "aws", Account: "123456789012", Region: "us-east-1"}

func create(t *testing.T, typ, name string, in resource.PropertyMap, env Env) (string, resource.PropertyMap) {
	t.Helper()
	checked, failures := Check(CheckRequest{Type: typ, Name: name, News: in, RandomSeed: []byte(name)})
	if len(failures) > 0 {
		t.Fatalf("%s: unexpected check failures: %v", typ, failures)
	}
	id, out, err := Outputs(Request{Type: typ, Name: name, Inputs: checked, Env: env, Seed: []byte(name), Now: MockTime})
	if err != nil {
		t.Fatalf("%s: outputs: %v", typ, err)
	}
	return id, out
}

func TestEveryKnownTypeHasSchemaAndSample(t *testing.T) {
	s := samples()
	for _, typ := range Types() {
		if _, ok := SchemaOf(typ); !ok {
			t.Errorf("%s: no SDK schema", typ)
		}
		if _, ok := s[typ]; !ok {
			t.Errorf("%s: no sample inputs in samples_test.go", typ)
		}
	}
	if len(Types()) < 45 {
		t.Errorf("only %d types known", len(Types()))
	}
}

// Every output the model produces must be an output property of the
// resource in pulumi-aws v6.83.4, under its exact name.
func TestOutputsUseSDKPropertyNames(t *testing.T) {
	for typ, in := range samples() {
		t.Run(typ, func(t *testing.T) {
			id, out := create(t, typ, "cell-a-x", in, testEnv)
			if id == "" {
				t.Fatal("empty id")
			}
			schema, _ := SchemaOf(typ)
			for _, k := range sortedKeys(out) {
				if _, ok := schema.Outputs[k]; !ok {
					t.Errorf("output %q is not a pulumi-aws output property of %s", k, typ)
				}
			}
			if _, hasArn := schema.Outputs["arn"]; hasArn && !strings.HasPrefix(str(out, "arn"), "arn:aws:") {
				t.Errorf("arn = %q", str(out, "arn"))
			}
			if _, ok := schema.Outputs["tagsAll"]; ok && object(out, "tagsAll") == nil {
				t.Errorf("tagsAll missing")
			}
			// Every computed-only output is reported.
			for k := range schema.Outputs {
				if schema.ComputedOnly(k) {
					if _, ok := out[resource.PropertyKey(k)]; !ok && !optionalComputed[typ+"."+k] {
						t.Errorf("computed output %q missing", k)
					}
				}
			}
		})
	}
}

// optionalComputed are computed outputs AWS leaves unset for the sample.
var optionalComputed = map[string]bool{}

func TestIDsAndARNs(t *testing.T) {
	tests := []struct {
		typ, id, arn string
		env          Env
	}{
		{tVpc, `^vpc-0[0-9a-f]{16}$`, `^arn:aws:ec2:us-east-1:123456789012:vpc/vpc-0[0-9a-f]{16}$`, testEnv},
		{tSubnet, `^subnet-0[0-9a-f]{16}$`, `^arn:aws:ec2:us-east-1:123456789012:subnet/subnet-0`, testEnv},
		{tIGW, `^igw-0[0-9a-f]{16}$`, `:internet-gateway/igw-0`, testEnv},
		{tEIP, `^eipalloc-0[0-9a-f]{16}$`, ``, testEnv},
		{tNAT, `^nat-0[0-9a-f]{16}$`, ``, testEnv},
		{tRouteTable, `^rtb-0`, `:route-table/rtb-0`, testEnv},
		{tRTA, `^rtbassoc-0`, ``, testEnv},
		{tEndpoint, `^vpce-0`, `:vpc-endpoint/vpce-0`, testEnv},
		{tSG, `^sg-0[0-9a-f]{16}$`, `:security-group/sg-0`, testEnv},
		{tIngress, `^sgr-0[0-9a-f]{16}$`, `:security-group-rule/sgr-0`, testEnv},
		{tDBSubnetGroup, `^cell-a-x-[0-9a-f]{7}$`, `^arn:aws:rds:us-east-1:123456789012:subgrp:cell-a-x-`, testEnv},
		{tClusterParams, `^cell-a-x-`, `:cluster-pg:cell-a-x-`, testEnv},
		{tCluster, `^tf-\d{18}[0-9a-f]{8}$`, `^arn:aws:rds:us-east-1:123456789012:cluster:tf-`, testEnv},
		{tClusterInstance, `^cell-a-x-[0-9a-f]{7}$`, `:db:cell-a-x-`, testEnv},
		{tCacheSubnetGroup, `^cell-a-x-`, `:elasticache:us-east-1:123456789012:subnetgroup:cell-a-x-`, testEnv},
		{tCacheUser, `^cell-a-app$`, `:user:cell-a-app$`, testEnv},
		{tCacheUserGroup, `^cell-a-users$`, `:usergroup:cell-a-users$`, testEnv},
		{tReplicationGroup, `^cell-a-x-[0-9a-f]{7}$`, `:replicationgroup:cell-a-x-`, testEnv},
		{tQueue, `^https://sqs\.eu-west-1\.amazonaws\.com/123456789012/cell-a-x-[0-9a-f]{7}$`, `^arn:aws:sqs:eu-west-1:123456789012:cell-a-x-[0-9a-f]{7}$`, Env{Region: "eu-west-1"}},
		{tRole, `^cell-a-x-[0-9a-f]{7}$`, `^arn:aws:iam::123456789012:role/cell-a-x-[0-9a-f]{7}$`, Env{Region: "eu-west-1"}},
		{tRolePA, `^cell-a-task-\d{18}[0-9a-f]{8}$`, ``, testEnv},
		{tRolePolicy, `^cell-a-task:cell-a-x-`, ``, testEnv},
		{tLogGroup, `^cell-a-x-`, `^arn:aws:logs:us-east-1:123456789012:log-group:cell-a-x-[0-9a-f]{7}$`, testEnv},
		{tAlarm, `^cell-a-x-`, `^arn:aws:cloudwatch:us-east-1:123456789012:alarm:cell-a-x-`, testEnv},
		{tECSCluster, `^arn:aws:ecs:us-east-1:123456789012:cluster/cell-a-x-`, `^arn:aws:ecs:us-east-1:123456789012:cluster/cell-a-x-`, testEnv},
		{tTaskDef, `^cell-a-app$`, `^arn:aws:ecs:us-east-1:123456789012:task-definition/cell-a-app:1$`, testEnv},
		{tECSService, `^arn:aws:ecs:us-east-1:123456789012:service/cell-a/cell-a-x-`, ``, testEnv},
		{tLB, `^arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/cell-a-x-[0-9a-f]{7}/[0-9a-f]{16}$`, `loadbalancer/app/`, testEnv},
		{tTargetGroup, `:targetgroup/cell-a-x-[0-9a-f]{7}/[0-9a-f]{16}$`, `:targetgroup/`, testEnv},
		{tListener, `:listener/app/cell-a-alb/0123456789abcdef/[0-9a-f]{16}$`, `:listener/app/`, testEnv},
		{tListenerRule, `:listener-rule/app/cell-a-alb/0123456789abcdef/fedcba9876543210/[0-9a-f]{16}$`, `:listener-rule/`, testEnv},
		{tBucket, `^cell-a-x-[0-9a-f]{7}$`, `^arn:aws:s3:::cell-a-x-[0-9a-f]{7}$`, testEnv},
		{tBucketPolicy, `^fleet-bucket$`, ``, testEnv},
		{tFunction, `^cell-a-x-[0-9a-f]{7}$`, `^arn:aws:lambda:us-east-1:123456789012:function:cell-a-x-[0-9a-f]{7}$`, testEnv},
		{tDistribution, `^E[0-9A-Z]{13}$`, `^arn:aws:cloudfront::123456789012:distribution/E[0-9A-Z]{13}$`, testEnv},
		{tCachePolicy, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, `^arn:aws:cloudfront::123456789012:cache-policy/`, testEnv},
		{tOriginRequestPolicy, `^[0-9a-f-]{36}$`, `:origin-request-policy/`, testEnv},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			id, out := create(t, tt.typ, "cell-a-x", samples()[tt.typ], tt.env)
			if !regexp.MustCompile(tt.id).MatchString(id) {
				t.Errorf("id %q does not match %s", id, tt.id)
			}
			if tt.arn != "" && !regexp.MustCompile(tt.arn).MatchString(str(out, "arn")) {
				t.Errorf("arn %q does not match %s", str(out, "arn"), tt.arn)
			}
		})
	}
}

func TestComputedOutputs(t *testing.T) {
	tests := []struct {
		typ  string
		in   resource.PropertyMap
		env  Env
		want map[string]string // output -> regexp
	}{
		{tVpc, nil, testEnv, map[string]string{
			"defaultSecurityGroupId": `^sg-0`, "mainRouteTableId": `^rtb-0`, "defaultRouteTableId": `^rtb-0`,
			"defaultNetworkAclId": `^acl-0`, "dhcpOptionsId": `^dopt-0`, "ownerId": `^123456789012$`, "instanceTenancy": `^default$`,
		}},
		{tSubnet, nil, testEnv, map[string]string{"availabilityZoneId": `^use1-az1$`}},
		{tEIP, nil, testEnv, map[string]string{"publicIp": `^\d+\.\d+\.\d+\.\d+$`, "publicDns": `^ec2-\d+-\d+-\d+-\d+\.compute-1\.amazonaws\.com$`, "domain": `^vpc$`}},
		{tNAT, nil, testEnv, map[string]string{"publicIp": `^` + regexp.QuoteMeta(PublicIPFor("eipalloc-0123456789abcdef0")) + `$`, "privateIp": `^10\.`, "networkInterfaceId": `^eni-0`}},
		{tEndpoint, nil, testEnv, map[string]string{"prefixListId": `^pl-63a5400a$`, "state": `^available$`, "vpcEndpointType": `^Gateway$`}},
		{tEndpoint, resource.PropertyMap{"vpcId": pv("vpc-1"), "serviceName": pv("com.amazonaws.eu-west-1.s3")}, Env{Region: "eu-west-1"},
			map[string]string{"prefixListId": `^pl-6da54004$`}},
		{tCluster, nil, testEnv, map[string]string{
			"endpoint":          `^tf-\d+[0-9a-f]+\.cluster-[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com$`,
			"readerEndpoint":    `^tf-\d+[0-9a-f]+\.cluster-ro-[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com$`,
			"clusterResourceId": `^cluster-[A-Z0-9]{26}$`, "port": `^5432$`, "engineVersionActual": `^16\.6$`,
			"kmsKeyId": `^arn:aws:kms:us-east-1:123456789012:key/`, "hostedZoneId": `^Z2R2ITUGPM61AM$`,
		}},
		{tClusterInstance, nil, testEnv, map[string]string{"endpoint": `^cell-a-x-[0-9a-f]{7}\.[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com$`, "writer": `^true$`, "dbiResourceId": `^db-[A-Z0-9]{26}$`}},
		{tReplicationGroup, nil, testEnv, map[string]string{
			"primaryEndpointAddress": `^master\.cell-a-x-[0-9a-f]{7}\.[a-z0-9]{6}\.use1\.cache\.amazonaws\.com$`,
			"readerEndpointAddress":  `^replica\.cell-a-x-[0-9a-f]{7}\.[a-z0-9]{6}\.use1\.cache\.amazonaws\.com$`,
			"engineVersionActual":    `^7\.1\.0$`, "clusterEnabled": `^false$`,
		}},
		{tReplicationGroup, resource.PropertyMap{"description": pv("d"), "nodeType": pv("cache.t4g.small")}, Env{Region: "eu-west-2"}, map[string]string{
			"primaryEndpointAddress": `^cell-a-x-[0-9a-f]{7}\.[a-z0-9]{6}\.ng\.0001\.euw2\.cache\.amazonaws\.com$`,
			"readerEndpointAddress":  `^cell-a-x-[0-9a-f]{7}-ro\.`,
		}},
		{tQueue, resource.PropertyMap{"fifoQueue": pv(true)}, testEnv, map[string]string{"name": `^cell-a-x-[0-9a-f]{7}\.fifo$`, "deduplicationScope": `^queue$`}},
		{tRole, nil, testEnv, map[string]string{"uniqueId": `^AROA[A-Z2-7]{17}$`, "createDate": `^2025-01-01T00:00:00Z$`}},
		{tLB, nil, testEnv, map[string]string{
			"dnsName":   `^cell-a-x-[0-9a-f]{7}-\d{9,10}\.us-east-1\.elb\.amazonaws\.com$`,
			"arnSuffix": `^app/cell-a-x-[0-9a-f]{7}/[0-9a-f]{16}$`, "zoneId": `^Z35SXDOTRQ7X7K$`,
		}},
		{tLB, resource.PropertyMap{"internal": pv(true), "loadBalancerType": pv("network"), "subnets": pv([]string{"subnet-1"})}, Env{Region: "us-west-2"}, map[string]string{
			"dnsName": `^internal-cell-a-x-[0-9a-f]{7}-[0-9a-f]{16}\.elb\.us-west-2\.amazonaws\.com$`, "zoneId": `^Z18D5FSROUN65G$`,
		}},
		{tTargetGroup, nil, testEnv, map[string]string{"arnSuffix": `^targetgroup/cell-a-x-[0-9a-f]{7}/[0-9a-f]{16}$`}},
		{tListenerRule, nil, testEnv, map[string]string{"priority": `^1$`}},
		{tBucket, nil, Env{Region: "eu-central-1"}, map[string]string{
			"bucketDomainName": `^cell-a-x-[0-9a-f]{7}\.s3\.amazonaws\.com$`, "bucketRegionalDomainName": `^cell-a-x-[0-9a-f]{7}\.s3\.eu-central-1\.amazonaws\.com$`,
			"region": `^eu-central-1$`,
		}},
		{tFunction, nil, testEnv, map[string]string{
			"version": `^1$`, "qualifiedArn": `^arn:aws:lambda:us-east-1:123456789012:function:cell-a-x-[0-9a-f]{7}:1$`,
			"invokeArn":      `^arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:123456789012:function:cell-a-x-[0-9a-f]{7}/invocations$`,
			"sourceCodeHash": `^[A-Za-z0-9+/]{43}=$`,
		}},
		{tDistribution, nil, testEnv, map[string]string{
			"domainName": `^d[a-z0-9]{13}\.cloudfront\.net$`, "hostedZoneId": `^Z2FDTNDATAQYW2$`, "status": `^Deployed$`, "etag": `^E[A-Z0-9]{13}$`,
		}},
		{tTaskDef, nil, testEnv, map[string]string{"revision": `^1$`, "arnWithoutRevision": `^arn:aws:ecs:us-east-1:123456789012:task-definition/cell-a-app$`}},
	}
	for _, tt := range tests {
		in := tt.in
		if in == nil {
			in = samples()[tt.typ]
		}
		_, out := create(t, tt.typ, "cell-a-x", in, tt.env)
		for k, re := range tt.want {
			v, ok := get(out, k)
			got := ""
			if ok {
				got = strings.Trim(v.String(), "{}")
				if v.IsString() {
					got = v.StringValue()
				}
			}
			if !regexp.MustCompile(re).MatchString(got) {
				t.Errorf("%s (%s) %s = %q, want %s", tt.typ, tt.env.Region, k, got, re)
			}
		}
	}
}

func TestManagedMasterPasswordSecret(t *testing.T) {
	_, out := create(t, tCluster, "cell-a-db", samples()[tCluster], Env{Region: "eu-west-1"})
	secrets := objects(out, "masterUserSecrets")
	if len(secrets) != 1 {
		t.Fatalf("masterUserSecrets = %v", out["masterUserSecrets"])
	}
	re := regexp.MustCompile(`^arn:aws:secretsmanager:eu-west-1:123456789012:secret:rds!cluster-[0-9a-f-]{36}-[A-Za-z0-9]{6}$`)
	if arn := str(secrets[0], "secretArn"); !re.MatchString(arn) {
		t.Errorf("secretArn = %q", arn)
	}
	if str(secrets[0], "secretStatus") != "active" || !strings.HasPrefix(str(secrets[0], "kmsKeyId"), "arn:aws:kms:eu-west-1:") {
		t.Errorf("secret = %v", secrets[0])
	}
}

func TestSecretsStaySecret(t *testing.T) {
	_, out := create(t, tReplicationGroup, "cache", samples()[tReplicationGroup], testEnv)
	if !out["authToken"].IsSecret() {
		t.Error("authToken lost its secretness")
	}
	_, out = create(t, tCacheUser, "user", samples()[tCacheUser], testEnv)
	if !out["passwords"].IsSecret() {
		t.Error("passwords lost its secretness")
	}
}

func TestRequiredProperties(t *testing.T) {
	for typ, spec := range specs {
		for _, req := range spec.required {
			in := samples()[typ].Copy()
			delete(in, resource.PropertyKey(req))
			_, failures := Check(CheckRequest{Type: typ, Name: "x", News: in})
			found := false
			for _, f := range failures {
				found = found || (string(f.Property) == req && strings.Contains(f.Reason, "Missing required property"))
			}
			if !found {
				t.Errorf("%s without %s: failures %v", typ, req, failures)
			}
		}
	}
}

func TestAutonaming(t *testing.T) {
	tests := []struct {
		name     string
		typ      string
		logical  string
		in       resource.PropertyMap
		olds     resource.PropertyMap
		naming   *plugin.AutonamingOptions
		prop     string
		want     string // regexp; "" means the property stays unset
		failWith string
	}{
		{"queue", tQueue, "cell-a-jobs", nil, nil, nil, "name", `^cell-a-jobs-[0-9a-f]{7}$`, ""},
		{"fifo queue", tQueue, "cell-a-jobs", resource.PropertyMap{"fifoQueue": pv(true)}, nil, nil, "name", `^cell-a-jobs-[0-9a-f]{7}\.fifo$`, ""},
		{"role", tRole, "cell-a-task", samples()[tRole], nil, nil, "name", `^cell-a-task-[0-9a-f]{7}$`, ""},
		{"bucket lowercased", tBucket, "Fleet-Bucket", nil, nil, nil, "bucket", `^fleet-bucket-[0-9a-f]{7}$`, ""},
		{"explicit name kept", tQueue, "q", resource.PropertyMap{"name": pv("orders")}, nil, nil, "name", `^orders$`, ""},
		{"old autoname reused", tQueue, "q", nil, resource.PropertyMap{"name": pv("q-1234567"), "__defaults": pv([]string{"name"})}, nil, "name", `^q-1234567$`, ""},
		{"old explicit name not reused", tQueue, "q", nil, resource.PropertyMap{"name": pv("orders"), "__defaults": pv([]string{})}, nil, "name", `^q-[0-9a-f]{7}$`, ""},
		{"lb within 32", tLB, "cell-a-alb", samples()[tLB], nil, nil, "name", `^cell-a-alb-[0-9a-f]{7}$`, ""},
		{"lb name too long", tLB, "cell-abcdef-public-alb-xyz", samples()[tLB], nil, nil, "name", "", "plus 7 random chars is longer than maximum length 32"},
		{"engine proposed name", tQueue, "q", nil, nil, &plugin.AutonamingOptions{ProposedName: "cellctl-q", Mode: plugin.AutonamingModeEnforce}, "name", `^cellctl-q$`, ""},
		{"engine disabled", tQueue, "q", nil, nil, &plugin.AutonamingOptions{Mode: plugin.AutonamingModeDisabled}, "name", "", ""},
		{"security group description default", tSG, "cell-a-db", samples()[tSG], nil, nil, "description", `^Managed by Pulumi$`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if in == nil {
				in = resource.PropertyMap{}
			}
			out, failures := Check(CheckRequest{Type: tt.typ, Name: tt.logical, News: in, Olds: tt.olds, RandomSeed: []byte("seed"), Autonaming: tt.naming})
			if tt.failWith != "" {
				if len(failures) == 0 || !strings.Contains(failures[0].Reason, tt.failWith) {
					t.Fatalf("failures = %v, want %q", failures, tt.failWith)
				}
				return
			}
			if len(failures) > 0 {
				t.Fatalf("failures: %v", failures)
			}
			got := str(out, tt.prop)
			if tt.want == "" {
				if got != "" {
					t.Errorf("%s = %q, want unset", tt.prop, got)
				}
				return
			}
			if !regexp.MustCompile(tt.want).MatchString(got) {
				t.Errorf("%s = %q, want %s", tt.prop, got, tt.want)
			}
		})
	}
	// Same seed, same name; the bridge records what it defaulted.
	a, _ := Check(CheckRequest{Type: tQueue, Name: "q", News: resource.PropertyMap{}, RandomSeed: []byte("s")})
	b, _ := Check(CheckRequest{Type: tQueue, Name: "q", News: resource.PropertyMap{}, RandomSeed: []byte("s")})
	if str(a, "name") != str(b, "name") {
		t.Error("autoname not stable for a seed")
	}
	if d := strings_(a, "__defaults"); len(d) != 1 || d[0] != "name" {
		t.Errorf("__defaults = %v", d)
	}
}

func TestValidation(t *testing.T) {
	with := func(typ string, kv ...any) resource.PropertyMap {
		m := samples()[typ].Copy()
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, resource.PropertyKey(kv[i].(string)))
				continue
			}
			m[resource.PropertyKey(kv[i].(string))] = pv(kv[i+1])
		}
		return m
	}
	tests := []struct {
		name, typ string
		in        resource.PropertyMap
		prop      string // "" = valid
		reason    string
	}{
		{"valid vpc", tVpc, samples()[tVpc], "", ""},
		{"vpc cidr garbage", tVpc, with(tVpc, "cidrBlock", "10.1.0.0/33"), "cidrBlock", "valid IPv4 CIDR"},
		{"vpc cidr host bits", tVpc, with(tVpc, "cidrBlock", "10.1.2.0/16"), "cidrBlock", "network CIDR"},
		{"vpc cidr too big", tVpc, with(tVpc, "cidrBlock", "10.0.0.0/8"), "cidrBlock", "between /16 and /28"},
		{"vpc without cidr", tVpc, with(tVpc, "cidrBlock", nil), "cidrBlock", "must be specified"},
		{"subnet cidr", tSubnet, with(tSubnet, "cidrBlock", "10.1.0.0/29x"), "cidrBlock", "CIDR"},
		{"unknown cidr passes", tSubnet, with(tSubnet, "cidrBlock", resource.MakeComputed(resource.NewStringProperty(""))), "", ""},
		{"wrong type", tVpc, with(tVpc, "enableDnsHostnames", []string{"x"}), "enableDnsHostnames", "expected boolean"},
		{"lb name 33", tLB, with(tLB, "name", strings.Repeat("a", 33)), "name", "longer than 32"},
		{"lb name hyphen", tLB, with(tLB, "name", "-alb"), "name", "hyphen"},
		{"lb internal- prefix", tLB, with(tLB, "name", "internal-x"), "name", "internal-"},
		{"tg name 33", tTargetGroup, with(tTargetGroup, "name", strings.Repeat("t", 33)), "name", "longer than 32"},
		{"tg without vpc", tTargetGroup, with(tTargetGroup, "vpcId", nil), "vpcId", "required"},
		{"rds engine", tCluster, with(tCluster, "engine", "oracle"), "engine", "aurora-postgresql"},
		{"rds password conflict", tCluster, with(tCluster, "masterPassword", "hunter2hunter2"), "masterPassword", "conflicts"},
		{"instance class", tClusterInstance, with(tClusterInstance, "instanceClass", "r6g.large"), "instanceClass", "db."},
		{"failover needs 2 nodes", tReplicationGroup, with(tReplicationGroup, "numCacheClusters", 1), "numCacheClusters", "at least 2"},
		{"cache engine", tReplicationGroup, with(tReplicationGroup, "engine", "memcached"), "engine", "redis"},
		{"sg rule ports", tIngress, with(tIngress, "fromPort", 70000), "fromPort", "0 - 65535"},
		{"sg rule two sources", tIngress, with(tIngress, "cidrIpv4", "10.0.0.0/8"), "cidrIpv4", "exactly one"},
		{"sg rule protocol", tIngress, with(tIngress, "ipProtocol", "tcpp"), "ipProtocol", "invalid IP protocol"},
		{"sg name", tSG, with(tSG, "name", "sg-x"), "name", "sg-"},
		{"fifo name without fifo", tQueue, resource.PropertyMap{"name": pv("orders.fifo")}, "name", "only FIFO"},
		{"fifo without suffix", tQueue, resource.PropertyMap{"name": pv("orders"), "fifoQueue": pv(true)}, "name", "must end with"},
		{"queue visibility", tQueue, resource.PropertyMap{"visibilityTimeoutSeconds": pv(50000)}, "visibilityTimeoutSeconds", "range"},
		{"redrive policy", tQueue, resource.PropertyMap{"redrivePolicy": pv(`{"deadLetterTargetArn":"x"}`)}, "redrivePolicy", "maxReceiveCount"},
		{"role policy json", tRole, with(tRole, "assumeRolePolicy", "{nope"), "assumeRolePolicy", "invalid JSON"},
		{"role name", tRole, with(tRole, "name", "has space"), "name", "invalid value"},
		{"log retention", tLogGroup, with(tLogGroup, "retentionInDays", 8), "retentionInDays", "one of"},
		{"alarm operator", tAlarm, with(tAlarm, "comparisonOperator", "Bigger"), "comparisonOperator", "one of"},
		{"alarm period", tAlarm, with(tAlarm, "period", 90), "period", "multiple of 60"},
		{"task def json", tTaskDef, with(tTaskDef, "containerDefinitions", "[{"), "containerDefinitions", "invalid"},
		{"bucket name", tBucket, resource.PropertyMap{"bucket": pv("Fleet_Bucket")}, "bucket", "lowercase"},
		{"bucket ip", tBucket, resource.PropertyMap{"bucket": pv("192.168.1.1")}, "bucket", "IP address"},
		{"lambda runtime", tFunction, with(tFunction, "runtime", "nodejs8.10"), "runtime", "one of"},
		{"lambda memory", tFunction, with(tFunction, "memorySize", 64), "memorySize", "range"},
		{"lambda description", tFunction, with(tFunction, "description", strings.Repeat("d", 257)), "description", "longer than 256"},
		{"cf forbidden header", tDistribution, with(tDistribution, "origins", []any{map[string]any{"originId": "o", "domainName": "x", "customHeaders": []any{map[string]any{"name": "Host", "value": "x"}}}}), "origins[0].customHeaders[0].name", "does not allow"},
		{"cf unknown origin", tDistribution, with(tDistribution, "origins", []any{map[string]any{"originId": "other", "domainName": "x"}}), "defaultCacheBehavior.targetOriginId", "NoSuchOrigin"},
		{"listener rule header", tListenerRule, with(tListenerRule, "conditions", []any{map[string]any{"httpHeader": map[string]any{"httpHeaderName": "X Cell", "values": []any{"a"}}}}), "conditions[0].httpHeader.httpHeaderName", "invalid HTTP header"},
		{"versioning status", tBucketVersioning, with(tBucketVersioning, "versioningConfiguration", map[string]any{"status": "On"}), "versioningConfiguration.status", "one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, failures := Check(CheckRequest{Type: tt.typ, Name: "x", News: tt.in, RandomSeed: []byte("x")})
			if tt.prop == "" {
				if len(failures) > 0 {
					t.Fatalf("unexpected failures: %v", failures)
				}
				return
			}
			for _, f := range failures {
				if string(f.Property) == tt.prop && strings.Contains(f.Reason, tt.reason) {
					return
				}
			}
			t.Errorf("want failure on %s containing %q, got %v", tt.prop, tt.reason, failures)
		})
	}
}

func TestAPIErrorsAtCreate(t *testing.T) {
	tests := []struct {
		typ  string
		in   resource.PropertyMap
		env  Env
		code string
	}{
		{tSubnet, resource.PropertyMap{"vpcId": pv("vpc-1"), "cidrBlock": pv("10.0.0.0/24"), "availabilityZone": pv("us-west-2a")}, testEnv, "InvalidParameterValue"},
		{tTaskDef, func() resource.PropertyMap { m := samples()[tTaskDef].Copy(); m["memory"] = pv("4096"); return m }(), testEnv, "ClientException"},
		{tTaskDef, func() resource.PropertyMap {
			m := samples()[tTaskDef].Copy()
			m["networkMode"] = pv("bridge")
			return m
		}(), testEnv, "ClientException"},
		{tCluster, resource.PropertyMap{"engine": pv("aurora-postgresql"), "manageMasterUserPassword": pv(true)}, testEnv, "InvalidParameterValue"},
		{tReplicationGroup, resource.PropertyMap{"description": pv("x"), "nodeType": pv("cache.t4g.micro"), "authToken": pv("0123456789abcdef0123")}, testEnv, "InvalidParameterValue"},
		{tEndpoint, resource.PropertyMap{"vpcId": pv("vpc-1"), "serviceName": pv("com.amazonaws.eu-west-1.s3")}, testEnv, "InvalidServiceName"},
		{tDistribution, func() resource.PropertyMap {
			m := samples()[tDistribution].Copy()
			dcb := object(m, "defaultCacheBehavior").Copy()
			dcb["lambdaFunctionAssociations"] = pv([]any{map[string]any{"eventType": "viewer-request", "lambdaArn": "arn:aws:lambda:eu-west-1:123456789012:function:edge:1"}})
			m["defaultCacheBehavior"] = resource.NewObjectProperty(dcb)
			return m
		}(), testEnv, "InvalidLambdaFunctionAssociation"},
		{tListener, func() resource.PropertyMap { m := samples()[tListener].Copy(); m["protocol"] = pv("HTTPS"); return m }(), testEnv, "ValidationError"},
	}
	for _, tt := range tests {
		checked, failures := Check(CheckRequest{Type: tt.typ, Name: "x", News: tt.in})
		if len(failures) > 0 {
			t.Errorf("%s: check failures %v", tt.typ, failures)
			continue
		}
		_, _, err := Outputs(Request{Type: tt.typ, Name: "x", Inputs: checked, Env: tt.env, Seed: []byte("x")})
		var ae *APIError
		if !errors.As(err, &ae) || ae.Code != tt.code {
			t.Errorf("%s: err = %v, want API error %s", tt.typ, err, tt.code)
			continue
		}
		if !strings.Contains(err.Error(), "operation error ") || !strings.Contains(err.Error(), "api error "+tt.code) {
			t.Errorf("%s: message %q", tt.typ, err)
		}
	}
}

func TestDiff(t *testing.T) {
	base := func(typ string, kv ...any) resource.PropertyMap {
		m, _ := Check(CheckRequest{Type: typ, Name: "r", News: samples()[typ], RandomSeed: []byte("r")})
		for i := 0; i < len(kv); i += 2 {
			m[resource.PropertyKey(kv[i].(string))] = pv(kv[i+1])
		}
		return m
	}
	tests := []struct {
		name          string
		typ           string
		olds, news    resource.PropertyMap
		ignore        []string
		changes       plugin.DiffChanges
		replaces      []string
		deleteFirst   bool
		detailedKinds map[string]plugin.DiffKind
	}{
		{"no change", tVpc, base(tVpc), base(tVpc), nil, plugin.DiffNone, nil, false, nil},
		{"tags update", tVpc, base(tVpc), base(tVpc, "tags", map[string]string{"cell": "b"}), nil, plugin.DiffSome, nil, false,
			map[string]plugin.DiffKind{"tags.cell": plugin.DiffUpdate}},
		{"vpc cidr replaces", tVpc, base(tVpc), base(tVpc, "cidrBlock", "10.2.0.0/16"), nil, plugin.DiffSome, []string{"cidrBlock"}, false,
			map[string]plugin.DiffKind{"cidrBlock": plugin.DiffUpdateReplace}},
		{"subnet az replaces", tSubnet, base(tSubnet), base(tSubnet, "availabilityZone", "us-east-1b"), nil, plugin.DiffSome, []string{"availabilityZone"}, false, nil},
		{"ignoreChanges", tVpc, base(tVpc), base(tVpc, "cidrBlock", "10.2.0.0/16"), []string{"cidrBlock"}, plugin.DiffNone, nil, false, nil},
		{"autonamed queue replaced creates first", tQueue, base(tQueue), base(tQueue, "fifoQueue", true), nil, plugin.DiffSome, []string{"fifoQueue"}, false, nil},
		{"fixed name deletes first", tQueue, base(tQueue, "name", "jobs", "__defaults", []string{}), base(tQueue, "name", "jobs", "__defaults", []string{}, "fifoQueue", true), nil,
			plugin.DiffSome, []string{"fifoQueue"}, true, nil},
		{"renamed fixed name deletes first too (as the bridge does)", tQueue, base(tQueue, "name", "a", "__defaults", []string{}), base(tQueue, "name", "b", "__defaults", []string{}), nil,
			plugin.DiffSome, []string{"name"}, true, nil},
		{"no name property: creates first", tCluster, base(tCluster, "clusterIdentifier", "cell-a-db"), base(tCluster, "clusterIdentifier", "cell-a-db", "engine", "aurora-mysql"), nil,
			plugin.DiffSome, []string{"engine"}, false, nil},
		{"rds db name replaces", tCluster, base(tCluster), base(tCluster, "databaseName", "other"), nil, plugin.DiffSome, []string{"databaseName"}, false, nil},
		{"rds backup window updates", tCluster, base(tCluster), base(tCluster, "preferredBackupWindow", "01:00-02:00"), nil, plugin.DiffSome, nil, false, nil},
		{"attachment always deletes first", tRolePA, base(tRolePA), base(tRolePA, "policyArn", "arn:aws:iam::aws:policy/ReadOnlyAccess"), nil, plugin.DiffSome, []string{"policyArn"}, true, nil},
		{"task definition replaces on any input", tTaskDef, base(tTaskDef), base(tTaskDef, "cpu", "512"), nil, plugin.DiffSome, []string{"cpu"}, false, nil},
		{"task definition tags update", tTaskDef, base(tTaskDef), base(tTaskDef, "tags", map[string]string{"a": "b"}), nil, plugin.DiffSome, nil, false, nil},
		{"equal secrets no diff", tReplicationGroup, base(tReplicationGroup), base(tReplicationGroup), nil, plugin.DiffNone, nil, false, nil},
		{"unknown new value is a change", tVpc, base(tVpc), base(tVpc, "cidrBlock", resource.MakeComputed(resource.NewStringProperty(""))), nil, plugin.DiffSome, []string{"cidrBlock"}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diff(tt.typ, tt.olds, tt.news, tt.ignore)
			if d.Changes != tt.changes {
				t.Fatalf("changes = %v (changed %v), want %v", d.Changes, d.ChangedKeys, tt.changes)
			}
			var reps []string
			for _, k := range d.ReplaceKeys {
				reps = append(reps, string(k))
			}
			if strings.Join(reps, ",") != strings.Join(tt.replaces, ",") {
				t.Errorf("replaces = %v, want %v", reps, tt.replaces)
			}
			if d.DeleteBeforeReplace != tt.deleteFirst {
				t.Errorf("deleteBeforeReplace = %v", d.DeleteBeforeReplace)
			}
			for path, kind := range tt.detailedKinds {
				if d.DetailedDiff[path].Kind != kind {
					t.Errorf("detailed[%s] = %v, want %v (all: %v)", path, d.DetailedDiff[path].Kind, kind, d.DetailedDiff)
				}
			}
		})
	}
}

func TestUpdateKeepsIdentityAndPublishesVersions(t *testing.T) {
	in, _ := Check(CheckRequest{Type: tFunction, Name: "edge", News: samples()[tFunction], RandomSeed: []byte("e")})
	id, v1, err := Outputs(Request{Type: tFunction, Name: "edge", Inputs: in, Env: testEnv, Seed: []byte("seed")})
	if err != nil {
		t.Fatal(err)
	}
	// Same inputs: same version.
	id2, same, _ := Outputs(Request{Type: tFunction, Name: "edge", Inputs: in, Env: testEnv, Seed: []byte("seed"), Old: v1})
	if id2 != id || str(same, "version") != "1" {
		t.Errorf("no-op update: id %s→%s version %s", id, id2, str(same, "version"))
	}
	// New code: version 2, new qualified ARN, same function ARN.
	in2 := in.Copy()
	in2["code"] = resource.NewArchiveProperty(mustArchive(map[string]any{"index.js": mustAsset("exports.handler=async()=>({status:'302'})")}))
	_, v2, _ := Outputs(Request{Type: tFunction, Name: "edge", Inputs: in2, Env: testEnv, Seed: []byte("seed"), Old: same})
	if str(v2, "version") != "2" || !strings.HasSuffix(str(v2, "qualifiedArn"), ":2") || str(v2, "arn") != str(v1, "arn") {
		t.Errorf("after code change: version %s qualifiedArn %s", str(v2, "version"), str(v2, "qualifiedArn"))
	}
	if str(v2, "sourceCodeHash") == str(v1, "sourceCodeHash") {
		t.Error("sourceCodeHash did not change with the code")
	}
	// Computed-only values changed out of band stay.
	vpcIn, _ := Check(CheckRequest{Type: tVpc, Name: "v", News: samples()[tVpc]})
	_, vpc1, _ := Outputs(Request{Type: tVpc, Name: "v", Inputs: vpcIn, Env: testEnv, Seed: []byte("a")})
	vpc1["mainRouteTableId"] = pv("rtb-edited")
	_, vpc2, _ := Outputs(Request{Type: tVpc, Name: "v", Inputs: vpcIn, Env: testEnv, Seed: []byte("a"), Old: vpc1})
	if str(vpc2, "mainRouteTableId") != "rtb-edited" || str(vpc2, "arn") != str(vpc1, "arn") {
		t.Errorf("update lost computed state: %v", vpc2["mainRouteTableId"])
	}
}

func TestPreviewOutputs(t *testing.T) {
	in, _ := Check(CheckRequest{Type: tLB, Name: "alb", News: samples()[tLB]})
	out := PreviewOutputs(tLB, in, nil, testEnv)
	for _, k := range []string{"dnsName", "arn", "arnSuffix", "zoneId"} {
		if !out[resource.PropertyKey(k)].IsComputed() {
			t.Errorf("%s should be unknown in preview, got %v", k, out[resource.PropertyKey(k)])
		}
	}
	if out["name"].IsComputed() || str(out, "name") == "" {
		t.Error("name should be known (autonamed at check)")
	}
	if _, ok := out["__defaults"]; ok {
		t.Error("__defaults leaked into outputs")
	}
	// Update preview keeps old outputs, recomputes the lambda version.
	fnIn, _ := Check(CheckRequest{Type: tFunction, Name: "f", News: samples()[tFunction]})
	_, old, _ := Outputs(Request{Type: tFunction, Name: "f", Inputs: fnIn, Env: testEnv, Seed: []byte("f")})
	up := PreviewOutputs(tFunction, fnIn, old, testEnv)
	if !up["version"].IsComputed() || up["arn"].IsComputed() {
		t.Errorf("update preview: version %v arn %v", up["version"], up["arn"])
	}
}

func TestInputsFromState(t *testing.T) {
	in, _ := Check(CheckRequest{Type: tVpc, Name: "v", News: samples()[tVpc]})
	_, state, _ := Outputs(Request{Type: tVpc, Name: "v", Inputs: in, Env: testEnv, Seed: []byte("v")})
	// Nothing changed: inputs come back identical.
	if got := InputsFromState(tVpc, in, state, nil); !got.DeepEquals(in) {
		t.Errorf("unchanged state gave different inputs:\n%v\n%v", got, in)
	}
	// A console edit of a tag shows as an input change.
	edited := state.Copy()
	edited["tags"] = pv(map[string]string{"cell": "a", "owner": "someone"})
	edited["enableDnsHostnames"] = pv(true)
	got := InputsFromState(tVpc, in, edited, []string{"enableDnsHostnames", "mainRouteTableId"})
	if stringMap(got, "tags")["owner"] != "someone" {
		t.Errorf("tag edit lost: %v", got["tags"])
	}
	if b, _ := boolean(got, "enableDnsHostnames"); !b {
		t.Error("edited input not taken")
	}
	if _, ok := got["mainRouteTableId"]; ok {
		t.Error("computed-only output became an input")
	}
	// Secrets stay secret.
	rg, _ := Check(CheckRequest{Type: tReplicationGroup, Name: "c", News: samples()[tReplicationGroup]})
	plain := rg.Copy()
	plain["authToken"] = pv("0123456789abcdef0123")
	if got := InputsFromState(tReplicationGroup, rg, plain, nil); !got["authToken"].IsSecret() {
		t.Error("secret input read back in plaintext")
	}
	// Import: no old inputs.
	imp := InputsFromState(tVpc, nil, state, nil)
	if str(imp, "cidrBlock") != "10.1.0.0/16" || imp["arn"].V != nil {
		t.Errorf("import inputs = %v", imp)
	}
}

func TestInvokes(t *testing.T) {
	tests := []struct {
		token string
		args  resource.PropertyMap
		env   Env
		want  map[string]string
		err   string
	}{
		{InvokeAvailabilityZones, resource.PropertyMap{"state": pv("available")}, testEnv,
			map[string]string{"id": "us-east-1", "names": "us-east-1a,us-east-1b,us-east-1c,us-east-1d,us-east-1e,us-east-1f", "zoneIds": "use1-az1,use1-az2,use1-az3,use1-az4,use1-az5,use1-az6", "groupNames": "us-east-1"}, ""},
		{InvokeAvailabilityZones, nil, Env{Region: "us-west-2"}, map[string]string{"names": "us-west-2a,us-west-2b,us-west-2c,us-west-2d", "zoneIds": "usw2-az1,usw2-az2,usw2-az3,usw2-az4"}, ""},
		{InvokeAvailabilityZones, resource.PropertyMap{"excludeNames": pv([]string{"eu-west-1b"})}, Env{Region: "eu-west-1"}, map[string]string{"names": "eu-west-1a,eu-west-1c"}, ""},
		{InvokeAvailabilityZones, resource.PropertyMap{"filters": pv([]any{map[string]any{"name": "zone-id", "values": []any{"apse1-az2"}}})}, Env{Region: "ap-southeast-1"}, map[string]string{"names": "ap-southeast-1b"}, ""},
		{InvokePartition, nil, testEnv, map[string]string{"partition": "aws", "dnsSuffix": "amazonaws.com", "reverseDnsPrefix": "com.amazonaws", "id": "aws"}, ""},
		{InvokeRegion, nil, Env{Region: "eu-west-1"}, map[string]string{"name": "eu-west-1", "id": "eu-west-1", "endpoint": "ec2.eu-west-1.amazonaws.com", "description": "Europe (Ireland)"}, ""},
		{InvokeCallerIdentity, nil, testEnv, map[string]string{"accountId": "123456789012", "id": "123456789012", "arn": "arn:aws:iam::123456789012:user/cellctl-sim"}, ""},
		{InvokeManagedPrefixList, resource.PropertyMap{"name": pv("com.amazonaws.global.cloudfront.origin-facing")}, testEnv,
			map[string]string{"id": "pl-3b927c52", "ownerId": "AWS", "maxEntries": "55", "arn": "arn:aws:ec2:us-east-1:aws:prefix-list/pl-3b927c52"}, ""},
		{InvokeManagedPrefixList, resource.PropertyMap{"filters": pv([]any{map[string]any{"name": "prefix-list-name", "values": []any{"com.amazonaws.global.cloudfront.origin-facing"}}})}, Env{Region: "us-west-2"},
			map[string]string{"id": "pl-82a045eb"}, ""},
		{InvokeManagedPrefixList, resource.PropertyMap{"name": pv("com.example.nope")}, testEnv, nil, "no matching"},
		{InvokeCachePolicy, resource.PropertyMap{"name": pv("Managed-CachingDisabled")}, testEnv, map[string]string{"id": "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"}, ""},
		{"aws:ec2/getVpc:getVpc", nil, testEnv, nil, `"aws:ec2/getVpc:getVpc"`},
	}
	for _, tt := range tests {
		out, err := Invoke(tt.token, tt.args, tt.env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err = %v, want %q", tt.token, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.token, err)
			continue
		}
		for k, want := range tt.want {
			v := out[resource.PropertyKey(k)]
			got := ""
			switch {
			case v.IsArray():
				got = strings.Join(strings_(out, k), ",")
			case v.IsString():
				got = v.StringValue()
			default:
				got = strings.Trim(v.String(), "{}")
			}
			if got != want {
				t.Errorf("%s %s = %q, want %q", tt.token, k, got, want)
			}
		}
	}
	doc, err := Invoke(InvokePolicyDocument, resource.PropertyMap{"statements": pv([]any{map[string]any{
		"actions": []any{"s3:GetObject"}, "resources": []any{"arn:aws:s3:::b/cells/a/*"},
		"principals": []any{map[string]any{"type": "Service", "identifiers": []any{"ecs-tasks.amazonaws.com"}}},
	}})}, testEnv)
	if err != nil || !strings.Contains(str(doc, "minifiedJson"), `"Action":"s3:GetObject"`) || !strings.Contains(str(doc, "minifiedJson"), `"Principal":{"Service":"ecs-tasks.amazonaws.com"}`) {
		t.Errorf("policy document = %v, %v", doc["minifiedJson"], err)
	}
}

func TestCloudKnowledge(t *testing.T) {
	// References.
	refs := References(tNAT, samples()[tNAT])
	if len(refs) != 2 || refs[0].Target != tSubnet || refs[0].Code != "InvalidSubnetID.NotFound" || refs[1].Target != tEIP {
		t.Errorf("NAT references = %+v", refs)
	}
	svc := References(tECSService, samples()[tECSService])
	if len(svc) != 3 {
		t.Errorf("service references = %+v", svc)
	}
	q := References(tQueue, resource.PropertyMap{"redrivePolicy": pv(`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:dlq","maxReceiveCount":5}`)})
	if len(q) != 1 || q[0].Value != "arn:aws:sqs:us-east-1:123456789012:dlq" {
		t.Errorf("queue redrive reference = %+v", q)
	}
	if len(References(tClusterParams, samples()[tClusterParams])) != 0 {
		t.Error("no references expected")
	}
	// Unique names.
	_, role := create(t, tRole, "r", samples()[tRole], testEnv)
	u := UniqueNames(tRole, testEnv, role)
	if len(u) != 1 || !strings.HasPrefix(u[0].Key, tRole+"|global|r-") || u[0].Code != "EntityAlreadyExists" {
		t.Errorf("role unique = %+v", u)
	}
	_, sg := create(t, tSG, "s", samples()[tSG], testEnv)
	if u := UniqueNames(tSG, testEnv, sg); len(u) != 1 || !strings.Contains(u[0].Message, "vpc-0123456789abcdef0") {
		t.Errorf("sg unique = %+v", u)
	}
	// Quotas.
	if q, ok := QuotaDefByCode("L-F678F1CE"); !ok || q.Default != 5 || q.Scope != "region" {
		t.Errorf("VPC quota = %+v", q)
	}
	_, rg := create(t, tReplicationGroup, "c", samples()[tReplicationGroup], testEnv)
	use := QuotaUsage(tReplicationGroup, testEnv, rg, nil)
	if len(use) != 1 || use[0].Amount != 2 || use[0].Code != "elasticache/L-DFE45DF3" {
		t.Errorf("cache node usage = %+v", use)
	}
	_, nlb := create(t, tLB, "n", resource.PropertyMap{"loadBalancerType": pv("network"), "subnets": pv([]string{"subnet-1"})}, testEnv)
	if use := QuotaUsage(tLB, testEnv, nlb, nil); len(use) != 1 || use[0].Code != "elasticloadbalancing/L-69A177A2" {
		t.Errorf("NLB usage = %+v", use)
	}
}

func TestDeleteCheck(t *testing.T) {
	_, out := create(t, tCluster, "db", samples()[tCluster], testEnv)
	if err := DeleteCheck(tCluster, "db", out); err != nil {
		t.Errorf("deletable cluster refused: %v", err)
	}
	out["deletionProtection"] = pv(true)
	if err := DeleteCheck(tCluster, "db", out); err == nil || !strings.Contains(err.Error(), "Cannot delete protected Cluster") {
		t.Errorf("protected cluster: %v", err)
	}
	out["deletionProtection"] = pv(false)
	delete(out, "finalSnapshotIdentifier")
	if err := DeleteCheck(tCluster, "db", out); err == nil || !strings.Contains(err.Error(), "final_snapshot_identifier") {
		t.Errorf("no final snapshot: %v", err)
	}
}

func TestProviderEnv(t *testing.T) {
	env, err := ProviderEnv(resource.PropertyMap{"region": pv("us-west-2"), "defaultTags": pv(`{"tags":{"fleet":"prod"}}`)}, DefaultEnv())
	if err != nil || env.Region != "us-west-2" || env.DefaultTags["fleet"] != "prod" {
		t.Fatalf("env = %+v, %v", env, err)
	}
	_, vpc := create(t, tVpc, "v", samples()[tVpc], env)
	if tags := stringMap(vpc, "tagsAll"); tags["fleet"] != "prod" || tags["cell"] != "a" {
		t.Errorf("tagsAll = %v", tags)
	}
	if _, err := ProviderEnv(resource.PropertyMap{"region": pv("moon-1")}, DefaultEnv()); err == nil {
		t.Error("bad region accepted")
	}
	if _, err := ProviderEnv(resource.PropertyMap{"allowedAccountIds": pv([]string{"999999999999"})}, DefaultEnv()); err == nil {
		t.Error("forbidden account accepted")
	}
}

func TestRegions(t *testing.T) {
	for _, tt := range []struct{ region, short string }{{"us-east-1", "use1"}, {"eu-west-2", "euw2"}, {"ap-southeast-1", "apse1"}, {"ap-northeast-1", "apne1"}, {"ca-central-1", "cac1"}} {
		if got := shortRegion(tt.region); got != tt.short {
			t.Errorf("shortRegion(%s) = %s", tt.region, got)
		}
	}
	if id, ok := ZoneID("us-east-1c"); !ok || id != "use1-az3" {
		t.Errorf("ZoneID = %s %v", id, ok)
	}
	if _, ok := ZoneID("us-east-1z"); ok {
		t.Error("us-east-1z accepted")
	}
	if len(Zones("xx-nowhere-9")) != 3 {
		t.Error("unknown region should have 3 zones")
	}
}
