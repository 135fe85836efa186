package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/policy"
)

// crossAccount are the written-out paths of the cross-account family.
func crossAccount(m *access.Model, f *fleet.Fleet) []access.Path {
	var out []access.Path
	for _, p := range m.Forbidden(func(o string) bool { return f.Cell(o) != nil }) {
		if strings.Contains(p.Name, " across accounts (") {
			out = append(out, p)
		}
	}
	return out
}

// With cells in a second account, every role is tried on the data of
// every resource of the other account (a cell's secret written, a queue's
// messages hidden, which the cell family does not try) — except the parts
// stacks/shared.yaml declares: the fleet bucket, its key and the access
// points into it, whose cross-account reach is the cell family's (each
// cell its own prefix). All are denied. A fleet of one account has no such
// path.
func TestCrossAccountDataIsForbidden(t *testing.T) {
	demo := fleettest.Load(t, fleettest.Demo(t))
	r, _ := renderPaths(t, demo)
	if r.Forbidden.CrossAccount != 0 {
		t.Fatalf("a one-account fleet has %d cross-account paths", r.Forbidden.CrossAccount)
	}

	f := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	r, m := renderPaths(t, f)
	logFindings(t, r)
	sameAsWrittenOut(t, f, m, r)
	cross := crossAccount(m, f)
	if r.Forbidden.CrossAccount == 0 || len(cross) != r.Forbidden.CrossAccount || r.Forbidden.Denied != r.Forbidden.Total {
		t.Fatalf("cross-account paths: %d decided, %d written out; %d/%d denied", r.Forbidden.CrossAccount, len(cross), r.Forbidden.Denied, r.Forbidden.Total)
	}
	has := func(paths []access.Path, principal, action, res string) bool {
		for _, p := range paths {
			if p.Principal == principal && p.Action == action && p.Resource == res {
				return true
			}
		}
		return false
	}
	for _, want := range [][3]string{
		{"cell-c/task-role", "secretsmanager:PutSecretValue", "cell-a/db/master-secret"},
		{"cell-a/task-role", "sqs:ChangeMessageVisibility", "cell-d/queue"},
		{"router/edge-role", "secretsmanager:PutSecretValue", "cell-c/db/master-secret"},
	} {
		if !has(cross, want[0], want[1], want[2]) {
			t.Errorf("no cross-account path %s %s %s", want[0], want[1], want[2])
		}
	}
	for _, p := range cross {
		if strings.HasPrefix(p.Resource, "router/") {
			t.Errorf("%s: a declared shared part (or an access point into the declared bucket) is in the cross-account family", p.Name)
		}
		if p.Action == "sqs:SendMessage" || p.Action == "sts:AssumeRole" {
			t.Errorf("%s %s: the cell family tries it already, counted twice", p.Name, p.Action)
		}
	}
	t.Logf("two accounts: %d forbidden paths, %d of them across accounts", r.Forbidden.Total, r.Forbidden.CrossAccount)

	// Without shared.yaml nothing is declared: the router's bucket, key and
	// access points are tried from the second account too, and denied.
	dir := fleettest.Demo(t, fleettest.TwoAccounts)
	removeShared(t, dir)
	bare := fleettest.Load(t, dir)
	rb, mb := renderPaths(t, bare)
	logFindings(t, rb)
	sameAsWrittenOut(t, bare, mb, rb)
	all := crossAccount(mb, bare)
	for _, want := range [][3]string{
		{"cell-c/task-role", "kms:Decrypt", "router/bucket-key"},
		{"cell-d/task-role", "s3:GetObject", "router/bucket"},
		{"cell-c/task-role", "s3:GetObject", "router/cell-c-access-point"},
	} {
		if !has(all, want[0], want[1], want[2]) {
			t.Errorf("without shared.yaml, no cross-account path %s %s %s", want[0], want[1], want[2])
		}
	}
	if rb.Forbidden.CrossAccount <= r.Forbidden.CrossAccount {
		t.Errorf("without shared.yaml %d cross-account paths, with it %d", rb.Forbidden.CrossAccount, r.Forbidden.CrossAccount)
	}
}

func removeShared(t *testing.T, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, "stacks", "shared.yaml")); err != nil {
		t.Fatal(err)
	}
}

