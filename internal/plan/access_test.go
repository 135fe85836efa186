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
	"github.com/cellctl/cellctl/internal/isolation"
	"github.com/cellctl/cellctl/internal/offline"
	"github.com/cellctl/cellctl/internal/policy"
)

func renderPaths(t *testing.T, f *fleet.Fleet) (access.Report, *access.Model) {
	t.Helper()
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	paths, m, err := rep.Paths(f, sharedOf(t, f))
	if err != nil {
		t.Fatal(err)
	}
	return paths, m
}

// sharedOf is the fleet's stacks/shared.yaml, as plan and the apply path
// load it.
func sharedOf(t testing.TB, f *fleet.Fleet) *isolation.Declarations {
	t.Helper()
	decl, err := LoadShared(f)
	if err != nil {
		t.Fatal(err)
	}
	return decl
}

func logFindings(t *testing.T, r access.Report) {
	t.Helper()
	for _, x := range r.Findings() {
		t.Errorf("%s: %s (%s): %s", x.Path.Name, x.Describe(), x.Decision, x.Reason)
	}
}

// Every path a demo cell needs is allowed and no path between cells is.
func TestDemoFleetPathsHold(t *testing.T) {
	f := fleettest.Load(t, fleettest.Demo(t))
	r, m := renderPaths(t, f)
	logFindings(t, r)
	allowed, required, denied, forbidden := r.Counts()
	t.Logf("required %d/%d allowed, forbidden %d/%d denied", allowed, required, denied, forbidden)
	sameAsWrittenOut(t, f, m, r)
	if required < 14*len(f.Cells) || forbidden < 20*len(f.Cells)*(len(f.Cells)-1) {
		t.Fatalf("too few paths: %d required, %d forbidden", required, forbidden)
	}
}

func TestTwoAccountFleetPathsHold(t *testing.T) {
	f := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	r, m := renderPaths(t, f)
	logFindings(t, r)
	sameAsWrittenOut(t, f, m, r)
}

// sameAsWrittenOut holds CheckForbidden to the claim written out: every
// forbidden path evaluated in full gives the same counts (the
// cross-account family's too) and findings, each with the same reason
// (the statements that allow it).
func sameAsWrittenOut(t *testing.T, f *fleet.Fleet, m *access.Model, r access.Report) {
	t.Helper()
	isCell := func(owner string) bool { return f.Cell(owner) != nil }
	full := m.CheckDenied(m.Forbidden(isCell))
	denied := 0
	var findings []string
	cross := 0
	for _, x := range full {
		if strings.Contains(x.Path.Name, " across accounts (") {
			cross++
		}
		if x.Finding {
			findings = append(findings, x.Describe()+": "+x.Reason)
		} else {
			denied++
		}
	}
	var fast []string
	for _, x := range r.Forbidden.Findings {
		fast = append(fast, x.Describe()+": "+x.Reason)
	}
	if len(full) != r.Forbidden.Total || denied != r.Forbidden.Denied || cross != r.Forbidden.CrossAccount ||
		strings.Join(findings, "\n") != strings.Join(fast, "\n") {
		t.Fatalf("written out: %d paths (%d across accounts), %d denied, findings %v; CheckForbidden: %d (%d), %d denied, findings %v",
			len(full), cross, denied, findings, r.Forbidden.Total, r.Forbidden.CrossAccount, r.Forbidden.Denied, fast)
	}
	t.Logf("%d forbidden paths, %d evaluated in full", len(full), r.Forbidden.Evaluated)
}

// A cell's task role without its key statement cannot write its prefix
// under the bucket's customer managed key: the finding names the path and
// the key call.
func TestAPathFindingNamesTheKeyCall(t *testing.T) {
	f := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	r, m := renderPaths(t, f)
	if len(r.Findings()) > 0 {
		t.Skip("the two-accounts fleet has findings of its own (TestTwoAccountFleetPathsHold)")
	}
	p := m.Principal("cell-a/task-role")
	if p == nil {
		t.Fatal("no cell-a/task-role")
	}
	for i := range p.Identity {
		doc := &p.Identity[i].Doc
		kept := doc.Statement[:0]
		for _, s := range doc.Statement {
			if !strings.HasPrefix(strings.ToLower(s.Action[0]), "kms:") {
				kept = append(kept, s)
			}
		}
		doc.Statement = kept
	}
	var got []string
	for _, x := range m.CheckRequired(RequiredPaths(f)) {
		if !x.Finding {
			continue
		}
		got = append(got, x.Path.Name+": "+x.Reason)
	}
	joined := strings.Join(got, "\n")
	if !strings.Contains(joined, "cell-a: the task writes its prefix") || !strings.Contains(joined, "kms:GenerateDataKey") {
		t.Fatalf("findings:\n%s", joined)
	}
}

