package awsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// cellTaskDefinition is a cell service's task definition as
// DescribeTaskDefinition answers it (API reference's response shape),
// read-only members included.
const cellTaskDefinition = `{
  "taskDefinitionArn": "arn:aws:ecs:us-east-1:123456789012:task-definition/cell-a-app:7",
  "family": "cell-a-app",
  "revision": 7,
  "status": "ACTIVE",
  "taskRoleArn": "arn:aws:iam::123456789012:role/cell-a-task",
  "executionRoleArn": "arn:aws:iam::123456789012:role/cell-a-exec",
  "networkMode": "awsvpc",
  "containerDefinitions": [
    {
      "name": "app",
      "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:v1",
      "essential": true,
      "command": ["serve", "--port", "8080"],
      "portMappings": [{"containerPort": 8080, "hostPort": 8080, "protocol": "tcp"}],
      "environment": [{"name": "DB_USER", "value": "cellctl_app"}, {"name": "DB_AUTH", "value": "iam"}],
      "logConfiguration": {"logDriver": "awslogs", "options": {"awslogs-group": "/cellctl/cell-a", "awslogs-region": "us-east-1", "awslogs-stream-prefix": "app"}},
      "restartPolicy": {"enabled": true, "restartAttemptPeriod": 60}
    },
    {
      "name": "xray",
      "image": "public.ecr.aws/xray/aws-xray-daemon:3.3",
      "essential": false
    }
  ],
  "volumes": [],
  "placementConstraints": [],
  "requiresCompatibilities": ["FARGATE"],
  "compatibilities": ["EC2", "FARGATE"],
  "requiresAttributes": [{"name": "com.amazonaws.ecs.capability.logging-driver.awslogs"}, {"name": "ecs.capability.task-eni"}],
  "cpu": "512",
  "memory": "1024",
  "runtimePlatform": {"cpuArchitecture": "ARM64", "operatingSystemFamily": "LINUX"},
  "ephemeralStorage": {"sizeInGiB": 30},
  "registeredAt": 1718000000.123,
  "registeredBy": "arn:aws:sts::123456789012:assumed-role/deploy/ci"
}`

const (
	testCluster = "arn:aws:ecs:us-east-1:123456789012:cluster/cell-a"
	testTaskArn = "arn:aws:ecs:us-east-1:123456789012:task/cell-a/0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	testStream  = "app/app/0f1e2d3c4b5a69788796a5b4c3d2e1f0"
)

type call struct {
	op   string
	body map[string]any
}

// fakeECS answers ECS (AmazonEC2ContainerServiceV20141113.*) and Logs
// (Logs_20140328.*) on AWS JSON 1.1 from a little state: the template,
// the task's successive DescribeTasks states, the log streams.
type fakeECS struct {
	t  *testing.T
	mu sync.Mutex

	template     map[string]any
	templateTags []any
	runFailures  []any
	// conflict makes RunTask answer ConflictException naming these tasks
	// (its clientToken was used with other parameters).
	conflict []any
	// states are the task's members at each DescribeTasks (after
	// missing MISSING answers); the last one repeats.
	states       []map[string]any
	missing      int
	ignoreStop   bool // StopTask answers but the task keeps running
	onDescribe   func(n int)
	streams      map[string][]string // stream → messages, oldest first
	pageMax      int                 // GetLogEvents answers at most this many events (0: limit)
	stopRequests []string

	calls     []call
	describes int
	stopped   map[string]any
}

func newFakeECS(t *testing.T) *fakeECS {
	f := &fakeECS{t: t, streams: map[string][]string{}}
	if err := json.Unmarshal([]byte(cellTaskDefinition), &f.template); err != nil {
		t.Fatal(err)
	}
	f.templateTags = []any{map[string]any{"key": "cell", "value": "a"}, map[string]any{"key": "owner", "value": "platform"}}
	return f
}

func (f *fakeECS) start() *ECS {
	f.t.Helper()
	srv := httptest.NewServer(f)
	f.t.Cleanup(srv.Close)
	tg := Sim(srv.URL, "us-east-1")
	tg.MaxBackoff = time.Millisecond
	e, err := NewECS(context.Background(), tg)
	if err != nil {
		f.t.Fatal(err)
	}
	return e
}

