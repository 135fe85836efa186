package provider_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
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
	h := simtest.New(t, "cell-a", "us-east-1")
	vpc, _ := h.Network("net", "10.1.0.0/16", 2)
	sg := h.Create(tSG, "alb", simtest.PM("vpcId", vpc.ID, "description", "ALB, HTTPS from CloudFront only"))
	other := h.Create(tSG, "other", simtest.PM("vpcId", vpc.ID, "description", "service tasks"))

	t.Run("security group rule description", func(t *testing.T) {
		_, err := h.TryCreate(tIngress, "bad-desc", simtest.PM("securityGroupId", sg.ID, "ipProtocol", "tcp", "fromPort", 8080, "toPort", 8080,
			"referencedSecurityGroupId", other.ID, "description", "from the cell's ALB"))
		wantAWSError(t, err, "AuthorizeSecurityGroupIngress", "InvalidParameterValue", "Invalid rule description")
	})
	t.Run("security group description", func(t *testing.T) {
		_, err := h.TryCreate(tSG, "bad-sg", simtest.PM("vpcId", vpc.ID, "description", "the cell's ALB"))
		wantAWSError(t, err, "CreateSecurityGroup", "InvalidParameterValue", "GroupDescription is invalid")
	})
	t.Run("rules per security group, prefix list weighted", func(t *testing.T) {
		h.Create(tIngress, "cloudfront", simtest.PM("securityGroupId", sg.ID, "ipProtocol", "tcp", "fromPort", 443, "toPort", 443,
			"prefixListId", "pl-3b927c52", "description", "HTTPS from CloudFront"))
		for i := 0; i < 5; i++ {
			h.Create(tIngress, "cidr-"+string(rune('a'+i)), simtest.PM("securityGroupId", sg.ID, "ipProtocol", "tcp", "fromPort", 8000+i, "toPort", 8000+i,
				"cidrIpv4", "10.9.0.0/16"))
		}
		_, err := h.TryCreate(tIngress, "one-too-many", simtest.PM("securityGroupId", sg.ID, "ipProtocol", "tcp", "fromPort", 9000, "toPort", 9000,
			"cidrIpv4", "10.9.0.0/16"))
		wantAWSError(t, err, "AuthorizeSecurityGroupIngress", "RulesPerSecurityGroupLimitExceeded", "The maximum number of rules per security group has been reached")
	})
	t.Run("log retention", func(t *testing.T) {
		// pulumi-aws checks this one itself, before AWS sees it.
		_, err := h.TryCreate(tLogGroup, "logs", simtest.PM("name", "/cellctl/cell-a/x", "retentionInDays", 31))
		simtest.WantErr(t, err, "check failures: retentionInDays: expected retentionInDays to be one of", "got 31")
	})
	t.Run("tags", func(t *testing.T) {
		_, err := h.TryCreate(simtest.TQueue, "tagged", simtest.PM("tags", map[string]any{"aws:owner": "me"}))
		wantAWSError(t, err, "CreateQueue", "TagLimitExceeded", "reserved for AWS use")
	})
	t.Run("aurora engine version", func(t *testing.T) {
		_, err := h.TryCreate(tCluster, "db", simtest.PM("clusterIdentifier", "cell-a-db", "engine", "aurora-postgresql", "engineVersion", "16.99",
			"masterUsername", "cellctl", "manageMasterUserPassword", true))
		wantAWSError(t, err, "CreateDBCluster", "InvalidParameterCombination", "Cannot find version 16.99 for aurora-postgresql")
	})
	t.Run("valkey user group needs authenticated users", func(t *testing.T) {
		h.Create(tCacheUser, "open-default", simtest.PM("userId", "open-default", "userName", "default", "engine", "valkey",
			"accessString", "off -@all", "authenticationMode", map[string]any{"type": "no-password-required"}))
		_, err := h.TryCreate(tUserGroup, "users", simtest.PM("userGroupId", "cell-a-users", "engine", "valkey", "userIds", []any{"open-default"}))
		wantAWSError(t, err, "CreateUserGroup", "InvalidParameterCombination", "authentication mechanism")
	})
	t.Run("valkey version supports RBAC", func(t *testing.T) {
		h.Create(tCacheUser, "locked-default", simtest.PM("userId", "locked-default", "userName", "default", "engine", "valkey",
			"accessString", "off -@all", "authenticationMode", map[string]any{"type": "password", "passwords": []any{"0123456789abcdef0123"}}))
		h.Create(tUserGroup, "group", simtest.PM("userGroupId", "g", "engine", "valkey", "userIds", []any{"locked-default"}))
		_, err := h.TryCreate(tRG, "cache", simtest.PM("description", "c", "engine", "valkey", "engineVersion", "7.0", "nodeType", "cache.t4g.small",
			"userGroupIds", []any{"g"}))
		wantAWSError(t, err, "CreateReplicationGroup", "InvalidParameterCombination", "Cannot find version 7.0 for valkey")
	})
	t.Run("certificate domain length", func(t *testing.T) {
		_, err := h.TryCreate(tCert, "cert", simtest.PM("domainName", strings.Repeat("a", 60)+".example.com", "validationMethod", "DNS"))
		wantAWSError(t, err, "RequestCertificate", "ValidationException", "Member must have length less than or equal to 64")
	})
	t.Run("alias record with a TTL", func(t *testing.T) {
		_, err := h.TryCreate(tRecord, "dns", simtest.PM("zoneId", "Z0123456789ABCDEFGHIJ", "name", "cell-a.cells.example.com", "type", "A", "ttl", 60,
			"aliases", []any{map[string]any{"name": "x.elb.amazonaws.com", "zoneId": "Z35SXDOTRQ7X7K", "evaluateTargetHealth": true}}))
		wantAWSError(t, err, "ChangeResourceRecordSets", "InvalidChangeBatch", "must not specify TTL")
	})
}

