package sim

import (
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

const (
	tIngress   = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
	tSG        = "aws:ec2/securityGroup:SecurityGroup"
	tLogGroup  = "aws:cloudwatch/logGroup:LogGroup"
	tCluster   = "aws:rds/cluster:Cluster"
	tCacheUser = "aws:elasticache/user:User"
	tUserGroup = "aws:elasticache/userGroup:UserGroup"
	tRG        = "aws:elasticache/replicationGroup:ReplicationGroup"
	tCert      = "aws:acm/certificate:Certificate"
	tCertValid = "aws:acm/certificateValidation:CertificateValidation"
	tRecord    = "aws:route53/record:Record"
	tDist      = "aws:cloudfront/distribution:Distribution"
)

// wantAWSError checks the shape pulumi-aws gives an AWS API error:
// "creating <noun> (<name>): operation error <Service>: <Op>, https
// response error StatusCode: 400, RequestID: …, api error <Code>: <msg>".
func wantAWSError(t *testing.T, err error, op, code, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want AWS error %s, got none", code)
	}
	e := err.Error()
	for _, part := range []string{"operation error ", ": " + op + ", https response error StatusCode: 4", "RequestID: ", "api error " + code + ": ", msg} {
		if !strings.Contains(e, part) {
			t.Fatalf("error %q: want it to contain %q", e, part)
		}
	}
}

// TestRulesRefusedWithAWSErrors: the simulator refuses what AWS refuses,
// with AWS's error code and message, for each rule the programs rely on.
func TestRulesRefusedWithAWSErrors(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	vpc, _ := h.network("net", "10.1.0.0/16", 2)
	sg := h.create(tSG, "alb", pm("vpcId", vpc.id, "description", "ALB, HTTPS from CloudFront only"))
	other := h.create(tSG, "other", pm("vpcId", vpc.id, "description", "service tasks"))

	t.Run("security group rule description", func(t *testing.T) {
		_, err := h.tryCreate(tIngress, "bad-desc", pm("securityGroupId", sg.id, "ipProtocol", "tcp", "fromPort", 8080, "toPort", 8080,
			"referencedSecurityGroupId", other.id, "description", "from the cell's ALB"))
		wantAWSError(t, err, "AuthorizeSecurityGroupIngress", "InvalidParameterValue", "Invalid rule description")
	})
	t.Run("security group description", func(t *testing.T) {
		_, err := h.tryCreate(tSG, "bad-sg", pm("vpcId", vpc.id, "description", "the cell's ALB"))
		wantAWSError(t, err, "CreateSecurityGroup", "InvalidParameterValue", "GroupDescription is invalid")
	})
	t.Run("rules per security group, prefix list weighted", func(t *testing.T) {
		h.create(tIngress, "cloudfront", pm("securityGroupId", sg.id, "ipProtocol", "tcp", "fromPort", 443, "toPort", 443,
			"prefixListId", "pl-3b927c52", "description", "HTTPS from CloudFront"))
		for i := 0; i < 5; i++ {
			h.create(tIngress, "cidr-"+string(rune('a'+i)), pm("securityGroupId", sg.id, "ipProtocol", "tcp", "fromPort", 8000+i, "toPort", 8000+i,
				"cidrIpv4", "10.9.0.0/16"))
		}
		_, err := h.tryCreate(tIngress, "one-too-many", pm("securityGroupId", sg.id, "ipProtocol", "tcp", "fromPort", 9000, "toPort", 9000,
			"cidrIpv4", "10.9.0.0/16"))
		wantAWSError(t, err, "AuthorizeSecurityGroupIngress", "RulesPerSecurityGroupLimitExceeded", "The maximum number of rules per security group has been reached")
	})
	t.Run("log retention", func(t *testing.T) {
		// pulumi-aws checks this one itself, before AWS sees it.
		_, err := h.tryCreate(tLogGroup, "logs", pm("name", "/cellctl/cell-a/x", "retentionInDays", 31))
		wantErr(t, err, "check failures: retentionInDays: expected retentionInDays to be one of", "got 31")
	})
	t.Run("tags", func(t *testing.T) {
		_, err := h.tryCreate(tQueue, "tagged", pm("tags", map[string]any{"aws:owner": "me"}))
		wantAWSError(t, err, "CreateQueue", "TagLimitExceeded", "reserved for AWS use")
	})
	t.Run("aurora engine version", func(t *testing.T) {
		_, err := h.tryCreate(tCluster, "db", pm("clusterIdentifier", "cell-a-db", "engine", "aurora-postgresql", "engineVersion", "16.99",
			"masterUsername", "cellctl", "manageMasterUserPassword", true))
		wantAWSError(t, err, "CreateDBCluster", "InvalidParameterCombination", "Cannot find version 16.99 for aurora-postgresql")
	})
	t.Run("valkey user group needs authenticated users", func(t *testing.T) {
		h.create(tCacheUser, "open-default", pm("userId", "open-default", "userName", "default", "engine", "valkey",
			"accessString", "off -@all", "authenticationMode", map[string]any{"type": "no-password-required"}))
		_, err := h.tryCreate(tUserGroup, "users", pm("userGroupId", "cell-a-users", "engine", "valkey", "userIds", []any{"open-default"}))
		wantAWSError(t, err, "CreateUserGroup", "InvalidParameterCombination", "authentication mechanism")
	})
	t.Run("valkey version supports RBAC", func(t *testing.T) {
		h.create(tCacheUser, "locked-default", pm("userId", "locked-default", "userName", "default", "engine", "valkey",
			"accessString", "off -@all", "authenticationMode", map[string]any{"type": "password", "passwords": []any{"0123456789abcdef0123"}}))
		h.create(tUserGroup, "group", pm("userGroupId", "g", "engine", "valkey", "userIds", []any{"locked-default"}))
		_, err := h.tryCreate(tRG, "cache", pm("description", "c", "engine", "valkey", "engineVersion", "7.0", "nodeType", "cache.t4g.small",
			"userGroupIds", []any{"g"}))
		wantAWSError(t, err, "CreateReplicationGroup", "InvalidParameterCombination", "Cannot find version 7.0 for valkey")
	})
	t.Run("certificate domain length", func(t *testing.T) {
		_, err := h.tryCreate(tCert, "cert", pm("domainName", strings.Repeat("a", 60)+".example.com", "validationMethod", "DNS"))
		wantAWSError(t, err, "RequestCertificate", "ValidationException", "Member must have length less than or equal to 64")
	})
	t.Run("alias record with a TTL", func(t *testing.T) {
		_, err := h.tryCreate(tRecord, "dns", pm("zoneId", "Z0123456789ABCDEFGHIJ", "name", "cell-a.cells.example.com", "type", "A", "ttl", 60,
			"aliases", []any{map[string]any{"name": "x.elb.amazonaws.com", "zoneId": "Z35SXDOTRQ7X7K", "evaluateTargetHealth": true}}))
		wantAWSError(t, err, "ChangeResourceRecordSets", "InvalidChangeBatch", "must not specify TTL")
	})
}

