package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/cellctl/cellctl/internal/sim/health"
	"github.com/cellctl/cellctl/internal/sim/provider"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"

	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
)

func TestFaults(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	other := simtest.On(t, provider.Options{Dir: h.Cloud.Dir(), Stack: "cell-b"}, "us-east-1")

	once, err := h.Cloud.AddFault(store.Fault{Stack: "a", Op: store.OpCreate, Type: "sqs/queue", Name: "cell-a-*", Message: "throttled"})
	if err != nil || once.Times != 1 || once.ID == "" {
		t.Fatalf("fault = %+v, %v", once, err)
	}
	// Another stack is untouched.
	other.Create(simtest.TQueue, "cell-a-jobs", simtest.PM())
	_, err = h.TryCreate(simtest.TQueue, "cell-a-jobs", simtest.PM())
	simtest.WantErr(t, err, "InjectedFault", "injected fault "+once.ID, `create of aws:sqs/queue:Queue "cell-a-jobs" in stack cell-a`, "throttled", "creating SQS Queue (cell-a-jobs)")
	var inj *store.InjectedFaultError
	if !errors.As(err, &inj) || inj.Resource != "cell-a-jobs" || inj.Op != store.OpCreate {
		t.Errorf("error type %#v", err)
	}
	// Consumed: the retry succeeds.
	q := h.Create(simtest.TQueue, "cell-a-jobs", simtest.PM())
	if fs, _ := h.Cloud.Faults(); len(fs) != 0 {
		t.Errorf("fault not consumed: %+v", fs)
	}

	// N times, then done.
	h.Cloud.AddFault(store.Fault{Op: store.OpUpdate, Type: "aws:sqs/queue:Queue", Times: 2})
	for i := 0; i < 2; i++ {
		_, err := h.TryUpdate(q, simtest.PM("delaySeconds", 5))
		simtest.WantErr(t, err, "injected fault")
	}
	if _, err := h.TryUpdate(q, simtest.PM("delaySeconds", 5)); err != nil {
		t.Fatalf("third update: %v", err)
	}

	// Always, on delete and read, by short type forms.
	always, _ := h.Cloud.AddFault(store.Fault{Op: store.OpDelete, Type: "sqs:Queue", Always: true})
	for i := 0; i < 3; i++ {
		simtest.WantErr(t, h.Delete(q), "injected fault "+always.ID)
	}
	fs, _ := h.Cloud.Faults()
	if len(fs) != 1 || fs[0].Hits != 3 {
		t.Errorf("always fault = %+v", fs)
	}
	h.Cloud.AddFault(store.Fault{Op: store.OpRead, Type: "sqs.Queue"})
	_, err = h.P.Read(h.Ctx, plugin.ReadRequest{URN: h.URN(simtest.TQueue, q.Name), Type: simtest.TQueue, Name: q.Name, ID: resource.ID(q.ID)})
	simtest.WantErr(t, err, "injected fault", "read of aws:sqs/queue:Queue")
	if err := h.Cloud.ClearFaults(); err != nil {
		t.Fatal(err)
	}
	if err := h.Delete(q); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Cloud.AddFault(store.Fault{Type: "Nonsense"}); err == nil {
		t.Error("fault on an unknown type accepted")
	}
	if _, err := h.Cloud.AddFault(store.Fault{Op: "explode"}); err == nil {
		t.Error("fault on an unknown op accepted")
	}
}