func (f *fakeECS) ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ops []string
	for _, c := range f.calls {
		if len(ops) == 0 || ops[len(ops)-1] != c.op {
			ops = append(ops, c.op)
		}
	}
	return ops
}

func (f *fakeECS) body(op string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.op == op {
			return c.body
		}
	}
	f.t.Fatalf("no %s call in %v", op, f.calls)
	return nil
}

func (f *fakeECS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		f.t.Errorf("%s %s, want POST /", r.Method, r.URL.Path)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		f.t.Errorf("Content-Type = %q", ct)
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDSIMULATED") {
		f.t.Errorf("request is not SigV4-signed with the static key: %q", r.Header.Get("Authorization"))
	}
	service, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
	var in map[string]any
	if err := json.Unmarshal(b, &in); err != nil {
		f.t.Errorf("%s: body is not JSON: %v", op, err)
	}
	f.mu.Lock()
	f.calls = append(f.calls, call{op, in})
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	var out any
	var status int
	switch service {
	case "AmazonEC2ContainerServiceV20141113":
		out, status = f.ecs(op, in)
	case "Logs_20140328":
		out, status = f.logs(op, in)
	default:
		f.t.Errorf("unexpected target %q", r.Header.Get("X-Amz-Target"))
		status = 500
	}
	if status != 0 {
		w.WriteHeader(status)
	}
	json.NewEncoder(w).Encode(out)
}

func (f *fakeECS) ecs(op string, in map[string]any) (any, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch op {
	case "DescribeTaskDefinition":
		if inc, ok := in["include"]; (ok || in["taskDefinition"] == f.template["taskDefinitionArn"]) && !reflect.DeepEqual(inc, []any{"TAGS"}) {
			f.t.Errorf("DescribeTaskDefinition include = %v, want [TAGS]", in["include"])
		}
		return map[string]any{"taskDefinition": f.template, "tags": f.templateTags}, 0
	case "RegisterTaskDefinition":
		td := map[string]any{}
		for k, v := range in {
			if k != "tags" {
				td[k] = v
			}
		}
		td["taskDefinitionArn"] = fmt.Sprintf("arn:aws:ecs:us-east-1:123456789012:task-definition/%s:8", in["family"])
		td["revision"] = 8
		td["status"] = "ACTIVE"
		return map[string]any{"taskDefinition": td, "tags": in["tags"]}, 0
	case "RunTask":
		if f.conflict != nil {
			return map[string]any{"__type": "ConflictException", "message": "The clientToken is already in use with a different RunTask request.", "resourceIds": f.conflict}, 400
		}
		if f.runFailures != nil {
			return map[string]any{"tasks": []any{}, "failures": f.runFailures}, 0
		}
		return map[string]any{"tasks": []any{f.task(map[string]any{"lastStatus": "PROVISIONING"})}, "failures": []any{}}, 0
	case "DescribeTasks":
		f.describes++
		n := f.describes
		if f.onDescribe != nil {
			f.mu.Unlock()
			f.onDescribe(n)
			f.mu.Lock()
		}
		if n <= f.missing {
			return map[string]any{"tasks": []any{}, "failures": []any{map[string]any{"arn": testTaskArn, "reason": "MISSING"}}}, 0
		}
		if f.stopped != nil {
			return map[string]any{"tasks": []any{f.task(f.stopped)}, "failures": []any{}}, 0
		}
		i := min(n-f.missing-1, len(f.states)-1)
		return map[string]any{"tasks": []any{f.task(f.states[i])}, "failures": []any{}}, 0
	case "StopTask":
		reason, _ := in["reason"].(string)
		f.stopRequests = append(f.stopRequests, reason)
		if !f.ignoreStop {
			f.stopped = map[string]any{"lastStatus": "STOPPED", "stopCode": "UserInitiated", "stoppedReason": reason,
				"startedAt": 1718000100.5, "stoppedAt": 1718000200.25,
				"containers": []any{map[string]any{"name": "app", "lastStatus": "STOPPED", "exitCode": 143}}}
		}
		return map[string]any{"task": f.task(map[string]any{"lastStatus": "DEPROVISIONING", "desiredStatus": "STOPPED"})}, 0
	}
	f.t.Errorf("unexpected ECS operation %s", op)
	return map[string]any{"__type": "InvalidAction"}, 400
}

