package awsapi

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// taskFixture is one cell as the cell template builds its migration
// path: a VPC with private subnets, a security group, the cell's log
// group, its ECS cluster, a migration task definition logging through
// awslogs, and its Aurora cluster with the Data API on; and the real ECS,
// CloudWatch Logs and RDS Data API clients on the simulator's endpoint.
type taskFixture struct {
	clk      *simtest.Clock
	cloud    *store.Cloud
	h        *simtest.Harness
	ecs      *ecs.Client
	logs     *cloudwatchlogs.Client
	endpoint string
	subnets  []string
	sg       string
	family   string
	cluster  string
	db       *simtest.Res
}

const migrateContainer = "migrate"

func migrationDefs(image string) string {
	b, _ := json.Marshal([]map[string]any{{
		"name": migrateContainer, "image": image, "essential": true, "command": []string{"migrate", "up"},
		"logConfiguration": map[string]any{"logDriver": "awslogs", "options": map[string]string{
			"awslogs-group": "/cellctl/cells/a/service", "awslogs-region": "us-east-1", "awslogs-stream-prefix": "migrate"}},
	}})
	return string(b)
}

func newTaskFixture(t *testing.T) *taskFixture {
	t.Helper()
	clk := simtest.NewClock()
	h := simtest.New(t, "cell-a", "us-east-1", clk.Opts)
	_, subs := h.Network("cell-a", "10.1.0.0/16", 2)
	vpc := simtest.S(subs[0].Out, "vpcId")
	sg := h.Create("aws:ec2/securityGroup:SecurityGroup", "cell-a-migrate-sg", simtest.PM("vpcId", vpc, "description", "migrations"))
	h.Create(store.TypeLogGroup, "cell-a-logs", simtest.PM("name", "/cellctl/cells/a/service"))
	cl := h.Create(store.TypeECSCluster, "cell-a-cluster", simtest.PM("name", "cellctl-a"))
	h.Create(store.TypeTaskDefinition, "cell-a-migrate", simtest.PM("family", "cellctl-a-migrate", "containerDefinitions", migrationDefs("registry/app:v1"),
		"requiresCompatibilities", []any{"FARGATE"}, "networkMode", "awsvpc", "cpu", "256", "memory", "512"))
	db := h.Create(store.TypeDBCluster, "cell-a-db", simtest.PM("clusterIdentifier", "cellctl-a-db", "engine", "aurora-postgresql",
		"masterUsername", "cellctl_admin", "manageMasterUserPassword", true, "databaseName", "app", "skipFinalSnapshot", true, "enableHttpEndpoint", true))
	c := clk.Cloud(h.Cloud)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	endpoint, stop, err := Serve(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	creds := credentials.NewStaticCredentialsProvider("ASIACELLCTLSIMULATED", "cellctl-simulated-aws-not-a-secret", "")
	return &taskFixture{clk: clk, cloud: c, h: h, endpoint: endpoint, subnets: []string{subs[0].ID, subs[1].ID}, sg: sg.ID,
		family: "cellctl-a-migrate", cluster: simtest.S(cl.Out, "name"), db: db,
		ecs:  ecs.New(ecs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds}),
		logs: cloudwatchlogs.New(cloudwatchlogs.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds}),
	}
}

func (f *taskFixture) network() *ecstypes.NetworkConfiguration {
	return &ecstypes.NetworkConfiguration{AwsvpcConfiguration: &ecstypes.AwsVpcConfiguration{
		Subnets: f.subnets, SecurityGroups: []string{f.sg}, AssignPublicIp: ecstypes.AssignPublicIpDisabled}}
}

