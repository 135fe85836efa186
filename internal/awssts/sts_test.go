package awssts

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRoleARN(t *testing.T) {
	for _, ok := range []struct{ in, account, name string }{
		{"arn:aws:iam::222233334444:role/cellctl-deploy", "222233334444", "cellctl-deploy"},
		{"arn:aws:iam::222233334444:role/platform/cells/deploy", "222233334444", "deploy"},
		{"arn:aws-us-gov:iam::123456789012:role/x", "123456789012", "x"},
	} {
		r, err := ParseRoleARN(ok.in)
		if err != nil {
			t.Errorf("%s: %v", ok.in, err)
			continue
		}
		if r.Account != ok.account || r.Name != ok.name || r.String() != ok.in {
			t.Errorf("%s: read %+v", ok.in, r)
		}
	}
	for _, bad := range []string{
		"", "arn:aws:iam::2222333344:role/x", // 10 digits
		"arn:aws:iam::222233334444:user/x", "arn:aws:sts::222233334444:assumed-role/x/s",
		"arn:aws:iam:us-east-1:222233334444:role/x", // IAM ARNs have no region
		"arn:aws:iam::222233334444:role/", "arn:aws:iam::222233334444:role/a b",
		"arn:aws:iam::222233334444:role/" + strings.Repeat("n", 65),
		"arn:aws:iam::222233334444:role/te am/x",
	} {
		if _, err := ParseRoleARN(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAssumeRoleParameterConstraints(t *testing.T) {
	if CheckRoleSessionName("cellctl-cell-c") != nil || CheckRoleSessionName("x") == nil || CheckRoleSessionName("a b") == nil ||
		CheckRoleSessionName(strings.Repeat("s", 65)) == nil {
		t.Error("RoleSessionName: 2-64 of [\\w+=,.@-]")
	}
	if CheckExternalID("tenant:42/ok") != nil || CheckExternalID("x") == nil || CheckExternalID("has space") == nil ||
		CheckExternalID(strings.Repeat("e", 1224)) != nil || CheckExternalID(strings.Repeat("e", 1225)) == nil {
		t.Error("ExternalId: 2-1224 of [\\w+=,.@:/-]")
	}
	if CheckRoleSessionSeconds(900) != nil || CheckRoleSessionSeconds(43200) != nil || CheckRoleSessionSeconds(899) == nil || CheckRoleSessionSeconds(43201) == nil {
		t.Error("DurationSeconds: 900-43200")
	}
}

func TestRoleCannotBeAssumedNamesTheRoleAndSTSsAnswer(t *testing.T) {
	role := "arn:aws:iam::222233334444:role/cellctl-deploy"
	msg := RoleCannotBeAssumed(role, errors.New("api error AccessDenied: "+AssumeRoleDenied("arn:aws:iam::123456789012:user/ci", role)))
	for _, want := range []string{"IAM Role (" + role + ") cannot be assumed", "AccessDenied", "is not authorized to perform: sts:AssumeRole on resource: " + role} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}
