package health

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"

	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// The task policy the cell template writes (cellmodule's taskRolePolicy),
// cut to the statements the serving paths read: objects under its prefix,
// its queue, and the fleet bucket's key through S3.
const (
	statementObjects = `{"Sid":"CellObjects","Effect":"Allow","Action":["s3:GetObject","s3:PutObject","s3:DeleteObject"],"Resource":["arn:aws:s3:::fleet-bucket/cells/cell-a/*"]}`
	statementKey     = `{"Sid":"FleetBucketKeyThroughS3","Effect":"Allow","Action":["kms:Decrypt","kms:GenerateDataKey"],"Resource":["arn:aws:kms:us-east-1:123456789012:key/*"],` +
		`"Condition":{"StringEquals":{"kms:EncryptionContext:aws:s3:arn":["arn:aws:s3:::fleet-bucket"],"kms:ViaService":["s3.us-east-1.amazonaws.com"]}}}`
)

func statementQueue(arn string) string {
	return `{"Sid":"CellQueue","Effect":"Allow","Action":["sqs:SendMessage","sqs:ReceiveMessage","sqs:DeleteMessage"],"Resource":["` + arn + `"]}`
}

func policyOf(statements ...string) string {
	return `{"Version":"2012-10-17","Statement":[` + strings.Join(statements, ",") + `]}`
}

const taskTrust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":["sts:AssumeRole"]}]}`

// accessCell adds what a deployed cell's serving paths read to a sim
// cell's stack: its queue, its task role and the role's policy (the
// statements given, queueStatement standing for the queue's).
func accessCell(t *testing.T, h *simtest.Harness, id string, statements ...string) (queueARN string, policy *simtest.Res) {
	t.Helper()
	q := h.Create(simtest.TQueue, "cell-"+id+"-queue", simtest.PM())
	queueARN = simtest.S(q.Out, "arn")
	role := h.Create(simtest.TRole, "cell-"+id+"-task-role", simtest.PM("assumeRolePolicy", taskTrust))
	for i, s := range statements {
		if s == queueStatement {
			statements[i] = statementQueue(queueARN)
		}
	}
	policy = h.Create("aws:iam/rolePolicy:RolePolicy", "cell-"+id+"-task-policy", simtest.PM("role", simtest.S(role.Out, "name"), "policy", policyOf(statements...)))
	return queueARN, policy
}

const queueStatement = "<the cell's queue>"

// fleetRouter is the router stack's part of the serving paths: the fleet
// bucket, encrypted by default under a customer managed key whose policy
// (KMS's default) leaves its use to IAM policies — as the demo fleet's.
func fleetRouter(t *testing.T, dir string, clk *simtest.Clock) *simtest.Harness {
	t.Helper()
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "router", Now: clk.Now, DependencyTimeout: 300 * time.Millisecond}, "us-east-1")
	key := h.Create("aws:kms/key:Key", "router-bucket-key", simtest.PM("description", "the fleet bucket's key"))
	h.Create("aws:s3/bucketV2:BucketV2", "router-bucket", simtest.PM("bucket", "fleet-bucket"))
	h.Create("aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2", "router-bucket-encryption",
		simtest.PM("bucket", "fleet-bucket", "rules", []any{map[string]any{"bucketKeyEnabled": true,
			"applyServerSideEncryptionByDefault": map[string]any{"sseAlgorithm": "aws:kms", "kmsMasterKeyId": simtest.S(key.Out, "arn")}}}))
	return h
}

// editPolicy changes a policy out of band, as `cellctl sim edit` does.
func editPolicy(t *testing.T, c *store.Cloud, stack, name, doc string) {
	t.Helper()
	v, _ := json.Marshal(doc)
	if _, err := c.Edit(stack, name, "policy", string(v)); err != nil {
		t.Fatal(err)
	}
}