// TestCertificateValidatesThroughItsRecord: ACM hands out a deterministic
// CNAME; the validation waits for it in Route 53 and fails without it.
func TestCertificateValidatesThroughItsRecord(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	cert := h.create(tCert, "cert", pm("domainName", "cell-a.cells.example.com", "validationMethod", "DNS"))
	if !strings.HasPrefix(cert.id, "arn:aws:acm:us-east-1:") || s(cert.out, "status") != "PENDING_VALIDATION" {
		t.Fatalf("certificate %s %v", cert.id, cert.out["status"])
	}
	opts := cert.out["domainValidationOptions"].ArrayValue()
	if len(opts) != 1 {
		t.Fatalf("validation options %v", opts)
	}
	opt := opts[0].ObjectValue()
	name, value := s(opt, "resourceRecordName"), s(opt, "resourceRecordValue")
	if !strings.HasSuffix(name, ".cell-a.cells.example.com.") || !strings.HasSuffix(value, ".acm-validations.aws.") || s(opt, "resourceRecordType") != "CNAME" {
		t.Fatalf("validation record %s → %s", name, value)
	}
	_, err := h.tryCreate(tCertValid, "validated", pm("certificateArn", cert.id))
	wantErr(t, err, "timeout while waiting for state to become 'ISSUED'", strings.TrimSuffix(name, "."))

	rec := h.create(tRecord, "validation", pm("zoneId", "Z0123456789ABCDEFGHIJ", "name", name, "type", "CNAME", "ttl", 300, "records", []any{value}))
	if s(rec.out, "fqdn") != strings.TrimSuffix(name, ".") {
		t.Errorf("fqdn %q", s(rec.out, "fqdn"))
	}
	_, err = h.tryCreate(tCertValid, "wrong-fqdns", pm("certificateArn", cert.id, "validationRecordFqdns", []any{"_other.cell-a.cells.example.com"}))
	wantErr(t, err, "missing cell-a.cells.example.com DNS validation record")
	v := h.create(tCertValid, "validated", pm("certificateArn", cert.id, "validationRecordFqdns", []any{s(rec.out, "fqdn")}))
	if s(v.out, "certificateArn") != cert.id {
		t.Errorf("validation %v", v.out)
	}
	if rd := h.read(cert); s(rd.Outputs, "status") != "ISSUED" || s(rd.Outputs, "notAfter") == "" {
		t.Errorf("a validated certificate reads %v, want ISSUED with a validity", rd.Outputs["status"])
	}
	// The same record twice in a zone is refused.
	_, err = h.tryCreate(tRecord, "validation-again", pm("zoneId", "Z0123456789ABCDEFGHIJ", "name", name, "type", "CNAME", "ttl", 300, "records", []any{value}))
	wantAWSError(t, err, "ChangeResourceRecordSets", "InvalidChangeBatch", "already exists")
}

