package cellmodule

import (
	"github.com/cellctl/cellctl/internal/awsname"
	iampolicy "github.com/cellctl/cellctl/internal/policy"

	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/isolation"
	"github.com/cellctl/cellctl/internal/offline"
)

const (
	typeQueue       = "aws:sqs/queue:Queue"
	typeQueuePolicy = "aws:sqs/queuePolicy:QueuePolicy"
)

// laneCells have lane queues: 8 lanes (the DLQ can list all nine sources)
// and 12 (more than SQS's 10 listed sources), in two regions. They run
// under internal/awsmodel, which applies the AWS rules the queues rely on
// (queue names, redrive allow policy sources).
func laneCells() []spec.Cell {
	a := testSpec("cell-a", 1, "us-east-1", spec.NATSingle)
	a.LaneQueues = true
	b := testSpec("cell-b", 2, "eu-west-1", spec.NATSingle)
	b.LaneQueues, b.Lanes, b.LaneShardSize = true, 12, 3
	return []spec.Cell{a, b}
}

func runLaneCell(t *testing.T, s spec.Cell) *cellRun {
	t.Helper()
	r, err := runCell(s, awsmodel.NewMock(awsmodel.Env{Partition: "aws", Account: testAccount, Region: s.Region}), nil)
	if err != nil {
		t.Fatalf("NewCell(%s) with %d lane queues: %v", s.ID, s.Lanes, err)
	}
	return r
}