// register copies the template's latest revision with a new image, as
// cellctl's migration step does.
func (f *taskFixture) register(t *testing.T, image string) *ecstypes.TaskDefinition {
	t.Helper()
	ctx := context.Background()
	cur, err := f.ecs.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(f.family)})
	if err != nil {
		t.Fatal(err)
	}
	td := cur.TaskDefinition
	defs := td.ContainerDefinitions
	defs[0].Image = aws.String(image)
	out, err := f.ecs.RegisterTaskDefinition(ctx, &ecs.RegisterTaskDefinitionInput{Family: td.Family, ContainerDefinitions: defs,
		NetworkMode: td.NetworkMode, RequiresCompatibilities: td.RequiresCompatibilities, Cpu: td.Cpu, Memory: td.Memory})
	if err != nil {
		t.Fatal(err)
	}
	return out.TaskDefinition
}

func (f *taskFixture) run(t *testing.T, taskDef string) ecstypes.Task {
	t.Helper()
	out, err := f.ecs.RunTask(context.Background(), &ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(taskDef),
		LaunchType: ecstypes.LaunchTypeFargate, NetworkConfiguration: f.network(), StartedBy: aws.String("cellctl"), Count: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tasks) != 1 || len(out.Failures) != 0 {
		t.Fatalf("RunTask = %+v", out)
	}
	return out.Tasks[0]
}

func (f *taskFixture) describe(t *testing.T, arn string) ecstypes.Task {
	t.Helper()
	out, err := f.ecs.DescribeTasks(context.Background(), &ecs.DescribeTasksInput{Cluster: aws.String(f.cluster), Tasks: []string{arn}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tasks) != 1 {
		t.Fatalf("DescribeTasks = %+v", out)
	}
	return out.Tasks[0]
}

func (f *taskFixture) lines(t *testing.T, stream string) []string {
	t.Helper()
	out, err := f.logs.GetLogEvents(context.Background(), &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String("/cellctl/cells/a/service"),
		LogStreamName: aws.String(stream), StartFromHead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var l []string
	for _, e := range out.Events {
		l = append(l, *e.Message)
	}
	return l
}

func taskID(arn string) string { return arn[strings.LastIndex(arn, "/")+1:] }

// The migration step's path, through the real clients: describe the
// template the stack created, register a revision with the new image
// (numbered after the provider's), run it on Fargate in the private
// subnets, describe it until STOPPED, read the awslogs stream's last
// lines. The revisions and the task survive a new process (a new cloud on
// the same directory).
func TestMigrationTaskThroughTheSDK(t *testing.T) {
	f := newTaskFixture(t)
	ctx := context.Background()
	td := f.register(t, "registry/app:v2")
	if td.Revision != 2 || *td.TaskDefinitionArn != "arn:aws:ecs:us-east-1:123456789012:task-definition/cellctl-a-migrate:2" || td.Status != ecstypes.TaskDefinitionStatusActive {
		t.Fatalf("registered = rev %d %s %s", td.Revision, aws.ToString(td.TaskDefinitionArn), td.Status)
	}
	for _, ref := range []string{f.family, f.family + ":2", *td.TaskDefinitionArn} {
		got, err := f.ecs.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(ref)})
		if err != nil || got.TaskDefinition.Revision != 2 || *got.TaskDefinition.ContainerDefinitions[0].Image != "registry/app:v2" {
			t.Fatalf("describe %s: %+v %v", ref, got, err)
		}
	}
	if got, err := f.ecs.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(f.family + ":1")}); err != nil ||
		*got.TaskDefinition.ContainerDefinitions[0].Image != "registry/app:v1" || !containsStr(got.TaskDefinition.Compatibilities, "FARGATE") {
		t.Fatalf("the provider's revision: %+v %v", got, err)
	}

	task := f.run(t, *td.TaskDefinitionArn)
	if *task.LastStatus != "PROVISIONING" || *task.DesiredStatus != "RUNNING" || *task.StartedBy != "cellctl" ||
		!strings.HasPrefix(*task.TaskArn, "arn:aws:ecs:us-east-1:123456789012:task/cellctl-a/") {
		t.Fatalf("RunTask answered %s/%s %s", aws.ToString(task.LastStatus), aws.ToString(task.DesiredStatus), aws.ToString(task.TaskArn))
	}
	running := f.describe(t, *task.TaskArn)
	if *running.LastStatus != "RUNNING" || running.StartedAt == nil || running.Containers[0].ExitCode != nil {
		t.Fatalf("first describe: %s", aws.ToString(running.LastStatus))
	}
	stream := "migrate/migrate/" + taskID(*task.TaskArn)
	if l := f.lines(t, stream); len(l) != 1 || l[0] != "running migration: migrate up" {
		t.Errorf("while running, the log = %q", l)
	}

	// Another process: the same directory, a new cloud and endpoint.
	again, err := store.Open(f.cloud.Dir())
	if err != nil {
		t.Fatal(err)
	}
	f2endpoint, stop, err := Serve(ctx, f.clk.Cloud(again))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	client2 := ecs.New(ecs.Options{Region: "us-east-1", BaseEndpoint: aws.String(f2endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("ASIACELLCTLSIMULATED", "cellctl-simulated-aws-not-a-secret", "")})
	out, err := client2.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String("arn:aws:ecs:us-east-1:123456789012:cluster/cellctl-a"), Tasks: []string{taskID(*task.TaskArn)}})
	if err != nil || len(out.Tasks) != 1 {
		t.Fatalf("describe from another process: %+v %v", out, err)
	}
	stopped := out.Tasks[0]
	if *stopped.LastStatus != "STOPPED" || stopped.StopCode != ecstypes.TaskStopCodeEssentialContainerExited ||
		*stopped.StoppedReason != "Essential container in task exited" || stopped.Containers[0].ExitCode == nil || *stopped.Containers[0].ExitCode != 0 || stopped.StoppedAt == nil {
		t.Fatalf("second describe: %s %s %v", aws.ToString(stopped.LastStatus), stopped.StopCode, stopped.Containers[0].ExitCode)
	}
	if l := f.lines(t, stream); len(l) != 2 || l[1] != "schema_version=v2" {
		t.Errorf("the log = %q", l)
	}
	runs, err := f.cloud.Tasks()
	if err != nil || len(runs) != 1 || runs[0].TaskDefinition != "cellctl-a-migrate:2" || runs[0].Image != "registry/app:v2" ||
		*runs[0].ExitCode != 0 || runs[0].Cluster != "cellctl-a" || runs[0].StartedBy != "cellctl" || runs[0].Stack != "cells/cell-a" {
		t.Fatalf("Tasks() = %+v, %v", runs, err)
	}
	// The next revision numbers on from the API's (the counter is the
	// account's, shared with the provider).
	if td3 := f.register(t, "registry/app:v3"); td3.Revision != 3 {
		t.Errorf("third revision = %d", td3.Revision)
	}
}

