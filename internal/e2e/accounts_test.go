package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

const (
	secondAccount = "222233334444"
	deployRole    = "arn:aws:iam::222233334444:role/cellctl-deploy"
)

// TestCellsInASecondAccount runs the demo fleet with cell-c and cell-d
// moved to account 222233334444 (testdata/fleets/two-accounts), through
// the real engine and the simulator's STS:
//   - before the role exists, up refuses naming the role and both cells,
//     and creates nothing anywhere;
//   - once the role trusts the caller, up creates cell-c and cell-d in the
//     second account (their ARNs carry its id) and nothing of theirs in
//     the home account;
//   - status, health and quota say where each cell lives, and quota reads
//     each account's own usage;
//   - a breach that only the second account's CloudWatch shows halts the
//     rollout at wave-2 (the fleet's waves never span an account) and
//     rolls back that cell only: cell-d is never touched;
//   - drift --cloud finds an out-of-band edit made in the second account.
func TestCellsInASecondAccount(t *testing.T) {
	t.Parallel()
	dir := freshClone(t)
	overlay := filepath.Join(repoRoot, "testdata", "fleets", "two-accounts", "stacks")
	entries, err := os.ReadDir(overlay)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		copyFile(t, filepath.Join(overlay, e.Name()), filepath.Join(dir, "stacks", e.Name()))
	}
	addDemoZones(t, dir)

	r := cellctl(t, dir, "up")
	if r.code == 0 {
		t.Fatalf("up without the role in the second account must fail: %s", r)
	}
	for _, want := range []string{"cell-c: IAM Role (" + deployRole + ") cannot be assumed", "cell-d:", "AccessDenied", "nothing was created or changed"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "cell-a:") {
		t.Errorf("cell-a needs no role, yet it is named:\n%s", r.stderr)
	}
	home, err := sim.Open(filepath.Join(dir, ".cellctl", "sim"))
	if err != nil {
		t.Fatal(err)
	}
	if rs, _ := home.ResourcesOfEveryAccount(sim.Filter{}); len(rs) != 0 {
		t.Fatalf("a refused up created %d resources", len(rs))
	}

	mustRun(t, dir, "sim", "account", "role", secondAccount, "cellctl-deploy", "--trust", "123456789012")
	mustRun(t, dir, "sim", "--account", secondAccount, "zone", "add", "Z0B22223333444CELLS0", "b.cells.example.com")
	mustRun(t, dir, "up")

	second, err := home.Account(secondAccount)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cell-c", "cell-d"} {
		svcs, _ := second.Resources(sim.Filter{Stack: c, Type: "ecs/service"})
		if len(svcs) != 1 || !strings.Contains(svcs[0].ID, ":"+secondAccount+":") {
			t.Errorf("%s's service in the second account: %+v", c, svcs)
		}
		if mine, _ := home.Resources(sim.Filter{Stack: c}); len(mine) != 0 {
			t.Errorf("%s left %d resources in the home account", c, len(mine))
		}
	}
	if mine, _ := second.Resources(sim.Filter{Stack: "cell-a"}); len(mine) != 0 {
		t.Errorf("cell-a has %d resources in the second account", len(mine))
	}
	// The fleet bucket (home account) grants each second-account cell's
	// task role its own prefix through the cell's access point (the
	// bucket policy delegates to the account's access points), under a
	// key it may use through S3.
	roles, _ := second.Resources(sim.Filter{Stack: "cell-c", Name: "cell-c-task-role"})
	policies, _ := home.Resources(sim.Filter{Stack: "router", Type: "s3/bucketPolicy"})
	aps, _ := home.Resources(sim.Filter{Stack: "router", Type: "s3/accessPoint", Name: "router-cell-c-access-point"})
	keys, _ := home.Resources(sim.Filter{Stack: "router", Type: "kms/key"})
	if len(roles) != 1 || len(policies) != 1 || len(aps) != 1 || len(keys) != 1 {
		t.Fatalf("cell-c task roles %d, router bucket policies %d, cell-c access points %d, bucket keys %d", len(roles), len(policies), len(aps), len(keys))
	}
	role, _ := roles[0].Outputs["arn"].(string)
	policy, _ := policies[0].Inputs["policy"].(string)
	apPolicy, _ := aps[0].Inputs["policy"].(string)
	keyPolicy, _ := keys[0].Inputs["policy"].(string)
	if role == "" || !strings.Contains(apPolicy, role) || !strings.Contains(apPolicy, "/object/cells/cell-c/*") || !strings.Contains(keyPolicy, role) ||
		!strings.Contains(policy, "s3:DataAccessPointAccount") {
		t.Errorf("the fleet bucket does not grant cell-c's role %q its prefix:\nbucket policy %s\naccess point policy %s\nkey policy %s", role, policy, apPolicy, keyPolicy)
	}
	if strings.Contains(policy, "cell-") {
		t.Errorf("the bucket policy names a cell; the grants are the access points': %s", policy)
	}
	if others, _ := home.Resources(sim.Filter{Stack: "router", Type: "s3/accessPoint", Name: "router-cell-a-access-point"}); len(others) != 0 {
		t.Errorf("cell-a shares the router's account, yet has an access point")
	}
	// cell-a shares the router's account: the key policy's account
	// statement lets its own task policy grant it the key, which it must,
	// as the bucket is encrypted with that key.
	taskPolicies, _ := home.Resources(sim.Filter{Stack: "cell-a", Type: "iam/rolePolicy", Name: "cell-a-task-policy"})
	if len(taskPolicies) != 1 {
		t.Fatalf("cell-a task policies: %d", len(taskPolicies))
	}
	if tp, _ := taskPolicies[0].Inputs["policy"].(string); !strings.Contains(tp, "FleetBucketKeyThroughS3") || !strings.Contains(tp, `"kms:EncryptionContext:aws:s3:arn":["arn:aws:s3:::example-cells-fleet"]`) {
		t.Errorf("cell-a's task policy cannot use the fleet bucket key through S3: %s", tp)
	}

	st := mustRun(t, dir, "status")
	if !rowHas(st.stdout, "cell-c", secondAccount) || !rowHas(st.stdout, "cell-a", "default") {
		t.Errorf("status must say where each cell lives:\n%s", st.stdout)
	}
	h := mustRun(t, dir, "health")
	if !rowHas(h.stdout, "cell-d", secondAccount, "ok") {
		t.Errorf("health must read cell-d in its account:\n%s", h.stdout)
	}
	// Each account's Elastic IPs: cell-a and cell-b's two at home, cell-c's
	// one in the second account's us-east-1, cell-d's three in its us-west-2;
	// the home account named by its id, as STS names it.
	q := cellctl(t, dir, "quota")
	if q.code != 0 {
		t.Fatalf("quota: %s", q)
	}
	for _, want := range [][]string{{"123456789012", "us-east-1", "ec2/L-0263D0A3", "5", "2"}, {secondAccount, "us-east-1", "ec2/L-0263D0A3", "5", "1"}, {secondAccount, "us-west-2", "ec2/L-0263D0A3", "5", "3"}} {
		if !rowHas(q.stdout, want...) {
			t.Errorf("quota lacks the row %v:\n%s", want, q.stdout)
		}
	}

	// Only the second account's CloudWatch shows cell-c failing.
	mustRun(t, dir, "sim", "--account", secondAccount, "health", "set", "--cell", "cell-c", "--error-rate", "5%")
	const img = "registry.example.com/shop/api:9.1.0"
	d := cellctl(t, dir, "deploy", "--image", img, "--bake-scale", "0.002")
	if d.code != 3 || !strings.Contains(d.stderr, "halted at wave wave-2: cell-c breached error_rate_5xx") {
		t.Fatalf("a breach in the second account must halt wave-2: %s", d)
	}
	if !rowHas(d.stdout, "cell-c", baseImage, "rolled back") || !rowHas(d.stdout, "cell-d", baseImage, "untouched") || !rowHas(d.stdout, "cell-b", img, "new") {
		t.Errorf("final table:\n%s", d.stdout)
	}
	wantImages(t, dir, images(2, img, baseImage))

	mustRun(t, dir, "sim", "--account", secondAccount, "edit", "cell-c", "cell-c-service", "desiredCount", "9")
	dr := cellctl(t, dir, "drift", "--cloud", "cell-c")
	if dr.code != 2 || !strings.Contains(dr.stdout, "cell-c-service desiredCount") {
		t.Errorf("drift must find the edit in the second account (exit 2): %s", dr)
	}
}