// TestDistributionAliasesNeedACoveringCertificate.
func TestDistributionAliasesNeedACoveringCertificate(t *testing.T) {
	h := newHarness(t, "router", "us-east-1")
	cert := h.create(tCert, "viewer", pm("domainName", "app.example.com", "subjectAlternativeNames", []any{"*.app.example.com"}, "validationMethod", "DNS"))
	dist := func(aliases []any, vc map[string]any) resource.PropertyMap {
		return pm("enabled", true, "aliases", aliases,
			"origins", []any{map[string]any{"originId": "cell-a", "domainName": "cell-a.cells.example.com",
				"customOriginConfig": map[string]any{"httpPort": 80, "httpsPort": 443, "originProtocolPolicy": "https-only", "originSslProtocols": []any{"TLSv1.2"}}}},
			"defaultCacheBehavior", map[string]any{"targetOriginId": "cell-a", "viewerProtocolPolicy": "https-only",
				"allowedMethods": []any{"GET", "HEAD"}, "cachedMethods": []any{"GET", "HEAD"}, "cachePolicyId": "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"},
			"restrictions", map[string]any{"geoRestriction": map[string]any{"restrictionType": "none"}},
			"viewerCertificate", vc)
	}
	_, err := h.tryCreate(tDist, "no-cert", dist([]any{"app.example.com"}, map[string]any{"cloudfrontDefaultCertificate": true}))
	wantAWSError(t, err, "CreateDistributionWithTags", "InvalidViewerCertificate", "you must attach a trusted certificate")
	_, err = h.tryCreate(tDist, "uncovered", dist([]any{"a.b.app.example.com"}, map[string]any{"acmCertificateArn": cert.id, "sslSupportMethod": "sni-only"}))
	wantAWSError(t, err, "CreateDistributionWithTags", "InvalidViewerCertificate", "doesn't cover the alternate domain name")
	_, err = h.tryCreate(tDist, "missing-cert", dist([]any{"app.example.com"}, map[string]any{
		"acmCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000", "sslSupportMethod": "sni-only"}))
	wantAWSError(t, err, "CreateDistributionWithTags", "InvalidViewerCertificate", "The specified SSL certificate doesn't exist")
	h.create(tDist, "ok", dist([]any{"app.example.com", "acme.app.example.com"}, map[string]any{"acmCertificateArn": cert.id, "sslSupportMethod": "sni-only"}))
}

// TestFinalSnapshotIdentifiersAreUnique: a final snapshot outlives its
// cluster; a second delete naming the same identifier fails, as in AWS.
func TestFinalSnapshotIdentifiersAreUnique(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	db := func(name, snapshot string) *res {
		return h.create(tCluster, name, pm("clusterIdentifier", name, "engine", "aurora-postgresql", "engineVersion", "16",
			"masterUsername", "cellctl", "manageMasterUserPassword", true, "finalSnapshotIdentifier", snapshot))
	}
	if err := h.delete(db("cell-a-db", "cell-a-final")); err != nil {
		t.Fatal(err)
	}
	snaps, err := h.cloud.Snapshots()
	if err != nil || len(snaps) != 1 || snaps[0].Identifier != "cell-a-final" || snaps[0].Region != "us-east-1" {
		t.Fatalf("snapshots %+v %v", snaps, err)
	}
	err = h.delete(db("cell-a-db", "cell-a-final"))
	wantAWSError(t, err, "DeleteDBCluster", "DBClusterSnapshotAlreadyExistsFault", "one with the identifier cell-a-final already exists")
	// The recreated cluster is still there; a unique identifier deletes it.
	again := db("cell-a-db-2", "cell-a-final-20261201t091500z")
	if err := h.delete(again); err != nil {
		t.Fatal(err)
	}
}