// recordedNamed returns a rendered stack's resource by logical name.
func recordedNamed(t *testing.T, rep *Report, stack, name string) *offline.Resource {
	t.Helper()
	for _, r := range stackNamed(rep, stack).recorded {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("%s has no %s", stack, name)
	return nil
}

// The first change the review found: a same-account cell whose task role
// cannot use the bucket's customer managed key. The apply path's gate
// refuses it (exit 2), naming the path and the key call.
func TestApplyGateRefusesACellLockedOutOfTheBucketKey(t *testing.T) {
	f := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := RefuseBrokenPaths(rep, f); err != nil {
		t.Fatalf("the two-accounts fleet as rendered: %v", err)
	}
	pol := recordedNamed(t, rep, "cell-a", "cell-a-task-policy")
	doc, err := policy.Parse(pol.Inputs["policy"].StringValue())
	if err != nil {
		t.Fatal(err)
	}
	kept := doc.Statement[:0]
	for _, s := range doc.Statement {
		if !strings.HasPrefix(strings.ToLower(s.Action[0]), "kms:") {
			kept = append(kept, s)
		}
	}
	doc.Statement = kept
	js, _ := doc.JSON()
	pol.Inputs["policy"] = resource.NewStringProperty(js)
	err = RefuseBrokenPaths(rep, f)
	if exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "nothing was changed") ||
		!strings.Contains(err.Error(), "cell-a: the task writes its prefix") || !strings.Contains(err.Error(), "kms:GenerateDataKey") {
		t.Fatalf("got %v", err)
	}
}

// The second: a bucket key a later change could delete (the drain of the
// last cross-account cell used to). A key that encrypts data and is not
// protected and retained is refused.
func TestApplyGateRefusesADeletableBucketKey(t *testing.T) {
	f := fleettest.Load(t, fleettest.Demo(t))
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	recordedNamed(t, rep, "router", "router-bucket-key").RetainOnDelete = false
	err = RefuseBrokenPaths(rep, f)
	if exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "router/bucket-key encrypts router/bucket but is not protected and retained") {
		t.Fatalf("got %v", err)
	}
}

// A misspelt action is inert in IAM: the grant it was meant to be never
// works. Every action a rendered policy names must be one AWS defines.
func TestAMisspeltActionIsAFinding(t *testing.T) {
	f := fleettest.Load(t, fleettest.Demo(t))
	rep, err := Render(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	paths, _, err := rep.Paths(f, sharedOf(t, f))
	if err != nil || len(paths.Actions) > 0 {
		t.Fatalf("the demo fleet: %v %v", err, paths.Actions)
	}
	pol := recordedNamed(t, rep, "cell-b", "cell-b-task-policy")
	pol.Inputs["policy"] = resource.NewStringProperty(strings.Replace(pol.Inputs["policy"].StringValue(), "s3:PutObject", "s3:PutObjekt", 1))
	err = RefuseBrokenPaths(rep, f)
	if exitcode.Of(err) != exitcode.Findings || !strings.Contains(err.Error(), "cell-b/task-policy (inline) statement CellObjects names s3:PutObjekt, which AWS does not define") {
		t.Fatalf("got %v", err)
	}
}

// A cell `cell add` has deployed but not routed yet serves no tenant, and
// the router grants a cell in another account its prefix only when it
// routes it: its bucket paths are not required yet, its own are.
func TestAnUnroutedCellNeedsNoBucketPathYet(t *testing.T) {
	dir := fleettest.Demo(t)
	if err := os.WriteFile(filepath.Join(dir, "stacks", "Pulumi.cell-e.yaml"), []byte("config:\n  cells:index: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fleettest.Edit(t, dir, "stacks/waves.yaml", func(s string) string { return strings.Replace(s, "cell-d", "cell-d, cell-e", 1) })
	f := fleettest.Load(t, dir)
	bucket := map[string]bool{}
	own := map[string]bool{}
	for _, p := range RequiredPaths(f) {
		cell, _, _ := strings.Cut(p.Name, ":")
		if p.Resource == "router/bucket" {
			bucket[cell] = true
		} else {
			own[cell] = true
		}
	}
	if !bucket["cell-a"] || bucket["cell-e"] || !own["cell-e"] {
		t.Fatalf("bucket paths for %v, own paths for %v: want cell-a's bucket paths, none of cell-e's, and cell-e's own", bucket, own)
	}
}
