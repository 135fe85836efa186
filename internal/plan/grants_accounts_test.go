package plan

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/isolation"
	"github.com/cellctl/cellctl/internal/props"
)

func stackNamed(rep *Report, name string) *Stack {
	for _, s := range rep.Stacks {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func inputOf(t *testing.T, s *Stack, typ, key string) string {
	t.Helper()
	for _, r := range s.recorded {
		if r.Type == typ {
			v, _ := props.Plain(r.Inputs)[key].(string)
			return v
		}
	}
	t.Fatalf("%s has no %s", s.Name, typ)
	return ""
}

func inputOfJSON(t *testing.T, s *Stack, typ, key string) string {
	t.Helper()
	for _, r := range s.recorded {
		if r.Type == typ {
			b, _ := json.Marshal(props.Plain(r.Inputs)[key])
			return string(b)
		}
	}
	t.Fatalf("%s has no %s", s.Name, typ)
	return ""
}

// With cells in a second account, the fleet bucket grants each of them
// its own prefix through its own access point (the bucket policy
// delegates to the bucket account's access points and names no cell),
// its key through S3, the cells' task roles may use the key, and the
// isolation audit accepts exactly these grants.
func TestCellsInAnotherAccountAreGrantedTheirPrefixOnly(t *testing.T) {
	fl := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	rep, err := Render(context.Background(), fl, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Isolation.OK {
		t.Fatalf("isolation audit: %v", rep.Isolation.Violations)
	}
	router := stackNamed(rep, fleet.RouterStack)
	policy := inputOf(t, router, "aws:s3/bucketPolicy:BucketPolicy", "policy")
	cellC := stackNamed(rep, "cell-c")
	role, _ := cellC.Outputs["taskRoleArn"].(string)
	if !strings.Contains(role, ":"+fleettest.SecondAccount+":") {
		t.Fatalf("cell-c's task role %q is not in the second account", role)
	}
	for _, id := range fl.CellIDs() {
		if strings.Contains(policy, id) {
			t.Errorf("the bucket policy names %s; the grants are the access points':\n%s", id, policy)
		}
	}
	if !strings.Contains(policy, `"s3:DataAccessPointAccount":"123456789012"`) {
		t.Errorf("the bucket policy does not delegate to its account's access points:\n%s", policy)
	}
	granted := map[string]string{}
	for _, r := range router.recorded {
		if r.Type != "aws:s3/accessPoint:AccessPoint" {
			continue
		}
		in := props.Plain(r.Inputs)
		var doc struct{ Statement []map[string]any }
		if err := json.Unmarshal([]byte(in["policy"].(string)), &doc); err != nil {
			t.Fatal(err)
		}
		for _, st := range doc.Statement {
			p, _ := st["Principal"].(map[string]any)
			res, _ := st["Resource"].(string)
			granted[in["name"].(string)+" "+p["AWS"].(string)+" "+st["Sid"].(string)] = res
		}
	}
	if got := granted[spec.AccessPointName(fl.Router.FleetBucket, "cell-c")+" "+role+" CellObjects"]; !strings.HasSuffix(got, "/object/cells/cell-c/*") {
		t.Errorf("cell-c's object grant = %q; statements %v", got, granted)
	}
	if len(granted) != 4 {
		t.Errorf("grants %v: want objects and list for cell-c and cell-d only (cell-a and cell-b share the router's account)", granted)
	}
	if key := inputOf(t, router, "aws:kms/key:Key", "policy"); !strings.Contains(key, role) || !strings.Contains(key, "kms:ViaService") {
		t.Errorf("bucket key policy %s does not let cell-c's role use it through S3", key)
	}
	if sse := inputOfJSON(t, router, "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2", "rules"); !strings.Contains(sse, `"kmsMasterKeyId":"arn:aws:kms:`) {
		t.Errorf("bucket default encryption %s does not name the bucket key by its ARN", sse)
	}
	task := ""
	for _, r := range cellC.recorded {
		if r.Type == "aws:iam/rolePolicy:RolePolicy" && strings.HasSuffix(r.Name, "task-policy") {
			task, _ = props.Plain(r.Inputs)["policy"].(string)
		}
	}
	if !strings.Contains(task, "FleetBucketKeyThroughS3") {
		t.Errorf("cell-c's task policy cannot use the fleet bucket key: %s", task)
	}
}

// The demo fleet (one account) grants nothing to another account, yet its
// bucket has the same encryption as any fleet's: the fleet key, whose
// policy is the owning account's statement alone, and which every cell's
// task policy allows through S3.
func TestOneAccountFleetGrantsNothing(t *testing.T) {
	fl := fleettest.Load(t, fleettest.Demo(t))
	rep, err := Render(context.Background(), fl, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	router := stackNamed(rep, fleet.RouterStack)
	arn, policy, protect, retain := bucketKey(t, router)
	if sts := statementsOf(t, policy); len(sts) != 1 || !protect || !retain {
		t.Errorf("the one-account fleet's key: protect %v, retain %v, policy %s; want protected, retained, the owning account only", protect, retain, policy)
	}
	if p := inputOf(t, router, "aws:s3/bucketPolicy:BucketPolicy", "policy"); strings.Contains(p, "Allow") {
		t.Errorf("bucket policy allows something: %s", p)
	}
	checkCellsUseTheKey(t, rep, fl, arn, fl.CellIDs()...)
}

// A grant the fleet does not declare — another account's role, or a
// cell's role beyond its prefix — is an isolation finding.
func TestUndeclaredCrossAccountGrantIsAFinding(t *testing.T) {
	fl := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	rep, err := Render(context.Background(), fl, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	router := stackNamed(rep, fleet.RouterStack)
	role, _ := stackNamed(rep, "cell-c").Outputs["taskRoleArn"].(string)
	for _, r := range router.recorded {
		if r.Type != "aws:s3/bucketPolicy:BucketPolicy" && r.Type != "aws:s3/accessPoint:AccessPoint" {
			continue
		}
		p := props.Plain(r.Inputs)["policy"].(string)
		if r.Type == "aws:s3/accessPoint:AccessPoint" {
			// cell-c's object grant widened to cell-a's prefix.
			p = strings.Replace(p, "/cells/cell-c/*", "/cells/*", 1)
		} else {
			// A stranger in the bucket policy.
			p = strings.Replace(p, `"Statement":[`, `"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::999988887777:root"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::x/*"},`, 1)
		}
		r.Inputs = r.Inputs.Copy()
		r.Inputs["policy"] = resource.NewStringProperty(p)
	}
	res := Isolation(rep.Stacks, fl)
	var msgs []string
	for _, v := range res.Violations {
		if v.Rule == isolation.RuleCrossAccountGrant {
			msgs = append(msgs, v.String())
		}
	}
	joined := strings.Join(msgs, "\n")
	if res.OK || len(msgs) != 2 || !strings.Contains(joined, "999988887777") || !strings.Contains(joined, "outside its own prefix cells/cell-c/") {
		t.Fatalf("findings:\n%s\nwant the stranger and cell-c's widened grant (role %s)", joined, role)
	}
}

// The bucket key is a shared part of the cells in the second account;
// the two-accounts fleet declares it, so its ledger has no finding.
func TestTwoAccountLedgerDeclaresTheBucketKey(t *testing.T) {
	fl := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	rep, err := Render(context.Background(), fl, Options{Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	decl, err := isolation.LoadDeclarations(fl.Dir, fl.StackDir)
	if err != nil {
		t.Fatal(err)
	}
	led, err := rep.Ledger(fl, decl, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := led.Error(); err != nil {
		t.Fatalf("ledger: %v", err)
	}
	found := false
	for _, p := range led.Parts {
		if p.Kind == isolation.KindKMSKey {
			found = true
			t.Logf("%s %s: %v", p.Kind, p.ID, p.Uses)
		}
	}
	if !found {
		t.Errorf("the ledger does not list the fleet bucket key")
	}
}
