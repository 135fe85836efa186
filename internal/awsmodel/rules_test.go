package awsmodel

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// ruleCase feeds one rule a violating input (and the same resource fixed),
// with whatever live resources the rule looks up created first.
type ruleCase struct {
	rule     string
	typ      string
	setup    func(t *testing.T, m *Mock)
	bad, ok  resource.PropertyMap
	env      Env
	contains string
	// op and old make the case an update (OpUpdate, the deployed
	// outputs); zero: a create.
	op  int
	old resource.PropertyMap
	// at is the date dated rules judge at (zero: they do not judge).
	at time.Time
}

func mustCreate(t *testing.T, m *Mock, typ, name string, in resource.PropertyMap) resource.PropertyMap {
	t.Helper()
	_, outs, err := m.NewResource(typ, name, in, "")
	if err != nil {
		t.Fatalf("creating %s %s: %v", typ, name, err)
	}
	return outs
}

func edgeDistribution(arn, event string) resource.PropertyMap {
	return resource.PropertyMap{
		"defaultCacheBehavior": pv(map[string]any{"lambdaFunctionAssociations": []any{map[string]any{"eventType": event, "lambdaArn": arn}}}),
	}
}

func ruleCases() []ruleCase {
	code := resource.NewArchiveProperty(mustArchive(map[string]any{"index.js": mustAsset("x")}))
	fn := func(name string, extra map[string]any) resource.PropertyMap {
		in := resource.PropertyMap{"name": pv(name), "role": pv("arn:aws:iam::123456789012:role/edge"), "runtime": pv("nodejs24.x"),
			"handler": pv("index.handler"), "publish": pv(true), "code": code, "timeout": pv(5), "memorySize": pv(128)}
		for k, v := range extra {
			in[resource.PropertyKey(k)] = pv(v)
		}
		return in
	}
	edgeCase := func(label string, extra map[string]any, event, contains string) ruleCase {
		name := "edge-" + label
		return ruleCase{rule: "lambda.edge-function", typ: tDistribution,
			setup: func(t *testing.T, m *Mock) {
				mustCreate(t, m, tFunction, name, fn(name, extra))
				mustCreate(t, m, tFunction, name+"-ok", fn(name+"-ok", nil))
			},
			bad:      edgeDistribution("arn:aws:lambda:us-east-1:123456789012:function:"+name+":1", event),
			ok:       edgeDistribution("arn:aws:lambda:us-east-1:123456789012:function:"+name+"-ok:1", event),
			contains: contains}
	}
	users := func(m *Mock, t *testing.T) {
		mustCreate(t, m, tCacheUser, "nopass", resource.PropertyMap{"userId": pv("nopass"), "userName": pv("default"), "engine": pv("valkey"),
			"accessString": pv("off -@all"), "authenticationMode": pv(map[string]any{"type": "no-password-required"})})
		mustCreate(t, m, tCacheUser, "withpass", resource.PropertyMap{"userId": pv("withpass"), "userName": pv("default"), "engine": pv("valkey"),
			"accessString": pv("off -@all"), "authenticationMode": pv(map[string]any{"type": "password", "passwords": []string{"0123456789abcdef0123"}})})
	}
	return []ruleCase{
		{rule: "ec2.sg-rule-description", typ: tIngress,
			bad:      resource.PropertyMap{"description": pv("from the cell's ALB")},
			ok:       resource.PropertyMap{"description": pv("from the ALB of cell-a (tasks: 8080)")},
			contains: "Invalid rule description"},
		{rule: "ec2.sg-description", typ: tSG,
			bad:      resource.PropertyMap{"description": pv("cell's ALB")},
			ok:       resource.PropertyMap{"description": pv("cellctl cell-a: ALB, HTTPS from CloudFront only & nothing else")},
			contains: "GroupDescription"},
		{rule: "tags.limits", typ: tVpc,
			bad: func() resource.PropertyMap {
				tags := map[string]string{}
				for i := 0; i < 51; i++ {
					tags[fmt.Sprintf("k%d", i)] = "v"
				}
				return resource.PropertyMap{"tags": pv(tags)}
			}(),
			ok:       resource.PropertyMap{"tags": pv(map[string]string{"cell": "a"})},
			contains: "maximum number of tags"},
		{rule: "tags.limits", typ: tLogGroup, bad: resource.PropertyMap{"tags": pv(map[string]string{"aws:cell": "a"})},
			ok: resource.PropertyMap{"tags": pv(map[string]string{"cell": "a"})}, contains: "reserved"},
		{rule: "tags.limits", typ: tRole, bad: resource.PropertyMap{"tags": pv(map[string]string{"k": strings.Repeat("v", 257)})},
			ok: resource.PropertyMap{"tags": pv(map[string]string{"k": strings.Repeat("v", 256)})}, contains: "at most 256"},
		{rule: "tags.limits", typ: tQueue, bad: resource.PropertyMap{"tags": pv(map[string]string{"a": "1"})},
			env: Env{DefaultTags: func() map[string]string {
				m := map[string]string{}
				for i := 0; i < 50; i++ {
					m[fmt.Sprintf("d%d", i)] = "v"
				}
				return m
			}()},
			contains: "defaultTags included"},
		{rule: "logs.retention-days", typ: tLogGroup,
			bad: resource.PropertyMap{"retentionInDays": pv(31)}, ok: resource.PropertyMap{"retentionInDays": pv(30)},
			contains: "Member must satisfy enum value set"},
		{rule: "rds.engine-version", typ: tCluster,
			bad:      resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("16.5")},
			ok:       resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("16")},
			contains: "Cannot find version 16.5 for aurora-postgresql"},
		{rule: "rds.engine-version", typ: tCluster,
			bad: resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("12")},
			ok:  resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("16.4")}, contains: "Cannot find version 12"},
		{rule: "rds.parameter-group-family", typ: tCluster,
			setup: func(t *testing.T, m *Mock) {
				mustCreate(t, m, tClusterParams, "pg15", resource.PropertyMap{"name": pv("pg15"), "family": pv("aurora-postgresql15")})
				mustCreate(t, m, tClusterParams, "pg16", resource.PropertyMap{"name": pv("pg16"), "family": pv("aurora-postgresql16")})
			},
			bad:      resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("16"), "dbClusterParameterGroupName": pv("pg15")},
			ok:       resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("16"), "dbClusterParameterGroupName": pv("pg16")},
			contains: "DBParameterGroupFamily aurora-postgresql16"},
		{rule: "rds.final-snapshot-identifier", typ: tCluster,
			bad: resource.PropertyMap{"finalSnapshotIdentifier": pv("cell-a--final-")}, ok: resource.PropertyMap{"finalSnapshotIdentifier": pv("cell-a-final-20261201t091500z")},
			contains: "FinalDBSnapshotIdentifier"},
		{rule: "rds.minor-pin-auto-upgrade", typ: tClusterInstance,
			setup: func(t *testing.T, m *Mock) {
				mustCreate(t, m, tCluster, "pinned", resource.PropertyMap{"clusterIdentifier": pv("pinned"), "engine": pv("aurora-postgresql"),
					"engineVersion": pv("16.4"), "masterUsername": pv("app"), "manageMasterUserPassword": pv(true)})
			},
			bad:      resource.PropertyMap{"clusterIdentifier": pv("pinned")},
			ok:       resource.PropertyMap{"clusterIdentifier": pv("pinned"), "autoMinorVersionUpgrade": pv(false)},
			contains: "pinned to 16.4"},
		{rule: "rds.data-api-availability", typ: tCluster,
			bad:      resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("15.2"), "enableHttpEndpoint": pv(true)},
			ok:       resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("15.3"), "enableHttpEndpoint": pv(true)},
			contains: "needs Aurora PostgreSQL 15.3 or later"},
		{rule: "rds.data-api-availability", typ: tCluster, env: Env{Region: "ap-southeast-4"},
			bad:      resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("16"), "enableHttpEndpoint": pv(true)},
			ok:       resource.PropertyMap{"engine": pv("aurora-postgresql"), "engineVersion": pv("16"), "enableHttpEndpoint": pv(false)},
			contains: "not available for Aurora PostgreSQL in ap-southeast-4"},
		{rule: "rds.data-api-instance-class", typ: tClusterInstance,
			setup: func(t *testing.T, m *Mock) {
				mustCreate(t, m, tCluster, "data-api", resource.PropertyMap{"clusterIdentifier": pv("data-api"), "engine": pv("aurora-postgresql"),
					"engineVersion": pv("16"), "masterUsername": pv("app"), "manageMasterUserPassword": pv(true), "enableHttpEndpoint": pv(true)})
			},
			bad:      resource.PropertyMap{"clusterIdentifier": pv("data-api"), "instanceClass": pv("db.t4g.medium")},
			ok:       resource.PropertyMap{"clusterIdentifier": pv("data-api"), "instanceClass": pv("db.r6g.large")},
			contains: "isn't supported on T DB instance classes"},
		{rule: "rds.data-api-on-restore", typ: tCluster,
			bad:      resource.PropertyMap{"engine": pv("aurora-postgresql"), "snapshotIdentifier": pv("cell-a-final"), "enableHttpEndpoint": pv(true)},
			ok:       resource.PropertyMap{"engine": pv("aurora-postgresql"), "enableHttpEndpoint": pv(true)},
			contains: "created from snapshotIdentifier"},
		{rule: "elasticache.engine-version", typ: tReplicationGroup,
			bad:      resource.PropertyMap{"engine": pv("valkey"), "engineVersion": pv("7.0"), "userGroupIds": pv([]string{"g"})},
			ok:       resource.PropertyMap{"engine": pv("valkey"), "engineVersion": pv("8.0"), "userGroupIds": pv([]string{"g"})},
			contains: "Cannot find version 7.0 for valkey"},
		{rule: "elasticache.engine-version", typ: tReplicationGroup,
			setup: func(t *testing.T, m *Mock) {
				mustCreate(t, m, tCacheUserGroup, "vg", resource.PropertyMap{"userGroupId": pv("vg"), "engine": pv("valkey")})
				mustCreate(t, m, tCacheUserGroup, "rg", resource.PropertyMap{"userGroupId": pv("rg"), "engine": pv("redis")})
			},
			bad:      resource.PropertyMap{"engine": pv("redis"), "engineVersion": pv("7.1"), "userGroupIds": pv([]string{"vg"})},
			ok:       resource.PropertyMap{"engine": pv("redis"), "engineVersion": pv("7.1"), "userGroupIds": pv([]string{"rg"})},
			contains: "engine REDIS"},
		{rule: "elasticache.valkey-group-authentication", typ: tCacheUserGroup,
			setup:    func(t *testing.T, m *Mock) { users(m, t) },
			bad:      resource.PropertyMap{"engine": pv("valkey"), "userIds": pv([]string{"nopass"})},
			ok:       resource.PropertyMap{"engine": pv("valkey"), "userIds": pv([]string{"withpass"})},
			contains: "authentication mechanism"},
		{rule: "elasticache.user-authentication", typ: tCacheUser,
			bad:      resource.PropertyMap{"userId": pv("cell-a-app"), "userName": pv("app"), "authenticationMode": pv(map[string]any{"type": "iam"})},
			ok:       resource.PropertyMap{"userId": pv("cell-a-app"), "userName": pv("cell-a-app"), "authenticationMode": pv(map[string]any{"type": "iam"})},
			contains: "identical"},
		{rule: "elasticache.user-authentication", typ: tCacheUser,
			bad:      resource.PropertyMap{"authenticationMode": pv(map[string]any{"type": "password", "passwords": []string{"short"}})},
			ok:       resource.PropertyMap{"authenticationMode": pv(map[string]any{"type": "password", "passwords": []string{strings.Repeat("x", 64)}})},
			contains: "16 to 128"},
		edgeCase("env", map[string]any{"environment": map[string]any{"variables": map[string]any{"A": "b"}}}, "origin-request", "environment variables"),
		edgeCase("timeout", map[string]any{"timeout": 31}, "origin-request", "30 seconds"),
		edgeCase("viewer-timeout", map[string]any{"timeout": 6}, "viewer-request", "5 seconds"),
		edgeCase("memory", map[string]any{"memorySize": 256}, "viewer-request", "128 MB"),
		edgeCase("arm", map[string]any{"architectures": []string{"arm64"}}, "origin-request", "x86_64"),
		edgeCase("layers", map[string]any{"layers": []string{"arn:aws:lambda:us-east-1:123456789012:layer:l:1"}}, "origin-request", "layers"),
		edgeCase("runtime", map[string]any{"runtime": "java21"}, "origin-request", "not supported by Lambda@Edge"),
		{rule: "lambda.edge-function", typ: tDistribution,
			bad:      edgeDistribution("arn:aws:lambda:us-west-2:123456789012:function:edge:1", "origin-request"),
			ok:       edgeDistribution("arn:aws:lambda:us-east-1:123456789012:function:edge:1", "origin-request"),
			contains: "region 'us-east-1'"},
		{rule: "lambda.edge-function", typ: tDistribution,
			bad:      edgeDistribution("arn:aws:lambda:us-east-1:123456789012:function:edge:$LATEST", "origin-request"),
			contains: "specific function version"},
		{rule: "cloudfront.aliases-certificate", typ: tDistribution,
			bad:      resource.PropertyMap{"aliases": pv([]string{"app.example.com"}), "viewerCertificate": pv(map[string]any{"cloudfrontDefaultCertificate": true})},
			contains: "trusted certificate"},
		{rule: "cloudfront.aliases-certificate", typ: tDistribution,
			setup: func(t *testing.T, m *Mock) {
				mustCreate(t, m, tCertificate, "viewer", resource.PropertyMap{"domainName": pv("app.example.com"),
					"subjectAlternativeNames": pv([]string{"*.app.example.com"}), "validationMethod": pv("DNS")})
			},
			bad: resource.PropertyMap{"aliases": pv([]string{"a.b.app.example.com"}),
				"viewerCertificate": pv(map[string]any{"acmCertificateArn": mockCertARN("viewer"), "sslSupportMethod": "sni-only"})},
			ok: resource.PropertyMap{"aliases": pv([]string{"app.example.com", "t1.app.example.com"}),
				"viewerCertificate": pv(map[string]any{"acmCertificateArn": mockCertARN("viewer"), "sslSupportMethod": "sni-only"})},
			contains: "doesn't cover"},
		{rule: "cloudfront.https-origin-certificate", typ: tDistribution,
			bad: resource.PropertyMap{"origins": pv([]any{map[string]any{"originId": "cell-a", "domainName": "cell-a-alb-1.us-east-1.elb.amazonaws.com",
				"customOriginConfig": map[string]any{"originProtocolPolicy": "https-only"}}})},
			ok: resource.PropertyMap{"origins": pv([]any{map[string]any{"originId": "cell-a", "domainName": "cell-a.cells.example.com",
				"customOriginConfig": map[string]any{"originProtocolPolicy": "https-only"}}})},
			contains: "502"},
		{rule: "route53.record", typ: tRecord,
			bad: resource.PropertyMap{"name": pv("cell-a.cells.example.com"), "ttl": pv(300),
				"aliases": pv([]any{map[string]any{"name": "x.elb.amazonaws.com", "zoneId": "Z35SXDOTRQ7X7K"}})},
			ok: resource.PropertyMap{"name": pv("cell-a.cells.example.com"),
				"aliases": pv([]any{map[string]any{"name": "x.elb.amazonaws.com", "zoneId": "Z35SXDOTRQ7X7K"}})},
			contains: "must not specify TTL"},
		{rule: "route53.record", typ: tRecord,
			bad:      resource.PropertyMap{"name": pv(strings.Repeat("a", 64) + ".example.com"), "ttl": pv(60), "records": pv([]string{"x"})},
			ok:       resource.PropertyMap{"name": pv(strings.Repeat("a", 63) + ".example.com"), "ttl": pv(60), "records": pv([]string{"x"})},
			contains: "longer than 63"},
		{rule: "acm.domain-names", typ: tCertificate,
			bad:      resource.PropertyMap{"domainName": pv(strings.Repeat("a", 50) + ".cells.example.com")},
			ok:       resource.PropertyMap{"domainName": pv("cell-a.cells.example.com")},
			contains: "less than or equal to 64"},
		{rule: "acm.domain-names", typ: tCertificate,
			bad:      resource.PropertyMap{"domainName": pv("app.example.com"), "subjectAlternativeNames": pv([]string{"a.*.example.com"})},
			ok:       resource.PropertyMap{"domainName": pv("app.example.com"), "subjectAlternativeNames": pv([]string{"*.app.example.com"})},
			contains: "leftmost label"},
	}
}