// TestCertificateValidatesThroughItsRecord: ACM hands out a deterministic
// CNAME; the validation waits for it in Route 53 and fails without it.
func TestCertificateValidatesThroughItsRecord(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	cert := h.Create(tCert, "cert", simtest.PM("domainName", "cell-a.cells.example.com", "validationMethod", "DNS"))
	if !strings.HasPrefix(cert.ID, "arn:aws:acm:us-east-1:") || simtest.S(cert.Out, "status") != "PENDING_VALIDATION" {
		t.Fatalf("certificate %s %v", cert.ID, cert.Out["status"])
	}
	opts := cert.Out["domainValidationOptions"].ArrayValue()
	if len(opts) != 1 {
		t.Fatalf("validation options %v", opts)
	}
	opt := opts[0].ObjectValue()
	name, value := simtest.S(opt, "resourceRecordName"), simtest.S(opt, "resourceRecordValue")
	if !strings.HasSuffix(name, ".cell-a.cells.example.com.") || !strings.HasSuffix(value, ".acm-validations.aws.") || simtest.S(opt, "resourceRecordType") != "CNAME" {
		t.Fatalf("validation record %s → %s", name, value)
	}
	_, err := h.TryCreate(tCertValid, "validated", simtest.PM("certificateArn", cert.ID))
	simtest.WantErr(t, err, "timeout while waiting for state to become 'ISSUED'", strings.TrimSuffix(name, "."))

	rec := h.Create(tRecord, "validation", simtest.PM("zoneId", "Z0123456789ABCDEFGHIJ", "name", name, "type", "CNAME", "ttl", 300, "records", []any{value}))
	if simtest.S(rec.Out, "fqdn") != strings.TrimSuffix(name, ".") {
		t.Errorf("fqdn %q", simtest.S(rec.Out, "fqdn"))
	}
	_, err = h.TryCreate(tCertValid, "wrong-fqdns", simtest.PM("certificateArn", cert.ID, "validationRecordFqdns", []any{"_other.cell-a.cells.example.com"}))
	simtest.WantErr(t, err, "missing cell-a.cells.example.com DNS validation record")
	v := h.Create(tCertValid, "validated", simtest.PM("certificateArn", cert.ID, "validationRecordFqdns", []any{simtest.S(rec.Out, "fqdn")}))
	if simtest.S(v.Out, "certificateArn") != cert.ID {
		t.Errorf("validation %v", v.Out)
	}
	if rd := h.Read(cert); simtest.S(rd.Outputs, "status") != "ISSUED" || simtest.S(rd.Outputs, "notAfter") == "" {
		t.Errorf("a validated certificate reads %v, want ISSUED with a validity", rd.Outputs["status"])
	}
	// The same record twice in a zone is refused.
	_, err = h.TryCreate(tRecord, "validation-again", simtest.PM("zoneId", "Z0123456789ABCDEFGHIJ", "name", name, "type", "CNAME", "ttl", 300, "records", []any{value}))
	wantAWSError(t, err, "ChangeResourceRecordSets", "InvalidChangeBatch", "already exists")
}