func containsStr[T ~string](l []T, s T) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Rules: a failing migration exits non-zero with its log line; a hanging
// one stays RUNNING until StopTask (UserInitiated, exit 137); an image
// that cannot be pulled never starts (TaskFailedToStart, no exit code,
// no log stream). Time alone also moves a task on.
func TestTaskRules(t *testing.T) {
	f := newTaskFixture(t)
	ctx := context.Background()
	for _, r := range []store.TaskRule{
		{Image: "registry/app:bad", Exit: simtest.Ptr(3), Log: "ERROR: column \"x\" does not exist"},
		{Image: "registry/app:hang", Hang: true},
		{Image: "registry/app:gone", NoStart: "pull access denied for registry/app, repository does not exist"},
		{Image: "registry/app:v9", SchemaVersion: "42", Log: "applied 3 migrations"},
	} {
		if _, err := f.cloud.SetTaskRule(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.cloud.SetTaskRule(store.TaskRule{Image: "x", Hang: true, NoStart: "y"}); err == nil {
		t.Error("--hang with --no-start is refused")
	}

	bad := f.run(t, *f.register(t, "registry/app:bad").TaskDefinitionArn)
	f.describe(t, *bad.TaskArn)
	got := f.describe(t, *bad.TaskArn)
	if *got.Containers[0].ExitCode != 3 || got.StopCode != ecstypes.TaskStopCodeEssentialContainerExited {
		t.Errorf("failing migration: %v %s", got.Containers[0].ExitCode, got.StopCode)
	}
	if l := f.lines(t, "migrate/migrate/"+taskID(*bad.TaskArn)); l[len(l)-1] != "ERROR: column \"x\" does not exist" {
		t.Errorf("failing migration's log = %q", l)
	}

	hang := f.run(t, *f.register(t, "registry/app:hang").TaskDefinitionArn)
	for range 3 {
		if got := f.describe(t, *hang.TaskArn); *got.LastStatus != "PROVISIONING" && *got.LastStatus != "RUNNING" {
			t.Fatalf("a hanging task: %s", *got.LastStatus)
		}
	}
	f.clk.Advance(time.Hour)
	if got := f.describe(t, *hang.TaskArn); *got.LastStatus != "RUNNING" {
		t.Fatalf("a hanging task after an hour: %s", *got.LastStatus)
	}
	st, err := f.ecs.StopTask(ctx, &ecs.StopTaskInput{Cluster: aws.String(f.cluster), Task: hang.TaskArn, Reason: aws.String("cellctl: migration timed out")})
	if err != nil || *st.Task.DesiredStatus != "STOPPED" || *st.Task.LastStatus != "RUNNING" {
		t.Fatalf("StopTask: %+v %v", st, err)
	}
	got = f.describe(t, *hang.TaskArn)
	if *got.LastStatus != "STOPPED" || got.StopCode != ecstypes.TaskStopCodeUserInitiated || *got.StoppedReason != "cellctl: migration timed out" || *got.Containers[0].ExitCode != 137 {
		t.Errorf("stopped hanging task: %s %s %q %v", *got.LastStatus, got.StopCode, aws.ToString(got.StoppedReason), got.Containers[0].ExitCode)
	}

	gone := f.run(t, *f.register(t, "registry/app:gone").TaskDefinitionArn)
	got = f.describe(t, *gone.TaskArn)
	if *got.LastStatus != "STOPPED" || got.StopCode != ecstypes.TaskStopCodeTaskFailedToStart || got.Containers[0].ExitCode != nil ||
		!strings.HasPrefix(*got.StoppedReason, "CannotPullContainerError: pull access denied") {
		t.Errorf("unpullable image: %s %s %v %q", *got.LastStatus, got.StopCode, got.Containers[0].ExitCode, aws.ToString(got.StoppedReason))
	}
	_, err = f.logs.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String("/cellctl/cells/a/service"), LogStreamName: aws.String("migrate/migrate/" + taskID(*gone.TaskArn))})
	if apiCode(err) != awsmodel.LogsResourceNotFound {
		t.Errorf("a task that never started has no stream: %v", err)
	}

	// Nobody describes: time moves the task on (10 s provisioning, 30 s
	// running), and the log reader sees it finished.
	v9 := f.run(t, *f.register(t, "registry/app:v9").TaskDefinitionArn)
	f.clk.Advance(time.Minute)
	if l := f.lines(t, "migrate/migrate/"+taskID(*v9.TaskArn)); len(l) != 3 || l[1] != "applied 3 migrations" || l[2] != "schema_version=42" {
		t.Errorf("the v9 log = %q", l)
	}
	if got := f.describe(t, *v9.TaskArn); *got.LastStatus != "STOPPED" || got.StartedAt.Sub(*got.CreatedAt) != store.ProvisionTime || got.StoppedAt.Sub(*got.StartedAt) != store.RunTime {
		t.Errorf("timed task: %s %v %v", *got.LastStatus, got.StartedAt, got.StoppedAt)
	}
	if err := f.cloud.ClearTasks(); err != nil {
		t.Fatal(err)
	}
	if runs, _ := f.cloud.Tasks(); len(runs) != 0 {
		t.Errorf("cleared, %d runs remain", len(runs))
	}
}

