package ecsmigrator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/adapters/cellspec"
	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/waves/executor"
)

type fakeRunner struct {
	specs []awsapi.TaskSpec
	res   awsapi.TaskResult
	err   error
	// followed are the tasks Follow was asked to watch, with their start.
	followed []string
	since    []time.Time
}

func (f *fakeRunner) Follow(_ context.Context, s awsapi.TaskSpec, taskArn string, startedAt time.Time) (awsapi.TaskResult, error) {
	f.specs = append(f.specs, s)
	f.followed, f.since = append(f.followed, taskArn), append(f.since, startedAt)
	return f.res, f.err
}

func (f *fakeRunner) RunOnce(_ context.Context, s awsapi.TaskSpec) (awsapi.TaskResult, error) {
	f.specs = append(f.specs, s)
	if s.Started != nil && f.res.TaskArn != "" {
		s.Started(f.res.TaskArn)
	}
	return f.res, f.err
}

func cfg(t *testing.T, image string, migrate, rollback []string) executor.CellConfig {
	t.Helper()
	c := spec.Baseline()
	c.ID, c.Index, c.Region, c.Image = "cell-a", 1, "eu-west-1", image
	c.MigrationCommand, c.MigrationRollbackCommand = migrate, rollback
	out, err := cellspec.FromSpec(c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var migrationOutput = map[string]any{"migration": map[string]any{
	"cluster": "arn:aws:ecs:eu-west-1:111111111111:cluster/cell-a", "taskDefinition": "arn:aws:ecs:eu-west-1:111111111111:task-definition/cells-cell-a-migrate:3",
	"container": "migrate", "subnets": []any{"subnet-1", "subnet-2"}, "securityGroups": []any{"sg-9"}, "logGroup": "/cells/cell-a", "logStreamPrefix": "migrate",
}}

func TestPlanMigratesANewImageOrCommandOnly(t *testing.T) {
	m := &Migrator{}
	up := []string{"./migrate", "up"}
	cases := []struct {
		name     string
		from, to executor.CellConfig
		want     []string
	}{
		{"new image", cfg(t, "app:1", up, nil), cfg(t, "app:2", up, nil), up},
		{"same image, new command", cfg(t, "app:1", up, nil), cfg(t, "app:1", []string{"./migrate", "up", "--all"}, nil), []string{"./migrate", "up", "--all"}},
		{"nothing new", cfg(t, "app:1", up, nil), cfg(t, "app:1", up, nil), nil},
		{"no migrations", cfg(t, "app:1", nil, nil), cfg(t, "app:2", nil, nil), nil},
		{"migrations turned on, image kept", cfg(t, "app:1", nil, nil), cfg(t, "app:1", up, nil), nil},
		{"migrations turned on with a new image", cfg(t, "app:1", nil, nil), cfg(t, "app:2", up, nil), up},
	}
	for _, c := range cases {
		p := m.Plan(executor.MigrationRequest{Cell: "cell-a", From: c.from, To: c.to})
		if !slices.Equal(p.Command, c.want) || (c.want != nil && (p.Image != c.to.Image || p.Timeout != 15*time.Minute)) {
			t.Errorf("%s: plan %+v, want %v", c.name, p, c.want)
		}
	}
	// A rollback runs the shipped configuration's rollback command from
	// the image the cell returns to.
	p := m.Plan(executor.MigrationRequest{Cell: "cell-a", From: cfg(t, "app:2", up, []string{"./migrate", "down", "--to", "app:1"}), To: cfg(t, "app:1", up, nil), Rollback: true})
	if p.Image != "app:1" || !slices.Equal(p.Command, []string{"./migrate", "down", "--to", "app:1"}) {
		t.Errorf("rollback plan %+v", p)
	}
	if p := m.Plan(executor.MigrationRequest{Cell: "cell-a", From: cfg(t, "app:2", up, nil), To: cfg(t, "app:1", up, nil), Rollback: true}); !p.None() {
		t.Errorf("a rollback without a rollback command runs %+v", p)
	}
}

func TestMigrateRunsTheTaskFromTheCellsTemplateAndRecordsIt(t *testing.T) {
	zero := 0
	run := &fakeRunner{res: awsapi.TaskResult{TaskArn: "arn:aws:ecs:eu-west-1:111111111111:task/cell-a/abc", TaskDefinitionArn: "arn:…:cells-cell-a-migrate:4",
		ExitCode: &zero, LastStatus: "STOPPED", LastLines: []string{"applied 0002_add_orders", "schema_version=0002"}}}
	var region string
	m := &Migrator{
		Outputs: func(_ context.Context, stack string) (map[string]any, error) { return migrationOutput, nil },
		Runner: func(_ context.Context, _, r string) (TaskRunner, error) {
			region = r
			return run, nil
		},
	}
	var started string
	got, err := m.Migrate(context.Background(), executor.MigrationRequest{Cell: "cell-a", From: cfg(t, "app:1", []string{"./migrate", "up"}, nil), To: cfg(t, "app:2", []string{"./migrate", "up"}, nil)},
		func(task string) { started = task })
	if err != nil {
		t.Fatal(err)
	}
	if !got.OK() || got.SchemaVersion != "0002" || got.Task != run.res.TaskArn || started != run.res.TaskArn || region != "eu-west-1" {
		t.Errorf("migration %+v (started %q, region %q)", got, started, region)
	}
	s := run.specs[0]
	if s.Cluster != "arn:aws:ecs:eu-west-1:111111111111:cluster/cell-a" || !strings.HasSuffix(s.Template, "cells-cell-a-migrate:3") || s.Container != "migrate" ||
		s.Image != "app:2" || !slices.Equal(s.Subnets, []string{"subnet-1", "subnet-2"}) || !slices.Equal(s.SecurityGroups, []string{"sg-9"}) || s.Timeout != 15*time.Minute {
		t.Errorf("task spec %+v", s)
	}
}

func TestMigrateWithoutATemplateSaysHowToTurnMigrationsOn(t *testing.T) {
	m := &Migrator{Outputs: func(context.Context, string) (map[string]any, error) { return map[string]any{"cellId": "cell-a"}, nil },
		Runner: func(context.Context, string, string) (TaskRunner, error) { return nil, errors.New("not reached") }}
	_, err := m.Migrate(context.Background(), executor.MigrationRequest{Cell: "cell-a", From: cfg(t, "app:1", nil, nil), To: cfg(t, "app:2", []string{"./migrate"}, nil)}, func(string) {})
	if err == nil || !strings.Contains(err.Error(), "cells:migrationCommand") || !strings.Contains(err.Error(), "leave the image") {
		t.Fatalf("err = %v", err)
	}
}

func TestResumeFollowsTheRecordedTaskWithItsTimeoutFromItsStart(t *testing.T) {
	zero := 0
	task := "arn:aws:ecs:eu-west-1:111111111111:task/cell-a/abc"
	run := &fakeRunner{res: awsapi.TaskResult{TaskArn: task, TaskDefinitionArn: "arn:…:cells-cell-a-migrate:4",
		ExitCode: &zero, LastStatus: "STOPPED", StopCode: "EssentialContainerExited", LastLines: []string{"schema_version=0002"}}}
	m := &Migrator{
		Outputs: func(context.Context, string) (map[string]any, error) { return migrationOutput, nil },
		Runner:  func(context.Context, string, string) (TaskRunner, error) { return run, nil },
	}
	started := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	detach := make(chan struct{})
	req := executor.MigrationRequest{Cell: "cell-a", From: cfg(t, "app:1", []string{"./migrate", "up"}, nil), To: cfg(t, "app:2", []string{"./migrate", "up"}, nil), Detach: detach}
	got, err := m.Resume(context.Background(), req, executor.Migration{Image: "app:2", Task: task, Started: started})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(run.followed, []string{task}) || !run.since[0].Equal(started) {
		t.Fatalf("followed %v since %v: want the recorded task, timed from its recorded start", run.followed, run.since)
	}
	s := run.specs[0]
	if s.Cluster != "arn:aws:ecs:eu-west-1:111111111111:cluster/cell-a" || s.Container != "migrate" || s.Timeout != 15*time.Minute || s.Detach == nil {
		t.Errorf("follow spec %+v", s)
	}
	if !got.OK() || got.Task != task || got.SchemaVersion != "0002" || !got.Started.Equal(started) || got.Image != "app:2" {
		t.Errorf("migration %+v", got)
	}

	// Stopping the wait leaves the task running: the executor's ErrStopped.
	run.err = errors.Join(errors.New("ECS task abc"), awsapi.ErrDetached)
	run.res = awsapi.TaskResult{TaskArn: task}
	got, err = m.Resume(context.Background(), req, executor.Migration{Task: task, Started: started})
	if !errors.Is(err, executor.ErrStopped) || got.Task != task || got.ExitCode != nil {
		t.Errorf("detached: %+v, %v", got, err)
	}
}