// TestDistributionAliasesNeedACoveringCertificate.
func TestDistributionAliasesNeedACoveringCertificate(t *testing.T) {
	h := simtest.New(t, "router", "us-east-1")
	cert := h.Create(tCert, "viewer", simtest.PM("domainName", "app.example.com", "subjectAlternativeNames", []any{"*.app.example.com"}, "validationMethod", "DNS"))
	dist := func(aliases []any, vc map[string]any) resource.PropertyMap {
		return simtest.PM("enabled", true, "aliases", aliases,
			"origins", []any{map[string]any{"originId": "cell-a", "domainName": "cell-a.cells.example.com",
				"customOriginConfig": map[string]any{"httpPort": 80, "httpsPort": 443, "originProtocolPolicy": "https-only", "originSslProtocols": []any{"TLSv1.2"}}}},
			"defaultCacheBehavior", map[string]any{"targetOriginId": "cell-a", "viewerProtocolPolicy": "https-only",
				"allowedMethods": []any{"GET", "HEAD"}, "cachedMethods": []any{"GET", "HEAD"}, "cachePolicyId": "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"},
			"restrictions", map[string]any{"geoRestriction": map[string]any{"restrictionType": "none"}},
			"viewerCertificate", vc)
	}
	_, err := h.TryCreate(tDist, "no-cert", dist([]any{"app.example.com"}, map[string]any{"cloudfrontDefaultCertificate": true}))
	wantAWSError(t, err, "CreateDistributionWithTags", "InvalidViewerCertificate", "you must attach a trusted certificate")
	_, err = h.TryCreate(tDist, "uncovered", dist([]any{"a.b.app.example.com"}, map[string]any{"acmCertificateArn": cert.ID, "sslSupportMethod": "sni-only"}))
	wantAWSError(t, err, "CreateDistributionWithTags", "InvalidViewerCertificate", "doesn't cover the alternate domain name")
	_, err = h.TryCreate(tDist, "missing-cert", dist([]any{"app.example.com"}, map[string]any{
		"acmCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000", "sslSupportMethod": "sni-only"}))
	wantAWSError(t, err, "CreateDistributionWithTags", "InvalidViewerCertificate", "The specified SSL certificate doesn't exist")
	h.Create(tDist, "ok", dist([]any{"app.example.com", "acme.app.example.com"}, map[string]any{"acmCertificateArn": cert.ID, "sslSupportMethod": "sni-only"}))
}

// TestFinalSnapshotIdentifiersAreUnique: a final snapshot outlives its
// cluster; a second delete naming the same identifier fails, as in AWS.
func TestFinalSnapshotIdentifiersAreUnique(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	db := func(name, snapshot string) *simtest.Res {
		return h.Create(tCluster, name, simtest.PM("clusterIdentifier", name, "engine", "aurora-postgresql", "engineVersion", "16",
			"masterUsername", "cellctl", "manageMasterUserPassword", true, "finalSnapshotIdentifier", snapshot))
	}
	if err := h.Delete(db("cell-a-db", "cell-a-final")); err != nil {
		t.Fatal(err)
	}
	snaps, err := h.Cloud.Snapshots()
	if err != nil || len(snaps) != 1 || snaps[0].Identifier != "cell-a-final" || snaps[0].Region != "us-east-1" {
		t.Fatalf("snapshots %+v %v", snaps, err)
	}
	err = h.Delete(db("cell-a-db", "cell-a-final"))
	wantAWSError(t, err, "DeleteDBCluster", "DBClusterSnapshotAlreadyExistsFault", "one with the identifier cell-a-final already exists")
	// The recreated cluster is still there; a unique identifier deletes it.
	again := db("cell-a-db-2", "cell-a-final-20261201t091500z")
	if err := h.Delete(again); err != nil {
		t.Fatal(err)
	}
}

