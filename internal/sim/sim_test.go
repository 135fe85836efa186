package sim

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

	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
)

func TestFaults(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	other := harnessOn(t, Options{Dir: h.cloud.Dir(), Stack: "cell-b"}, "us-east-1")

	once, err := h.cloud.AddFault(Fault{Stack: "a", Op: OpCreate, Type: "sqs/queue", Name: "cell-a-*", Message: "throttled"})
	if err != nil || once.Times != 1 || once.ID == "" {
		t.Fatalf("fault = %+v, %v", once, err)
	}
	// Another stack is untouched.
	other.create(tQueue, "cell-a-jobs", pm())
	_, err = h.tryCreate(tQueue, "cell-a-jobs", pm())
	wantErr(t, err, "InjectedFault", "injected fault "+once.ID, `create of aws:sqs/queue:Queue "cell-a-jobs" in stack cell-a`, "throttled", "creating SQS Queue (cell-a-jobs)")
	var inj *InjectedFaultError
	if !errors.As(err, &inj) || inj.Resource != "cell-a-jobs" || inj.Op != OpCreate {
		t.Errorf("error type %#v", err)
	}
	// Consumed: the retry succeeds.
	q := h.create(tQueue, "cell-a-jobs", pm())
	if fs, _ := h.cloud.Faults(); len(fs) != 0 {
		t.Errorf("fault not consumed: %+v", fs)
	}

	// N times, then done.
	h.cloud.AddFault(Fault{Op: OpUpdate, Type: "aws:sqs/queue:Queue", Times: 2})
	for i := 0; i < 2; i++ {
		_, err := h.tryUpdate(q, pm("delaySeconds", 5))
		wantErr(t, err, "injected fault")
	}
	if _, err := h.tryUpdate(q, pm("delaySeconds", 5)); err != nil {
		t.Fatalf("third update: %v", err)
	}

	// Always, on delete and read, by short type forms.
	always, _ := h.cloud.AddFault(Fault{Op: OpDelete, Type: "sqs:Queue", Always: true})
	for i := 0; i < 3; i++ {
		wantErr(t, h.delete(q), "injected fault "+always.ID)
	}
	fs, _ := h.cloud.Faults()
	if len(fs) != 1 || fs[0].Hits != 3 {
		t.Errorf("always fault = %+v", fs)
	}
	h.cloud.AddFault(Fault{Op: OpRead, Type: "sqs.Queue"})
	_, err = h.p.Read(h.ctx, plugin.ReadRequest{URN: h.urn(tQueue, q.name), Type: tQueue, Name: q.name, ID: resource.ID(q.id)})
	wantErr(t, err, "injected fault", "read of aws:sqs/queue:Queue")
	if err := h.cloud.ClearFaults(); err != nil {
		t.Fatal(err)
	}
	if err := h.delete(q); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cloud.AddFault(Fault{Type: "Nonsense"}); err == nil {
		t.Error("fault on an unknown type accepted")
	}
	if _, err := h.cloud.AddFault(Fault{Op: "explode"}); err == nil {
		t.Error("fault on an unknown op accepted")
	}
}

