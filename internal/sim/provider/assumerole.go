package provider

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/awssts"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// A cell in its own account: the stack's aws provider carries
// pulumi-aws's `aws:assumeRole` (roleArn, sessionName, externalId,
// duration), which the engine passes to Configure as the "assumeRole"
// property. The engine sends an object-typed config value either as an
// object or, as with defaultTags, as its JSON text; both are read. The
// role is assumed as STS would decide it (store.Cloud.AssumeRole, the
// rules the simulator's STS endpoint applies) with the home account's
// identity as the caller, so a role the registry does not hold, does not
// trust the home account or whose external id differs fails Configure
// with pulumi-aws's "cannot be assumed" error, before any resource is
// touched. On success the connection works in that account's store and
// builds its ARNs with that account's id.

// defaultSessionName names the session when the config gives none.
const defaultSessionName = "pulumi-aws"

// assumeRoleConfig is a provider's assumeRole, read.
type assumeRoleConfig struct {
	RoleARN     string `json:"roleArn"`
	SessionName string `json:"sessionName"`
	ExternalID  string `json:"externalId"`
	Duration    string `json:"duration"`
	account     string
}

// readAssumeRole reads config's assumeRole: nil when it is absent,
// unknown (a preview's computed value) or names no role (terraform
// ignores an empty role_arn).
func readAssumeRole(config resource.PropertyMap) (*assumeRoleConfig, error) {
	v, ok := config["assumeRole"]
	if !ok {
		return nil, nil
	}
	for v.IsSecret() {
		v = v.SecretValue().Element
	}
	if v.IsArray() && len(v.ArrayValue()) == 1 {
		// The terraform schema's one-element list shape.
		v = v.ArrayValue()[0]
	}
	var ar assumeRoleConfig
	switch {
	case v.IsNull() || v.ContainsUnknowns():
		return nil, nil
	case v.IsString():
		if v.StringValue() == "" {
			return nil, nil
		}
		if err := json.Unmarshal([]byte(v.StringValue()), &ar); err != nil {
			return nil, fmt.Errorf("aws:assumeRole is not an object of roleArn, sessionName, externalId and duration: %v", err)
		}
	case v.IsObject():
		b, err := json.Marshal(v.ObjectValue().Mappable())
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &ar); err != nil {
			return nil, fmt.Errorf("aws:assumeRole is not an object of roleArn, sessionName, externalId and duration: %v", err)
		}
	default:
		return nil, fmt.Errorf("aws:assumeRole must be an object (roleArn, sessionName, externalId, duration)")
	}
	if ar.RoleARN == "" {
		return nil, nil
	}
	arn, err := awssts.ParseRoleARN(ar.RoleARN)
	if err != nil {
		return nil, fmt.Errorf("aws:assumeRole.roleArn: %w", err)
	}
	ar.account = arn.Account
	if ar.SessionName == "" {
		ar.SessionName = defaultSessionName
	}
	return &ar, nil
}

// base is the provider environment in the role's account (ARNs and the
// allowedAccountIds check see the assumed account).
func (ar *assumeRoleConfig) base(env awsmodel.Env) awsmodel.Env {
	if ar != nil {
		env.Account = ar.account
	}
	return env
}

// assume is the store a configuration works in: the home cloud, or the
// account of the role it assumes, once STS's rules let the home account
// assume it.
func (p *Provider) assume(ar *assumeRoleConfig) (*store.Cloud, error) {
	if ar == nil {
		return p.cloud, nil
	}
	cannot := func(cause error) error { return errors.New(awssts.RoleCannotBeAssumed(ar.RoleARN, cause)) }
	seconds, err := awssts.RoleSessionSeconds(ar.Duration)
	if err != nil {
		return nil, cannot(&store.STSError{Code: awssts.STSValidation, Status: 400, Message: err.Error()})
	}
	caller, err := p.cloud.HomeIdentity()
	if err != nil {
		return nil, err
	}
	sess, err := p.cloud.AssumeRole(caller, store.AssumeRoleInput{RoleARN: ar.RoleARN, SessionName: ar.SessionName, ExternalID: ar.ExternalID, Seconds: seconds})
	if err != nil {
		var se *store.STSError
		if errors.As(err, &se) {
			return nil, cannot(se)
		}
		return nil, err
	}
	return p.cloud.Account(sess.Account)
}