// A cell whose live task policy no longer allows a serving path answers
// every request 5xx — its alarm fires as for a bad image — and serves as
// before once the policy is restored; the other cell never notices.
func TestADeniedServingPathServes5xx(t *testing.T) {
	clk := simtest.NewClock()
	dir := t.TempDir()
	fleetRouter(t, dir, clk)
	a := simtest.NewSimCell(t, dir, clk, "a", "us-east-1", "10.1.0.0/16", "app:v1")
	queueARN, policy := accessCell(t, a.H, "a", statementObjects, queueStatement, statementKey)
	b := simtest.NewSimCell(t, dir, clk, "b", "us-east-1", "10.2.0.0/16", "app:v1")
	_, _ = accessCell(t, b.H, "b", strings.ReplaceAll(statementObjects, "cell-a", "cell-b"), queueStatement, statementKey)
	base, _ := store.Open(dir)
	c := clk.Cloud(base)
	whole := policyOf(statementObjects, statementQueue(queueARN), statementKey)

	clk.Advance(5 * time.Minute)
	if now := cellStatus(t, c, "cell-a", 0); now.Now.Target5xx != 1 || len(now.Denied) != 0 || now.Source != "default" {
		t.Fatalf("the deployed cell = %+v", now)
	}

	for _, broken := range []struct {
		what, policy string
		denied       []string // actions
	}{
		// The task may no longer touch its objects: writes and reads fail.
		{"no object grant", policyOf(statementQueue(queueARN), statementKey), []string{"s3:PutObject", "s3:GetObject"}},
		// S3 writes and reads under SSE-KMS call KMS with the caller's
		// permissions: without the key statement both fail as well.
		{"no key grant", policyOf(statementObjects, statementQueue(queueARN)), []string{"s3:PutObject", "s3:GetObject"}},
		// Only writes: a statement that lost s3:PutObject.
		{"no PutObject", policyOf(strings.Replace(statementObjects, `"s3:PutObject",`, "", 1), statementQueue(queueARN), statementKey), []string{"s3:PutObject"}},
	} {
		clk.Advance(30 * time.Second)
		editPolicy(t, c, "cell-a", "cell-a-task-policy", broken.policy)
		now := cellStatus(t, c, "cell-a", 1)
		if now.Now.Target5xx != 600 || now.Now.Requests != 600 || now.Now.Healthy != 2 || now.Now.P99 != 0.12 {
			t.Errorf("%s: the current minute = %+v, want every request 5xx, tasks healthy, the profile's p99", broken.what, now.Now)
		}
		if len(now.Denied) != len(broken.denied) || !strings.Contains(now.Source, "access denied: "+strings.Join(broken.denied, ", ")) {
			t.Errorf("%s: denied %q, source %q; want %v", broken.what, now.Denied, now.Source, broken.denied)
		}
		if len(now.History) != 1 || now.History[0].Target5xx != 1 {
			t.Errorf("%s: the minute that ended before the edit = %+v, want the default's 1 5xx", broken.what, now.History)
		}
		// Two minutes of 5xx: the cell's alarm fires, as for a bad image.
		clk.Advance(time.Minute)
		if st := states(t, c, "cell-a")["cellctl-a-5xx-rate"]; st != store.AlarmAlarm {
			t.Errorf("%s: the 5xx alarm = %s after two denied minutes", broken.what, st)
		}
		if other := cellStatus(t, c, "cell-b", 0); other.Now.Target5xx != 1 || len(other.Denied) != 0 {
			t.Errorf("%s: cell-b = %+v", broken.what, other)
		}

		clk.Advance(30 * time.Second)
		editPolicy(t, c, "cell-a", "cell-a-task-policy", whole)
		if now := cellStatus(t, c, "cell-a", 0); now.Now.Target5xx != 1 || len(now.Denied) != 0 || now.Source != "default" {
			t.Errorf("%s: restored, the cell = %+v", broken.what, now)
		}
		clk.Advance(2 * time.Minute)
		if st := states(t, c, "cell-a")["cellctl-a-5xx-rate"]; st != store.AlarmOK {
			t.Errorf("%s: restored, the 5xx alarm = %s", broken.what, st)
		}
	}

	// A change the program makes (an update through the provider) counts
	// as much as one made out of band: the queue statement dropped.
	in := policy.Inputs.Copy()
	in["policy"] = resource.NewStringProperty(policyOf(statementObjects, statementKey))
	if _, err := a.H.TryUpdate(policy, in); err != nil {
		t.Fatal(err)
	}
	if now := cellStatus(t, c, "cell-a", 0); now.Now.Target5xx != 600 || !strings.Contains(now.Source, "sqs:SendMessage, sqs:ReceiveMessage") {
		t.Errorf("the queue statement dropped by an update: %+v", now)
	}
}

func findRecord(t *testing.T, c *store.Cloud, stack, name string) store.Resource {
	t.Helper()
	rs, err := c.Resources(store.Filter{Stack: stack, Name: name})
	if err != nil || len(rs) != 1 {
		t.Fatalf("%s %s: %v %v", stack, name, rs, err)
	}
	return rs[0]
}