// grantCellCTheBucketKey gives cell-c's task role (the second account)
// kms:Decrypt on the router's bucket key outside S3: a statement in the
// key policy naming the role, and one in the role's policy naming the
// key — a direct use of a router resource across accounts.
func grantCellCTheBucketKey(t *testing.T, rep *Report) {
	t.Helper()
	key := recordedNamed(t, rep, "router", "router-bucket-key")
	keyARN := key.Outputs["arn"].StringValue()
	role, _ := stackNamed(rep, "cell-c").Outputs["taskRoleArn"].(string)
	edit := func(r string, s policy.Statement) {
		for _, res := range []string{r} {
			stack, name, _ := strings.Cut(res, "/")
			rec := recordedNamed(t, rep, stack, name)
			doc, err := policy.Parse(rec.Inputs["policy"].StringValue())
			if err != nil {
				t.Fatal(err)
			}
			doc.Statement = append(doc.Statement, s)
			js, _ := doc.JSON()
			rec.Inputs["policy"] = resource.NewStringProperty(js)
		}
	}
	edit("router/router-bucket-key", policy.Statement{Sid: "CellCDecryptsDirectly", Effect: policy.Allow,
		Principal: policy.AWSPrincipals(role), Action: policy.Values{"kms:Decrypt"}, Resource: policy.Values{"*"}})
	edit("cell-c/cell-c-task-policy", policy.Statement{Sid: "DecryptWithTheFleetKey", Effect: policy.Allow,
		Action: policy.Values{"kms:Decrypt"}, Resource: policy.Values{keyARN}})
}

// A cell of the second account granted a router resource that
// stacks/shared.yaml does not declare is a finding naming the statements
// that allow it, and the apply path's gate refuses the change (exit 2,
// nothing changed); the same grant on the declared bucket key is the
// fleet's declared sharing, not a finding. Before the cross-account
// family the gate let the undeclared grant through: only the key's
// administration was tried from a cell.
func TestACrossAccountGrantOfAnUndeclaredRouterResourceIsRefused(t *testing.T) {
	dir := fleettest.Demo(t, fleettest.TwoAccounts)
	fleettest.Edit(t, dir, "stacks/shared.yaml", func(s string) string {
		i := strings.Index(s, "  - kind: kms-key\n    id: router-bucket-key\n")
		j := strings.Index(s, "  - kind: prefix-list")
		if i < 0 || j < i {
			t.Fatal("the two-accounts shared.yaml no longer declares router-bucket-key before the prefix list")
		}
		return s[:i] + s[j:]
	})
	f := fleettest.Load(t, dir)
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := RefuseBrokenPaths(rep, f); err != nil {
		t.Fatalf("the fleet as rendered, the key undeclared: %v", err)
	}
	grantCellCTheBucketKey(t, rep)
	err = RefuseBrokenPaths(rep, f)
	if exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "nothing was changed") ||
		!strings.Contains(err.Error(), "cell-c/task-role kms:Decrypt router/bucket-key is allowed") ||
		!strings.Contains(err.Error(), "allowed by cell-c/task-policy (inline) DecryptWithTheFleetKey (Allow), router/bucket-key (key policy) CellCDecryptsDirectly (Allow)") {
		t.Fatalf("got %v", err)
	}
	paths, m, err := rep.Paths(f, sharedOf(t, f))
	if err != nil {
		t.Fatal(err)
	}
	sameAsWrittenOut(t, f, m, paths)

	declared := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	rep, err = Render(context.Background(), declared, Options{})
	if err != nil {
		t.Fatal(err)
	}
	grantCellCTheBucketKey(t, rep)
	if err := RefuseBrokenPaths(rep, declared); err != nil {
		t.Fatalf("the grant on the declared bucket key: %v", err)
	}
}

// A shared.yaml that does not parse refuses the apply path's gate with
// its file:line error before anything runs: the cross-account paths
// cannot be decided without it. It is bad input (exit 1), as `cellctl
// plan` reports it.
func TestTheGateRefusesAMalformedSharedFile(t *testing.T) {
	dir := fleettest.Demo(t, fleettest.TwoAccounts)
	fleettest.Edit(t, dir, "stacks/shared.yaml", func(s string) string { return s + "  - kind: Bucket\n    id: x\n" })
	f := fleettest.Load(t, dir)
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = RefuseBrokenPaths(rep, f)
	if err == nil || exitcode.Of(err) != exitcode.Error || !strings.Contains(err.Error(), "nothing was changed") ||
		!strings.Contains(err.Error(), "stacks/shared.yaml:") || !strings.Contains(err.Error(), "is not a part kind") {
		t.Fatalf("got %v", err)
	}
}