func TestLaneQueues(t *testing.T) {
	for _, s := range laneCells() {
		t.Run(s.ID, func(t *testing.T) {
			r := runLaneCell(t, s)
			dlq, main := r.one(t, "dlq"), r.one(t, "queue")
			dlqArn, mainArn := str(out(dlq)["arn"]), str(out(main)["arn"])
			taskRole := str(out(r.one(t, "task-role"))["arn"])

			var lanes []*offline.Resource
			for _, q := range r.rec.ByType(typeQueue) {
				if strings.Contains(q.Name, "-lane-") {
					lanes = append(lanes, q)
				}
			}
			if len(lanes) != s.Lanes || len(r.cell.LaneQueues) != s.Lanes {
				t.Fatalf("%d lane queues recorded, %d on the component; want M = %d", len(lanes), len(r.cell.LaneQueues), s.Lanes)
			}
			var laneArns, laneURLs []string
			for k := 0; k < s.Lanes; k++ {
				name := "shop-" + s.ID + "-lane-" + strconv.Itoa(k)
				q := r.one(t, "lane-"+strconv.Itoa(k))
				i, o := in(q), out(q)
				if i["name"] != name || o["name"] != name {
					t.Errorf("lane %d queue is named %v, want %s", k, i["name"], name)
				}
				if i["sqsManagedSseEnabled"] != true || i["visibilityTimeoutSeconds"] != float64(s.QueueVisibilityTimeoutSeconds) || !q.Protect {
					t.Errorf("lane %d: SSE %v, visibility %v, protected %v; want the cell queue's settings", k, i["sqsManagedSseEnabled"], i["visibilityTimeoutSeconds"], q.Protect)
				}
				if get(i, "tags", "cell") != s.ID || get(i, "tags", "lane") != strconv.Itoa(k) {
					t.Errorf("lane %d tags %v", k, i["tags"])
				}
				var redrive struct {
					DeadLetterTargetArn string  `json:"deadLetterTargetArn"`
					MaxReceiveCount     float64 `json:"maxReceiveCount"`
				}
				mustJSON(t, str(i["redrivePolicy"]), &redrive)
				if redrive.DeadLetterTargetArn != dlqArn || int(redrive.MaxReceiveCount) != s.QueueMaxReceiveCount {
					t.Errorf("lane %d redrive %+v, want the cell's DLQ %s after %d receives", k, redrive, dlqArn, s.QueueMaxReceiveCount)
				}
				// The DLQ admits the lanes before they name it.
				if !slices.Contains(q.DependsOn, r.one(t, "dlq-redrive-allow").URN) {
					t.Errorf("lane %d does not wait for the DLQ's redrive allow policy (depends on %v)", k, q.DependsOn)
				}
				laneArns = append(laneArns, str(o["arn"]))
				laneURLs = append(laneURLs, str(o["url"]))
			}
			// What the template computed before the queues existed is what
			// the queues got.
			var predicted []string
			for k := 0; k < s.Lanes; k++ {
				predicted = append(predicted, "arn:aws:sqs:"+s.Region+":"+testAccount+":"+s.Names().LaneQueue(k))
			}
			if !reflect.DeepEqual(laneArns, predicted) {
				t.Errorf("lane ARNs %v, predicted %v", laneArns, predicted)
			}

			// The DLQ's redrive allow policy: exactly the cell's queues when
			// SQS can list them, allowAll beyond 10.
			var ap struct {
				RedrivePermission string   `json:"redrivePermission"`
				SourceQueueArns   []string `json:"sourceQueueArns"`
			}
			mustJSON(t, str(in(r.one(t, "dlq-redrive-allow"))["redriveAllowPolicy"]), &ap)
			if s.Lanes+1 <= 10 {
				if ap.RedrivePermission != "byQueue" || !reflect.DeepEqual(ap.SourceQueueArns, append([]string{mainArn}, laneArns...)) {
					t.Errorf("redrive allow %+v, want byQueue for the queue and its %d lanes", ap, s.Lanes)
				}
			} else if ap.RedrivePermission != "allowAll" || ap.SourceQueueArns != nil {
				t.Errorf("redrive allow %+v, want allowAll (%d sources > 10)", ap, s.Lanes+1)
			}

			// Each lane's policy: TLS only, and this cell's task role only.
			policies := map[string]PolicyDocument{}
			for _, p := range r.rec.ByType(typeQueuePolicy) {
				policies[str(in(p)["queueUrl"])] = policyOf(t, in(p)["policy"])
			}
			for k, url := range laneURLs {
				doc, ok := policies[url]
				if !ok {
					t.Fatalf("lane %d has no queue policy", k)
				}
				want := []PolicyStatement{
					{Sid: "DenyInsecureTransport", Effect: "Deny", Principal: iampolicy.Everyone(), Action: []string{"sqs:*"}, Resource: []string{laneArns[k]},
						Condition: iampolicy.Conditions{"Bool": {"aws:SecureTransport": {"false"}}}},
					{Sid: "CellTaskRole", Effect: "Allow", Principal: iampolicy.AWSPrincipals(taskRole),
						Action:   []string{"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"},
						Resource: []string{laneArns[k]}},
				}
				if !reflect.DeepEqual(doc.Statement, want) {
					t.Errorf("lane %d policy %+v\nwant %+v", k, doc.Statement, want)
				}
			}
			// The task role's own policy still names only the cell queue.
			for _, st := range policyOf(t, in(r.one(t, "task-policy"))["policy"]).Statement {
				for _, res := range st.Resource {
					if strings.Contains(res, ":sqs:") && res != mainArn {
						t.Errorf("task role policy names %s", res)
					}
				}
			}
			// The service starts only after its lanes grant the task role.
			svc := r.one(t, "service")
			if len(r.cell.LaneQueuePolicies) != s.Lanes {
				t.Errorf("%d lane policies, want %d", len(r.cell.LaneQueuePolicies), s.Lanes)
			}
			for k := 0; k < s.Lanes; k++ {
				p := r.one(t, "lane-"+strconv.Itoa(k)+"-policy")
				if !slices.Contains(svc.DependsOn, p.URN) {
					t.Errorf("the service does not wait for lane %d's policy", k)
				}
			}

			// One env var and one stack output with the URLs, in lane order.
			var defs []map[string]any
			mustJSON(t, str(in(r.one(t, "task"))["containerDefinitions"]), &defs)
			env := map[string]string{}
			for _, e := range defs[0]["environment"].([]any) {
				env[str(get(e, "name"))] = str(get(e, "value"))
			}
			if got := env[LaneEnv]; got != strings.Join(laneURLs, ",") {
				t.Errorf("%s = %q, want %q", LaneEnv, got, strings.Join(laneURLs, ","))
			}
			var got []string
			switch v := r.outputs["laneQueueUrls"].Value.(type) {
			case []string:
				got = v
			case []any:
				got = strs(v)
			}
			if len(got) != s.Lanes || normalize(r.outputs["lanes"].Value) != float64(s.Lanes) || normalize(r.outputs["laneShardSize"].Value) != float64(s.LaneShardSize) {
				t.Errorf("outputs laneQueueUrls %v, lanes %v, laneShardSize %v", r.outputs["laneQueueUrls"].Value, r.outputs["lanes"].Value, r.outputs["laneShardSize"].Value)
			}
			for k, u := range got {
				if u != laneURLs[k] {
					t.Errorf("laneQueueUrls[%d] = %v, want %s", k, u, laneURLs[k])
				}
			}
		})
	}
}

