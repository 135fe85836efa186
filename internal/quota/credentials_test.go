package quota

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/fleet"
)

// TestNoCredentialsIsOneError: on aws with no credentials (the default
// chain pointed at nothing, the EC2 metadata service disabled: no network),
// the audit and the preflight stop with the one line that says what to
// set — not a row per quota, a refusal per zone, or an error per reader.
func TestNoCredentialsIsOneError(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_ROLE_ARN": "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"), "HOME": dir,
	} {
		t.Setenv(k, v)
	}
	fl := demoFleet(t)
	target := func(a fleet.Access) awsapi.Target {
		return awsapi.Target{Region: a.Region, Profile: a.Profile, MaxAttempts: 1}
	}
	check := func(what string, err error) {
		t.Helper()
		if awsapi.AsCredentialsError(err) == nil {
			t.Fatalf("%s: err = %v, want the credentials error", what, err)
		}
		if msg := err.Error(); strings.Count(msg, "no AWS credentials") != 1 || strings.Contains(msg, "\n") || !strings.Contains(msg, "--cloud sim") {
			t.Fatalf("%s: not one line saying what to set:\n%s", what, msg)
		}
	}
	rep, err := Check(context.Background(), Options{Fleet: fl, Target: target})
	if rep != nil {
		t.Fatalf("a report of %d rows beside the error", len(rep.Rows))
	}
	check("quota", err)
	_, err = Preflight(context.Background(), Options{Fleet: fl, Target: target, NewCells: []string{"cell-a"}, NewRouter: true})
	check("preflight", err)
}