// TestRefreshOfHealthyCacheUsersAndPatchedAuroraSettles: a refresh of
// unchanged resources reports no input change — ElastiCache users (AWS
// never returns passwords, and reports a passwordCount nobody set) and an
// Aurora cluster pinned to a major that AWS patched to a newer minor.
func TestRefreshOfHealthyCacheUsersAndPatchedAuroraSettles(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	users := []*simtest.Res{
		h.Create(tCacheUser, "app", simtest.PM("userId", "cell-a-app", "userName", "cell-a-app", "engine", "valkey", "accessString", "on ~* +@all",
			"authenticationMode", map[string]any{"type": "iam"})),
		h.Create(tCacheUser, "default", resource.PropertyMap{"userId": resource.NewStringProperty("cell-a-default"),
			"userName": resource.NewStringProperty("default"), "engine": resource.NewStringProperty("valkey"),
			"accessString": resource.NewStringProperty("off -@all"),
			"authenticationMode": resource.NewObjectProperty(resource.PropertyMap{"type": resource.NewStringProperty("password"),
				"passwords": resource.NewArrayProperty([]resource.PropertyValue{simtest.SecretString("0123456789abcdef0123456789abcdef")})})}),
	}
	for _, u := range users {
		rd := h.Read(u)
		if d := h.DiffInputs(u, rd.Inputs); d.Changes != 0 && len(d.ChangedKeys) > 0 {
			t.Errorf("refresh of %s: changed %v (inputs %v)", u.Name, d.ChangedKeys, rd.Inputs)
		}
	}
	db := h.Create(tCluster, "db", simtest.PM("clusterIdentifier", "cell-a-db", "engine", "aurora-postgresql", "engineVersion", "16",
		"masterUsername", "cellctl", "manageMasterUserPassword", true))
	if _, err := h.Cloud.Edit("cell-a", db.ID, "engineVersion", `"16.6"`); err != nil {
		t.Fatal(err)
	}
	rd := h.Read(db)
	if got := simtest.S(rd.Inputs, "engineVersion"); got != "16" {
		t.Errorf("after AWS patched the cluster to 16.6, refresh reports engineVersion %q: AWS's patching would show as drift", got)
	}
	// A real out-of-band downgrade of the major still shows.
	h.Cloud.Edit("cell-a", db.ID, "engineVersion", `"15.8"`)
	if got := simtest.S(h.Read(db).Inputs, "engineVersion"); got != "15.8" {
		t.Errorf("an engine change outside the pinned major must show as drift, got %q", got)
	}
}