// nameCases feeds every name rule a name one character too long and one
// with a character outside its set.
func nameCases() []ruleCase {
	var out []ruleCase
	for _, n := range nameRules {
		id := "names." + n.typ + "." + n.prop
		long := "a" + strings.Repeat("b", n.max)
		out = append(out,
			ruleCase{rule: id, typ: n.typ, bad: resource.PropertyMap{resource.PropertyKey(n.prop): pv(long)},
				ok: resource.PropertyMap{resource.PropertyKey(n.prop): pv(long[:n.max])}, contains: fmt.Sprintf("at most %d characters", n.max)},
			ruleCase{rule: id, typ: n.typ, bad: resource.PropertyMap{resource.PropertyKey(n.prop): pv(badChar(n.typ))},
				contains: "is invalid"})
	}
	return out
}

// badChar is a name with a character outside the rule's set (alarm names
// take any UTF-8 but control characters).
func badChar(typ string) string {
	if typ == tAlarm {
		return "cell-a\x01"
	}
	return "cell-a's"
}

// cacheIAMCases: an IAM-authenticated user in a Redis OSS 6.x cache, and a
// user whose name is not its id.
func cacheIAMCases() []ruleCase {
	setup := func(t *testing.T, m *Mock) {
		mustCreate(t, m, tCacheUser, "app", resource.PropertyMap{"userId": pv("shop-cell-a-app"), "userName": pv("shop-cell-a-app"),
			"engine": pv("redis"), "accessString": pv("on ~* +@all"), "authenticationMode": pv(map[string]any{"type": "iam"})})
		mustCreate(t, m, tCacheUserGroup, "users", resource.PropertyMap{"userGroupId": pv("shop-cell-a-users"), "engine": pv("redis"),
			"userIds": pv([]string{"shop-cell-a-app"})})
	}
	rg := func(v string) resource.PropertyMap {
		return resource.PropertyMap{"description": pv("c"), "engine": pv("redis"), "engineVersion": pv(v), "nodeType": pv("cache.r7g.large"),
			"userGroupIds": pv([]string{"shop-cell-a-users"})}
	}
	iam := func(id, name string) resource.PropertyMap {
		return resource.PropertyMap{"userId": pv(id), "userName": pv(name), "authenticationMode": pv(map[string]any{"type": "iam"})}
	}
	return []ruleCase{
		{rule: "elasticache.iam-auth-engine-version", typ: tReplicationGroup, setup: setup, bad: rg("6.2"), ok: rg("7.0"), contains: "needs Redis OSS 7.0 or later"},
		{rule: "elasticache.iam-user-name-equals-id", typ: tCacheUser, bad: iam("shop-cell-a-app", "app"), ok: iam("shop-cell-a-app", "shop-cell-a-app"), contains: "must equal its user id"},
	}
}

