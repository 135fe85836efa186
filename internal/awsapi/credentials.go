package awsapi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// CredentialsError is a Target on AWS whose credentials cannot be had: the
// default chain found none (no keys in the environment, no profile, no SSO
// session, no web identity, no ECS or EC2 role), or the profile it names
// gives none. Every reader of the command would fail the same way, so its
// message is one line saying what to set, and commands stop at the first
// one (AsCredentialsError) instead of reporting it once per reader, row
// or cell.
type CredentialsError struct {
	// Profile is the shared-config profile the target named ("" for the
	// default chain, which may still pick $AWS_PROFILE).
	Profile string
	Err     error
}

func (e *CredentialsError) Error() string {
	what := "no AWS credentials"
	if e.Profile != "" {
		what = fmt.Sprintf("no AWS credentials from profile %q (aws:profile)", e.Profile)
	}
	return fmt.Sprintf("%s (%s): set AWS_PROFILE to a profile in ~/.aws/config (after `aws sso login` for SSO), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary keys); or act on the simulated cloud: --cloud sim (or CELLCTL_CLOUD=sim)",
		what, credentialsCause(e.Err))
}

func (e *CredentialsError) Unwrap() error { return e.Err }

// AsCredentialsError returns the CredentialsError err carries, or nil.
func AsCredentialsError(err error) *CredentialsError {
	var ce *CredentialsError
	if errors.As(err, &ce) {
		return ce
	}
	return nil
}

// credentialsCause says in a few words why the chain found nothing: the
// SDK's own message runs to several clauses (the last provider tried,
// IMDS, and why it refused), on one line but hundreds of bytes long.
func credentialsCause(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	switch {
	case strings.Contains(msg, "no EC2 IMDS role found"), strings.Contains(msg, "ec2imds"):
		return "none in the environment, the shared config files or an instance role"
	case strings.Contains(msg, "failed to get shared config profile"):
		if i := strings.Index(msg, "failed to get shared config profile"); i >= 0 {
			return "no such profile: " + strings.TrimPrefix(msg[i:], "failed to get shared config profile, ")
		}
	}
	const max = 200
	if len(msg) > max {
		msg = msg[:max] + "…"
	}
	return msg
}

// credentialsTTL is how long a lookup's verdict answers for every target
// of its profile: the chain ends at the EC2 metadata service, which is
// retried for seconds per lookup, and a command builds a reader per
// region, account and cell, several at once. Past it, a lookup is tried
// again (a long-running `health --watch` picks up an `aws sso login`).
const credentialsTTL = 30 * time.Second

// credentialsVerdict is the last lookup of one profile; mu makes the
// readers built at once wait for the first lookup instead of each
// walking the chain (and each failing) on its own.
type credentialsVerdict struct {
	mu  sync.Mutex
	err error
	at  time.Time
}

var credentialVerdicts sync.Map // profile → *credentialsVerdict

// checkCredentials retrieves cfg's credentials, so that a target with
// none fails when its reader is built, with a CredentialsError, rather
// than at each call. The lookup warms cfg's own cache: the reader's first
// call signs with what it found.
func checkCredentials(ctx context.Context, profile string, cfg aws.Config) error {
	v, _ := credentialVerdicts.LoadOrStore(profile, &credentialsVerdict{})
	cv := v.(*credentialsVerdict)
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if !cv.at.IsZero() && time.Since(cv.at) < credentialsTTL {
		return cv.err
	}
	var err error
	if cfg.Credentials == nil {
		err = &CredentialsError{Profile: profile, Err: errors.New("no credential provider")}
	} else if _, rerr := cfg.Credentials.Retrieve(ctx); rerr != nil {
		if ctx.Err() != nil {
			return rerr // cancelled: no verdict on the credentials
		}
		err = &CredentialsError{Profile: profile, Err: rerr}
	}
	cv.err, cv.at = err, time.Now()
	return err
}
