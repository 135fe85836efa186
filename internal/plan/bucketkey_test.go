package plan

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/props"
	"github.com/cellctl/cellctl/router"
)

// The fleet bucket's key, as these tests judge it: what S3 asks KMS for
// on a caller's behalf ("Using server-side encryption with AWS KMS keys
// (SSE-KMS)", Amazon S3 User Guide: an upload needs kms:GenerateDataKey, a
// download kms:Decrypt), through S3 in the bucket's region, and — the
// bucket has S3 Bucket Keys enabled — with the bucket's ARN as the
// encryption context ("Configuring your bucket to use an S3 Bucket Key",
// Amazon S3 User Guide).
var s3KeyActions = []string{"kms:GenerateDataKey", "kms:Decrypt"}

const (
	keyType        = "aws:kms/key:Key"
	encryptionType = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2"
)

// bucketKey returns the router's one customer managed key, failing the
// test when there is not exactly one.
func bucketKey(t *testing.T, router *Stack) (arn string, policy string, protect, retain bool) {
	t.Helper()
	var keys []string
	for _, r := range router.recorded {
		if r.Type != keyType {
			continue
		}
		keys = append(keys, r.Name)
		arn, _ = props.Plain(r.Outputs)["arn"].(string)
		policy, _ = props.Plain(r.Inputs)["policy"].(string)
		protect, retain = r.Protect, r.RetainOnDelete
	}
	if len(keys) != 1 || arn == "" {
		t.Fatalf("the router declares keys %v, want exactly one customer managed key for the fleet bucket", keys)
	}
	return arn, policy, protect, retain
}

// taskPolicy is a cell's task role policy document.
func taskPolicy(t *testing.T, s *Stack) string {
	t.Helper()
	for _, r := range s.recorded {
		if r.Type == "aws:iam/rolePolicy:RolePolicy" && strings.HasSuffix(r.Name, "task-policy") {
			doc, _ := props.Plain(r.Inputs)["policy"].(string)
			return doc
		}
	}
	t.Fatalf("%s has no task role policy", s.Name)
	return ""
}

// policyStatement is one statement as IAM reads it.
type policyStatement struct {
	Effect    string
	Principal any
	Action    any
	Resource  any
	Condition map[string]map[string]any
}

func statementsOf(t *testing.T, doc string) []policyStatement {
	t.Helper()
	var p struct{ Statement []policyStatement }
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		t.Fatalf("not a policy document: %v\n%s", err, doc)
	}
	return p.Statement
}

