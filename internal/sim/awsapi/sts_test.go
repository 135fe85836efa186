package awsapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	readers "github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/awssts"
	"github.com/cellctl/cellctl/internal/sim/store"
)

const (
	secondAccount = "222233334444"
	deployRole    = "arn:aws:iam::222233334444:role/cellctl-deploy"
	homeUserARN   = "arn:aws:iam::123456789012:user/cellctl-sim"
	zoneInSecond  = "Z0SECONDACCOUNT000001"
)

type stsFixture struct {
	home     *store.Cloud
	endpoint string
	cfg      aws.Config
}

// newSTSFixture is a home account and a second one holding a role the
// home account may assume, a hosted zone and a raised quota.
func newSTSFixture(t *testing.T) *stsFixture {
	t.Helper()
	home, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name, ext string
		trust     []string
	}{{"cellctl-deploy", "", nil}, {"vendor-only", "", []string{"999988887777"}}, {"guarded", "fleet-7f3a", nil}} {
		if _, err := home.AddRole(secondAccount, r.name, r.trust, r.ext); err != nil {
			t.Fatal(err)
		}
	}
	second, err := home.Account(secondAccount)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.AddZone(zoneInSecond, "cells.second.example.com"); err != nil {
		t.Fatal(err)
	}
	if err := second.SetQuota("us-east-1", "ec2/L-0263D0A3", 40); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	endpoint, stop, err := Serve(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider(store.HomeAccessKeyIDs[0], "cellctl-simulated-aws-not-a-secret", "")}
	return &stsFixture{home: home, endpoint: endpoint, cfg: cfg}
}

func (f *stsFixture) assume(role string, opt func(*stscreds.AssumeRoleOptions)) aws.Config {
	cfg := f.cfg.Copy()
	cfg.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(f.cfg), role, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = "cellctl"
		if opt != nil {
			opt(o)
		}
	}))
	return cfg
}

// stsCode is the AWS error code and HTTP status of err.
func stsCode(err error) (string, string, int) {
	var ae smithy.APIError
	var re *awshttp.ResponseError
	code, msg, status := "", "", 0
	if errors.As(err, &ae) {
		code, msg = ae.ErrorCode(), ae.ErrorMessage()
	}
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return code, msg, status
}

// The path of a cell in its own account: cellctl's SDK clients assume the
// role through the simulator's STS and sign every later call with the
// temporary credentials, which the simulator answers from that account's
// store only.
func TestAssumedCredentialsReachTheirAccountOnly(t *testing.T) {
	f := newSTSFixture(t)
	ctx := context.Background()
	me, err := sts.NewFromConfig(f.cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(me.Account) != awsmodel.DefaultAccount || aws.ToString(me.Arn) != homeUserARN {
		t.Fatalf("home GetCallerIdentity = %+v, %v", me, err)
	}
	assumed := f.assume(deployRole, nil)
	who, err := sts.NewFromConfig(assumed).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(who.Account) != secondAccount || aws.ToString(who.Arn) != "arn:aws:sts::222233334444:assumed-role/cellctl-deploy/cellctl" ||
		!strings.HasPrefix(aws.ToString(who.UserId), "AROA") || !strings.HasSuffix(aws.ToString(who.UserId), ":cellctl") {
		t.Errorf("assumed GetCallerIdentity = %s %s %s", aws.ToString(who.Account), aws.ToString(who.Arn), aws.ToString(who.UserId))
	}
	creds, err := assumed.Credentials.Retrieve(ctx)
	if err != nil || !strings.HasPrefix(creds.AccessKeyID, "ASIA") || creds.SessionToken == "" || !creds.CanExpire {
		t.Fatalf("assumed credentials = %+v, %v", creds, err)
	}

	// Route 53: the zone is the second account's.
	zone, err := route53.NewFromConfig(assumed).GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String(zoneInSecond)})
	if err != nil || aws.ToString(zone.HostedZone.Name) != "cells.second.example.com." {
		t.Fatalf("GetHostedZone as the role = %+v, %v", zone, err)
	}
	if _, err := route53.NewFromConfig(f.cfg).GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String(zoneInSecond)}); err == nil {
		t.Error("the home account sees the second account's zone")
	}

	// Service Quotas through cellctl's own reader: each account its value.
	target := readers.Target{Region: "us-east-1", Endpoint: f.endpoint, AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey, SessionToken: creds.SessionToken, MaxAttempts: 1}
	q, err := readers.NewQuotas(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	if eip, err := q.Get(ctx, "ec2", "L-0263D0A3"); err != nil || eip.Value != 40 {
		t.Errorf("second account's EIP quota = %+v, %v", eip, err)
	}
	hq, _ := readers.NewQuotas(ctx, readers.Sim(f.endpoint, "us-east-1"))
	if eip, err := hq.Get(ctx, "ec2", "L-0263D0A3"); err != nil || eip.Value != 5 {
		t.Errorf("home EIP quota = %+v, %v", eip, err)
	}
}