func (f *fakeECS) task(members map[string]any) map[string]any {
	t := map[string]any{
		"taskArn": testTaskArn, "clusterArn": testCluster, "launchType": "FARGATE",
		"taskDefinitionArn": "arn:aws:ecs:us-east-1:123456789012:task-definition/cell-a-app:8",
		"desiredStatus":     "RUNNING", "startedBy": "cellctl", "createdAt": 1718000050.0,
	}
	for k, v := range members {
		t[k] = v
	}
	return t
}

func (f *fakeECS) logs(op string, in map[string]any) (any, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if op != "GetLogEvents" {
		f.t.Errorf("unexpected Logs operation %s", op)
		return map[string]any{"__type": "InvalidAction"}, 400
	}
	msgs, ok := f.streams[fmt.Sprint(in["logGroupName"])+"|"+fmt.Sprint(in["logStreamName"])]
	if !ok {
		return map[string]any{"__type": "ResourceNotFoundException", "message": "The specified log stream does not exist."}, 400
	}
	limit := int(in["limit"].(float64))
	if f.pageMax > 0 {
		limit = min(limit, f.pageMax)
	}
	end := len(msgs)
	if tok, ok := in["nextToken"].(string); ok {
		end, _ = strconv.Atoi(strings.TrimPrefix(tok, "b/"))
	}
	start := max(0, end-limit)
	var events []any
	for i := start; i < end; i++ {
		events = append(events, map[string]any{"timestamp": 1718000100000 + int64(i)*10, "message": msgs[i], "ingestionTime": 1718000100500 + int64(i)*10})
	}
	return map[string]any{"events": events, "nextForwardToken": fmt.Sprintf("f/%d", len(msgs)), "nextBackwardToken": fmt.Sprintf("b/%d", start)}, 0
}

func migrationSpec() TaskSpec {
	return TaskSpec{
		Cluster: testCluster, Template: "arn:aws:ecs:us-east-1:123456789012:task-definition/cell-a-app:7",
		Container: "app", Image: "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:v2",
		Command: []string{"migrate", "up"}, Subnets: []string{"subnet-0a", "subnet-0b"}, SecurityGroups: []string{"sg-0app"},
		StartedBy: "cellctl", Timeout: time.Minute, Poll: time.Millisecond,
		Tags: map[string]string{"cellctl:purpose": "migration", "owner": "cellctl"},
	}
}

func stoppedWith(exit any, stopCode, reason string) map[string]any {
	c := map[string]any{"name": "app", "lastStatus": "STOPPED"}
	if exit != nil {
		c["exitCode"] = exit
	}
	return map[string]any{"lastStatus": "STOPPED", "desiredStatus": "STOPPED", "stopCode": stopCode, "stoppedReason": reason,
		"startedAt": 1718000100.5, "stoppedAt": 1718000160.75,
		"containers": []any{c, map[string]any{"name": "xray", "lastStatus": "STOPPED", "exitCode": 0}}}
}

