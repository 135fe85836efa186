// Package ecsmigrator is the rollout executor's Migrator on ECS: a cell's
// schema migration is a one-off Fargate task (internal/awsapi.ECS.RunOnce)
// from a revision of the cell's migration task definition — the template
// its stack owns (the `migration` output: cluster, task definition,
// private subnets, the migration security group, the log group) — with the
// image and command of the configuration it migrates to. RunTask cannot
// override a container's image, so each migration registers its own
// revision of that family.
package ecsmigrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/adapters/cellspec"
	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/waves/executor"
)

// TaskRunner runs one one-off task to its end, or follows one an earlier
// run started to its end (internal/awsapi.ECS).
type TaskRunner interface {
	RunOnce(ctx context.Context, s awsapi.TaskSpec) (awsapi.TaskResult, error)
	Follow(ctx context.Context, s awsapi.TaskSpec, taskArn string, startedAt time.Time) (awsapi.TaskResult, error)
}

// Migrator implements executor.Migrator.
type Migrator struct {
	// Outputs reads a cell stack's outputs as deployed.
	Outputs func(ctx context.Context, stack string) (map[string]any, error)
	// Runner returns the task runner of a cell's account in region (the
	// region the migration's configuration names).
	Runner func(ctx context.Context, cell, region string) (TaskRunner, error)
	// Poll is how often the task is described (0: awsapi's default).
	Poll time.Duration
}

var (
	_ executor.Migrator = (*Migrator)(nil)
	_ executor.Resumer  = (*Migrator)(nil)
)

// Plan: a forward migration runs when the cell runs migrations and the
// image or the command changes (a rollout that only resizes a cell does
// not migrate); a rollback runs the rollback command — the shipped
// configuration's, else the one the cell returns to — from the image it
// returns to.
func (m *Migrator) Plan(req executor.MigrationRequest) executor.MigrationPlan {
	from, to, ok := specs(req)
	if !ok {
		// An unreadable configuration: the update itself refuses it.
		return executor.MigrationPlan{}
	}
	if req.Rollback {
		cmd := from.MigrationRollbackCommand
		if len(cmd) == 0 {
			cmd = to.MigrationRollbackCommand
		}
		if len(cmd) == 0 {
			return executor.MigrationPlan{}
		}
		return executor.MigrationPlan{Image: to.Image, Command: cmd, Timeout: timeout(to, from)}
	}
	if !to.RunsMigrations() {
		return executor.MigrationPlan{}
	}
	if from.Image == to.Image && (slices.Equal(from.MigrationCommand, to.MigrationCommand) || !from.RunsMigrations()) {
		// Nothing new to migrate — or the rollout turns migrations on
		// and leaves the image: it creates the migration task
		// definition, and the next rollout migrates.
		return executor.MigrationPlan{}
	}
	return executor.MigrationPlan{Image: to.Image, Command: to.MigrationCommand, Timeout: timeout(to, from)}
}

// Migrate runs the planned migration as a task in the cell's cluster.
func (m *Migrator) Migrate(ctx context.Context, req executor.MigrationRequest, started func(string)) (executor.Migration, error) {
	p, t, runner, out, err := m.prepare(ctx, req)
	if err != nil {
		return out, err
	}
	res, err := runner.RunOnce(ctx, awsapi.TaskSpec{
		Cluster: t.cluster, Template: t.taskDefinition, Container: t.container,
		Image: p.Image, Command: p.Command,
		Subnets: t.subnets, SecurityGroups: t.securityGroups,
		StartedBy: "cellctl", Timeout: p.Timeout, Poll: m.Poll,
		Tags:    map[string]string{"cell": req.Cell, "managed-by": "cellctl", "cellctl:purpose": purpose(req)},
		Started: started, Detach: req.Detach, ClientToken: req.Token,
	})
	return result(out, res, err)
}

// Resume follows the migration task an earlier run started (running.Task)
// to its end, as Migrate follows its own: its timeout counts from when it
// started (running.Started), and its exit code and last log lines are
// read the same way.
func (m *Migrator) Resume(ctx context.Context, req executor.MigrationRequest, running executor.Migration) (executor.Migration, error) {
	p, t, runner, out, err := m.prepare(ctx, req)
	out.Task, out.Started = running.Task, running.Started
	if err != nil {
		return out, err
	}
	started := running.Started
	if started.IsZero() {
		// A record that never said when: the timeout counts from now.
		started = time.Now()
	}
	res, err := runner.Follow(ctx, awsapi.TaskSpec{Cluster: t.cluster, Container: t.container, Timeout: p.Timeout, Poll: m.Poll, Detach: req.Detach},
		running.Task, started)
	out, err = result(out, res, err)
	if out.Started.IsZero() {
		out.Started = running.Started
	}
	return out, err
}

