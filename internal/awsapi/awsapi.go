// Package awsapi builds cellctl's direct AWS readers on aws-sdk-go-v2:
// CloudWatch alarm states and metric data, and Service Quotas values. The
// readers take plain data and return plain types, so a wave gate, the
// health view or the quota audit can adapt them in a few lines.
//
// One code path serves both clouds: a Target with no Endpoint uses AWS's
// endpoints and the default credential chain; a Target with an Endpoint
// (the simulator's loopback API, see internal/sim) uses static
// credentials. Either way the clients retry throttling adaptively
// (retry.NewAdaptiveMode) and every reader follows NextToken to the end.
package awsapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/logging"
)

// DefaultMaxAttempts is how many times a call is tried before a throttling
// or transient error is returned (the SDK's standard mode uses 3; gates
// poll during bakes, so a little more patience is cheaper than a false
// breach).
const DefaultMaxAttempts = 5

// Target says where the readers talk to.
type Target struct {
	// Region is the AWS region ("us-east-1"); required.
	Region string
	// Endpoint, when set, is the base URL every service is called at
	// (the simulator's "http://127.0.0.1:PORT"). Empty means AWS.
	Endpoint string
	// AccessKeyID, SecretAccessKey and SessionToken are static
	// credentials used with Endpoint. The session token is part of a
	// temporary credential (SSO, an assumed role, CI's web identity): the
	// keys without it are refused. They are ignored for AWS, which uses
	// the default chain (environment — AWS_SESSION_TOKEN included —,
	// shared config and SSO, web identity, ECS/EC2 roles).
	AccessKeyID, SecretAccessKey, SessionToken string
	// Profile selects a shared-config profile on AWS ("" = default chain).
	Profile string
	// Role, when set, is assumed on top of the credentials above (the
	// profile, the chain or the static keys): a cell in another account
	// is read with that account's role, as its stack's provider
	// (aws:assumeRole) deploys it.
	Role Role
	// MaxAttempts bounds retries (0 = DefaultMaxAttempts).
	MaxAttempts int
	// MaxBackoff caps the wait between attempts (0 = the SDK's 20s).
	// Tests set it small so a throttling replay does not sleep.
	MaxBackoff time.Duration
	// HTTPClient overrides the transport (nil = the SDK's default).
	HTTPClient *http.Client
}

// Role is an IAM role the readers assume through STS.
type Role struct {
	// ARN is the role; "" means none.
	ARN string
	// SessionName names the session in the account's CloudTrail.
	SessionName string
	// ExternalID is the id the role's trust policy requires, if any.
	ExternalID string
	// Duration is the session's length (0 = STS's default, one hour); the
	// credentials are refreshed before they expire.
	Duration time.Duration
}

// Sim returns the Target of the simulator's loopback endpoint.
func Sim(endpoint, region string) Target {
	return Target{Region: region, Endpoint: endpoint, AccessKeyID: "AKIDSIMULATED0000000", SecretAccessKey: "simulated-secret-not-a-credential"}
}

// Config builds the aws.Config the readers' clients are made from.
func (t Target) Config(ctx context.Context) (aws.Config, error) {
	if t.Region == "" {
		return aws.Config{}, fmt.Errorf("awsapi: a region is required")
	}
	attempts := t.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	retryer := func() aws.Retryer {
		return retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) {
			o.StandardOptions = append(o.StandardOptions, func(so *retry.StandardOptions) {
				so.MaxAttempts = attempts
				if t.MaxBackoff > 0 {
					so.MaxBackoff = t.MaxBackoff
					so.Backoff = retry.NewExponentialJitterBackoff(t.MaxBackoff)
				}
			})
		})
	}
	if t.Endpoint != "" {
		if t.AccessKeyID == "" || t.SecretAccessKey == "" {
			return aws.Config{}, fmt.Errorf("awsapi: endpoint %s needs static credentials", t.Endpoint)
		}
		// Built by hand, not by LoadDefaultConfig: nothing from the
		// user's environment (AWS_ENDPOINT_URL, profiles, real keys)
		// may leak into calls meant for the simulator.
		cfg := aws.Config{
			Region:       t.Region,
			Credentials:  aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(t.AccessKeyID, t.SecretAccessKey, t.SessionToken)),
			BaseEndpoint: aws.String(t.Endpoint),
			Retryer:      retryer,
		}
		if t.HTTPClient != nil {
			cfg.HTTPClient = t.HTTPClient
		}
		return t.assume(cfg), nil
	}
	// No SDK log lines on stderr: a missing credential made the metadata
	// client print "falling back to IMDSv1" once per reader before the
	// one error that says what to set; cellctl's errors carry the cause.
	opts := []func(*config.LoadOptions) error{config.WithRegion(t.Region), config.WithRetryer(retryer), config.WithLogger(logging.Nop{})}
	if t.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(t.Profile))
	}
	if t.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(t.HTTPClient))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		if t.Profile != "" || strings.Contains(err.Error(), "shared config profile") {
			// A profile that does not exist: the same fix as no
			// credentials at all, said once (CredentialsError).
			return aws.Config{}, &CredentialsError{Profile: t.Profile, Err: err}
		}
		return aws.Config{}, fmt.Errorf("loading AWS configuration for %s: %w", t.Region, err)
	}
	// The base credentials, before any role is assumed on top of them:
	// without them every reader of the command fails the same way.
	if err := checkCredentials(ctx, t.Profile, cfg); err != nil {
		return aws.Config{}, err
	}
	return t.assume(cfg), nil
}

// roleKey names one assumed-role session: the base credentials (by
// endpoint, key id and profile, never the secret) and the role's settings.
type roleKey struct {
	endpoint, accessKeyID, profile string
	role                           Role
}

// roleCreds shares one credentials cache per assumed-role session across
// every reader built in the process: a deploy's gates, health and
// migrations build readers per cell and poll, and each AssumeRole call is
// a round trip STS throttles per account.
var roleCreds sync.Map // roleKey → *aws.CredentialsCache

// assume swaps cfg's credentials for the role's when Role is set.
func (t Target) assume(cfg aws.Config) aws.Config {
	if t.Role.ARN == "" {
		return cfg
	}
	key := roleKey{endpoint: t.Endpoint, accessKeyID: t.AccessKeyID, profile: t.Profile, role: t.Role}
	if c, ok := roleCreds.Load(key); ok {
		cfg.Credentials = c.(*aws.CredentialsCache)
		return cfg
	}
	role := t.Role
	provider := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), role.ARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = role.SessionName
		if role.ExternalID != "" {
			o.ExternalID = aws.String(role.ExternalID)
		}
		if role.Duration > 0 {
			o.Duration = role.Duration
		}
	})
	c, _ := roleCreds.LoadOrStore(key, aws.NewCredentialsCache(provider))
	cfg.Credentials = c.(*aws.CredentialsCache)
	return cfg
}

// Identity is who a Target's credentials are: what STS GetCallerIdentity
// answers.
type Identity struct {
	Account, ARN string
}

// CallerIdentity asks STS who t's credentials are. With a Role it is the
// proof the role can be assumed: the call signs with the assumed
// credentials, so a refused AssumeRole is its error.
func CallerIdentity(ctx context.Context, t Target) (Identity, error) {
	cfg, err := t.Config(ctx)
	if err != nil {
		return Identity{}, err
	}
	out, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return Identity{}, err
	}
	return Identity{Account: aws.ToString(out.Account), ARN: aws.ToString(out.Arn)}, nil
}