func mockCertARN(name string) string {
	m := NewMock(Env{})
	_, outs, _ := m.NewResource(tCertificate, name, resource.PropertyMap{"domainName": pv("x.example.com")}, "")
	return str(outs, "arn")
}

// TestEveryRuleRefusesAViolation feeds each rule an input it must refuse
// (with AWS's code and message) and the fixed input it must accept.
func TestEveryRuleRefusesAViolation(t *testing.T) {
	covered := map[string]bool{}
	cases := append(append(ruleCases(), nameCases()...), cdCases()...)
	cases = append(append(cases, elbConditionCases()...), dashboardCases()...)
	cases = append(append(cases, zoneCases()...), cacheIAMCases()...)
	cases = append(append(cases, kmsKeyCases()...), runtimeCases()...)
	cases = append(append(cases, subnetCases(t)...), combinationCases()...)
	cases = append(cases, s3PolicyCases()...)
	for i, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.rule, i), func(t *testing.T) {
			rule, ok := RuleByID(tc.rule)
			if !ok {
				t.Fatalf("no rule %s", tc.rule)
			}
			if !rule.Applies(tc.typ) {
				t.Fatalf("rule %s does not apply to %s", tc.rule, tc.typ)
			}
			if !strings.Contains(rule.Doc, " ") || len(rule.Doc) < 20 {
				t.Errorf("rule %s has no citation", tc.rule)
			}
			m := NewMock(Env{})
			if tc.setup != nil {
				tc.setup(t, m)
			}
			msg := rule.check(ruleInput{typ: tc.typ, name: "r", in: tc.bad, env: tc.env.normalized(), cloud: m, op: tc.op, old: tc.old, at: tc.at})
			if !strings.Contains(msg, tc.contains) {
				t.Fatalf("violating input: got %q, want a message containing %q", msg, tc.contains)
			}
			if tc.ok != nil {
				if msg := rule.check(ruleInput{typ: tc.typ, name: "r", in: tc.ok, env: tc.env.normalized(), cloud: m, op: tc.op, old: tc.old, at: tc.at}); msg != "" {
					t.Fatalf("fixed input refused: %s", msg)
				}
			}
			err := checkRules(ruleInput{typ: tc.typ, name: "r", in: tc.bad, env: tc.env.normalized(), cloud: m, op: tc.op, old: tc.old, at: tc.at})
			var ae *APIError
			switch {
			case rule.AuditOnly && err != nil:
				t.Fatalf("audit-only rule refused at the API: %v", err)
			case !rule.AuditOnly && !errors.As(err, &ae):
				t.Fatalf("CheckRules: got %v, want an *APIError", err)
			case !rule.AuditOnly && ae.Code != rule.code(ruleInput{typ: tc.typ, in: tc.bad, env: tc.env.normalized(), op: tc.op}):
				t.Fatalf("code %s, want %s", ae.Code, rule.code(ruleInput{typ: tc.typ, in: tc.bad, env: tc.env.normalized(), op: tc.op}))
			}
		})
		covered[tc.rule] = true
	}
	for _, r := range Rules() {
		if !covered[r.ID] {
			t.Errorf("rule %s has no test case feeding it a violating input", r.ID)
		}
	}
}