func TestRunOnceSucceedsAndReadsTheSchemaVersion(t *testing.T) {
	f := newFakeECS(t)
	f.missing = 1 // eventual consistency right after RunTask
	f.states = []map[string]any{{"lastStatus": "PROVISIONING"}, {"lastStatus": "RUNNING"},
		stoppedWith(0, "EssentialContainerExited", "Essential container in task exited")}
	f.streams["/cellctl/cell-a|"+testStream] = []string{"applying 0041_add_tenants", "applying 0042_index_tenants\n", "schema_version=42\n"}
	e := f.start()

	spec := migrationSpec()
	var started []string
	spec.Started = func(arn string) { started = append(started, arn+" after "+strings.Join(f.ops(), ",")) }
	res, err := e.RunOnce(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := testTaskArn + " after DescribeTaskDefinition,RegisterTaskDefinition,RunTask"; len(started) != 1 || started[0] != want {
		t.Errorf("Started called %q, want once with the task, right after RunTask: %q", started, want)
	}
	if got, want := f.ops(), []string{"DescribeTaskDefinition", "RegisterTaskDefinition", "RunTask", "DescribeTasks", "GetLogEvents"}; !reflect.DeepEqual(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	want := TaskResult{
		TaskArn: testTaskArn, TaskDefinitionArn: "arn:aws:ecs:us-east-1:123456789012:task-definition/cell-a-app:8",
		ExitCode: aws.Int(0), LastStatus: "STOPPED", StopCode: "EssentialContainerExited", StoppedReason: "Essential container in task exited",
		LastLines: []string{"applying 0041_add_tenants", "applying 0042_index_tenants", "schema_version=42"},
		StartedAt: time.Date(2024, 6, 10, 6, 15, 0, 500e6, time.UTC), StoppedAt: time.Date(2024, 6, 10, 6, 16, 0, 750e6, time.UTC),
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result =\n%+v, want\n%+v", res, want)
	}
	if !res.Succeeded() || res.Err() != nil || SchemaVersion(res.LastLines) != "42" {
		t.Errorf("succeeded=%v err=%v schema=%q", res.Succeeded(), res.Err(), SchemaVersion(res.LastLines))
	}

	run := f.body("RunTask")
	wantRun := map[string]any{
		"cluster": testCluster, "taskDefinition": want.TaskDefinitionArn, "count": float64(1), "launchType": "FARGATE",
		"networkConfiguration": map[string]any{"awsvpcConfiguration": map[string]any{
			"subnets": []any{"subnet-0a", "subnet-0b"}, "securityGroups": []any{"sg-0app"}, "assignPublicIp": "DISABLED"}},
		"startedBy": "cellctl", "propagateTags": "TASK_DEFINITION",
	}
	if tok, _ := run["clientToken"].(string); tok == "" {
		t.Errorf("RunTask sent no clientToken: %v", run)
	}
	delete(run, "clientToken")
	if !reflect.DeepEqual(run, wantRun) {
		t.Errorf("RunTask body =\n%v, want\n%v", run, wantRun)
	}
	logs := f.body("GetLogEvents")
	if logs["logGroupName"] != "/cellctl/cell-a" || logs["logStreamName"] != testStream || logs["startFromHead"] != false || logs["limit"] != float64(20) {
		t.Errorf("GetLogEvents body = %v", logs)
	}
	if len(f.stopRequests) != 0 {
		t.Errorf("StopTask sent for a task that stopped on its own: %v", f.stopRequests)
	}
}

func TestRunOnceCopiesTheTemplateAndSwapsOnlyImageAndCommand(t *testing.T) {
	f := newFakeECS(t)
	f.states = []map[string]any{stoppedWith(0, "EssentialContainerExited", "")}
	e := f.start()
	if _, err := e.RunOnce(ctx, migrationSpec()); err != nil {
		t.Fatal(err)
	}
	got := f.body("RegisterTaskDefinition")

	var want map[string]any
	json.Unmarshal([]byte(cellTaskDefinition), &want)
	for _, readOnly := range []string{"taskDefinitionArn", "revision", "status", "compatibilities", "requiresAttributes", "registeredAt", "registeredBy"} {
		delete(want, readOnly)
	}
	app := want["containerDefinitions"].([]any)[0].(map[string]any)
	app["image"] = "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:v2"
	app["command"] = []any{"migrate", "up"}
	delete(app, "restartPolicy")
	want["tags"] = []any{
		map[string]any{"key": "cell", "value": "a"},
		map[string]any{"key": "cellctl:purpose", "value": "migration"},
		map[string]any{"key": "owner", "value": "cellctl"}, // the spec's tag wins
	}
	// Empty lists may be sent or left out.
	for _, k := range []string{"volumes", "placementConstraints"} {
		if v, ok := got[k]; !ok || reflect.DeepEqual(v, []any{}) {
			delete(want, k)
			delete(got, k)
		}
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("RegisterTaskDefinition body =\n%s\nwant\n%s", g, w)
	}
}

func TestRunOnceWithoutCommandKeepsTheTemplates(t *testing.T) {
	f := newFakeECS(t)
	f.states = []map[string]any{stoppedWith(0, "EssentialContainerExited", "")}
	e := f.start()
	s := migrationSpec()
	s.Command = nil
	if _, err := e.RunOnce(ctx, s); err != nil {
		t.Fatal(err)
	}
	app := f.body("RegisterTaskDefinition")["containerDefinitions"].([]any)[0].(map[string]any)
	if !reflect.DeepEqual(app["command"], []any{"serve", "--port", "8080"}) || app["image"] != s.Image {
		t.Errorf("container = %v", app)
	}
}

func TestRunOnceReportsANonZeroExit(t *testing.T) {
	f := newFakeECS(t)
	f.states = []map[string]any{{"lastStatus": "RUNNING"}, stoppedWith(3, "EssentialContainerExited", "Essential container in task exited")}
	f.streams["/cellctl/cell-a|"+testStream] = []string{"schema_version=41", "applying 0042_index_tenants", "ERROR: relation \"tenants\" does not exist"}
	e := f.start()
	res, err := e.RunOnce(ctx, migrationSpec())
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == nil || *res.ExitCode != 3 || res.Succeeded() || res.TimedOut {
		t.Fatalf("result = %+v", res)
	}
	if SchemaVersion(res.LastLines) != "41" {
		t.Errorf("schema version = %q", SchemaVersion(res.LastLines))
	}
	msg := fmt.Sprint(res.Err())
	for _, want := range []string{"0f1e2d3c4b5a69788796a5b4c3d2e1f0", "exited with code 3", "EssentialContainerExited", `relation "tenants" does not exist`} {
		if !strings.Contains(msg, want) {
			t.Errorf("Err() = %q, want it to say %q", msg, want)
		}
	}
}

func TestRunOnceReportsATaskThatNeverStarted(t *testing.T) {
	f := newFakeECS(t)
	pull := "CannotPullContainerError: pull image manifest has been retried 5 time(s): failed to resolve ref 123456789012.dkr.ecr.us-east-1.amazonaws.com/app:v2: not found"
	stopped := stoppedWith(nil, "TaskFailedToStart", pull)
	stopped["containers"].([]any)[0].(map[string]any)["reason"] = pull
	delete(stopped, "startedAt")
	f.states = []map[string]any{{"lastStatus": "PROVISIONING"}, {"lastStatus": "PENDING"}, stopped}
	// No stream: the container never ran, so GetLogEvents answers
	// ResourceNotFoundException.
	e := f.start()
	res, err := e.RunOnce(ctx, migrationSpec())
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != nil || res.StopCode != "TaskFailedToStart" || res.StoppedReason != pull || res.Reason != pull || len(res.LastLines) != 0 || !res.StartedAt.IsZero() {
		t.Fatalf("result = %+v", res)
	}
	if msg := fmt.Sprint(res.Err()); !strings.Contains(msg, "stopped before its container exited") || !strings.Contains(msg, "CannotPullContainerError") || strings.Count(msg, "CannotPullContainerError") != 1 {
		t.Errorf("Err() = %q", msg)
	}
}

func TestRunOnceRunTaskFailuresAreAnError(t *testing.T) {
	f := newFakeECS(t)
	f.runFailures = []any{map[string]any{"arn": testCluster, "reason": "RESOURCE:CPU"}}
	e := f.start()
	res, err := e.RunOnce(ctx, migrationSpec())
	if err == nil || !strings.Contains(err.Error(), "RESOURCE:CPU") || !strings.Contains(err.Error(), "RunTask") {
		t.Fatalf("err = %v", err)
	}
	if res.TaskArn != "" || res.TaskDefinitionArn == "" {
		t.Errorf("result = %+v", res)
	}
	if got := f.ops(); !reflect.DeepEqual(got, []string{"DescribeTaskDefinition", "RegisterTaskDefinition", "RunTask"}) {
		t.Errorf("calls = %v", got)
	}
}

func TestRunOnceStopsATaskPastItsTimeout(t *testing.T) {
	f := newFakeECS(t)
	f.states = []map[string]any{{"lastStatus": "RUNNING"}}
	f.streams["/cellctl/cell-a|"+testStream] = []string{"applying 0042_backfill"}
	e := f.start()
	s := migrationSpec()
	s.Timeout = 20 * time.Millisecond
	res, err := e.RunOnce(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.stopRequests, []string{"cellctl: migration exceeded its timeout of 20ms"}) {
		t.Errorf("StopTask reasons = %q", f.stopRequests)
	}
	stop := f.body("StopTask")
	if stop["cluster"] != testCluster || stop["task"] != testTaskArn {
		t.Errorf("StopTask body = %v", stop)
	}
	if !res.TimedOut || res.Succeeded() || res.StopCode != "UserInitiated" || res.LastStatus != "STOPPED" || len(res.LastLines) != 1 {
		t.Errorf("result = %+v", res)
	}
	if msg := fmt.Sprint(res.Err()); !strings.Contains(msg, "timeout") {
		t.Errorf("Err() = %q", msg)
	}
}

func TestRunOnceGivesUpOnATaskThatWillNotStop(t *testing.T) {
	f := newFakeECS(t)
	f.states = []map[string]any{{"lastStatus": "RUNNING"}}
	f.ignoreStop = true
	e := f.start()
	e.StopWait = 20 * time.Millisecond
	s := migrationSpec()
	s.Timeout = 10 * time.Millisecond
	res, err := e.RunOnce(ctx, s)
	if err == nil || !strings.Contains(err.Error(), "still not STOPPED") || !strings.Contains(err.Error(), testTaskArn) {
		t.Fatalf("err = %v", err)
	}
	if res.TaskArn != testTaskArn || !res.TimedOut || len(f.stopRequests) != 2 {
		t.Errorf("result = %+v, StopTask reasons = %q", res, f.stopRequests)
	}
}

func TestRunOnceStopsTheTaskWhenCancelled(t *testing.T) {
	f := newFakeECS(t)
	f.states = []map[string]any{{"lastStatus": "RUNNING"}}
	e := f.start()
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.onDescribe = func(n int) {
		if n == 3 {
			cancel()
		}
	}
	res, err := e.RunOnce(cctx, migrationSpec())
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), testTaskArn) {
		t.Fatalf("err = %v", err)
	}
	if res.TaskArn != testTaskArn {
		t.Errorf("result = %+v", res)
	}
	if len(f.stopRequests) != 1 || !strings.Contains(f.stopRequests[0], "context canceled") {
		t.Errorf("StopTask reasons = %q", f.stopRequests)
	}
}