// RunTask refuses what ECS refuses, with ECS's error shapes.
func TestRunTaskRefusals(t *testing.T) {
	f := newTaskFixture(t)
	ctx := context.Background()
	tooMany := make([]string, 17)
	for i := range tooMany {
		tooMany[i] = f.subnets[0]
	}
	sixSGs := []string{f.sg, f.sg, f.sg, f.sg, f.sg, f.sg}
	// An EC2-only definition (bridge mode).
	_, err := f.ecs.RegisterTaskDefinition(ctx, &ecs.RegisterTaskDefinitionInput{Family: aws.String("bridge-only"),
		ContainerDefinitions: []ecstypes.ContainerDefinition{{Name: aws.String("c"), Image: aws.String("i"), Memory: aws.Int32(128)}}})
	if err != nil {
		t.Fatal(err)
	}
	netw := func(subnets, sgs []string) *ecstypes.NetworkConfiguration {
		return &ecstypes.NetworkConfiguration{AwsvpcConfiguration: &ecstypes.AwsVpcConfiguration{Subnets: subnets, SecurityGroups: sgs}}
	}
	for _, tc := range []struct {
		name string
		in   ecs.RunTaskInput
		code string
		msg  string
	}{
		{"unknown cluster", ecs.RunTaskInput{Cluster: aws.String("nope"), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: f.network()}, awsmodel.ECSClusterNotFound, "Cluster not found."},
		{"default cluster", ecs.RunTaskInput{TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: f.network()}, awsmodel.ECSClusterNotFound, ""},
		{"unknown family", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String("nope"), LaunchType: "FARGATE", NetworkConfiguration: f.network()}, awsmodel.ECSClient, "TaskDefinition not found."},
		{"unknown revision", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family + ":9"), LaunchType: "FARGATE", NetworkConfiguration: f.network()}, awsmodel.ECSClient, "TaskDefinition not found."},
		{"awsvpc without network", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE"}, awsmodel.ECSInvalidParameter, "Network Configuration must be provided"},
		{"no subnets", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: netw([]string{}, nil)}, awsmodel.ECSInvalidParameter, "subnets can not be empty."},
		{"17 subnets", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: netw(tooMany, nil)}, awsmodel.ECSInvalidParameter, "at most 16"},
		{"6 security groups", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: netw(f.subnets, sixSGs)}, awsmodel.ECSInvalidParameter, "at most 5"},
		{"unknown subnet", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: netw([]string{"subnet-0123456789abcdef0"}, nil)}, awsmodel.ECSInvalidParameter, "InvalidSubnetID.NotFound"},
		{"unknown security group", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: netw(f.subnets, []string{"sg-0123456789abcdef0"})}, awsmodel.ECSInvalidParameter, "InvalidGroup.NotFound"},
		{"count 11", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: f.network(), Count: aws.Int32(11)}, awsmodel.ECSInvalidParameter, "between 1 and 10"},
		{"EC2-only on Fargate", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String("bridge-only"), LaunchType: "FARGATE"}, awsmodel.ECSInvalidParameter, "Task definition does not support launch_type FARGATE."},
		{"bad startedBy", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: f.network(), StartedBy: aws.String("cell ctl!")}, awsmodel.ECSInvalidParameter, "startedBy"},
		{"launch type and strategy", ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family), LaunchType: "FARGATE", NetworkConfiguration: f.network(),
			CapacityProviderStrategy: []ecstypes.CapacityProviderStrategyItem{{CapacityProvider: aws.String("FARGATE")}}}, awsmodel.ECSInvalidParameter, "Specifying both a launch type and capacity provider strategy"},
	} {
		in := tc.in
		_, err := f.ecs.RunTask(ctx, &in)
		if apiCode(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %s %q", tc.name, err, tc.code, tc.msg)
		}
	}
	// EC2 tasks have no container instances to land on: failures, no error.
	out, err := f.ecs.RunTask(ctx, &ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String("bridge-only")})
	if err != nil || len(out.Tasks) != 0 || len(out.Failures) != 1 || !strings.Contains(*out.Failures[0].Reason, "No Container Instances") {
		t.Errorf("EC2 RunTask: %+v %v", out, err)
	}
	// An INACTIVE revision runs no more; describing it by revision still works.
	if _, err := f.ecs.DeregisterTaskDefinition(ctx, &ecs.DeregisterTaskDefinitionInput{TaskDefinition: aws.String(f.family + ":1")}); err != nil {
		t.Fatal(err)
	}
	_, err = f.ecs.RunTask(ctx, &ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(f.family + ":1"), LaunchType: "FARGATE", NetworkConfiguration: f.network()})
	if apiCode(err) != awsmodel.ECSClient || !strings.Contains(err.Error(), "TaskDefinition is inactive") {
		t.Errorf("inactive: %v", err)
	}
	if d, err := f.ecs.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(f.family + ":1")}); err != nil || d.TaskDefinition.Status != ecstypes.TaskDefinitionStatusInactive {
		t.Errorf("describe inactive: %+v %v", d, err)
	}
	if _, err := f.ecs.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(f.family)}); apiCode(err) != awsmodel.ECSClient {
		t.Errorf("no ACTIVE revision left: %v", err)
	}
	// Registering refuses a Fargate definition Fargate cannot size.
	_, err = f.ecs.RegisterTaskDefinition(ctx, &ecs.RegisterTaskDefinitionInput{Family: aws.String("x"), NetworkMode: "awsvpc", Cpu: aws.String("256"), Memory: aws.String("4096"),
		RequiresCompatibilities: []ecstypes.Compatibility{"FARGATE"}, ContainerDefinitions: []ecstypes.ContainerDefinition{{Name: aws.String("c"), Image: aws.String("i")}}})
	if apiCode(err) != awsmodel.ECSClient || !strings.Contains(err.Error(), "No Fargate configuration") {
		t.Errorf("bad Fargate size: %v", err)
	}
	// DescribeTasks of an unknown task is a MISSING failure; StopTask of one is refused.
	dt, err := f.ecs.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String(f.cluster), Tasks: []string{"0123456789abcdef0123456789abcdef"}})
	if err != nil || len(dt.Failures) != 1 || *dt.Failures[0].Reason != "MISSING" {
		t.Errorf("describe unknown: %+v %v", dt, err)
	}
	if _, err := f.ecs.StopTask(ctx, &ecs.StopTaskInput{Cluster: aws.String(f.cluster), Task: aws.String("0123456789abcdef0123456789abcdef")}); apiCode(err) != awsmodel.ECSInvalidParameter {
		t.Errorf("stop unknown: %v", err)
	}
}

