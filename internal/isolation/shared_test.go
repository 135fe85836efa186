package isolation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/offline"
)

func TestJudgeUndeclaredDeclaredAndStale(t *testing.T) {
	parts := []Part{
		{Kind: KindBucket, ID: "fleet-bucket", Plane: RequestPath, Cells: []string{"cell-a", "cell-b"}, TenantShare: 1},
		{Kind: "sns-topic", ID: topic, Plane: RequestPath, Why: unclassifiedWhy, Cells: []string{"cell-a", "cell-b"}, TenantShare: 0.5},
	}
	decl, err := ParseDeclarations("stacks/shared.yaml", []byte(`shared:
  - kind: bucket
    id: fleet-bucket
    why: one prefix per cell
  - kind: dns-zone
    id: Z0123456789ABCDEFGHIJ
`))
	if err != nil {
		t.Fatal(err)
	}
	l := Judge(parts, decl, 2)
	if l.OK || len(l.Undeclared) != 1 || l.Undeclared[0].Kind != "sns-topic" {
		t.Fatalf("undeclared = %+v", l.Undeclared)
	}
	if l.Parts[0].Declared == nil || l.Parts[0].Declared.Why != "one prefix per cell" || l.Parts[1].Declared != nil {
		t.Errorf("declared marks: %+v", l.Parts)
	}
	if len(l.Stale) != 1 || l.Stale[0].ID != "Z0123456789ABCDEFGHIJ" || !strings.Contains(l.StaleNote(l.Stale[0]), "stacks/shared.yaml:5:") {
		t.Errorf("stale = %+v", l.Stale)
	}
	if err := l.Error(); err == nil || !strings.Contains(err.Error(), "sns-topic "+topic) {
		t.Errorf("error = %v", err)
	}
	if e := l.Undeclared[0].Entry(); !strings.Contains(e, "kind: sns-topic") || !strings.Contains(e, "id: "+topic) {
		t.Errorf("entry = %q", e)
	}

	// Declaring it clears it, and its plane: overrides the guess.
	decl, err = ParseDeclarations("stacks/shared.yaml", []byte(`shared:
  - {kind: bucket, id: fleet-bucket}
  - kind: sns-topic
    id: "`+topic+`"
    plane: control-plane
    why: only the nightly export publishes
`))
	if err != nil {
		t.Fatal(err)
	}
	l = Judge(parts, decl, 2)
	if !l.OK || l.Error() != nil || l.Parts[1].Plane != ControlPlane || !strings.Contains(l.Parts[1].Why, "nightly export") {
		t.Fatalf("ledger = %+v", l)
	}
}

func TestDeclarationErrorsArePositioned(t *testing.T) {
	_, err := ParseDeclarations("stacks/shared.yaml", []byte(`shared:
  - kind: bucket
  - kind: Bucket
    id: x
  - kind: bucket
    id: fleet
    plane: data
  - kind: dns-zone
    id: Z1
    colour: blue
  - kind: dns-zone
    id: Z1
sharing: []
`))
	if err == nil {
		t.Fatal("a broken declaration parsed")
	}
	for _, want := range []string{
		"stacks/shared.yaml:2: shared[0].id: missing",
		`stacks/shared.yaml:3: shared[1].kind: "Bucket" is not a part kind`,
		`stacks/shared.yaml:7: shared[2].plane: "data" is not a plane (allowed: request-path, control-plane)`,
		"stacks/shared.yaml:10: shared[3].colour: unknown key (allowed: kind, id, plane, why)",
		"stacks/shared.yaml:11: shared[4]: dns-zone Z1 is declared twice (first on line 8)",
		"stacks/shared.yaml:13: sharing: unknown key (allowed: shared)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q:\n%v", want, err)
		}
	}
}

func TestAFleetWithoutADeclarationDeclaresNothing(t *testing.T) {
	d, err := LoadDeclarations(t.TempDir(), "stacks")
	if err != nil || !d.Missing || d.File != "stacks/shared.yaml" || len(d.Entries) != 0 {
		t.Fatalf("declarations = %+v, %v", d, err)
	}
}

// The demo fleet's declaration parses and declares what the README says.
func TestTheDemoDeclarationParses(t *testing.T) {
	d, err := LoadDeclarations("../..", "stacks")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, e := range d.Entries {
		keys[e.Key()] = true
		if e.Why == "" {
			t.Errorf("%s: the demo declares every part with a reason", e.Key())
		}
	}
	for _, k := range []string{"distribution router-cdn", "edge-function router-edge", "secret cells:originVerifySecret", "bucket example-cells-fleet",
		"dns-zone Z0123456789ABCDEFGHIJ", "state-backend pulumi-backend", "account current"} {
		if !keys[k] {
			t.Errorf("the demo does not declare %s", k)
		}
	}
}

func TestStackSecretsProvider(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "secretsprovider: awskms://alias/fleet?region=us-east-1\nconfig:\n  cells:index: 1\n")
	write("b.yaml", "config:\n  cells:index: 2\n")
	if got := StackSecretsProvider(dir, "a.yaml"); got != "awskms://alias/fleet" {
		t.Errorf("a = %q", got)
	}
	if got := StackSecretsProvider(dir, "b.yaml"); got != "" {
		t.Errorf("b = %q", got)
	}
}

// A declaration names a rendered resource the way the ledger names it: a
// bucket by its name, anything else by its ARN, the router's key (and
// request path) also by its logical name. An access point is never its
// bucket's name, and a router resource of another kind is not named by
// its logical name.
func TestDeclaredARNsNameResourcesAsTheLedgerDoes(t *testing.T) {
	res := func(typ, name, arn string) *offline.Resource {
		return &offline.Resource{Type: typ, Name: name, Custom: true,
			Outputs: resource.PropertyMap{"arn": resource.NewStringProperty(arn)}}
	}
	const (
		bucket = "arn:aws:s3:::fleet-bucket"
		key    = "arn:aws:kms:us-east-1:123456789012:key/k1"
		ap     = "arn:aws:s3:us-east-1:123456789012:accesspoint/cell-c-1"
		queue  = "arn:aws:sqs:us-east-1:123456789012:jobs"
		role   = "arn:aws:iam::123456789012:role/router-edge-role-1"
	)
	router := []*offline.Resource{
		res("aws:s3/bucketV2:BucketV2", "router-bucket", bucket),
		res("aws:kms/key:Key", "router-bucket-key", key),
		res("aws:s3/accessPoint:AccessPoint", "router-cell-c-access-point", ap),
		res("aws:sqs/queue:Queue", "router-jobs", queue),
		res("aws:iam/role:Role", "router-edge-role", role),
	}
	decl, err := ParseDeclarations("shared.yaml", []byte(`shared:
  - {kind: bucket, id: fleet-bucket}
  - {kind: kms-key, id: router-bucket-key}
  - {kind: sqs-queue, id: "`+queue+`"}
  - {kind: iam-role, id: router-edge-role}
  - {kind: bucket, id: router-cell-c-access-point}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(decl.DeclaredARNs(router, true), " ")
	if want := strings.Join([]string{bucket, key, queue}, " "); got != want {
		t.Fatalf("declared %s, want %s", got, want)
	}
	if got := decl.DeclaredARNs(router, false); len(got) != 2 || got[0] != bucket || got[1] != queue {
		t.Fatalf("a cell's resources are named by their ARN only: %v", got)
	}
	if got := (&Declarations{Missing: true}).DeclaredARNs(router, true); len(got) != 0 {
		t.Fatalf("no file declares nothing: %v", got)
	}
}