// Faults are consumed exactly once across processes sharing a sim dir.
func TestFaultsConsumedOnceAcrossOpens(t *testing.T) {
	dir := t.TempDir()
	c, _ := Open(dir)
	c.AddFault(Fault{Op: OpCreate, Times: 5})
	var mu sync.Mutex
	failures := 0
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			h := harnessOn(t, Options{Dir: dir, Stack: "cell-" + strconv.Itoa(w)}, "us-east-1")
			for i := 0; i < 5; i++ {
				if _, err := h.tryCreate(tQueue, fmt.Sprintf("q-%d-%d", w, i), pm()); err != nil {
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
	if rs, _ := c.Resources(Filter{}); len(rs) != 25 {
		t.Errorf("%d queues, want 25", len(rs))
	}
}

func TestLatencyRespectsCancellationAndHoldsNoLock(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	if err := h.cloud.SetLatency(Latency{Op: OpCreate, Type: "sqs/queue", Duration: Duration(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.ctx = ctx
	done := make(chan error)
	start := time.Now()
	go func() {
		_, err := h.tryCreate(tQueue, "slow", pm())
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	// While it sleeps the cloud is usable (no lock held).
	if _, err := h.cloud.Resources(Filter{}); err != nil {
		t.Fatal(err)
	}
	other := harnessOn(t, Options{Dir: h.cloud.Dir(), Stack: "cell-b"}, "us-east-1")
	other.create(tVpc, "fast", pm("cidrBlock", "10.0.0.0/16"))
	cancel()
	select {
	case err := <-done:
		wantErr(t, err, "interrupted")
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not end the latency sleep")
	}
	if time.Since(start) > 5*time.Second {
		t.Error("too slow")
	}
	// The engine's Cancel also ends sleeps.
	h.ctx = context.Background()
	go func() {
		_, err := h.tryCreate(tQueue, "slow2", pm())
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	h.p.SignalCancellation(context.Background())
	wantErr(t, <-done, "cancelled by the engine")
	// The engine cancels at the end of every operation; later ones still work.
	h.cloud.ClearLatency()
	h.cloud.SetLatency(Latency{Op: OpCreate, Duration: Duration(10 * time.Millisecond)})
	if _, err := h.tryCreate(tQueue, "after-cancel", pm()); err != nil {
		t.Fatalf("create after cancel: %v", err)
	}
}

func TestLatencyRules(t *testing.T) {
	rules := []Latency{
		{Duration: Duration(10 * time.Millisecond)},
		{Op: OpCreate, Duration: Duration(20 * time.Millisecond)},
		{Op: OpCreate, Type: "rds/cluster", Duration: Duration(30 * time.Millisecond)},
		{Stack: "cell-b", Duration: Duration(40 * time.Millisecond)},
	}
	tests := []struct {
		stack, op, typ string
		want           time.Duration
	}{
		{"cell-a", OpRead, tVpc, 10 * time.Millisecond},
		{"cell-a", OpCreate, tVpc, 20 * time.Millisecond},
		{"cell-a", OpCreate, "aws:rds/cluster:Cluster", 30 * time.Millisecond},
		{"cell-b", OpCreate, "aws:rds/cluster:Cluster", 40 * time.Millisecond},
	}
	for _, tt := range tests {
		if got, _ := latencyFor(rules, tt.stack, tt.op, tt.typ); got != tt.want {
			t.Errorf("%s %s %s: %v, want %v", tt.stack, tt.op, tt.typ, got, tt.want)
		}
	}
	// In-process options apply and are timed.
	h := newHarness(t, "cell-a", "us-east-1", func(o *Options) { o.Latency = []Latency{{Op: OpCreate, Duration: Duration(60 * time.Millisecond)}} })
	start := time.Now()
	h.create(tQueue, "q", pm())
	if time.Since(start) < 60*time.Millisecond {
		t.Error("latency not applied")
	}
	// Persisted rules round-trip as durations.
	h.cloud.SetLatency(Latency{Op: OpDelete, Duration: Duration(1500 * time.Millisecond)})
	ls, _ := h.cloud.Latencies()
	b, _ := json.Marshal(ls)
	if !strings.Contains(string(b), `"duration":"1.5s"`) {
		t.Errorf("latency json %s", b)
	}
	h.cloud.SetLatency(Latency{Op: OpDelete})
	if ls, _ := h.cloud.Latencies(); len(ls) != 0 {
		t.Errorf("zero duration did not remove: %v", ls)
	}
}

func TestQuotas(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	for i := 0; i < 5; i++ {
		h.create(tEIP, fmt.Sprintf("eip-%d", i), pm("domain", "vpc"))
	}
	_, err := h.tryCreate(tEIP, "eip-5", pm("domain", "vpc"))
	wantErr(t, err, "AddressLimitExceeded: The maximum number of addresses has been reached.", "ec2/L-0263D0A3")
	// Another region has its own quota.
	west := harnessOn(t, Options{Dir: h.cloud.Dir(), Stack: "cell-w"}, "us-west-2")
	west.create(tEIP, "eip-w", pm("domain", "vpc"))
	// Raise it, and the sixth fits.
	if err := h.cloud.SetQuota("us-east-1", "L-0263D0A3", 6); err != nil {
		t.Fatal(err)
	}
	h.create(tEIP, "eip-5", pm("domain", "vpc"))
	usage, _ := h.cloud.Usage("us-east-1")
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
	qs, _ := h.cloud.Quotas("us-west-2")
	for _, q := range qs {
		if q.Code == "ec2/L-0263D0A3" && q.Value != 5 {
			t.Errorf("us-west-2 EIP quota = %v", q.Value)
		}
		if q.Code == "vpc/L-F678F1CE" && (q.Default != 5 || q.Name != "VPCs per Region") {
			t.Errorf("VPC quota %+v", q)
		}
	}
	// VPCs: 5 per region.
	for i := 0; i < 5; i++ {
		h.create(tVpc, fmt.Sprintf("vpc-%d", i), pm("cidrBlock", fmt.Sprintf("10.%d.0.0/16", i)))
	}
	_, err = h.tryCreate(tVpc, "vpc-5", pm("cidrBlock", "10.5.0.0/16"))
	wantErr(t, err, "VpcLimitExceeded")
	// NAT gateways per zone, via the subnet's zone.
	h.cloud.SetQuota("", "vpc/L-FE5A380F", 1)
	h.cloud.SetQuota("us-east-1", "ec2/L-0263D0A3", 100)
	var subnets []*res
	for i := 0; i < 2; i++ {
		subnets = append(subnets, h.create(tSubnet, fmt.Sprintf("sn-%d", i), pm("vpcId", mustID(h, "vpc-0"), "cidrBlock", fmt.Sprintf("10.0.%d.0/24", i), "availabilityZone", "us-east-1a")))
	}
	eipA := h.create(tEIP, "nat-a", pm())
	eipB := h.create(tEIP, "nat-b", pm())
	h.create("aws:ec2/natGateway:NatGateway", "nat-a", pm("subnetId", subnets[0].id, "allocationId", eipA.id))
	_, err = h.tryCreate("aws:ec2/natGateway:NatGateway", "nat-b", pm("subnetId", subnets[1].id, "allocationId", eipB.id))
	wantErr(t, err, "NatGatewayLimitExceeded", "us-east-1a")
	if err := h.cloud.SetQuota("us-east-1", "nope", 1); err == nil {
		t.Error("unknown quota accepted")
	}
}

func mustID(h *harness, name string) string {
	rs, err := h.cloud.Resources(Filter{Name: name})
	if err != nil || len(rs) != 1 {
		h.t.Fatalf("resource %s: %v %v", name, rs, err)
	}
	return rs[0].ID
}

func TestAlarms(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	other := harnessOn(t, Options{Dir: h.cloud.Dir(), Stack: "cell-b"}, "us-east-1")
	alarm := pm("comparisonOperator", "GreaterThanThreshold", "evaluationPeriods", 1, "metricName", "HTTPCode_Target_5XX_Count",
		"namespace", "AWS/ApplicationELB", "statistic", "Sum", "period", 60, "threshold", 5)
	a := h.create(tAlarm, "cell-a-5xx", alarm)
	other.create(tAlarm, "cell-b-5xx", alarm)
	states, _ := h.cloud.AlarmStates("cell-a")
	if states[a.id] != AlarmOK || states["cell-a-5xx"] != AlarmOK || len(states) != 2 {
		t.Errorf("initial states = %v", states)
	}
	if _, err := h.cloud.SetAlarm("a", "cell-a-5xx", "alarm", "5xx spike"); err != nil {
		t.Fatal(err)
	}
	alarms, _ := h.cloud.Alarms("cell-a")
	if len(alarms) != 1 || alarms[0].State != AlarmAlarm || alarms[0].Reason != "5xx spike" || alarms[0].AlarmName != a.id {
		t.Errorf("alarms = %+v", alarms)
	}
	if st, _ := h.cloud.AlarmStates("b"); st["cell-b-5xx"] != AlarmOK {
		t.Errorf("cell-b = %v", st)
	}
	if _, err := h.cloud.SetAlarm("", a.id, "BROKEN", ""); err == nil {
		t.Error("invalid state accepted")
	}
	if _, err := h.cloud.SetAlarm("cell-a", "nope", "OK", ""); err == nil {
		t.Error("unknown alarm accepted")
	}
}

func TestEditsAndRemovals(t *testing.T) {
	h := newHarness(t, "cell-a", "us-east-1")
	q := h.create(tQueue, "jobs", pm("visibilityTimeoutSeconds", 30))
	r, err := h.cloud.Edit("cell-a", q.id, "visibilityTimeoutSeconds", "120")
	if err != nil || r.Outputs["visibilityTimeoutSeconds"] != 120.0 || r.Edited[0] != "visibilityTimeoutSeconds" {
		t.Fatalf("edit = %+v, %v", r, err)
	}
	rd := h.read(q)
	if v := rd.Inputs["visibilityTimeoutSeconds"]; v.NumberValue() != 120 {
		t.Errorf("drifted input %v", v)
	}
	// Editing a property the program never set still shows (once edited).
	h.cloud.Edit("cell-a", "jobs", "delaySeconds", "9")
	if rd := h.read(q); rd.Inputs["delaySeconds"].NumberValue() != 9 {
		t.Errorf("edited non-input not surfaced: %v", rd.Inputs)
	}
	// Text that is not JSON is a string; null removes.
	if r, _ := h.cloud.Edit("cell-a", "jobs", "tags.owner", "ops team"); r.Outputs["tags"].(map[string]any)["owner"] != "ops team" {
		t.Errorf("string edit = %v", r.Outputs["tags"])
	}
	if r, _ := h.cloud.Edit("cell-a", "jobs", "tags.owner", "null"); len(r.Outputs["tags"].(map[string]any)) != 0 {
		t.Errorf("null edit = %v", r.Outputs["tags"])
	}
	if _, err := h.cloud.Edit("cell-b", "jobs", "delaySeconds", "1"); err == nil {
		t.Error("edit in the wrong stack accepted")
	}
	if _, err := h.cloud.Remove("", "jobs"); err != nil {
		t.Fatal(err)
	}
	if rd := h.read(q); rd.Outputs != nil {
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
	h := newHarness(t, "cell-b", "us-east-1")
	_, subs := h.network("cell-b", "10.2.0.0/16", 2)
	vpc := s(subs[0].out, "vpcId")
	tg := h.create("aws:lb/targetGroup:TargetGroup", "cell-b-tg", pm("port", 8080, "protocol", "HTTP", "vpcId", vpc, "targetType", "ip"))
	alb := h.create("aws:lb/loadBalancer:LoadBalancer", "cell-b-alb", pm("subnets", []any{subs[0].id, subs[1].id}))
	h.create("aws:lb/listener:Listener", "cell-b-http", pm("loadBalancerArn", alb.id, "port", 80,
		"defaultActions", []any{map[string]any{"type": "forward", "targetGroupArn": tg.id}}))
	cluster := h.create("aws:ecs/cluster:Cluster", "cell-b-ecs", pm())
	td := h.create("aws:ecs/taskDefinition:TaskDefinition", "cell-b-task", pm("family", "cell-b-service", "containerDefinitions", containerDefs("app:1"),
		"requiresCompatibilities", []any{"FARGATE"}, "networkMode", "awsvpc", "cpu", "256", "memory", "512"))
	if td.id != "cell-b-service" {
		t.Fatalf("task definition id %q, want its family: the clash this test is about", td.id)
	}
	svc := h.create("aws:ecs/service:Service", "cell-b-service", pm("cluster", cluster.id, "launchType", "FARGATE", "desiredCount", 2,
		"taskDefinition", s(td.out, "arn"), "networkConfiguration", map[string]any{"subnets": []any{subs[0].id}},
		"loadBalancers", []any{map[string]any{"targetGroupArn": tg.id, "containerName": "app", "containerPort": 8080}}))

	r, err := h.cloud.Edit("cell-b", "cell-b-service", "desiredCount", "7")
	if err != nil {
		t.Fatalf("sim edit cell-b cell-b-service desiredCount 7: %v", err)
	}
	if r.Type != "aws:ecs/service:Service" || r.ID != svc.id || r.Outputs["desiredCount"] != 7.0 {
		t.Errorf("edited %s %s (%s), desiredCount %v; want the service", r.Type, r.Name, r.ID, r.Outputs["desiredCount"])
	}
	if r, err := h.cloud.Edit("cell-b", "cell-b-task", "tags.owner", "ops"); err != nil || r.Type != "aws:ecs/taskDefinition:TaskDefinition" {
		t.Errorf("edit by the task definition's logical name: %+v, %v", r, err)
	}
	// The service's own ARN (its id) still reaches it.
	if r, err := h.cloud.Edit("", svc.id, "desiredCount", "3"); err != nil || r.Name != "cell-b-service" || r.Outputs["desiredCount"] != 3.0 {
		t.Errorf("edit by id: %+v, %v", r, err)
	}

	// One logical name on two resources (Pulumi allows it across types).
	h.create(tQueue, "jobs", pm())
	h.create(tRole, "jobs", pm("assumeRolePolicy", assumeRole))
	_, err = h.cloud.Edit("cell-b", "jobs", "tags.owner", "ops")
	if err == nil || !strings.Contains(err.Error(), `"jobs" is ambiguous`) || !strings.Contains(err.Error(), "aws:sqs/queue:Queue, id ") ||
		!strings.Contains(err.Error(), "aws:iam/role:Role, id ") {
		t.Errorf("a name two resources share: %v", err)
	}
}

func TestPersistsAcrossOpens(t *testing.T) {
	dir := t.TempDir()
	h := harnessOn(t, Options{Dir: dir, Stack: "cell-a"}, "us-east-1")
	q := h.create(tQueue, "jobs", pm())
	h.cloud.AddFault(Fault{Op: OpDelete, Name: "jobs"})
	h.cloud.SetQuota("us-east-1", "vpc/L-F678F1CE", 7)

	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := again.Resources(Filter{Stack: "a"})
	if len(rs) != 1 || rs[0].ID != q.id || rs[0].Outputs["url"] != q.id {
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
	h2 := harnessOn(t, Options{Dir: dir, Stack: "cell-a"}, "us-east-1")
	if rd := h2.read(q); rd.Outputs == nil {
		t.Fatal("not found after reopen")
	}
	wantErr(t, h2.delete(q), "injected fault")
	if err := h2.delete(q); err != nil {
		t.Fatal(err)
	}
	if err := again.Reset(); err != nil {
		t.Fatal(err)
	}
	if rs, _ := h.cloud.Resources(Filter{}); len(rs) != 0 {
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
			h := harnessOn(t, Options{Dir: dir, Stack: fmt.Sprintf("cell-%d", w)}, "us-east-1")
			for i := 0; i < 10; i++ {
				h.create(tQueue, fmt.Sprintf("q-%d-%d", w, i), pm())
			}
		}(w)
	}
	wg.Wait()
	c, _ := Open(dir)
	if rs, _ := c.Resources(Filter{}); len(rs) != 80 {
		t.Errorf("%d resources, want 80", len(rs))
	}
}

// TestHelperProcess is a child process of TestConcurrentCreatesAcrossProcesses.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("SIM_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	h := harnessOn(t, Options{Dir: dir, Stack: os.Getenv("SIM_HELPER_STACK")}, "us-east-1")
	for i := 0; i < 15; i++ {
		if _, err := h.tryCreate(tQueue, fmt.Sprintf("%s-q-%d", h.stack, i), pm()); err != nil && !strings.Contains(err.Error(), "injected fault") {
			t.Fatal(err)
		}
	}
}

func TestConcurrentCreatesAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	c, _ := Open(dir)
	c.AddFault(Fault{Op: OpCreate, Times: 3})
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
	rs, err := c.Resources(Filter{})
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
	srv, err := Start(context.Background(), Options{Dir: t.TempDir(), Stack: "router"})
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
		resp, err := c.Configure(ctx, &pulumirpc.ConfigureRequest{Args: marshal(pm("region", region)), AcceptSecrets: true, AcceptResources: true, Urn: &urn})
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
	bucket := create(def, "aws:s3/bucketV2:BucketV2", "fleet", pm())
	role := create(def, tRole, "edge-role", pm("assumeRolePolicy", assumeRole))
	fn := create(edge, tFn, "router-edge", edgeFunction(s(role, "arn"), "v1"))
	if s(bucket, "region") != "eu-west-1" {
		t.Errorf("bucket region %s", s(bucket, "region"))
	}
	if !strings.HasPrefix(s(fn, "qualifiedArn"), "arn:aws:lambda:us-east-1:123456789012:function:router-edge-") {
		t.Errorf("edge function ARN %s", s(fn, "qualifiedArn"))
	}
	// Interleaved again: still separate.
	q := create(def, tQueue, "after", pm())
	if !strings.Contains(s(q, "url"), "sqs.eu-west-1.") {
		t.Errorf("queue url %s", s(q, "url"))
	}
	// Diffs come back the way pulumi-aws sends them: top-level keys plus a
	// detailed diff the engine uses.
	urn := "urn:pulumi:router::cells::aws:sqs/queue:Queue::after"
	news := pm("name", s(q, "name"), "delaySeconds", 5, "tags", map[string]any{"a": "b"})
	dr, err := def.Diff(ctx, &pulumirpc.DiffRequest{Urn: urn, Type: tQueue, Id: s(q, "url"), OldInputs: marshal(pm("name", s(q, "name"))), News: marshal(news), Olds: marshal(q)})
	if err != nil || dr.Changes != pulumirpc.DiffResponse_DIFF_SOME || !dr.HasDetailedDiff || strings.Join(dr.Diffs, ",") != "delaySeconds,tags" ||
		dr.DetailedDiff["tags.a"].GetKind() != pulumirpc.PropertyDiff_ADD || dr.DeleteBeforeReplace || len(dr.Replaces) > 0 {
		t.Errorf("diff response = %v, %v", dr, err)
	}
	inv, err := edge.Invoke(ctx, &pulumirpc.InvokeRequest{Tok: "aws:index/getRegion:getRegion", Args: marshal(pm())})
	if err != nil || s(unmarshal(inv.Return), "name") != "us-east-1" {
		t.Errorf("edge getRegion = %v %v", inv, err)
	}
}

// BenchmarkCreate measures one create through the provider (lock, load,
// compute, cross-resource checks, atomic save) in a cloud that already
// holds a fleet: 40 stacks of 80 resources.
func BenchmarkCreate(b *testing.B) {
	dir := b.TempDir()
	cloud, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	create := func(p *Provider, typ, name string, in resource.PropertyMap) {
		chk, _ := p.Check(ctx, plugin.CheckRequest{Type: tokens.Type(typ), Name: name, News: in, RandomSeed: []byte(name)})
		if _, err := p.Create(ctx, plugin.CreateRequest{Type: tokens.Type(typ), Name: name, Properties: chk.Properties}); err != nil {
			b.Fatal(err)
		}
	}
	cloud.SetQuota("", "vpc/L-F678F1CE", 1000)
	for c := 0; c < 40; c++ {
		p := NewProvider(cloud, Options{Stack: fmt.Sprintf("cell-%d", c)})
		p.Configure(ctx, plugin.ConfigureRequest{Inputs: pm("region", "us-east-1")})
		create(p, tVpc, fmt.Sprintf("cell-%d-vpc", c), pm("cidrBlock", fmt.Sprintf("10.%d.0.0/16", c)))
		for i := 0; i < 79; i++ {
			create(p, tQueue, fmt.Sprintf("cell-%d-q%d", c, i), pm())
		}
	}
	p := NewProvider(cloud, Options{Stack: "bench"})
	p.Configure(ctx, plugin.ConfigureRequest{Inputs: pm("region", "us-east-1")})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		create(p, tQueue, "q-"+strconv.Itoa(i), pm())
	}
}