// Faults are consumed exactly once across processes sharing a sim dir.
func TestFaultsConsumedOnceAcrossOpens(t *testing.T) {
	dir := t.TempDir()
	c, _ := store.Open(dir)
	c.AddFault(store.Fault{Op: store.OpCreate, Times: 5})
	var mu sync.Mutex
	failures := 0
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-" + strconv.Itoa(w)}, "us-east-1")
			for i := 0; i < 5; i++ {
				if _, err := h.TryCreate(simtest.TQueue, fmt.Sprintf("q-%d-%d", w, i), simtest.PM()); err != nil {
					if !strings.Contains(err.Error(), "injected fault") {
						t.Error(err)
					}
					mu.Lock()
					failures++
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	if failures != 5 {
		t.Errorf("%d injected failures, want 5", failures)
	}
	if rs, _ := c.Resources(store.Filter{}); len(rs) != 25 {
		t.Errorf("%d queues, want 25", len(rs))
	}
}

func TestLatencyRespectsCancellationAndHoldsNoLock(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	if err := h.Cloud.SetLatency(store.Latency{Op: store.OpCreate, Type: "sqs/queue", Duration: store.Duration(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.Ctx = ctx
	done := make(chan error)
	start := time.Now()
	go func() {
		_, err := h.TryCreate(simtest.TQueue, "slow", simtest.PM())
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	// While it sleeps the cloud is usable (no lock held).
	if _, err := h.Cloud.Resources(store.Filter{}); err != nil {
		t.Fatal(err)
	}
	other := simtest.On(t, provider.Options{Dir: h.Cloud.Dir(), Stack: "cell-b"}, "us-east-1")
	other.Create(simtest.TVpc, "fast", simtest.PM("cidrBlock", "10.0.0.0/16"))
	cancel()
	select {
	case err := <-done:
		simtest.WantErr(t, err, "interrupted")
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not end the latency sleep")
	}
	if time.Since(start) > 5*time.Second {
		t.Error("too slow")
	}
	// The engine's Cancel also ends sleeps.
	h.Ctx = context.Background()
	go func() {
		_, err := h.TryCreate(simtest.TQueue, "slow2", simtest.PM())
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	h.P.SignalCancellation(context.Background())
	simtest.WantErr(t, <-done, "cancelled by the engine")
	// The engine cancels at the end of every operation; later ones still work.
	h.Cloud.ClearLatency()
	h.Cloud.SetLatency(store.Latency{Op: store.OpCreate, Duration: store.Duration(10 * time.Millisecond)})
	if _, err := h.TryCreate(simtest.TQueue, "after-cancel", simtest.PM()); err != nil {
		t.Fatalf("create after cancel: %v", err)
	}
}

func TestLatencyRules(t *testing.T) {
	rules := []store.Latency{
		{Duration: store.Duration(10 * time.Millisecond)},
		{Op: store.OpCreate, Duration: store.Duration(20 * time.Millisecond)},
		{Op: store.OpCreate, Type: "rds/cluster", Duration: store.Duration(30 * time.Millisecond)},
		{Stack: "cell-b", Duration: store.Duration(40 * time.Millisecond)},
	}
	tests := []struct {
		stack, op, typ string
		want           time.Duration
	}{
		{"cell-a", store.OpRead, simtest.TVpc, 10 * time.Millisecond},
		{"cell-a", store.OpCreate, simtest.TVpc, 20 * time.Millisecond},
		{"cell-a", store.OpCreate, "aws:rds/cluster:Cluster", 30 * time.Millisecond},
		{"cell-b", store.OpCreate, "aws:rds/cluster:Cluster", 40 * time.Millisecond},
	}
	for _, tt := range tests {
		if got, _ := store.LatencyFor(rules, tt.stack, tt.op, tt.typ); got != tt.want {
			t.Errorf("%s %s %s: %v, want %v", tt.stack, tt.op, tt.typ, got, tt.want)
		}
	}
	// In-process options apply and are timed.
	h := simtest.New(t, "cell-a", "us-east-1", func(o *provider.Options) {
		o.Latency = []store.Latency{{Op: store.OpCreate, Duration: store.Duration(60 * time.Millisecond)}}
	})
	start := time.Now()
	h.Create(simtest.TQueue, "q", simtest.PM())
	if time.Since(start) < 60*time.Millisecond {
		t.Error("latency not applied")
	}
	// Persisted rules round-trip as durations.
	h.Cloud.SetLatency(store.Latency{Op: store.OpDelete, Duration: store.Duration(1500 * time.Millisecond)})
	ls, _ := h.Cloud.Latencies()
	b, _ := json.Marshal(ls)
	if !strings.Contains(string(b), `"duration":"1.5s"`) {
		t.Errorf("latency json %s", b)
	}
	h.Cloud.SetLatency(store.Latency{Op: store.OpDelete})
	if ls, _ := h.Cloud.Latencies(); len(ls) != 0 {
		t.Errorf("zero duration did not remove: %v", ls)
	}
}

func TestQuotas(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	for i := 0; i < 5; i++ {
		h.Create(simtest.TEIP, fmt.Sprintf("eip-%d", i), simtest.PM("domain", "vpc"))
	}
	_, err := h.TryCreate(simtest.TEIP, "eip-5", simtest.PM("domain", "vpc"))
	simtest.WantErr(t, err, "AddressLimitExceeded: The maximum number of addresses has been reached.", "ec2/L-0263D0A3")
	// Another region has its own quota.
	west := simtest.On(t, provider.Options{Dir: h.Cloud.Dir(), Stack: "cell-w"}, "us-west-2")
	west.Create(simtest.TEIP, "eip-w", simtest.PM("domain", "vpc"))
	// Raise it, and the sixth fits.
	if err := h.Cloud.SetQuota("us-east-1", "L-0263D0A3", 6); err != nil {
		t.Fatal(err)
	}
	h.Create(simtest.TEIP, "eip-5", simtest.PM("domain", "vpc"))
	usage, _ := h.Cloud.Usage("us-east-1")
	found := false
	for _, u := range usage {
		if u.Code == "ec2/L-0263D0A3" {
			found = true
			if u.Used != 6 || u.Limit != 6 || u.Key != "us-east-1" {
				t.Errorf("EIP usage = %+v", u)
			}
		}
	}
	if !found {
		t.Error("no EIP usage reported")
	}
	qs, _ := h.Cloud.Quotas("us-west-2")
	for _, q := range qs {
		if q.Code == "ec2/L-0263D0A3" && q.Value != 5 {
			t.Errorf("us-west-2 EIP quota = %v", q.Value)
		}
		if q.Code == "vpc/L-F678F1CE" && (q.Default != 5 || q.Name != "VPCs per Region") {
			t.Errorf("VPC quota %+v", q)
		}
	}
	// VPCs: 5 per region, the region's default VPC among them (a new
	// account has one in every region, as on AWS): four more fit.
	for i := 0; i < 4; i++ {
		h.Create(simtest.TVpc, fmt.Sprintf("vpc-%d", i), simtest.PM("cidrBlock", fmt.Sprintf("10.%d.0.0/16", i)))
	}
	_, err = h.TryCreate(simtest.TVpc, "vpc-4", simtest.PM("cidrBlock", "10.4.0.0/16"))
	simtest.WantErr(t, err, "VpcLimitExceeded", "5 of 5 used in us-east-1")
	// NAT gateways per zone, via the subnet's zone.
	h.Cloud.SetQuota("", "vpc/L-FE5A380F", 1)
	h.Cloud.SetQuota("us-east-1", "ec2/L-0263D0A3", 100)
	var subnets []*simtest.Res
	for i := 0; i < 2; i++ {
		subnets = append(subnets, h.Create(simtest.TSubnet, fmt.Sprintf("sn-%d", i), simtest.PM("vpcId", mustID(h, "vpc-0"), "cidrBlock", fmt.Sprintf("10.0.%d.0/24", i), "availabilityZone", "us-east-1a")))
	}
	eipA := h.Create(simtest.TEIP, "nat-a", simtest.PM())
	eipB := h.Create(simtest.TEIP, "nat-b", simtest.PM())
	h.Create("aws:ec2/natGateway:NatGateway", "nat-a", simtest.PM("subnetId", subnets[0].ID, "allocationId", eipA.ID))
	_, err = h.TryCreate("aws:ec2/natGateway:NatGateway", "nat-b", simtest.PM("subnetId", subnets[1].ID, "allocationId", eipB.ID))
	simtest.WantErr(t, err, "NatGatewayLimitExceeded", "us-east-1a")
	if err := h.Cloud.SetQuota("us-east-1", "nope", 1); err == nil {
		t.Error("unknown quota accepted")
	}
}

func mustID(h *simtest.Harness, name string) string {
	rs, err := h.Cloud.Resources(store.Filter{Name: name})
	if err != nil || len(rs) != 1 {
		h.T.Fatalf("resource %s: %v %v", name, rs, err)
	}
	return rs[0].ID
}

func TestAlarms(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	other := simtest.On(t, provider.Options{Dir: h.Cloud.Dir(), Stack: "cell-b"}, "us-east-1")
	alarm := simtest.PM("comparisonOperator", "GreaterThanThreshold", "evaluationPeriods", 1, "metricName", "HTTPCode_Target_5XX_Count",
		"namespace", "AWS/ApplicationELB", "statistic", "Sum", "period", 60, "threshold", 5)
	a := h.Create(simtest.TAlarm, "cell-a-5xx", alarm)
	other.Create(simtest.TAlarm, "cell-b-5xx", alarm)
	states, _ := health.AlarmStates(h.Cloud, "cell-a")
	if states[a.ID] != store.AlarmOK || states["cell-a-5xx"] != store.AlarmOK || len(states) != 2 {
		t.Errorf("initial states = %v", states)
	}
	if _, err := h.Cloud.SetAlarm("a", "cell-a-5xx", "alarm", "5xx spike"); err != nil {
		t.Fatal(err)
	}
	alarms, _ := health.Alarms(h.Cloud, "cell-a")
	if len(alarms) != 1 || alarms[0].State != store.AlarmAlarm || alarms[0].Reason != "5xx spike" || alarms[0].AlarmName != a.ID {
		t.Errorf("alarms = %+v", alarms)
	}
	if st, _ := health.AlarmStates(h.Cloud, "b"); st["cell-b-5xx"] != store.AlarmOK {
		t.Errorf("cell-b = %v", st)
	}
	if _, err := h.Cloud.SetAlarm("", a.ID, "BROKEN", ""); err == nil {
		t.Error("invalid state accepted")
	}
	if _, err := h.Cloud.SetAlarm("cell-a", "nope", "OK", ""); err == nil {
		t.Error("unknown alarm accepted")
	}
}

func TestEditsAndRemovals(t *testing.T) {
	h := simtest.New(t, "cell-a", "us-east-1")
	q := h.Create(simtest.TQueue, "jobs", simtest.PM("visibilityTimeoutSeconds", 30))
	r, err := h.Cloud.Edit("cell-a", q.ID, "visibilityTimeoutSeconds", "120")
	if err != nil || r.Outputs["visibilityTimeoutSeconds"] != 120.0 || r.Edited[0] != "visibilityTimeoutSeconds" {
		t.Fatalf("edit = %+v, %v", r, err)
	}
	rd := h.Read(q)
	if v := rd.Inputs["visibilityTimeoutSeconds"]; v.NumberValue() != 120 {
		t.Errorf("drifted input %v", v)
	}
	// Editing a property the program never set still shows (once edited).
	h.Cloud.Edit("cell-a", "jobs", "delaySeconds", "9")
	if rd := h.Read(q); rd.Inputs["delaySeconds"].NumberValue() != 9 {
		t.Errorf("edited non-input not surfaced: %v", rd.Inputs)
	}
	// Text that is not JSON is a string; null removes.
	if r, _ := h.Cloud.Edit("cell-a", "jobs", "tags.owner", "ops team"); r.Outputs["tags"].(map[string]any)["owner"] != "ops team" {
		t.Errorf("string edit = %v", r.Outputs["tags"])
	}
	if r, _ := h.Cloud.Edit("cell-a", "jobs", "tags.owner", "null"); len(r.Outputs["tags"].(map[string]any)) != 0 {
		t.Errorf("null edit = %v", r.Outputs["tags"])
	}
	if _, err := h.Cloud.Edit("cell-b", "jobs", "delaySeconds", "1"); err == nil {
		t.Error("edit in the wrong stack accepted")
	}
	if _, err := h.Cloud.Remove("", "jobs"); err != nil {
		t.Fatal(err)
	}
	if rd := h.Read(q); rd.Outputs != nil {
		t.Error("removed resource still reads")
	}
}

// TestEditByLogicalNameWinsOverAnEqualID: with `cells:namePrefix: none`
// the task definition's id is its family, cell-b-service — the ECS
// service's logical name. `sim edit cell-b cell-b-service desiredCount 7`
// (the README's and `sim edit --help`'s example) edits the service, as the
// name says; the task definition stays reachable by its own logical name.
// Two resources that share a logical name are ambiguous, and the error
// lists their ids to use instead.
func TestEditByLogicalNameWinsOverAnEqualID(t *testing.T) {
	h := simtest.New(t, "cell-b", "us-east-1")
	_, subs := h.Network("cell-b", "10.2.0.0/16", 2)
	vpc := simtest.S(subs[0].Out, "vpcId")
	tg := h.Create("aws:lb/targetGroup:TargetGroup", "cell-b-tg", simtest.PM("port", 8080, "protocol", "HTTP", "vpcId", vpc, "targetType", "ip"))
	alb := h.Create("aws:lb/loadBalancer:LoadBalancer", "cell-b-alb", simtest.PM("subnets", []any{subs[0].ID, subs[1].ID}))
	h.Create("aws:lb/listener:Listener", "cell-b-http", simtest.PM("loadBalancerArn", alb.ID, "port", 80,
		"defaultActions", []any{map[string]any{"type": "forward", "targetGroupArn": tg.ID}}))
	cluster := h.Create("aws:ecs/cluster:Cluster", "cell-b-ecs", simtest.PM())
	td := h.Create("aws:ecs/taskDefinition:TaskDefinition", "cell-b-task", simtest.PM("family", "cell-b-service", "containerDefinitions", simtest.ContainerDefs("app:1"),
		"requiresCompatibilities", []any{"FARGATE"}, "networkMode", "awsvpc", "cpu", "256", "memory", "512"))
	if td.ID != "cell-b-service" {
		t.Fatalf("task definition id %q, want its family: the clash this test is about", td.ID)
	}
	svc := h.Create("aws:ecs/service:Service", "cell-b-service", simtest.PM("cluster", cluster.ID, "launchType", "FARGATE", "desiredCount", 2,
		"taskDefinition", simtest.S(td.Out, "arn"), "networkConfiguration", map[string]any{"subnets": []any{subs[0].ID}},
		"loadBalancers", []any{map[string]any{"targetGroupArn": tg.ID, "containerName": "app", "containerPort": 8080}}))

	r, err := h.Cloud.Edit("cell-b", "cell-b-service", "desiredCount", "7")
	if err != nil {
		t.Fatalf("sim edit cell-b cell-b-service desiredCount 7: %v", err)
	}
	if r.Type != "aws:ecs/service:Service" || r.ID != svc.ID || r.Outputs["desiredCount"] != 7.0 {
		t.Errorf("edited %s %s (%s), desiredCount %v; want the service", r.Type, r.Name, r.ID, r.Outputs["desiredCount"])
	}
	if r, err := h.Cloud.Edit("cell-b", "cell-b-task", "tags.owner", "ops"); err != nil || r.Type != "aws:ecs/taskDefinition:TaskDefinition" {
		t.Errorf("edit by the task definition's logical name: %+v, %v", r, err)
	}
	// The service's own ARN (its id) still reaches it.
	if r, err := h.Cloud.Edit("", svc.ID, "desiredCount", "3"); err != nil || r.Name != "cell-b-service" || r.Outputs["desiredCount"] != 3.0 {
		t.Errorf("edit by id: %+v, %v", r, err)
	}

	// One logical name on two resources (Pulumi allows it across types).
	h.Create(simtest.TQueue, "jobs", simtest.PM())
	h.Create(simtest.TRole, "jobs", simtest.PM("assumeRolePolicy", simtest.AssumeRole))
	_, err = h.Cloud.Edit("cell-b", "jobs", "tags.owner", "ops")
	if err == nil || !strings.Contains(err.Error(), `"jobs" is ambiguous`) || !strings.Contains(err.Error(), "aws:sqs/queue:Queue, id ") ||
		!strings.Contains(err.Error(), "aws:iam/role:Role, id ") {
		t.Errorf("a name two resources share: %v", err)
	}
}

func TestPersistsAcrossOpens(t *testing.T) {
	dir := t.TempDir()
	h := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a"}, "us-east-1")
	q := h.Create(simtest.TQueue, "jobs", simtest.PM())
	h.Cloud.AddFault(store.Fault{Op: store.OpDelete, Name: "jobs"})
	h.Cloud.SetQuota("us-east-1", "vpc/L-F678F1CE", 7)

	again, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := again.Resources(store.Filter{Stack: "a"})
	if len(rs) != 1 || rs[0].ID != q.ID || rs[0].Outputs["url"] != q.ID {
		t.Fatalf("resources after reopen = %+v", rs)
	}
	fs, _ := again.Faults()
	qs, _ := again.Quotas("us-east-1")
	vpcQuota := 0.0
	for _, x := range qs {
		if x.Code == "vpc/L-F678F1CE" {
			vpcQuota = x.Value
		}
	}
	if len(fs) != 1 || vpcQuota != 7 {
		t.Errorf("faults %v quota %v", fs, vpcQuota)
	}
	// A provider on the reopened cloud reads and deletes what the first made.
	h2 := simtest.On(t, provider.Options{Dir: dir, Stack: "cell-a"}, "us-east-1")
	if rd := h2.Read(q); rd.Outputs == nil {
		t.Fatal("not found after reopen")
	}
	simtest.WantErr(t, h2.Delete(q), "injected fault")
	if err := h2.Delete(q); err != nil {
		t.Fatal(err)
	}
	if err := health.Reset(again); err != nil {
		t.Fatal(err)
	}
	if rs, _ := h.Cloud.Resources(store.Filter{}); len(rs) != 0 {
		t.Errorf("after reset: %v", rs)
	}
	// The files are human-readable JSON.
	b, _ := os.ReadFile(dir + "/secret.key")
	if len(b) != 65 {
		t.Errorf("secret.key is %d bytes", len(b))
	}
}

func TestConcurrentCreatesInOneProcess(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			h := simtest.On(t, provider.Options{Dir: dir, Stack: fmt.Sprintf("cell-%d", w)}, "us-east-1")
			for i := 0; i < 10; i++ {
				h.Create(simtest.TQueue, fmt.Sprintf("q-%d-%d", w, i), simtest.PM())
			}
		}(w)
	}
	wg.Wait()
	c, _ := store.Open(dir)
	if rs, _ := c.Resources(store.Filter{}); len(rs) != 80 {
		t.Errorf("%d resources, want 80", len(rs))
	}
}

// TestHelperProcess is a child process of TestConcurrentCreatesAcrossProcesses.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("SIM_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	h := simtest.On(t, provider.Options{Dir: dir, Stack: os.Getenv("SIM_HELPER_STACK")}, "us-east-1")
	for i := 0; i < 15; i++ {
		if _, err := h.TryCreate(simtest.TQueue, fmt.Sprintf("%s-q-%d", h.Stack, i), simtest.PM()); err != nil && !strings.Contains(err.Error(), "injected fault") {
			t.Fatal(err)
		}
	}
}

func TestConcurrentCreatesAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	c, _ := store.Open(dir)
	c.AddFault(store.Fault{Op: store.OpCreate, Times: 3})
	var cmds []*exec.Cmd
	for p := 0; p < 4; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SIM_HELPER_DIR="+dir, fmt.Sprintf("SIM_HELPER_STACK=cell-%d", p))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper: %v", err)
		}
	}
	rs, err := c.Resources(store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4*15-3 {
		t.Errorf("%d resources, want %d (60 creates, 3 injected failures)", len(rs), 4*15-3)
	}
	ids := map[string]bool{}
	for _, r := range rs {
		if ids[r.ID] {
			t.Errorf("duplicate id %s", r.ID)
		}
		ids[r.ID] = true
	}
	if fs, _ := c.Faults(); len(fs) != 0 {
		t.Errorf("faults left: %v", fs)
	}
}

// Through the real gRPC server: two connections configured with different
// regions (the default provider and an explicit us-east-1 one, as the
// engine opens them under PULUMI_DEBUG_PROVIDERS) keep their own config.
func TestServerKeepsConfigPerConnection(t *testing.T) {
	srv, err := provider.Start(context.Background(), provider.Options{Dir: t.TempDir(), Stack: "router"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if srv.DebugProviders() != "aws:"+strconv.Itoa(srv.Port()) {
		t.Errorf("DebugProviders = %s", srv.DebugProviders())
	}
	dial := func() pulumirpc.ResourceProviderClient {
		conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return pulumirpc.NewResourceProviderClient(conn)
	}
	ctx := context.Background()
	marshal := func(m resource.PropertyMap) *structpb.Struct {
		s, err := plugin.MarshalProperties(m, plugin.MarshalOptions{KeepSecrets: true, KeepResources: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	unmarshal := func(s *structpb.Struct) resource.PropertyMap {
		m, err := plugin.UnmarshalProperties(s, plugin.MarshalOptions{KeepSecrets: true})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	configure := func(c pulumirpc.ResourceProviderClient, name, region string) {
		if _, err := c.Handshake(ctx, &pulumirpc.ProviderHandshakeRequest{EngineAddress: "127.0.0.1:1", ConfigureWithUrn: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Attach(ctx, &pulumirpc.PluginAttach{Address: "127.0.0.1:1"}); err != nil {
			t.Fatalf("attach: %v", err)
		}
		info, err := c.GetPluginInfo(ctx, &emptypb.Empty{})
		if err != nil || info.Version != "6.83.4" {
			t.Fatalf("plugin info %v %v", info, err)
		}
		urn := "urn:pulumi:router::cells::pulumi:providers:aws::" + name
		resp, err := c.Configure(ctx, &pulumirpc.ConfigureRequest{Args: marshal(simtest.PM("region", region)), AcceptSecrets: true, AcceptResources: true, Urn: &urn})
		if err != nil || !resp.AcceptSecrets || !resp.SupportsPreview {
			t.Fatalf("configure %v %v", resp, err)
		}
	}
	create := func(c pulumirpc.ResourceProviderClient, typ, name string, in resource.PropertyMap) resource.PropertyMap {
		urn := "urn:pulumi:router::cells::" + typ + "::" + name
		chk, err := c.Check(ctx, &pulumirpc.CheckRequest{Urn: urn, Name: name, Type: typ, News: marshal(in), RandomSeed: []byte(name)})
		if err != nil || len(chk.Failures) > 0 {
			t.Fatalf("check %v %v", chk, err)
		}
		resp, err := c.Create(ctx, &pulumirpc.CreateRequest{Urn: urn, Name: name, Type: typ, Properties: chk.Inputs})
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		return unmarshal(resp.Properties)
	}
	def, edge := dial(), dial()
	configure(def, "default_6_83_4", "eu-west-1")
	configure(edge, "edge", "us-east-1")
	bucket := create(def, "aws:s3/bucketV2:BucketV2", "fleet", simtest.PM())
	role := create(def, simtest.TRole, "edge-role", simtest.PM("assumeRolePolicy", simtest.AssumeRole))
	fn := create(edge, simtest.TFn, "router-edge", simtest.EdgeFunction(simtest.S(role, "arn"), "v1"))
	if simtest.S(bucket, "region") != "eu-west-1" {
		t.Errorf("bucket region %s", simtest.S(bucket, "region"))
	}
	if !strings.HasPrefix(simtest.S(fn, "qualifiedArn"), "arn:aws:lambda:us-east-1:123456789012:function:router-edge-") {
		t.Errorf("edge function ARN %s", simtest.S(fn, "qualifiedArn"))
	}
	// Interleaved again: still separate.
	q := create(def, simtest.TQueue, "after", simtest.PM())
	if !strings.Contains(simtest.S(q, "url"), "sqs.eu-west-1.") {
		t.Errorf("queue url %s", simtest.S(q, "url"))
	}
	// Diffs come back the way pulumi-aws sends them: top-level keys plus a
	// detailed diff the engine uses.
	urn := "urn:pulumi:router::cells::aws:sqs/queue:Queue::after"
	news := simtest.PM("name", simtest.S(q, "name"), "delaySeconds", 5, "tags", map[string]any{"a": "b"})
	dr, err := def.Diff(ctx, &pulumirpc.DiffRequest{Urn: urn, Type: simtest.TQueue, Id: simtest.S(q, "url"), OldInputs: marshal(simtest.PM("name", simtest.S(q, "name"))), News: marshal(news), Olds: marshal(q)})
	if err != nil || dr.Changes != pulumirpc.DiffResponse_DIFF_SOME || !dr.HasDetailedDiff || strings.Join(dr.Diffs, ",") != "delaySeconds,tags" ||
		dr.DetailedDiff["tags.a"].GetKind() != pulumirpc.PropertyDiff_ADD || dr.DeleteBeforeReplace || len(dr.Replaces) > 0 {
		t.Errorf("diff response = %v, %v", dr, err)
	}
	inv, err := edge.Invoke(ctx, &pulumirpc.InvokeRequest{Tok: "aws:index/getRegion:getRegion", Args: marshal(simtest.PM())})
	if err != nil || simtest.S(unmarshal(inv.Return), "name") != "us-east-1" {
		t.Errorf("edge getRegion = %v %v", inv, err)
	}
}

// BenchmarkCreate measures one create through the provider (lock, load,
// compute, cross-resource checks, atomic save) in a cloud that already
// holds a fleet: 40 stacks of 80 resources.
func BenchmarkCreate(b *testing.B) {
	dir := b.TempDir()
	cloud, err := store.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	create := func(p *provider.Provider, typ, name string, in resource.PropertyMap) {
		chk, _ := p.Check(ctx, plugin.CheckRequest{Type: tokens.Type(typ), Name: name, News: in, RandomSeed: []byte(name)})
		if _, err := p.Create(ctx, plugin.CreateRequest{Type: tokens.Type(typ), Name: name, Properties: chk.Properties}); err != nil {
			b.Fatal(err)
		}
	}
	cloud.SetQuota("", "vpc/L-F678F1CE", 1000)
	for c := 0; c < 40; c++ {
		p := provider.NewProvider(cloud, provider.Options{Stack: fmt.Sprintf("cell-%d", c)})
		p.Configure(ctx, plugin.ConfigureRequest{Inputs: simtest.PM("region", "us-east-1")})
		create(p, simtest.TVpc, fmt.Sprintf("cell-%d-vpc", c), simtest.PM("cidrBlock", fmt.Sprintf("10.%d.0.0/16", c)))
		for i := 0; i < 79; i++ {
			create(p, simtest.TQueue, fmt.Sprintf("cell-%d-q%d", c, i), simtest.PM())
		}
	}
	p := provider.NewProvider(cloud, provider.Options{Stack: "bench"})
	p.Configure(ctx, plugin.ConfigureRequest{Inputs: simtest.PM("region", "us-east-1")})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		create(p, simtest.TQueue, "q-"+strconv.Itoa(i), simtest.PM())
	}
}