// prepare reads what a migration of req runs and where: its plan, the
// cell's task template and the task runner of its account and region.
func (m *Migrator) prepare(ctx context.Context, req executor.MigrationRequest) (executor.MigrationPlan, taskTemplate, TaskRunner, executor.Migration, error) {
	p := m.Plan(req)
	out := executor.Migration{Image: p.Image, Command: p.Command}
	if p.None() {
		return p, taskTemplate{}, nil, out, errors.New("nothing to migrate")
	}
	_, to, _ := specs(req)
	outs, err := m.Outputs(ctx, req.Cell)
	if err != nil {
		return p, taskTemplate{}, nil, out, fmt.Errorf("reading cell %s's outputs: %w", req.Cell, err)
	}
	t, err := template(outs)
	if err != nil {
		return p, taskTemplate{}, nil, out, fmt.Errorf("cell %s: %w", req.Cell, err)
	}
	runner, err := m.Runner(ctx, req.Cell, to.Region)
	if err != nil {
		return p, taskTemplate{}, nil, out, err
	}
	return p, t, runner, out, nil
}

// result is the migration a task's result says ran (out holds what it
// was to run). A detached wait is the executor's ErrStopped: the task was
// left running.
func result(out executor.Migration, res awsapi.TaskResult, err error) (executor.Migration, error) {
	if res.TaskArn != "" {
		out.Task = res.TaskArn
	}
	if res.TaskDefinitionArn != "" {
		out.TaskDefinition = res.TaskDefinitionArn
	}
	out.ExitCode, out.StopCode, out.StoppedReason = res.ExitCode, res.StopCode, res.StoppedReason
	if res.Reason != "" && out.StoppedReason == "" {
		out.StoppedReason = res.Reason
	}
	out.LastLines, out.TimedOut = res.LastLines, res.TimedOut
	if !res.StartedAt.IsZero() {
		out.Started = res.StartedAt
	}
	out.Stopped = res.StoppedAt
	out.SchemaVersion = awsapi.SchemaVersion(res.LastLines)
	if errors.Is(err, awsapi.ErrDetached) {
		return out, fmt.Errorf("%w (%v)", executor.ErrStopped, err)
	}
	if err != nil {
		return out, err
	}
	if !res.Succeeded() && res.ExitCode == nil && !res.TimedOut {
		// It never ran (image pull, capacity): the reason is ECS's.
		if e := res.Err(); e != nil && out.StoppedReason == "" {
			out.StoppedReason = e.Error()
		}
	}
	return out, nil
}

func purpose(req executor.MigrationRequest) string {
	if req.Rollback {
		return "migration-rollback"
	}
	return "migration"
}

func specs(req executor.MigrationRequest) (from, to spec.Cell, ok bool) {
	to, err := cellspec.ToSpec(req.To)
	if err != nil {
		return spec.Cell{}, spec.Cell{}, false
	}
	if req.From.Image != "" || len(req.From.Settings) > 0 {
		if from, err = cellspec.ToSpec(req.From); err != nil {
			return spec.Cell{}, spec.Cell{}, false
		}
	}
	return from, to, true
}

// timeout is the configuration's migration timeout (the one it migrates
// to, else the other's, else the default).
func timeout(cs ...spec.Cell) time.Duration {
	for _, c := range cs {
		if c.MigrationTimeoutSeconds > 0 {
			return time.Duration(c.MigrationTimeoutSeconds) * time.Second
		}
	}
	return time.Duration(spec.DefaultMigrationTimeoutSeconds) * time.Second
}

// taskTemplate is the cell stack's `migration` output.
type taskTemplate struct {
	cluster, taskDefinition, container string
	subnets, securityGroups            []string
}

func template(outs map[string]any) (taskTemplate, error) {
	raw, ok := outs["migration"].(map[string]any)
	if !ok {
		return taskTemplate{}, errors.New("its stack has no migration task definition (the `migration` output): it was deployed without cells:migrationCommand — " +
			"a rollout that turns migrations on must leave the image as it is (it creates the task definition); the next rollout migrates")
	}
	str := func(k string) string { s, _ := raw[k].(string); return s }
	list := func(k string) []string {
		var out []string
		vs, _ := raw[k].([]any)
		for _, v := range vs {
			if s, ok := v.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	t := taskTemplate{cluster: str("cluster"), taskDefinition: str("taskDefinition"), container: str("container"),
		subnets: list("subnets"), securityGroups: list("securityGroups")}
	var missing []string
	for k, v := range map[string]bool{"cluster": t.cluster != "", "taskDefinition": t.taskDefinition != "", "container": t.container != "",
		"subnets": len(t.subnets) > 0, "securityGroups": len(t.securityGroups) > 0} {
		if !v {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return taskTemplate{}, fmt.Errorf("its migration output lacks %v (a secret or unknown value cannot name a task)", missing)
	}
	return t, nil
}