// TestListenerNeedsAnExistingCertificate: an ALB refuses a certificate its
// account and region do not have.
func TestListenerNeedsAnExistingCertificate(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	_, subnets := h.Network("net", "10.1.0.0/16", 2)
	lb := h.Create("aws:lb/loadBalancer:LoadBalancer", "alb", simtest.PM("loadBalancerType", "application", "subnets", []any{subnets[0].ID, subnets[1].ID}))
	listener := func(name, cert string) (*simtest.Res, error) {
		return h.TryCreate("aws:lb/listener:Listener", name, simtest.PM("loadBalancerArn", lb.ID, "port", 443, "protocol", "HTTPS", "certificateArn", cert,
			"defaultActions", []any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": "421"}}}))
	}
	_, err := listener("https", "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000")
	wantAWSError(t, err, "CreateListener", "CertificateNotFound", "Certificate 'arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-0000-0000-000000000000' not found")
	cert := h.Create(tCert, "cert", simtest.PM("domainName", "cell-a.cells.example.com", "validationMethod", "DNS"))
	if _, err := listener("https", cert.ID); err != nil {
		t.Fatal(err)
	}
}

// TestSkipDestroyLeavesTheFunctionInTheCloud: pulumi-aws only forgets a
// function with skipDestroy; the simulated cloud keeps it, as AWS does.
func TestSkipDestroyLeavesTheFunctionInTheCloud(t *testing.T) {
	h := simtest.New(t, "router", "us-east-1")
	role := h.Create(simtest.TRole, "edge-role", simtest.PM("assumeRolePolicy", simtest.AssumeRole))
	code, err := simtest.NewArchive(map[string]string{"index.js": "exports.handler=async()=>({})"})
	if err != nil {
		t.Fatal(err)
	}
	fn := h.Create(simtest.TFn, "edge", resource.PropertyMap{"role": role.Out["arn"], "runtime": resource.NewStringProperty("nodejs24.x"),
		"handler": resource.NewStringProperty("index.handler"), "publish": resource.NewBoolProperty(true), "code": code,
		"skipDestroy": resource.NewBoolProperty(true)})
	if err := h.Delete(fn); err != nil {
		t.Fatal(err)
	}
	live, err := h.Cloud.Resources(store.Filter{Type: simtest.TFn})
	if err != nil || len(live) != 1 || !live[0].Abandoned {
		t.Fatalf("after a skipDestroy delete: %+v %v", live, err)
	}
}

// TestBlockedLambdaRuntimeAtTheSimulatorsClock: the simulated Lambda
// refuses a runtime past its block dates at its own clock, as AWS does:
// nodejs20.x creates until 2026-08-30, an existing function on it updates
// until 2026-09-29, and neither after (Lambda Developer Guide).
func TestBlockedLambdaRuntimeAtTheSimulatorsClock(t *testing.T) {
	clk := &simtest.Clock{T: time.Date(2026, 8, 30, 12, 0, 0, 0, time.UTC)}
	h := simtest.On(t, provider.Options{Dir: t.TempDir(), Stack: "router", Now: clk.Now}, "us-east-1")
	role := h.Create(simtest.TRole, "edge-role", simtest.PM("assumeRolePolicy", simtest.AssumeRole))
	fn := func(body string) resource.PropertyMap {
		code, err := simtest.NewArchive(map[string]string{"index.js": body})
		if err != nil {
			t.Fatal(err)
		}
		return resource.PropertyMap{"role": role.Out["arn"], "runtime": resource.NewStringProperty("nodejs20.x"),
			"handler": resource.NewStringProperty("index.handler"), "publish": resource.NewBoolProperty(true), "code": code}
	}
	old := h.Create(simtest.TFn, "old", fn("exports.handler=async()=>({})"))
	clk.T = time.Date(2026, 9, 15, 12, 0, 0, 0, time.UTC)
	_, err := h.TryCreate(simtest.TFn, "new", fn("exports.handler=async()=>({})"))
	wantAWSError(t, err, "CreateFunction", "InvalidParameterValueException", "The runtime parameter of nodejs20.x is no longer supported")
	updated, err := h.TryUpdate(old, fn("exports.handler=async()=>({status:'200'})"))
	if err != nil {
		t.Fatalf("between the block dates an existing function still updates: %v", err)
	}
	clk.T = time.Date(2026, 9, 30, 12, 0, 0, 0, time.UTC)
	_, err = h.TryUpdate(updated, fn("exports.handler=async()=>({status:'204'})"))
	if err == nil || !strings.Contains(err.Error(), "api error InvalidParameterValueException: The runtime parameter of nodejs20.x") {
		t.Fatalf("after the block-update date: got %v, want InvalidParameterValueException", err)
	}
}

// TestAccessPointsAndS3PolicySizes: the simulator creates the fleet
// bucket's access points as S3 does (ARN, alias, domain) and refuses a
// bucket policy or an access point policy past S3's 20 KB with S3's
// answer, as PutBucketPolicy and PutAccessPointPolicy do.
func TestAccessPointsAndS3PolicySizes(t *testing.T) {
	const (
		tBucket       = "aws:s3/bucketV2:BucketV2"
		tBucketPolicy = "aws:s3/bucketPolicy:BucketPolicy"
		tAccessPoint  = "aws:s3/accessPoint:AccessPoint"
	)
	h := simtest.New(t, "router", "us-east-1")
	h.Create(tBucket, "bucket", simtest.PM("bucket", "fleet-bucket"))
	big := func(n int) string {
		var stmts []string
		for i := 0; i < n; i++ {
			stmts = append(stmts, `{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222233334444:role/cell-task-role"},"Action":["s3:GetObject","s3:PutObject","s3:DeleteObject"],"Resource":"arn:aws:s3:::fleet-bucket/cells/cell-`+strings.Repeat("x", 10)+`/*"}`)
		}
		return `{"Version":"2012-10-17","Statement":[` + strings.Join(stmts, ",") + `]}`
	}
	ap := h.Create(tAccessPoint, "cell-c-access-point", simtest.PM("bucket", "fleet-bucket", "name", "cell-c-0123abcd", "policy", big(2)))
	if arn := ap.Out["arn"]; !arn.IsString() || arn.StringValue() != "arn:aws:s3:us-east-1:123456789012:accesspoint/cell-c-0123abcd" {
		t.Errorf("access point ARN %v", arn)
	}
	_, err := h.TryCreate(tAccessPoint, "too-big", simtest.PM("bucket", "fleet-bucket", "name", "cell-d-0123abcd", "policy", big(200)))
	wantAWSError(t, err, "CreateAccessPoint", "PolicyTooLarge", "Policy exceeds the maximum allowed document size")
	_, err = h.TryCreate(tBucketPolicy, "policy", simtest.PM("bucket", "fleet-bucket", "policy", big(200)))
	wantAWSError(t, err, "PutBucketPolicy", "PolicyTooLarge", "Policy exceeds the maximum allowed document size")
}