func TestRunOnceDetachedLeavesTheTaskRunning(t *testing.T) {
	f := newFakeECS(t)
	f.states = []map[string]any{{"lastStatus": "RUNNING"}}
	e := f.start()
	detach := make(chan struct{})
	f.onDescribe = func(n int) {
		if n == 3 {
			close(detach)
		}
	}
	s := migrationSpec()
	s.Detach = detach
	var started string
	s.Started = func(arn string) { started = arn }
	res, err := e.RunOnce(ctx, s)
	if !errors.Is(err, ErrDetached) || !strings.Contains(err.Error(), testTaskArn) {
		t.Fatalf("err = %v, want ErrDetached naming the task", err)
	}
	if res.TaskArn != testTaskArn || started != testTaskArn || res.ExitCode != nil || res.LastStatus != "" {
		t.Errorf("result = %+v (started %q): the task, and nothing it has not done", res, started)
	}
	if len(f.stopRequests) != 0 {
		t.Errorf("StopTask sent %q: a detached task keeps running", f.stopRequests)
	}
}

func TestRunOnceWithARecordedTokenFollowsTheTaskItAlreadyStarted(t *testing.T) {
	f := newFakeECS(t)
	// The dead run's RunTask with this token started testTaskArn (of the
	// revision it registered); this run's copy is another revision.
	f.conflict = []any{testTaskArn}
	f.states = []map[string]any{{"lastStatus": "RUNNING"}, stoppedWith(0, "EssentialContainerExited", "Essential container in task exited")}
	e := f.start()
	s := migrationSpec()
	s.ClientToken = "cellctl-3f9a0b1c2d3e4f5a"
	var started string
	s.Started = func(arn string) { started = arn }
	res, err := e.RunOnce(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if run := f.body("RunTask"); run["clientToken"] != "cellctl-3f9a0b1c2d3e4f5a" {
		t.Errorf("RunTask clientToken = %v, want the caller's", run["clientToken"])
	}
	if !res.Succeeded() || res.TaskArn != testTaskArn || started != testTaskArn || !strings.HasSuffix(res.TaskDefinitionArn, "cell-a-app:8") {
		t.Errorf("result %+v (started %q): want the task the token started, followed to its end", res, started)
	}
	s.ClientToken = strings.Repeat("x", 65)
	if _, err := e.RunOnce(ctx, s); err == nil || !strings.Contains(err.Error(), "clientToken") {
		t.Errorf("a 65-character token: %v", err)
	}
}

func TestFollowWaitsForATaskAnEarlierRunStartedAndReadsItsEnd(t *testing.T) {
	f := newFakeECS(t)
	f.states = []map[string]any{{"lastStatus": "RUNNING"}, {"lastStatus": "RUNNING"},
		stoppedWith(0, "EssentialContainerExited", "Essential container in task exited")}
	// The revision the task runs (named by DescribeTasks) is the copy a
	// RunOnce registered; its awslogs options name the stream.
	f.streams["/cellctl/cell-a|"+testStream] = []string{"applied 0002_add_orders", "schema_version=0002"}
	e := f.start()
	res, err := e.Follow(ctx, TaskSpec{Cluster: testCluster, Container: "app", Timeout: time.Minute, Poll: time.Millisecond}, testTaskArn, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Succeeded() || res.TaskArn != testTaskArn || !strings.HasSuffix(res.TaskDefinitionArn, "cell-a-app:8") || res.StopCode != "EssentialContainerExited" ||
		!reflect.DeepEqual(res.LastLines, []string{"applied 0002_add_orders", "schema_version=0002"}) {
		t.Errorf("result = %+v", res)
	}
	for _, op := range f.ops() {
		if op == "RunTask" || op == "RegisterTaskDefinition" || op == "StopTask" {
			t.Errorf("Follow called %s (calls %v): it only watches the task", op, f.ops())
		}
	}
	if td := f.body("DescribeTaskDefinition"); td["taskDefinition"] != "arn:aws:ecs:us-east-1:123456789012:task-definition/cell-a-app:8" {
		t.Errorf("DescribeTaskDefinition %v: want the revision the task runs", td)
	}
}

func TestFollowStopsATaskPastItsTimeoutCountedFromItsStart(t *testing.T) {
	f := newFakeECS(t)
	f.states = []map[string]any{{"lastStatus": "RUNNING"}}
	e := f.start()
	// Started two minutes ago with a minute's timeout: its time is up.
	res, err := e.Follow(ctx, TaskSpec{Cluster: testCluster, Container: "app", Timeout: time.Minute, Poll: time.Millisecond}, testTaskArn, time.Now().Add(-2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.StopCode != "UserInitiated" || !reflect.DeepEqual(f.stopRequests, []string{"cellctl: migration exceeded its timeout of 1m0s"}) {
		t.Errorf("result %+v, StopTask reasons %q: want the task stopped at once", res, f.stopRequests)
	}
	if _, err := e.Follow(ctx, TaskSpec{Cluster: testCluster, Container: "app"}, testTaskArn, time.Now()); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("Follow without a timeout: err = %v", err)
	}
}

func TestRunOnceRefusesAMissingContainerBeforeRegistering(t *testing.T) {
	f := newFakeECS(t)
	e := f.start()
	s := migrationSpec()
	s.Container = "migrate"
	_, err := e.RunOnce(ctx, s)
	if err == nil || !strings.Contains(err.Error(), `no container "migrate"`) || !strings.Contains(err.Error(), `"app", "xray"`) || !strings.Contains(err.Error(), "cell-a-app:7") {
		t.Fatalf("err = %v", err)
	}
	s.Container = "xray"
	if _, err := e.RunOnce(ctx, s); err == nil || !strings.Contains(err.Error(), "not essential") {
		t.Fatalf("non-essential container: err = %v", err)
	}
	if got := f.ops(); !reflect.DeepEqual(got, []string{"DescribeTaskDefinition"}) {
		t.Errorf("calls = %v", got)
	}
}

func TestRunOnceValidatesTheSpec(t *testing.T) {
	e := &ECS{}
	for _, tc := range []struct {
		edit func(*TaskSpec)
		want string
	}{
		{func(s *TaskSpec) { s.Container, s.Subnets = "", nil }, "Container, Subnets required"},
		{func(s *TaskSpec) { s.Timeout = 0 }, "positive Timeout"},
		{func(s *TaskSpec) { s.StartedBy = "cellctl migrate" }, "startedBy"},
		{func(s *TaskSpec) { s.Tags = map[string]string{"AWS:x": "y"} }, "reserved"},
	} {
		s := migrationSpec()
		tc.edit(&s)
		if _, err := e.RunOnce(ctx, s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

// TestRegisterInputCopiesEveryMember fills every member of a
// TaskDefinition and checks each member of RegisterTaskDefinitionInput is
// set from it: a member a newer SDK adds to both fails here until
// registerInput copies it.
func TestRegisterInputCopiesEveryMember(t *testing.T) {
	var td ecstypes.TaskDefinition
	v := reflect.ValueOf(&td).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).IsExported() {
			fill(v.Field(i))
		}
	}
	td.NetworkMode = ecstypes.NetworkModeAwsvpc
	td.ContainerDefinitions = []ecstypes.ContainerDefinition{{Name: aws.String("app"), Image: aws.String("old")}}
	tags := []ecstypes.Tag{{Key: aws.String("cell"), Value: aws.String("a")}, {Key: aws.String("aws:cloudformation:stack-name"), Value: aws.String("x")}}
	in, err := registerInput(td, tags, TaskSpec{Container: "app", Image: "new"})
	if err != nil {
		t.Fatal(err)
	}
	out := reflect.ValueOf(in).Elem()
	for i := 0; i < out.NumField(); i++ {
		f := out.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if out.Field(i).IsZero() {
			t.Errorf("RegisterTaskDefinitionInput.%s is not copied", f.Name)
			continue
		}
		switch f.Name {
		case "ContainerDefinitions", "Tags":
			continue
		}
		src := v.FieldByName(f.Name)
		if !src.IsValid() {
			t.Errorf("RegisterTaskDefinitionInput.%s has no TaskDefinition member to copy", f.Name)
		} else if !reflect.DeepEqual(src.Interface(), out.Field(i).Interface()) {
			t.Errorf("%s = %v, want the template's %v", f.Name, out.Field(i), src)
		}
	}
	if got := aws.ToString(in.ContainerDefinitions[0].Image); got != "new" {
		t.Errorf("image = %s", got)
	}
	if len(in.Tags) != 1 || aws.ToString(in.Tags[0].Key) != "cell" {
		t.Errorf("tags = %v (aws: tags must be dropped)", in.Tags)
	}
}

// fill gives v a non-zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.Zero(v.Type().Key()), reflect.Zero(v.Type().Elem()))
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(1, 0)))
		}
	}
}