func listOf(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// glob matches IAM's * and ? wildcards (case-sensitive for resources and
// condition values; actions are compared case-insensitively by the caller).
func glob(pattern, s string) bool {
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$"
	return regexp.MustCompile(re).MatchString(s)
}

// conditionsHold evaluates a statement's conditions against the request's
// context: every key of every operator must hold. Only the operators the
// programs use are known; any other one does not hold (never allowed by
// accident).
func conditionsHold(cond map[string]map[string]any, ctx map[string]string) bool {
	for op, keys := range cond {
		for key, want := range keys {
			got, ok := ctx[key]
			if !ok {
				return false
			}
			matched := false
			for _, w := range listOf(want) {
				switch op {
				case "StringEquals":
					matched = matched || got == w
				case "StringLike":
					matched = matched || glob(w, got)
				default:
					return false
				}
			}
			if !matched {
				return false
			}
		}
	}
	return true
}

// identityAllows says whether an identity policy allows action on
// resource in the request context ctx: some Allow matches and no Deny.
func identityAllows(t *testing.T, doc, action, resource string, ctx map[string]string) bool {
	t.Helper()
	allowed := false
	for _, st := range statementsOf(t, doc) {
		actionMatches := false
		for _, a := range listOf(st.Action) {
			actionMatches = actionMatches || glob(strings.ToLower(a), strings.ToLower(action))
		}
		resourceMatches := false
		for _, r := range listOf(st.Resource) {
			resourceMatches = resourceMatches || glob(r, resource)
		}
		if !actionMatches || !resourceMatches || !conditionsHold(st.Condition, ctx) {
			continue
		}
		if st.Effect == "Deny" {
			return false
		}
		allowed = allowed || st.Effect == "Allow"
	}
	return allowed
}

// keyContext is the request context of S3 using the fleet bucket's key on
// a caller's behalf.
func keyContext(fl *fleet.Fleet) map[string]string {
	return map[string]string{
		"kms:ViaService":                   "s3." + fl.Router.Region + ".amazonaws.com",
		"kms:EncryptionContext:aws:s3:arn": "arn:aws:s3:::" + fl.Router.FleetBucket,
	}
}

// checkCellsUseTheKey fails unless every listed cell's task policy lets
// S3 use the key for it — and only S3, only for the fleet bucket.
func checkCellsUseTheKey(t *testing.T, rep *Report, fl *fleet.Fleet, keyArn string, cells ...string) {
	t.Helper()
	via := keyContext(fl)
	for _, id := range cells {
		doc := taskPolicy(t, stackNamed(rep, id))
		var denied []string
		for _, action := range s3KeyActions {
			if !identityAllows(t, doc, action, keyArn, via) {
				denied = append(denied, action)
			}
			direct := map[string]string{"kms:ViaService": "kms." + fl.Router.Region + ".amazonaws.com", "kms:EncryptionContext:aws:s3:arn": via["kms:EncryptionContext:aws:s3:arn"]}
			if identityAllows(t, doc, action, keyArn, direct) {
				t.Errorf("%s's task policy allows %s on the fleet bucket key outside S3", id, action)
			}
			other := map[string]string{"kms:ViaService": via["kms:ViaService"], "kms:EncryptionContext:aws:s3:arn": "arn:aws:s3:::another-bucket"}
			if identityAllows(t, doc, action, keyArn, other) {
				t.Errorf("%s's task policy allows %s on the fleet bucket key for another bucket", id, action)
			}
		}
		if len(denied) > 0 {
			t.Errorf("%s's task policy does not allow %v on the fleet bucket key %s through S3: with SSE-KMS its S3 requests are AccessDenied\n%s", id, denied, keyArn, doc)
		}
	}
}

// Once any cell lives in another account the bucket is encrypted with the
// fleet's key; the cells that share the router's account must be able to
// use it through S3 as well (the key policy's account statement enables
// their IAM policies, which must then allow it).
func TestSameAccountCellsMayUseTheBucketKeyThroughS3(t *testing.T) {
	fl := fleettest.Load(t, fleettest.Demo(t, fleettest.TwoAccounts))
	rep, err := Render(context.Background(), fl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Isolation.OK {
		t.Fatalf("isolation audit: %v", rep.Isolation.Violations)
	}
	arn, policy, _, _ := bucketKey(t, stackNamed(rep, fleet.RouterStack))
	root := "arn:aws:iam::" + renderAccount(fl.Router.Access().Account) + ":root"
	enables := false
	for _, st := range statementsOf(t, policy) {
		p, _ := st.Principal.(map[string]any)
		if st.Effect == "Allow" && p != nil && listOf(p["AWS"])[0] == root && listOf(st.Action)[0] == "kms:*" && len(st.Condition) == 0 {
			enables = true
		}
	}
	if !enables {
		t.Errorf("the key policy does not let the owning account %s use IAM policies for the key:\n%s", root, policy)
	}
	checkCellsUseTheKey(t, rep, fl, arn, "cell-a", "cell-b", "cell-c", "cell-d")
}

// crossAccountFleet is the two-accounts fleet with cell-c back in the
// router's account: cell-d is its only cell in another account. edit
// changes it further before it is loaded.
func crossAccountFleet(t *testing.T, edit func(dir string, fl *fleet.Fleet)) *fleet.Fleet {
	t.Helper()
	dir := fleettest.Demo(t, fleettest.TwoAccounts)
	home, err := os.ReadFile(filepath.Join(fleettest.Root(), "stacks", "Pulumi.cell-c.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stacks", "Pulumi.cell-c.yaml"), home, 0o644); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(dir, fleettest.Load(t, dir))
	}
	return fleettest.Load(t, dir)
}

func writeTable(t *testing.T, dir string, table *router.Table) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "stacks", fleet.RoutingFile), table.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// drainCellD drains cell-d in the routing table (it keeps its stack).
func drainCellD(t *testing.T, dir string, fl *fleet.Fleet) {
	t.Helper()
	drained, err := router.Drain(fl.Routing, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := drained.Cell("cell-d"); c.State != router.CellDrained {
		t.Fatalf("test setup: cell-d is %s, want drained", c.State)
	}
	writeTable(t, dir, drained)
}

// retireCellD does what `cellctl destroy cell-d --retire` leaves: cell-d
// drained, then gone from the routing table, its wave and the repository.
func retireCellD(t *testing.T, dir string, fl *fleet.Fleet) {
	t.Helper()
	drainCellD(t, dir, fl)
	fl = fleettest.Load(t, dir)
	s := fl.Routing.Spec()
	kept := s.Cells[:0]
	for _, c := range s.Cells {
		if c.ID != "cell-d" {
			kept = append(kept, c)
		}
	}
	s.Cells, s.Version = kept, s.Version+1
	table, err := router.New(s)
	if err != nil {
		t.Fatal(err)
	}
	writeTable(t, dir, table)
	fleettest.Edit(t, dir, filepath.Join("stacks", fleet.WavesFile), func(s string) string {
		out := strings.Replace(s, "  - {name: wave-3, cells: [cell-d], bake: 10m}\n", "", 1)
		if out == s {
			t.Fatal("test setup: cell-d's wave not found in waves.yaml")
		}
		return out
	})
	if err := os.Remove(filepath.Join(dir, "stacks", "Pulumi.cell-d.yaml")); err != nil {
		t.Fatal(err)
	}
}

// Objects stay encrypted under the fleet bucket's key after the cell that
// once needed it is gone: draining or retiring the last cell in another
// account must leave the key in the program (else Pulumi schedules its
// deletion and every object under it becomes unreadable), protected and
// retained, and the bucket's default encryption unchanged.
func TestBucketKeyOutlivesTheLastCrossAccountCell(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, dir string, fl *fleet.Fleet)
		// granted: cell-d (drained, its stack and role still there) keeps
		// its grants.
		granted bool
	}{
		{"cell-d drained", drainCellD, true},
		{"cell-d retired", retireCellD, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fl := crossAccountFleet(t, func(dir string, fl *fleet.Fleet) { tc.edit(t, dir, fl) })
			rep, err := Render(context.Background(), fl, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Isolation.OK {
				t.Fatalf("isolation audit: %v", rep.Isolation.Violations)
			}
			rt := stackNamed(rep, fleet.RouterStack)
			arn, policy, protect, retain := bucketKey(t, rt)
			if !protect || !retain {
				t.Errorf("the fleet bucket key: protect %v, retainOnDelete %v; want both, so no program change and no destroy can schedule its deletion", protect, retain)
			}
			if sse := inputOfJSON(t, rt, encryptionType, "rules"); !strings.Contains(sse, `"kmsMasterKeyId":"`+arn+`"`) {
				t.Errorf("bucket default encryption %s does not name the fleet key %s", sse, arn)
			}
			checkCellsUseTheKey(t, rep, fl, arn, "cell-a", "cell-b", "cell-c")

			var crossAccount []string
			for _, st := range statementsOf(t, policy) {
				if p, _ := st.Principal.(map[string]any); p != nil {
					for _, a := range listOf(p["AWS"]) {
						if strings.Contains(a, ":"+fleettest.SecondAccount+":") {
							crossAccount = append(crossAccount, a)
						}
					}
					if len(listOf(p["AWS"])) == 0 {
						t.Errorf("a key policy statement names no principal (KMS refuses it): %s", policy)
					}
				}
			}
			// A cross-account cell's grant is its access point's policy.
			grants := ""
			for _, r := range rt.recorded {
				if r.Type == "aws:s3/accessPoint:AccessPoint" {
					p, _ := props.Plain(r.Inputs)["policy"].(string)
					grants += p
				}
			}
			if tc.granted {
				role, _ := stackNamed(rep, "cell-d").Outputs["taskRoleArn"].(string)
				if len(crossAccount) != 1 || crossAccount[0] != role {
					t.Errorf("key policy principals in the second account %v, want drained cell-d's task role %s (its role and objects still exist)", crossAccount, role)
				}
				if !strings.Contains(grants, role) || !strings.Contains(grants, "/object/cells/cell-d/*") {
					t.Errorf("the access points no longer grant drained cell-d its prefix: %s", grants)
				}
			} else if len(crossAccount) != 0 || strings.Contains(grants, fleettest.SecondAccount) {
				t.Errorf("a retired cell is still granted: key %v, access points %s", crossAccount, grants)
			}
		})
	}
}
