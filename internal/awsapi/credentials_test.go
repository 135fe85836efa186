package awsapi

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// noCredentials points the SDK's default chain at nothing, without the
// network: no keys or profile in the environment, shared config files
// that do not exist, no web identity or container role, and the EC2
// metadata service disabled (the chain's last resort, which on a laptop
// or CI runner otherwise costs seconds of retries per lookup).
func noCredentials(t testing.TB) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_DISABLED":              "true",
		"AWS_ACCESS_KEY_ID":                      "",
		"AWS_SECRET_ACCESS_KEY":                  "",
		"AWS_SESSION_TOKEN":                      "",
		"AWS_PROFILE":                            "",
		"AWS_DEFAULT_PROFILE":                    "",
		"AWS_CONFIG_FILE":                        filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE":            filepath.Join(dir, "credentials"),
		"AWS_WEB_IDENTITY_TOKEN_FILE":            "",
		"AWS_ROLE_ARN":                           "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI":     "",
		"HOME":                                   dir,
	} {
		t.Setenv(k, v)
	}
	forgetCredentials()
	t.Cleanup(forgetCredentials)
}

func forgetCredentials() {
	credentialVerdicts.Range(func(k, _ any) bool { credentialVerdicts.Delete(k); return true })
}

// TestNoCredentialsIsOneLine: with no credentials anywhere, building a
// reader fails with a CredentialsError whose message is one short line
// naming what to set.
func TestNoCredentialsIsOneLine(t *testing.T) {
	noCredentials(t)
	_, err := NewCloudWatch(context.Background(), Target{Region: "us-east-1"})
	ce := AsCredentialsError(err)
	if ce == nil {
		t.Fatalf("err = %v, want a CredentialsError", err)
	}
	msg := err.Error()
	want := "no AWS credentials (none in the environment, the shared config files or an instance role): set AWS_PROFILE to a profile in ~/.aws/config (after `aws sso login` for SSO), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary keys); or act on the simulated cloud: --cloud sim (or CELLCTL_CLOUD=sim)"
	if msg != want {
		t.Fatalf("message:\n got %s\nwant %s", msg, want)
	}
}

// TestNoCredentialsLookedUpOnce: the readers a command builds at once —
// every region's inventory, quotas and alarms — share the first lookup's
// verdict: one walk of the chain, one error value.
func TestNoCredentialsLookedUpOnce(t *testing.T) {
	noCredentials(t)
	ctx := context.Background()
	var mu sync.Mutex
	seen := map[*CredentialsError]bool{}
	var wg sync.WaitGroup
	for _, region := range []string{"us-east-1", "us-west-2", "eu-west-1", "ap-southeast-2"} {
		for _, build := range []func(context.Context, Target) error{
			func(ctx context.Context, t Target) error { _, err := NewCloudWatch(ctx, t); return err },
			func(ctx context.Context, t Target) error { _, err := NewInventory(ctx, t); return err },
			func(ctx context.Context, t Target) error { _, err := NewQuotas(ctx, t); return err },
			func(ctx context.Context, t Target) error { _, err := NewRoute53(ctx, t); return err },
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ce := AsCredentialsError(build(ctx, Target{Region: region}))
				mu.Lock()
				seen[ce] = true
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	if len(seen) != 1 || seen[nil] {
		t.Fatalf("%d distinct outcomes (nil among them: %v), want one CredentialsError", len(seen), seen[nil])
	}
}

// TestMissingProfile: a profile that does not exist is the same error,
// naming the profile.
func TestMissingProfile(t *testing.T) {
	noCredentials(t)
	_, err := NewCloudWatch(context.Background(), Target{Region: "us-east-1", Profile: "prod"})
	if AsCredentialsError(err) == nil || !strings.HasPrefix(err.Error(), `no AWS credentials from profile "prod" (aws:profile) (no such profile: prod)`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v", err)
	}
}

// TestCredentialsFromEnvironment: keys in the environment are found
// without any call; the reader builds.
func TestCredentialsFromEnvironment(t *testing.T) {
	noCredentials(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	if _, err := NewCloudWatch(context.Background(), Target{Region: "us-east-1"}); err != nil {
		t.Fatalf("err = %v", err)
	}
}
