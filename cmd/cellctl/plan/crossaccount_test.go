package plan

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/outcome"
	offline "github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/policy"
	"github.com/cellctl/cellctl/internal/render"
)

// withDirectKeyGrant renders the fleet, then gives cell-c's task role
// kms:Decrypt on the router's bucket key outside S3: a statement of the
// key policy naming the role and one of the role's policy naming the key.
func withDirectKeyGrant(t *testing.T) func(context.Context, *fleet.Fleet, offline.Options) (*offline.Report, error) {
	return func(ctx context.Context, f *fleet.Fleet, opts offline.Options) (*offline.Report, error) {
		r, err := offline.Render(ctx, f, opts)
		if err != nil {
			return nil, err
		}
		var keyARN, role string
		var keyPolicy, rolePolicy resource.PropertyMap
		for _, s := range r.Stacks {
			for _, res := range s.Recorded() {
				switch res.Name {
				case "router-bucket-key":
					keyARN, keyPolicy = res.Outputs["arn"].StringValue(), res.Inputs
				case "cell-c-task-policy":
					rolePolicy = res.Inputs
				}
			}
			if s.Name == "cell-c" {
				role, _ = s.Outputs["taskRoleArn"].(string)
			}
		}
		if keyPolicy == nil || rolePolicy == nil || role == "" {
			t.Fatal("the render has no router-bucket-key, cell-c-task-policy or cell-c task role")
		}
		add := func(in resource.PropertyMap, st policy.Statement) {
			doc, err := policy.Parse(in["policy"].StringValue())
			if err != nil {
				t.Fatal(err)
			}
			doc.Statement = append(doc.Statement, st)
			js, _ := doc.JSON()
			in["policy"] = resource.NewStringProperty(js)
		}
		add(keyPolicy, policy.Statement{Sid: "CellCDecryptsDirectly", Effect: policy.Allow, Principal: policy.AWSPrincipals(role),
			Action: policy.Values{"kms:Decrypt"}, Resource: policy.Values{"*"}})
		add(rolePolicy, policy.Statement{Sid: "DecryptWithTheFleetKey", Effect: policy.Allow,
			Action: policy.Values{"kms:Decrypt"}, Resource: policy.Values{keyARN}})
		return r, nil
	}
}

// `plan` on a fleet of two accounts counts the cross-account forbidden
// paths on the paths line and in -o json. A cell of the second account
// granted the router's bucket key directly is a finding naming the
// statements that allow it (exit 2) when stacks/shared.yaml does not
// declare the key, and nothing when it does.
func TestPlanForbidsCrossAccountReachOfUndeclaredParts(t *testing.T) {
	fl := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	out, err := run(t, fl, render.FormatTable, offline.Render)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "\npaths: ok (required: ") || !strings.Contains(out, "; forbidden: 1482/1482 denied, 78 of them across accounts)\n") {
		t.Fatalf("the paths line does not count the cross-account paths:\n%s", out)
	}
	js, err := run(t, fl, render.FormatJSON, offline.Render)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths struct {
			CrossAccount int `json:"forbiddenCrossAccount"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.Paths.CrossAccount != 78 {
		t.Fatalf("plan -o json: forbiddenCrossAccount %d (%v)", doc.Paths.CrossAccount, err)
	}

	if out, err := run(t, fl, render.FormatTable, withDirectKeyGrant(t)); err != nil {
		t.Fatalf("the grant on the declared bucket key: %v\n%s", err, out)
	}

	dir := fleettest.Demo(t, fleettest.TwoAccounts)
	fleettest.Edit(t, dir, "stacks/shared.yaml", func(s string) string {
		return strings.Replace(s, "  - kind: kms-key\n    id: router-bucket-key\n", "  - kind: kms-key\n    id: router-other-key\n", 1)
	})
	undeclared := fleettest.Load(t, dir)
	out, err = run(t, undeclared, render.FormatTable, withDirectKeyGrant(t))
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || !strings.Contains(err.Error(), "access paths: 1 finding(s)") {
		t.Fatalf("err = %v\n%s", err, out)
	}
	for _, want := range []string{
		"paths: 1 finding(s) (required: ",
		"  - [forbidden] cell-c/task-role must not reach router's router/bucket-key across accounts (123456789012, not declared shared)\n" +
			"      cell-c/task-role kms:Decrypt router/bucket-key: Allowed\n",
		"; allowed by cell-c/task-policy (inline) DecryptWithTheFleetKey (Allow), router/bucket-key (key policy) CellCDecryptsDirectly (Allow)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
}

// A shared.yaml that does not parse stops `plan` with its file:line error
// (bad input, exit 1) before any section is printed.
func TestPlanRefusesAMalformedSharedFile(t *testing.T) {
	dir := fleettest.Demo(t, fleettest.TwoAccounts)
	fleettest.Edit(t, dir, "stacks/shared.yaml", func(s string) string { return s + "  - kind: kms-key\n" })
	out, err := run(t, fleettest.Load(t, dir), render.FormatTable, offline.Render)
	if err == nil || exitcode.Of(err) != exitcode.Error || !strings.Contains(err.Error(), "stacks/shared.yaml:") ||
		!strings.Contains(err.Error(), ".id: missing") || strings.Contains(out, "paths:") {
		t.Fatalf("err = %v\n%s", err, out)
	}
}