func TestLastLinesWalksBackOverShortPages(t *testing.T) {
	f := newFakeECS(t)
	var msgs []string
	for i := range 30 {
		msgs = append(msgs, fmt.Sprintf("line %02d", i))
	}
	msgs[29] = "two\nlines"
	f.streams["g|s"] = msgs
	f.pageMax = 8
	e := f.start()
	logs, err := e.logsIn(ctx, "us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := logs.LastLines(ctx, "g", "s", 20)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 11; i < 29; i++ {
		want = append(want, fmt.Sprintf("line %02d", i))
	}
	want = append(want, "two", "lines")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines =\n%q, want\n%q", got, want)
	}
	if n := len(f.calls); n != 3 {
		t.Errorf("%d GetLogEvents calls, want 3", n)
	}
	if got, err := logs.LastLines(ctx, "g", "absent", 20); err != nil || len(got) != 0 {
		t.Errorf("missing stream: %q, %v", got, err)
	}
}

func TestSchemaVersion(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{nil, ""},
		{[]string{"migrating", "done"}, ""},
		{[]string{"schema_version=41", "schema_version=42", "done"}, "42"},
		{[]string{"  schema_version= 2024_06_11 ", "schema_version="}, "2024_06_11"},
		{[]string{"app schema_version=7"}, ""},
	} {
		if got := SchemaVersion(tc.lines); got != tc.want {
			t.Errorf("SchemaVersion(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}