// Without cells:laneQueues a cell has no lane resources, no lane env and
// no laneQueueUrls output — and the DLQ admits only the cell queue.
func TestNoLaneQueuesByDefault(t *testing.T) {
	forEachCell(t, func(t *testing.T, r *cellRun) {
		for _, res := range r.rec.Resources() {
			if strings.Contains(res.Name, "-lane-") {
				t.Errorf("unexpected lane resource %s", res.Name)
			}
		}
		if _, ok := r.outputs["laneQueueUrls"]; ok {
			t.Error("laneQueueUrls output without lane queues")
		}
		if v := normalize(r.outputs["lanes"].Value); v != float64(8) {
			t.Errorf("lanes output %v, want the default 8", v)
		}
		if strings.Contains(str(in(r.one(t, "task"))["containerDefinitions"]), LaneEnv) {
			t.Errorf("%s set without lane queues", LaneEnv)
		}
	})
}

// The isolation audit stays clean with lane queues in every cell, and it
// catches a lane that grants another cell's task role.
func TestLaneQueuesKeepCellsIsolated(t *testing.T) {
	var cells []isolation.Cell
	runs := map[string]*cellRun{}
	for _, s := range laneCells() {
		r := runLaneCell(t, s)
		runs[s.ID] = r
		cells = append(cells, isolation.Cell{ID: s.ID, CIDR: s.CIDR(), FleetBucket: s.FleetBucket, Resources: r.rec.Resources()})
	}
	if res := isolation.Check(cells); !res.OK {
		t.Fatalf("isolation audit with lane queues: %+v", res.Violations)
	}

	// cell-a's lane 0 lets cell-b's task role in: a violation.
	a, b := runs["cell-a"], runs["cell-b"]
	otherRole := str(out(b.one(t, "task-role"))["arn"])
	var tampered []*offline.Resource
	for _, res := range a.rec.Resources() {
		if res.Name == "cell-a-lane-0-policy" {
			cp := *res
			cp.Inputs = res.Inputs.Copy()
			doc := laneQueuePolicy(str(out(a.one(t, "lane-0"))["arn"]), otherRole)
			j, _ := json.Marshal(doc)
			cp.Inputs["policy"] = resource.NewStringProperty(string(j))
			res = &cp
		}
		tampered = append(tampered, res)
	}
	cells[0].Resources = tampered
	res := isolation.Check(cells)
	found := false
	for _, v := range res.Violations {
		found = found || (v.Cell == "cell-a" && v.Resource == "cell-a-lane-0-policy" && v.Other == "cell-b")
	}
	if res.OK || !found {
		t.Errorf("a lane granting another cell's role passed the audit: %+v", res.Violations)
	}
}

func TestLaneQueueNames(t *testing.T) {
	// The longest cell id (cell- + 15) and lane 255 stay within SQS's 80
	// characters with its charset.
	long := "cell-abcdefghijklmno"
	if n := awsname.For("shop-prod", long).LaneQueue(255); n != "shop-prod-"+long+"-lane-255" || len(n) > 80 {
		t.Errorf("LaneQueue = %q (%d chars)", n, len(n))
	}
	s := testSpec("cell-abcdefghijklmno", 3, "us-east-1", spec.NATSingle)
	s.LaneQueues, s.Lanes, s.LaneShardSize = true, 256, 2
	r := runLaneCell(t, s) // awsmodel refuses a name AWS would
	if n := len(r.cell.LaneQueues); n != 256 {
		t.Errorf("%d lane queues, want 256", n)
	}
}

func TestNewCellRejectsBadLanes(t *testing.T) {
	s := testSpec("cell-a", 1, "us-east-1", spec.NATSingle)
	s.Lanes, s.LaneShardSize = 256, 128
	_, err := runCell(s, newTestModel(s.Region), nil)
	if err == nil || !strings.Contains(err.Error(), "lanes 256, laneShardSize 128") {
		t.Errorf("NewCell with C(256,128) shards: %v", err)
	}
}