func TestAssumeRoleRefusesAsSTS(t *testing.T) {
	f := newSTSFixture(t)
	ctx := context.Background()
	for _, c := range []struct {
		what, role string
		opt        func(*stscreds.AssumeRoleOptions)
		code       string
		status     int
	}{
		{"a role that does not exist", "arn:aws:iam::222233334444:role/nobody", nil, awssts.STSAccessDenied, 403},
		{"a role that does not trust the home account", "arn:aws:iam::222233334444:role/vendor-only", nil, awssts.STSAccessDenied, 403},
		{"no external id", "arn:aws:iam::222233334444:role/guarded", nil, awssts.STSAccessDenied, 403},
		{"a wrong external id", "arn:aws:iam::222233334444:role/guarded", func(o *stscreds.AssumeRoleOptions) { o.ExternalID = aws.String("fleet-0000") }, awssts.STSAccessDenied, 403},
		{"a one-letter session name", deployRole, func(o *stscreds.AssumeRoleOptions) { o.RoleSessionName = "x" }, awssts.STSValidation, 400},
		{"a 5-minute session", deployRole, func(o *stscreds.AssumeRoleOptions) { o.Duration = 300e9 }, awssts.STSValidation, 400},
	} {
		_, err := f.assume(c.role, c.opt).Credentials.Retrieve(ctx)
		code, msg, status := stsCode(err)
		if code != c.code || status != c.status {
			t.Errorf("%s: %s %d (%v), want %s %d", c.what, code, status, err, c.code, c.status)
		}
		if c.code == awssts.STSAccessDenied && msg != awssts.AssumeRoleDenied(homeUserARN, c.role) {
			t.Errorf("%s: message %q", c.what, msg)
		}
	}
	ok := f.assume("arn:aws:iam::222233334444:role/guarded", func(o *stscreds.AssumeRoleOptions) { o.ExternalID = aws.String("fleet-7f3a") })
	if _, err := ok.Credentials.Retrieve(ctx); err != nil {
		t.Errorf("the right external id: %v", err)
	}
}

func TestAnUnknownAccessKeyIsRefusedByEveryAPI(t *testing.T) {
	f := newSTSFixture(t)
	ctx := context.Background()
	bad := f.cfg.Copy()
	bad.Credentials = credentials.NewStaticCredentialsProvider("ASIASIMNOTISSUED0000", "secret", "token")
	_, err := sts.NewFromConfig(bad).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if code, msg, status := stsCode(err); code != awssts.STSInvalidClientTokenID || status != 403 || msg != "The security token included in the request is invalid." {
		t.Errorf("sts: %s %d %q", code, status, msg)
	}
	_, err = route53.NewFromConfig(bad).GetHostedZone(ctx, &route53.GetHostedZoneInput{Id: aws.String(zoneInSecond)})
	if code, _, status := stsCode(err); code != awssts.STSInvalidClientTokenID || status != 403 {
		t.Errorf("route53: %s %d (%v)", code, status, err)
	}
	q, _ := readers.NewQuotas(ctx, readers.Target{Region: "us-east-1", Endpoint: f.endpoint, AccessKeyID: "ASIASIMNOTISSUED0000", SecretAccessKey: "s", MaxAttempts: 1})
	if _, err := q.Get(ctx, "ec2", "L-0263D0A3"); err == nil || !strings.Contains(err.Error(), "UnrecognizedClientException") {
		t.Errorf("service quotas: %v", err)
	}
}