// TestRefreshOfHealthyCacheUsersAndPatchedAuroraSettles: a refresh of
// unchanged resources reports no input change — ElastiCache users (AWS
// never returns passwords, and reports a passwordCount nobody set) and an
// Aurora cluster pinned to a major that AWS patched to a newer minor.
func TestRefreshOfHealthyCacheUsersAndPatchedAuroraSettles(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	users := []*res{
		h.create(tCacheUser, "app", pm("userId", "cell-a-app", "userName", "cell-a-app", "engine", "valkey", "accessString", "on ~* +@all",
			"authenticationMode", map[string]any{"type": "iam"})),
		h.create(tCacheUser, "default", resource.PropertyMap{"userId": resource.NewStringProperty("cell-a-default"),
			"userName": resource.NewStringProperty("default"), "engine": resource.NewStringProperty("valkey"),
			"accessString": resource.NewStringProperty("off -@all"),
			"authenticationMode": resource.NewObjectProperty(resource.PropertyMap{"type": resource.NewStringProperty("password"),
				"passwords": resource.NewArrayProperty([]resource.PropertyValue{secretString("0123456789abcdef0123456789abcdef")})})}),
	}
	for _, u := range users {
		rd := h.read(u)
		if d := h.diffInputs(u, rd.Inputs); d.Changes != 0 && len(d.ChangedKeys) > 0 {
			t.Errorf("refresh of %s: changed %v (inputs %v)", u.name, d.ChangedKeys, rd.Inputs)
		}
	}
	db := h.create(tCluster, "db", pm("clusterIdentifier", "cell-a-db", "engine", "aurora-postgresql", "engineVersion", "16",
		"masterUsername", "cellctl", "manageMasterUserPassword", true))
	if _, err := h.cloud.Edit("cell-a", db.id, "engineVersion", `"16.6"`); err != nil {
		t.Fatal(err)
	}
	rd := h.read(db)
	if got := s(rd.Inputs, "engineVersion"); got != "16" {
		t.Errorf("after AWS patched the cluster to 16.6, refresh reports engineVersion %q: AWS's patching would show as drift", got)
	}
	// A real out-of-band downgrade of the major still shows.
	h.cloud.Edit("cell-a", db.id, "engineVersion", `"15.8"`)
	if got := s(h.read(db).Inputs, "engineVersion"); got != "15.8" {
		t.Errorf("an engine change outside the pinned major must show as drift, got %q", got)
	}
}

// TestListenerNeedsAnExistingCertificate: an ALB refuses a certificate its
// account and region do not have.
func TestListenerNeedsAnExistingCertificate(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	_, subnets := h.network("net", "10.1.0.0/16", 2)
	lb := h.create("aws:lb/loadBalancer:LoadBalancer", "alb", pm("loadBalancerType", "application", "subnets", []any{subnets[0].id, subnets[1].id}))
	listener := func(name, cert string) (*res, error) {
		return h.tryCreate("aws:lb/listener:Listener", name, pm("loadBalancerArn", lb.id, "port", 443, "protocol", "HTTPS", "certificateArn", cert,
			"defaultActions", []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "421"}}}))
	}
	_, err := listener("https", "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000")
	wantAWSError(t, err, "CreateListener", "CertificateNotFound", "Certificate 'arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000' not found")
	cert := h.create(tCert, "cert", pm("domainName", "cell-a.cells.example.com", "validationMethod", "DNS"))
	if _, err := listener("https", cert.id); err != nil {
		t.Fatal(err)
	}
}

// TestSkipDestroyLeavesTheFunctionInTheCloud: pulumi-aws only forgets a
// function with skipDestroy; the simulated cloud keeps it, as AWS does.
func TestSkipDestroyLeavesTheFunctionInTheCloud(t *testing.T) {
	h := newHarness(t, "router", "us-east-1")
	role := h.create(tRole, "edge-role", pm("assumeRolePolicy", assumeRole))
	code, err := newArchive(map[string]string{"index.js": "exports.handler=async()=>({})"})
	if err != nil {
		t.Fatal(err)
	}
	fn := h.create(tFn, "edge", resource.PropertyMap{"role": role.out["arn"], "runtime": resource.NewStringProperty("nodejs20.x"),
		"handler": resource.NewStringProperty("index.handler"), "publish": resource.NewBoolProperty(true), "code": code,
		"skipDestroy": resource.NewBoolProperty(true)})
	if err := h.delete(fn); err != nil {
		t.Fatal(err)
	}
	live, err := h.cloud.Resources(Filter{Type: tFn})
	if err != nil || len(live) != 1 || !live[0].Abandoned {
		t.Fatalf("after a skipDestroy delete: %+v %v", live, err)
	}
}
