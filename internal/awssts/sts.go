// Package awssts is AWS STS's AssumeRole rules and identities: role
// ARNs, session names, external ids and durations, and STS's errors. It
// imports no Pulumi package (unlike internal/awsmodel, which reads the
// pulumi-aws SDK's types), so the fleet loader checks a cell's account
// settings without reaching the SDK (internal/layers' PulumiFree).
package awssts

import (
	"fmt"
	"regexp"
	"strings"
)

// AWS STS AssumeRole, as cellctl relies on it to reach a cell that lives
// in its own account, and as the simulator answers it. Sources: the AWS
// STS API Reference, AssumeRole (request parameters, their length and
// pattern constraints, errors); the IAM User Guide, "IAM identifiers"
// (the role ARN: arn:<partition>:iam::<account-id>:role/<path><name>,
// a path of "/" or "/…/", a name of 1–64 characters of
// [\w+=,.@-]) and "Methods to assume a role" (role chaining limits a
// session to one hour); terraform-provider-aws's provider configuration
// (assume_role { role_arn, session_name, external_id, duration }, whose
// failure is "IAM Role (<arn>) cannot be assumed." followed by STS's
// AccessDenied, as in hashicorp/terraform-provider-aws#42213).

// STS error codes (AssumeRole, "Errors"; "Common Errors").
const (
	// STSAccessDenied is STS's answer, HTTP 403, when the caller may not
	// assume the role: the role's trust policy does not name the caller,
	// the external id does not match, or the role does not exist (STS
	// does not tell a missing role from a refused one).
	STSAccessDenied = "AccessDenied"
	// STSInvalidClientTokenID is HTTP 403 for a request signed with an
	// access key STS does not know.
	STSInvalidClientTokenID = "InvalidClientTokenId"
	// STSValidation is HTTP 400 for a parameter outside its constraints.
	STSValidation = "ValidationError"
)

// AssumeRole session limits (AssumeRole, DurationSeconds: "from 900
// seconds (15 minutes) up to the maximum session duration set for the
// role", a setting of 1 to 12 hours; 3600 when omitted).
const (
	MinRoleSessionSeconds     = 900
	MaxRoleSessionSeconds     = 43200
	DefaultRoleSessionSeconds = 3600
)

var (
	roleARNRe = regexp.MustCompile(`^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b):iam::(\d{12}):role(/|/[\x21-\x7e]*/)([\w+=,.@-]{1,64})$`)
	// RoleSessionName: 2–64 characters of [\w+=,.@-].
	roleSessionNameRe = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	// ExternalId: 2–1224 characters of [\w+=,.@:/-]; the length is
	// checked apart (RE2 caps a repeat count at 1000).
	externalIDRe = regexp.MustCompile(`^[\w+=,.@:/-]+$`)
	rolePathSeg  = regexp.MustCompile(`^[\w+=,.@-]+$`)
)

// RoleARN is an IAM role's ARN, read.
type RoleARN struct {
	Partition, Account, Path, Name string
}

// String is the ARN.
func (r RoleARN) String() string {
	return "arn:" + r.Partition + ":iam::" + r.Account + ":role" + r.Path + r.Name
}

// ParseRoleARN reads an IAM role ARN ("arn:aws:iam::123456789012:role/x",
// with an optional path "role/team/x"). The error says what is allowed.
func ParseRoleARN(s string) (RoleARN, error) {
	m := roleARNRe.FindStringSubmatch(s)
	if m == nil {
		return RoleARN{}, fmt.Errorf("%q is not an IAM role ARN (want arn:aws:iam::<12-digit account id>:role/<name>, a name of 1-64 letters, digits and +=,.@_-)", s)
	}
	// The pattern lets a path hold any printable character; IAM allows
	// only those of a name and the slashes between them.
	if p := m[3]; p != "/" {
		for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
			if !rolePathSeg.MatchString(seg) {
				return RoleARN{}, fmt.Errorf("%q is not an IAM role ARN: its path %q may hold only letters, digits, +=,.@_- and slashes", s, p)
			}
		}
		if len(p) > 512 {
			return RoleARN{}, fmt.Errorf("%q is not an IAM role ARN: its path is longer than 512 characters", s)
		}
	}
	return RoleARN{Partition: m[1], Account: m[2], Path: m[3], Name: m[4]}, nil
}

// CheckRoleSessionName applies AssumeRole's RoleSessionName constraints.
func CheckRoleSessionName(s string) error {
	if !roleSessionNameRe.MatchString(s) {
		return fmt.Errorf("session name %q must be 2-64 letters, digits and +=,.@_- (STS AssumeRole RoleSessionName)", s)
	}
	return nil
}

// CheckExternalID applies AssumeRole's ExternalId constraints.
func CheckExternalID(s string) error {
	if len(s) < 2 || len(s) > 1224 || !externalIDRe.MatchString(s) {
		return fmt.Errorf("external id must be 2-1224 letters, digits and +=,.@:/_- (STS AssumeRole ExternalId)")
	}
	return nil
}

// CheckRoleSessionSeconds applies AssumeRole's DurationSeconds range.
func CheckRoleSessionSeconds(n int) error {
	if n < MinRoleSessionSeconds || n > MaxRoleSessionSeconds {
		return fmt.Errorf("session duration %d s must be from %d to %d seconds (STS AssumeRole DurationSeconds)", n, MinRoleSessionSeconds, MaxRoleSessionSeconds)
	}
	return nil
}

// AssumeRoleDenied is STS's AccessDenied message for a caller (an ARN)
// that may not assume role.
func AssumeRoleDenied(caller, role string) string {
	return fmt.Sprintf("User: %s is not authorized to perform: sts:AssumeRole on resource: %s", caller, role)
}

// RoleCannotBeAssumed is how the pulumi-aws provider (the bridged
// terraform-provider-aws) reports a provider whose assumeRole fails: the
// role, the common causes, then STS's own error.
func RoleCannotBeAssumed(role string, cause error) string {
	return fmt.Sprintf("IAM Role (%s) cannot be assumed.\n\nThere are a number of possible causes of this - the most common are:\n  * The credentials used in order to assume the role are invalid\n  * The credentials do not have appropriate permission to assume the role\n  * The role ARN is not valid\n\nError: %v", role, cause)
}
