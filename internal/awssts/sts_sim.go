package awssts

import (
	"fmt"
	"regexp"
	"time"
)

// The identities the simulator's STS reports (GetCallerIdentity) and the
// constraints its account registry applies, beside the AssumeRole rules
// of sts.go. Sources: the IAM User Guide, "IAM identifiers" (account ids
// are 12 digits; an assumed-role session's ARN is
// arn:aws:sts::<account>:assumed-role/<role-name>/<session-name>) and
// "Methods to assume a role" (role chaining: a session a role session
// assumes lasts at most one hour).

var accountIDRe = regexp.MustCompile(`^\d{12}$`)

// MaxChainedRoleSessionSeconds is the longest session a role session may
// ask for when it assumes another role (role chaining).
const MaxChainedRoleSessionSeconds = 3600

// CheckAccountID accepts a 12-digit AWS account id; the error says so.
func CheckAccountID(s string) error {
	if !accountIDRe.MatchString(s) {
		return fmt.Errorf("%q is not an AWS account id (want 12 digits, e.g. 123456789012)", s)
	}
	return nil
}

// AssumedRoleARN is the ARN STS gives the session of a role.
func AssumedRoleARN(partition, account, role, session string) string {
	if partition == "" {
		partition = "aws"
	}
	return "arn:" + partition + ":sts::" + account + ":assumed-role/" + role + "/" + session
}

// RoleSessionSeconds reads a provider's assumeRole duration ("1h",
// "15m", as pulumi-aws takes it; "" means STS's default of an hour) and
// applies AssumeRole's DurationSeconds range to it.
func RoleSessionSeconds(d string) (int, error) {
	if d == "" {
		return DefaultRoleSessionSeconds, nil
	}
	v, err := time.ParseDuration(d)
	if err != nil {
		return 0, fmt.Errorf("assumeRole duration %q is not a duration (e.g. \"1h\", \"15m\")", d)
	}
	n := int(v / time.Second)
	if err := CheckRoleSessionSeconds(n); err != nil {
		return 0, err
	}
	return n, nil
}