// TestRulesRefuseInTheMocks: a resource breaking a rule fails the mocks'
// NewResource with the AWS error, as it fails in the simulator and in AWS.
func TestRulesRefuseInTheMocks(t *testing.T) {
	m := NewMock(Env{})
	_, _, err := m.NewResource(tIngress, "service-in-alb", resource.PropertyMap{
		"securityGroupId": pv("sg-0123456789abcdef0"), "ipProtocol": pv("tcp"), "fromPort": pv(8080), "toPort": pv(8080),
		"referencedSecurityGroupId": pv("sg-0fedcba9876543210"), "description": pv("from the cell's ALB"),
	}, "")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != "InvalidParameterValue" || ae.Operation != "AuthorizeSecurityGroupIngress" {
		t.Fatalf("got %v, want InvalidParameterValue from AuthorizeSecurityGroupIngress", err)
	}
	if !strings.Contains(err.Error(), "api error InvalidParameterValue: Invalid rule description") {
		t.Fatalf("message shape: %v", err)
	}
}

func TestAuditSecurityGroupRuleWeights(t *testing.T) {
	pl := regionOf("us-east-1").cloudfrontPrefixList
	rule := func(name string, in map[string]any) AuditResource {
		m := resource.NewPropertyMapFromMap(in)
		m["securityGroupId"] = pv("sg-1")
		m["ipProtocol"] = pv("tcp")
		return AuditResource{Stack: "cell-a", Type: tIngress, Name: name, ID: name, Inputs: m, Outputs: m}
	}
	rs := []AuditResource{rule("cloudfront", map[string]any{"prefixListId": pl, "fromPort": 443, "toPort": 443})}
	for i := 0; i < 5; i++ {
		rs = append(rs, rule(fmt.Sprintf("cidr-%d", i), map[string]any{"cidrIpv4": fmt.Sprintf("10.0.%d.0/24", i), "fromPort": 443, "toPort": 443}))
	}
	if v := Audit(rs); len(v) != 0 {
		t.Fatalf("55 + 5 = 60 rules fit the quota; got %v", v)
	}
	rs = append(rs, rule("cidr-5", map[string]any{"cidrIpv4": "10.0.5.0/24", "fromPort": 443, "toPort": 443}))
	v := Audit(rs)
	if len(v) != 1 || v[0].Code != "RulesPerSecurityGroupLimitExceeded" || !strings.Contains(v[0].Message, "61") {
		t.Fatalf("56+5 rules: got %v, want one RulesPerSecurityGroupLimitExceeded for 61 of 60", v)
	}
}

func TestAuditFlagsUnmodelledTypes(t *testing.T) {
	v := Audit([]AuditResource{
		{Stack: "cell-a", Type: "aws:sns/topic:Topic", Name: "alerts"},
		{Stack: "cell-a", Type: "cellctl:index:Cell", Name: "cell-a"},
		{Stack: "cell-a", Type: "pulumi:providers:aws", Name: "p"},
	})
	if len(v) != 1 || v[0].Rule != "awsmodel.known-type" || v[0].Name != "alerts" {
		t.Fatalf("got %v, want one awsmodel.known-type finding for the SNS topic", v)
	}
}

func TestCertificateCovers(t *testing.T) {
	names := []string{"app.example.com", "*.app.example.com"}
	for host, want := range map[string]bool{
		"app.example.com": true, "t1.app.example.com": true, "T1.App.Example.com.": true,
		"a.b.app.example.com": false, "example.com": false, "xapp.example.com": false,
	} {
		if got := CertificateCovers(names, host); got != want {
			t.Errorf("%s: got %v, want %v", host, got, want)
		}
	}
}
