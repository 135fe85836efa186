package awsmodel

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// combinationCases feed the rules internal/motojudge found (moto refused
// each input awsmodel accepted, or its corpus showed awsmodel accepting an
// input AWS documents as refused).
func combinationCases() []ruleCase {
	tg := func(interval, timeout int) resource.PropertyMap {
		return resource.PropertyMap{"name": pv("tg"), "port": pv(80), "protocol": pv("HTTP"), "vpcId": pv("vpc-1"),
			"healthCheck": pv(map[string]any{"interval": interval, "timeout": timeout})}
	}
	instance := func(engine string) resource.PropertyMap {
		return resource.PropertyMap{"identifier": pv("db-1"), "clusterIdentifier": pv("db"), "engine": pv(engine), "instanceClass": pv("db.r6g.large")}
	}
	user := func(mode map[string]any) resource.PropertyMap {
		return resource.PropertyMap{"userId": pv("u1"), "userName": pv("u1"), "engine": pv("valkey"), "accessString": pv("on ~* +@all"),
			"authenticationMode": pv(mode)}
	}
	bigStatement := func(n int) string {
		var stmts []string
		for i := 0; i < n; i++ {
			stmts = append(stmts, fmt.Sprintf(`{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/p%04d/*"}`, i))
		}
		return `{"Version": "2012-10-17", "Statement": [` + strings.Join(stmts, ", ") + `]}`
	}
	// Two subnets in us-east-1a and one in us-east-1b; the mock's ids
	// are deterministic (by type and name), so a scratch mock tells the
	// cases the ids their setup will create.
	network := func(m *Mock) ([]string, error) {
		vpc, _, err := m.NewResource(tVpc, "vpc", resource.PropertyMap{"cidrBlock": pv("10.0.0.0/16")}, "")
		if err != nil {
			return nil, err
		}
		var ids []string
		for i, az := range []string{"us-east-1a", "us-east-1a", "us-east-1b"} {
			id, _, err := m.NewResource(tSubnet, fmt.Sprintf("sn%d", i), resource.PropertyMap{"vpcId": pv(vpc),
				"cidrBlock": pv(fmt.Sprintf("10.0.%d.0/24", i)), "availabilityZone": pv(az)}, "")
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, nil
	}
	sn, err := network(NewMock(Env{}))
	if err != nil {
		panic(err)
	}
	zoned := func(t *testing.T, m *Mock) {
		if _, err := network(m); err != nil {
			t.Fatal(err)
		}
	}
	return []ruleCase{
		{rule: "iam.role-policy-size", typ: tRolePolicy,
			setup: func(t *testing.T, m *Mock) {
				mustCreate(t, m, tRole, "role", resource.PropertyMap{"name": pv("app"), "assumeRolePolicy": pv(`{"Version":"2012-10-17","Statement":[]}`)})
				mustCreate(t, m, tRolePolicy, "first", resource.PropertyMap{"name": pv("first"), "role": pv("app"), "policy": pv(bigStatement(70))})
			},
			// 70 + 60 statements of about 80 characters once white space
			// is dropped (about 100 with it) pass 10,240 together; each
			// alone would not, nor 70 + 10.
			bad:      resource.PropertyMap{"name": pv("second"), "role": pv("app"), "policy": pv(bigStatement(60))},
			ok:       resource.PropertyMap{"name": pv("second"), "role": pv("app"), "policy": pv(bigStatement(10))},
			contains: "Maximum policy size of 10240 bytes exceeded for role app"},
		{rule: "elbv2.health-check-timeout", typ: tTargetGroup, bad: tg(10, 20), ok: tg(10, 5), contains: "must be smaller than the interval"},
		{rule: "elbv2.health-check-timeout", typ: tTargetGroup, bad: tg(10, 10), contains: "must be smaller than the interval"},
		{rule: "rds.instance-engine", typ: tClusterInstance,
			setup: func(t *testing.T, m *Mock) {
				mustCreate(t, m, tCluster, "db", resource.PropertyMap{"clusterIdentifier": pv("db"), "engine": pv("aurora-postgresql"),
					"engineVersion": pv("16.4"), "masterUsername": pv("u"), "manageMasterUserPassword": pv(true), "skipFinalSnapshot": pv(true)})
			},
			bad: instance("aurora-mysql"), ok: instance("aurora-postgresql"), contains: "doesn't match the engine name of your DB cluster (aurora-postgresql)"},
		{rule: "placement.two-zones", typ: tDBSubnetGroup, setup: zoned,
			bad:      resource.PropertyMap{"name": pv("db"), "subnetIds": pv([]any{sn[0], sn[1]})},
			ok:       resource.PropertyMap{"name": pv("db"), "subnetIds": pv([]any{sn[0], sn[2]})},
			contains: "cover at least 2 AZs"},
		{rule: "placement.two-zones", typ: tLB, setup: zoned,
			bad:      resource.PropertyMap{"name": pv("alb"), "subnets": pv([]any{sn[1]})},
			ok:       resource.PropertyMap{"name": pv("alb"), "subnets": pv([]any{sn[1], sn[2]})},
			contains: "two different Availability Zones"},
		{rule: "elasticache.user-password-required", typ: tCacheUser,
			bad: user(map[string]any{"type": "password"}), ok: user(map[string]any{"type": "password", "passwords": []any{strings.Repeat("p", 16)}}),
			contains: "at least one password"},
	}
}

// TestACMQuotaIsLimitExceeded: more domain names than the quota is ACM's
// quota error, a malformed name its validation error.
func TestACMQuotaIsLimitExceeded(t *testing.T) {
	var sans []string
	for _, c := range "abcdefghijk" {
		sans = append(sans, string(c)+".example.com")
	}
	for _, tc := range []struct {
		in   resource.PropertyMap
		code string
	}{
		{resource.PropertyMap{"domainName": pv("app.example.com"), "subjectAlternativeNames": pv(sans)}, "LimitExceededException"},
		{resource.PropertyMap{"domainName": pv(strings.Repeat("a", 65))}, "ValidationException"},
	} {
		err := CheckRules(tCertificate, "cert", tc.in, Env{}, nil, OpCreate)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Code != tc.code {
			t.Errorf("%v: got %v, want %s", tc.in, err, tc.code)
		}
	}
}

// TestFixedResponseStatusCode: ELB's StatusCode pattern ^(2|4|5)\d\d$.
func TestFixedResponseStatusCode(t *testing.T) {
	listener := func(code string) resource.PropertyMap {
		return resource.PropertyMap{"loadBalancerArn": pv("arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/lb/1"),
			"port": pv(80), "protocol": pv("HTTP"),
			"defaultActions": pv([]any{map[string]any{"type": "fixed-response", "fixedResponse": map[string]any{"contentType": "text/plain", "statusCode": code}}})}
	}
	for code, ok := range map[string]bool{"404": true, "200": true, "503": true, "99": false, "302": false, "4040": false} {
		failures := Validate(tListener, listener(code))
		if (len(failures) == 0) != ok {
			t.Errorf("status %s: failures %v, want ok=%v", code, failures, ok)
		}
	}
}