// GetLogEvents pages as CloudWatch Logs documents: the same forward token
// back at the end of the stream; an unknown group or stream is
// ResourceNotFoundException.
func TestGetLogEventsPaging(t *testing.T) {
	f := newTaskFixture(t)
	ctx := context.Background()
	if _, err := f.cloud.SetTaskRule(store.TaskRule{Image: "registry/app:v1", Log: "one\ntwo\nthree\nfour"}); err != nil {
		t.Fatal(err)
	}
	task := f.run(t, f.family)
	f.describe(t, *task.TaskArn)
	f.describe(t, *task.TaskArn)
	group, stream := aws.String("/cellctl/cells/a/service"), aws.String("migrate/migrate/"+taskID(*task.TaskArn))
	var got []string
	var token *string
	for range 10 {
		out, err := f.logs.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: group, LogStreamName: stream, StartFromHead: aws.Bool(true), Limit: aws.Int32(2), NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range out.Events {
			got = append(got, *e.Message)
		}
		if token != nil && *out.NextForwardToken == *token {
			break
		}
		token = out.NextForwardToken
	}
	if strings.Join(got, ",") != "running migration: migrate up,one,two,three,four" {
		t.Errorf("paged forward: %q", got)
	}
	last, err := f.logs.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: group, LogStreamName: stream, Limit: aws.Int32(1)})
	if err != nil || len(last.Events) != 1 || *last.Events[0].Message != "four" {
		t.Fatalf("the last line: %+v %v", last, err)
	}
	prev, err := f.logs.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: group, LogStreamName: stream, Limit: aws.Int32(2), NextToken: last.NextBackwardToken})
	if err != nil || len(prev.Events) != 2 || *prev.Events[1].Message != "three" {
		t.Fatalf("backward: %+v %v", prev, err)
	}
	for _, tc := range []struct{ group, stream, code string }{
		{"/nope", *stream, awsmodel.LogsResourceNotFound},
		{*group, "nope", awsmodel.LogsResourceNotFound},
	} {
		if _, err := f.logs.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: aws.String(tc.group), LogStreamName: aws.String(tc.stream)}); apiCode(err) != tc.code {
			t.Errorf("%s %s: %v", tc.group, tc.stream, err)
		}
	}
	if _, err := f.logs.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: group, LogStreamName: stream, NextToken: aws.String("forged")}); apiCode(err) != awsmodel.LogsInvalidParameter {
		t.Errorf("forged token: %v", err)
	}
}