// Where the fleet bucket cannot be seen (no router stack anywhere in the
// simulated cloud), the object paths cannot be decided: the cell serves
// as its profile says, even with a task policy that grants no object —
// the rehearsal never invents errors AWS might not show. The queue, which
// the cell's own stack holds, is still decided.
func TestAnUndecidablePathDoesNotDegradeTheTraffic(t *testing.T) {
	clk := simtest.NewClock()
	dir := t.TempDir()
	a := simtest.NewSimCell(t, dir, clk, "a", "us-east-1", "10.1.0.0/16", "app:v1")
	_, _ = accessCell(t, a.H, "a", queueStatement)
	base, _ := store.Open(dir)
	c := clk.Cloud(base)
	clk.Advance(2 * time.Minute)
	if now := cellStatus(t, c, "cell-a", 0); now.Now.Target5xx != 1 || len(now.Denied) != 0 {
		t.Fatalf("no fleet bucket in sight: %+v", now)
	}
	editPolicy(t, c, "cell-a", "cell-a-task-policy", policyOf())
	if now := cellStatus(t, c, "cell-a", 0); now.Now.Target5xx != 600 || !strings.Contains(now.Source, "access denied: sqs:SendMessage, sqs:ReceiveMessage") {
		t.Errorf("the queue denied: %+v", now)
	}
}

// A cell in another account than its router reads the fleet bucket's
// policy from the router's account; a change there (the bucket policy's
// grant to the cell's role removed) denies the cell's objects — across
// accounts the bucket's policy must allow too — and the decision follows
// the change though it is in another account's store.
func TestACellInAnotherAccountReadsItsRoutersBucket(t *testing.T) {
	const cellAccount = "222233334444"
	clk := simtest.NewClock()
	dir := t.TempDir()
	home, _ := store.Open(dir)
	if _, err := home.AddRole(cellAccount, "cellctl-deploy", nil, ""); err != nil {
		t.Fatal(err)
	}
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "router", Now: clk.Now, DependencyTimeout: 300 * time.Millisecond}, "us-east-1")
	bucket := h.Create("aws:s3/bucketV2:BucketV2", "router-bucket", simtest.PM("bucket", "fleet-bucket"))

	ch := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-c", Now: clk.Now, DependencyTimeout: 300 * time.Millisecond}, "")
	if _, err := ch.P.Configure(ch.Ctx, plugin.ConfigureRequest{Inputs: simtest.PM("region", "us-east-1",
		"assumeRole", map[string]any{"roleArn": "arn:aws:iam::" + cellAccount + ":role/cellctl-deploy", "sessionName": "cellctl"})}); err != nil {
		t.Fatal(err)
	}
	simtest.NewSimCellOn(t, ch, "c", "10.3.0.0/16", "app:v1")
	_, _ = accessCell(t, ch, "c", strings.ReplaceAll(statementObjects, "cell-a", "cell-c"), queueStatement)
	second, err := home.Account(cellAccount)
	if err != nil {
		t.Fatal(err)
	}
	role := findRecord(t, second, "cell-c", "cell-c-task-role")
	grant := policyOf(`{"Sid":"CellC","Effect":"Allow","Principal":{"AWS":"` + store.Str(role.Outputs["arn"]) + `"},` +
		`"Action":["s3:GetObject","s3:PutObject"],"Resource":["` + simtest.S(bucket.Out, "arn") + `/cells/cell-c/*"]}`)
	h.Create("aws:s3/bucketPolicy:BucketPolicy", "router-bucket-policy", simtest.PM("bucket", "fleet-bucket", "policy", grant))

	c := clk.Cloud(second)
	clk.Advance(2 * time.Minute)
	if now := cellStatus(t, c, "cell-c", 0); now.Now.Target5xx != 1 || len(now.Denied) != 0 {
		t.Fatalf("granted by the router's bucket policy: %+v", now)
	}
	clk.Advance(30 * time.Second)
	editPolicy(t, clk.Cloud(home), "router", "router-bucket-policy", policyOf())
	if now := cellStatus(t, c, "cell-c", 0); now.Now.Target5xx != 600 || !strings.Contains(now.Source, "access denied: s3:PutObject, s3:GetObject") {
		t.Errorf("the grant removed in the router's account: %+v", now)
	}
}