// RunTask's clientToken (ecs.runtask-clienttoken): the same token with the
// same parameters answers the task it started, never a second one; with
// other parameters (another revision) ConflictException names that task;
// a token is up to 64 characters 33-126 and lives 24 hours in its cluster.
func TestRunTaskClientTokenIsIdempotent(t *testing.T) {
	f := newTaskFixture(t)
	ctx := context.Background()
	td := f.register(t, "registry/app:v2")
	run := func(taskDef, token string) (*ecs.RunTaskOutput, error) {
		return f.ecs.RunTask(ctx, &ecs.RunTaskInput{Cluster: aws.String(f.cluster), TaskDefinition: aws.String(taskDef), ClientToken: aws.String(token),
			LaunchType: ecstypes.LaunchTypeFargate, NetworkConfiguration: f.network(), StartedBy: aws.String("cellctl"), Count: aws.Int32(1)})
	}
	first, err := run(*td.TaskDefinitionArn, "cellctl-0123456789abcdef")
	if err != nil || len(first.Tasks) != 1 {
		t.Fatalf("RunTask: %+v %v", first, err)
	}
	arn := *first.Tasks[0].TaskArn
	again, err := run(*td.TaskDefinitionArn, "cellctl-0123456789abcdef")
	if err != nil || len(again.Tasks) != 1 || *again.Tasks[0].TaskArn != arn {
		t.Fatalf("the same token and parameters must answer task %s: %+v %v", arn, again, err)
	}
	other := f.register(t, "registry/app:v2")
	_, err = run(*other.TaskDefinitionArn, "cellctl-0123456789abcdef")
	var conflict *ecstypes.ConflictException
	if !errors.As(err, &conflict) || !slices.Equal(conflict.ResourceIds, []string{arn}) {
		t.Fatalf("the same token with another revision: want ConflictException naming %s, got %v", arn, err)
	}
	if _, err := run(*td.TaskDefinitionArn, strings.Repeat("x", 65)); apiCode(err) != awsmodel.ECSInvalidParameter {
		t.Errorf("a 65-character token: %v", err)
	}
	if runs, _ := f.cloud.Tasks(); len(runs) != 1 {
		t.Fatalf("%d tasks ran, want 1", len(runs))
	}
	// A day later the token is forgotten: it starts a task again.
	f.clk.Advance(awsmodel.ClientTokenTTL + time.Minute)
	if out, err := run(*other.TaskDefinitionArn, "cellctl-0123456789abcdef"); err != nil || *out.Tasks[0].TaskArn == arn {
		t.Errorf("after the token's lifetime: %+v %v", out, err)
	}
}
