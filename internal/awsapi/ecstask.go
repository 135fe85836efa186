package awsapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// ECS runs one-off tasks — a cell's schema migration — on Fargate
// (AWS JSON 1.1, AmazonEC2ContainerServiceV20141113.*). The container's
// logs are read with Logs from its awslogs group.
type ECS struct {
	api    *ecs.Client
	target Target

	mu   sync.Mutex
	logs map[string]*Logs // by region

	// StopWait bounds how long RunOnce keeps polling for STOPPED after it
	// sent StopTask (0 = DefaultStopWait).
	StopWait time.Duration
	// LogLines is how many of the container's last log lines a result
	// carries (0 = DefaultLogLines).
	LogLines int
}

const (
	// DefaultPoll is the DescribeTasks interval. The ECS API reference
	// (RunTask, "eventual consistency") asks for a few seconds between
	// DescribeTasks calls; a migration is minutes long.
	DefaultPoll = 6 * time.Second
	// DefaultStopWait is how long a stopped-by-cellctl task may take to
	// reach STOPPED: StopTask sends SIGTERM, then SIGKILL after the
	// container's stopTimeout (30 s by default, at most 120 s on Fargate),
	// then Fargate detaches the task's network interface.
	DefaultStopWait = 3 * time.Minute
	// DefaultLogLines is how many log lines a TaskResult carries.
	DefaultLogLines = 20
	// stopCallTimeout bounds the StopTask sent on a fresh context when
	// the caller's context is gone.
	stopCallTimeout = 30 * time.Second
	// stopReasonMax is StopTask's limit on reason (API reference,
	// StopTask: "Up to 255 characters are allowed in this message").
	stopReasonMax = 255
)

// NewECS builds the one-off task runner for a target.
func NewECS(ctx context.Context, t Target) (*ECS, error) {
	cfg, err := t.Config(ctx)
	if err != nil {
		return nil, err
	}
	return &ECS{api: ecs.NewFromConfig(cfg), target: t, logs: map[string]*Logs{}}, nil
}

// TaskSpec is one one-off task: a new revision of Template with Image (and
// Command when set), run once on Fargate.
type TaskSpec struct {
	// Cluster is the ECS cluster's ARN or name.
	Cluster string
	// Template is the task definition to copy: an ARN or family:revision.
	// Pass a pinned revision (the cell's stack output): a bare family
	// names its latest ACTIVE revision, which after a run is the previous
	// run's copy, not the service's definition.
	Template string
	// Container is the container whose image and command change and whose
	// exit code counts. It must be essential (its exit stops the task).
	Container string
	// Image replaces the container's image.
	Image string
	// Command replaces the container's command (the arguments to its
	// entry point); nil keeps the template's.
	Command []string
	// Subnets and SecurityGroups place the task's network interface
	// (awsvpc, no public IP: the cell's private subnets reach the
	// registry through NAT or endpoints).
	Subnets        []string
	SecurityGroups []string
	// StartedBy tags the task (e.g. "cellctl"): up to 128 letters,
	// digits, '-', '/' and '_' (API reference, RunTask startedBy; older
	// references said 36).
	StartedBy string
	// Timeout is how long the task may run, counted from RunTask's
	// answer (provisioning and image pull included), before cellctl
	// stops it. Required.
	Timeout time.Duration
	// Poll is the DescribeTasks interval (0 = DefaultPoll).
	Poll time.Duration
	// Tags are put on the registered revision, over the template's own,
	// and reach the task through propagateTags=TASK_DEFINITION.
	Tags map[string]string
	// Started, when set, is called with the task's ARN as soon as RunTask
	// answered, before RunOnce waits for it (the caller records it, so a
	// run that dies while the task runs still names it).
	Started func(taskArn string)
	// ClientToken is RunTask's idempotency token: up to 64 ASCII
	// characters 33-126 ("": the SDK makes one per call, which covers its
	// own retries only). A caller that records the token before RunOnce
	// and passes it again after a run died before it learnt the task gets
	// that task back instead of a second one: RunTask answers with it, or —
	// the template's copy registered again being another revision —
	// ConflictException names it, and RunOnce follows that task (API
	// Reference, "Ensuring idempotency": the token lives 24 hours in its
	// cluster).
	ClientToken string
	// Detach, when closed, ends the wait without stopping the task:
	// RunOnce (or Follow) returns the result so far, TaskArn set, and an
	// error wrapping ErrDetached. It is the operator's first Ctrl-C: the
	// caller has recorded the task, and a later run follows it to its end
	// (Follow) instead of starting another. A cancelled ctx, by contrast,
	// stops the task. nil: never.
	Detach <-chan struct{}
}

// ErrDetached says the caller stopped waiting for a task (TaskSpec.Detach)
// and left it running.
var ErrDetached = errors.New("stopped waiting for the task, which was left running")

// TaskResult is what a one-off task did.
type TaskResult struct {
	TaskArn, TaskDefinitionArn string
	// ExitCode is the container's exit code; nil when it never ran or
	// exited without one (stopped before it started, killed by the
	// platform).
	ExitCode *int
	// Reason is the container's reason, e.g. "CannotPullContainerError: …"
	// or "OutOfMemoryError: Container killed due to memory usage".
	Reason string
	// LastStatus, StopCode and StoppedReason are the task's: STOPPED;
	// TaskFailedToStart, EssentialContainerExited, UserInitiated…; and
	// ECS's explanation.
	LastStatus, StopCode, StoppedReason string
	// LastLines are the container's last awslogs lines, oldest first
	// (empty when it logged nothing or never started).
	LastLines []string
	// StartedAt and StoppedAt are zero when ECS reported none.
	StartedAt, StoppedAt time.Time
	// TimedOut is set when cellctl stopped the task after Timeout.
	TimedOut bool
}

// Succeeded is true when the container exited 0 on its own.
func (r TaskResult) Succeeded() bool {
	return !r.TimedOut && r.ExitCode != nil && *r.ExitCode == 0
}

// Err says why the task did not succeed, in one sentence a report can
// print; nil when it did.
func (r TaskResult) Err() error {
	if r.Succeeded() {
		return nil
	}
	id := taskID(r.TaskArn)
	var what string
	switch {
	case r.TimedOut:
		what = "ran past its timeout and was stopped by cellctl"
	case r.ExitCode != nil:
		what = fmt.Sprintf("exited with code %d", *r.ExitCode)
	default:
		what = "stopped before its container exited"
	}
	var why []string
	for _, s := range []string{r.StopCode, r.StoppedReason, r.Reason} {
		if s != "" && !slices.Contains(why, s) {
			why = append(why, s)
		}
	}
	msg := "task " + id + " " + what
	if len(why) > 0 {
		msg += " (" + strings.Join(why, ": ") + ")"
	}
	if n := len(r.LastLines); n > 0 {
		msg += "; last log line: " + r.LastLines[n-1]
	}
	return fmt.Errorf("%s", msg)
}

var startedByRE = regexp.MustCompile(`^[A-Za-z0-9_/-]{1,128}$`)

func (s TaskSpec) validate() error {
	var missing []string
	for _, f := range []struct{ name, v string }{{"Cluster", s.Cluster}, {"Template", s.Template}, {"Container", s.Container}, {"Image", s.Image}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(s.Subnets) == 0 {
		missing = append(missing, "Subnets")
	}
	if len(missing) > 0 {
		return fmt.Errorf("ECS one-off task: %s required", strings.Join(missing, ", "))
	}
	if s.Timeout <= 0 {
		return fmt.Errorf("ECS one-off task from %s: a positive Timeout is required (a migration must not run unbounded)", s.Template)
	}
	if len(s.ClientToken) > 64 || strings.IndexFunc(s.ClientToken, func(r rune) bool { return r < 33 || r > 126 }) >= 0 {
		return fmt.Errorf("ECS one-off task from %s: clientToken %q: up to 64 ASCII characters 33-126 are allowed", s.Template, s.ClientToken)
	}
	if s.StartedBy != "" && !startedByRE.MatchString(s.StartedBy) {
		return fmt.Errorf("ECS one-off task from %s: startedBy %q: up to 128 letters, digits, '-', '/' and '_' are allowed", s.Template, s.StartedBy)
	}
	for k := range s.Tags {
		if strings.HasPrefix(strings.ToLower(k), "aws:") {
			return fmt.Errorf("ECS one-off task from %s: tag %q: the aws: prefix is reserved for AWS", s.Template, k)
		}
	}
	return nil
}

// RunOnce registers a copy of the template with the spec's image and
// command, runs it once on Fargate, waits until it is STOPPED and reads
// its exit code and last log lines.
//
// The returned error is about cellctl's calls, not the task's outcome:
// a task that exited non-zero or never started is a nil error with the
// result saying so (see TaskResult.Err). Once RunTask has answered, every
// error comes with the result's TaskArn set, and on a failure while the
// task may still run — the caller's ctx cancelled, DescribeTasks failing
// — RunOnce first sends StopTask on a fresh short context: a migration
// is never left running silently. When the task stopped but its logs
// could not be read, the result is complete except LastLines and the
// error names the log stream.
func (e *ECS) RunOnce(ctx context.Context, s TaskSpec) (TaskResult, error) {
	var res TaskResult
	if err := s.validate(); err != nil {
		return res, err
	}
	desc, err := e.api.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{
		TaskDefinition: aws.String(s.Template),
		Include:        []ecstypes.TaskDefinitionField{ecstypes.TaskDefinitionFieldTags},
	})
	if err != nil {
		return res, fmt.Errorf("ECS DescribeTaskDefinition (%s): %w", s.Template, err)
	}
	if desc.TaskDefinition == nil {
		return res, fmt.Errorf("ECS DescribeTaskDefinition (%s): the answer holds no task definition", s.Template)
	}
	in, err := registerInput(*desc.TaskDefinition, desc.Tags, s)
	if err != nil {
		return res, err
	}
	reg, err := e.api.RegisterTaskDefinition(ctx, in)
	if err != nil {
		return res, fmt.Errorf("ECS RegisterTaskDefinition (family %s, copy of %s): %w", aws.ToString(in.Family), s.Template, err)
	}
	if reg.TaskDefinition == nil || aws.ToString(reg.TaskDefinition.TaskDefinitionArn) == "" {
		return res, fmt.Errorf("ECS RegisterTaskDefinition (family %s): the answer names no task definition", aws.ToString(in.Family))
	}
	td := *reg.TaskDefinition
	res.TaskDefinitionArn = aws.ToString(td.TaskDefinitionArn)

	run := &ecs.RunTaskInput{
		Cluster:        aws.String(s.Cluster),
		TaskDefinition: td.TaskDefinitionArn,
		Count:          aws.Int32(1),
		LaunchType:     ecstypes.LaunchTypeFargate,
		NetworkConfiguration: &ecstypes.NetworkConfiguration{AwsvpcConfiguration: &ecstypes.AwsVpcConfiguration{
			Subnets:        slices.Clone(s.Subnets),
			SecurityGroups: slices.Clone(s.SecurityGroups),
			AssignPublicIp: ecstypes.AssignPublicIpDisabled,
		}},
		PropagateTags: ecstypes.PropagateTagsTaskDefinition,
		// Without the caller's ClientToken the SDK fills one per call:
		// its retries of a RunTask whose answer was lost do not start a
		// second migration.
	}
	if s.ClientToken != "" {
		run.ClientToken = aws.String(s.ClientToken)
	}
	if s.StartedBy != "" {
		run.StartedBy = aws.String(s.StartedBy)
	}
	ran, err := e.api.RunTask(ctx, run)
	var conflict *ecstypes.ConflictException
	if errors.As(err, &conflict) && s.ClientToken != "" && len(conflict.ResourceIds) == 1 {
		// An earlier RunOnce with this token started the task (another
		// revision of the same copy): that task is this run's.
		res.TaskArn, res.TaskDefinitionArn = conflict.ResourceIds[0], ""
		if s.Started != nil {
			s.Started(res.TaskArn)
		}
		return e.finish(ctx, s, nil, res, s.Timeout)
	}
	if err != nil {
		return res, fmt.Errorf("ECS RunTask (%s in %s): %w", res.TaskDefinitionArn, s.Cluster, err)
	}
	if len(ran.Tasks) == 0 || aws.ToString(ran.Tasks[0].TaskArn) == "" {
		// The API reference (RunTask) reports placement failures in
		// failures[], with HTTP 200 ("API failure reasons": RESOURCE:CPU,
		// RESOURCE:MEMORY, AGENT, …).
		return res, fmt.Errorf("ECS RunTask (%s in %s): no task started: %s", res.TaskDefinitionArn, s.Cluster, failureText(ran.Failures))
	}
	res.TaskArn = aws.ToString(ran.Tasks[0].TaskArn)
	if s.Started != nil {
		s.Started(res.TaskArn)
	}
	return e.finish(ctx, s, &td, res, s.Timeout)
}

// Follow waits for a task an earlier RunOnce started and never saw stop —
// that run died, or detached, while the task ran — as RunOnce waits for
// its own: until it is STOPPED, sending StopTask once s.Timeout has passed
// since startedAt (at once when it already has), then reads its exit code
// and last log lines from the revision it runs. It reads only s's Cluster,
// Container, Timeout, Poll and Detach. A run that follows its migration's
// task to its end, instead of starting another, is what keeps two
// migrations off one database.
func (e *ECS) Follow(ctx context.Context, s TaskSpec, taskArn string, startedAt time.Time) (TaskResult, error) {
	res := TaskResult{TaskArn: taskArn}
	var missing []string
	for _, f := range []struct{ name, v string }{{"Cluster", s.Cluster}, {"Container", s.Container}, {"task ARN", taskArn}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return res, fmt.Errorf("following an ECS task: %s required", strings.Join(missing, ", "))
	}
	if s.Timeout <= 0 {
		return res, fmt.Errorf("following ECS task %s: a positive Timeout is required (a migration must not run unbounded)", taskArn)
	}
	return e.finish(ctx, s, nil, res, s.Timeout-time.Since(startedAt))
}

// finish waits for a started task (res.TaskArn) to stop, for at most
// timeout before it stops it, and fills res from the stopped task and its
// log stream. td is the revision it runs, when the caller has it (nil: the
// one the stopped task names is described).
func (e *ECS) finish(ctx context.Context, s TaskSpec, td *ecstypes.TaskDefinition, res TaskResult, timeout time.Duration) (TaskResult, error) {
	task, err := e.wait(ctx, s, &res, timeout)
	if errors.Is(err, ErrDetached) {
		return res, fmt.Errorf("ECS task %s: %w", res.TaskArn, err)
	}
	if err != nil {
		return e.abandon(ctx, s, res, err)
	}
	res.LastStatus = aws.ToString(task.LastStatus)
	res.StopCode = string(task.StopCode)
	res.StoppedReason = aws.ToString(task.StoppedReason)
	if res.TaskDefinitionArn == "" {
		res.TaskDefinitionArn = aws.ToString(task.TaskDefinitionArn)
	}
	if task.StartedAt != nil {
		res.StartedAt = task.StartedAt.UTC()
	}
	if task.StoppedAt != nil {
		res.StoppedAt = task.StoppedAt.UTC()
	}
	if res.TimedOut && task.StopCode != "" && task.StopCode != ecstypes.TaskStopCodeUserInitiated {
		// It stopped on its own just as the timeout fired.
		res.TimedOut = false
	}
	for _, c := range task.Containers {
		if aws.ToString(c.Name) != s.Container {
			continue
		}
		if c.ExitCode != nil {
			code := int(*c.ExitCode)
			res.ExitCode = &code
		}
		res.Reason = aws.ToString(c.Reason)
	}

	if td == nil {
		desc, err := e.api.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(res.TaskDefinitionArn)})
		if err != nil || desc.TaskDefinition == nil {
			return res, fmt.Errorf("ECS task %s stopped, but the revision it ran (%s) could not be described to find its log stream: %w", res.TaskArn, res.TaskDefinitionArn, err)
		}
		td = desc.TaskDefinition
	}
	group, stream, region, ok := awslogsStream(*td, s.Container, res.TaskArn, e.target.Region)
	if !ok {
		return res, nil
	}
	logs, err := e.logsIn(ctx, region)
	if err == nil {
		res.LastLines, err = logs.LastLines(ctx, group, stream, e.logLines())
	}
	if err != nil {
		return res, fmt.Errorf("ECS task %s stopped, but its log stream %s in %s could not be read: %w", res.TaskArn, stream, group, err)
	}
	return res, nil
}

// registerInput is the RegisterTaskDefinition call that copies td: every
// member RegisterTaskDefinitionInput shares with TaskDefinition (the read-
// only ones — taskDefinitionArn, revision, status, requiresAttributes,
// compatibilities, registeredAt/By, deregisteredAt, deleteRequestedAt —
// exist only on the answer), the tags DescribeTaskDefinition returned with
// include=TAGS, and the one container's image and command swapped. Its
// restart policy is dropped: a restarted migration container would run
// the migration again and keep the task from stopping (API reference,
// ContainerRestartPolicy: "Amazon ECS can restart the container if it
// exits, without needing to replace the task").
func registerInput(td ecstypes.TaskDefinition, tags []ecstypes.Tag, s TaskSpec) (*ecs.RegisterTaskDefinitionInput, error) {
	from := aws.ToString(td.TaskDefinitionArn)
	if from == "" {
		from = s.Template
	}
	if td.NetworkMode != ecstypes.NetworkModeAwsvpc {
		return nil, fmt.Errorf("ECS task definition %s: network mode %q; Fargate runs awsvpc only", from, td.NetworkMode)
	}
	containers := slices.Clone(td.ContainerDefinitions)
	found := -1
	var names []string
	for i, c := range containers {
		names = append(names, aws.ToString(c.Name))
		if aws.ToString(c.Name) == s.Container {
			found = i
		}
	}
	if found < 0 {
		return nil, fmt.Errorf("ECS task definition %s has no container %q (it has %s); nothing was registered", from, s.Container, strings.Join(quoteAll(names), ", "))
	}
	c := containers[found]
	if c.Essential != nil && !*c.Essential {
		return nil, fmt.Errorf("ECS task definition %s: container %q is not essential, so its exit would not stop the task; nothing was registered", from, s.Container)
	}
	c.Image = aws.String(s.Image)
	if s.Command != nil {
		c.Command = slices.Clone(s.Command)
	}
	c.RestartPolicy = nil
	containers[found] = c

	return &ecs.RegisterTaskDefinitionInput{
		Family:                        td.Family,
		ContainerDefinitions:          containers,
		Cpu:                           td.Cpu,
		Memory:                        td.Memory,
		EnableFaultInjection:          td.EnableFaultInjection,
		EphemeralStorage:              td.EphemeralStorage,
		ExecutionRoleArn:              td.ExecutionRoleArn,
		TaskRoleArn:                   td.TaskRoleArn,
		InferenceAccelerators:         td.InferenceAccelerators,
		IpcMode:                       td.IpcMode,
		PidMode:                       td.PidMode,
		NetworkMode:                   td.NetworkMode,
		PlacementConstraints:          td.PlacementConstraints,
		ProxyConfiguration:            td.ProxyConfiguration,
		RequiresCompatibilities:       td.RequiresCompatibilities,
		RuntimePlatform:               td.RuntimePlatform,
		TrustedExecutionConfiguration: td.TrustedExecutionConfiguration,
		Volumes:                       td.Volumes,
		Tags:                          mergeTags(tags, s.Tags),
	}, nil
}

// mergeTags puts over into base, sorted by key. Keys with the reserved
// aws: prefix are dropped: RegisterTaskDefinition refuses them (API
// reference, tags: "Do not use aws:, AWS:, or any upper or lowercase
// combination of such as a prefix").
func mergeTags(base []ecstypes.Tag, over map[string]string) []ecstypes.Tag {
	m := map[string]string{}
	for _, t := range base {
		k := aws.ToString(t.Key)
		if k == "" || strings.HasPrefix(strings.ToLower(k), "aws:") {
			continue
		}
		m[k] = aws.ToString(t.Value)
	}
	for k, v := range over {
		m[k] = v
	}
	var out []ecstypes.Tag
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, ecstypes.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return out
}

// wait polls DescribeTasks until the task is STOPPED. After timeout (what
// is left of s.Timeout) it sends StopTask once, sets TimedOut and keeps
// polling for at most StopWait. A MISSING answer is the API's eventual
// consistency right after RunTask (API reference, RunTask) and is polled
// through. A closed s.Detach ends the wait with ErrDetached, the task left
// running.
func (e *ECS) wait(ctx context.Context, s TaskSpec, res *TaskResult, timeout time.Duration) (ecstypes.Task, error) {
	poll := s.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	deadline := time.NewTimer(max(timeout, 0))
	defer deadline.Stop()
	timeoutC := deadline.C
	var stopWaitC <-chan time.Time
	for {
		task, ok, err := e.describe(ctx, s.Cluster, res.TaskArn)
		if err != nil {
			return ecstypes.Task{}, err
		}
		if ok && aws.ToString(task.LastStatus) == "STOPPED" {
			return task, nil
		}
		select {
		case <-s.Detach:
			// Before a timeout that is also due: a detached caller never
			// stops the task.
			return ecstypes.Task{}, ErrDetached
		default:
		}
		tick := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			tick.Stop()
			return ecstypes.Task{}, ctx.Err()
		case <-s.Detach:
			tick.Stop()
			return ecstypes.Task{}, ErrDetached
		case <-timeoutC:
			tick.Stop()
			timeoutC = nil
			res.TimedOut = true
			reason := fmt.Sprintf("cellctl: migration exceeded its timeout of %s", s.Timeout)
			if err := e.stop(ctx, s.Cluster, res.TaskArn, reason); err != nil {
				return ecstypes.Task{}, fmt.Errorf("stopping it after its timeout of %s: %w", s.Timeout, err)
			}
			sw := time.NewTimer(e.stopWait())
			defer sw.Stop()
			stopWaitC = sw.C
		case <-stopWaitC:
			tick.Stop()
			return ecstypes.Task{}, fmt.Errorf("still not STOPPED %s after StopTask", e.stopWait())
		case <-tick.C:
		}
	}
}

func (e *ECS) describe(ctx context.Context, cluster, arn string) (ecstypes.Task, bool, error) {
	out, err := e.api.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String(cluster), Tasks: []string{arn}})
	if err != nil {
		if ctx.Err() != nil {
			return ecstypes.Task{}, false, ctx.Err()
		}
		return ecstypes.Task{}, false, fmt.Errorf("ECS DescribeTasks: %w", err)
	}
	for _, t := range out.Tasks {
		if aws.ToString(t.TaskArn) == arn {
			return t, true, nil
		}
	}
	for _, f := range out.Failures {
		if aws.ToString(f.Reason) != "MISSING" {
			return ecstypes.Task{}, false, fmt.Errorf("ECS DescribeTasks: %s", failureText(out.Failures))
		}
	}
	return ecstypes.Task{}, false, nil
}

func (e *ECS) stop(ctx context.Context, cluster, arn, reason string) error {
	if len(reason) > stopReasonMax {
		reason = reason[:stopReasonMax]
	}
	_, err := e.api.StopTask(ctx, &ecs.StopTaskInput{Cluster: aws.String(cluster), Task: aws.String(arn), Reason: aws.String(reason)})
	if err != nil {
		return fmt.Errorf("ECS StopTask (%s): %w", arn, err)
	}
	return nil
}

// abandon sends StopTask on a fresh context (the caller's may be gone)
// and returns cause with the task named, so the caller can record it.
func (e *ECS) abandon(ctx context.Context, s TaskSpec, res TaskResult, cause error) (TaskResult, error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopCallTimeout)
	defer cancel()
	reason := "cellctl: stopped while waiting for the migration: " + cause.Error()
	if err := e.stop(sctx, s.Cluster, res.TaskArn, reason); err != nil {
		return res, fmt.Errorf("ECS task %s: %w; it may still be running: %v", res.TaskArn, cause, err)
	}
	return res, fmt.Errorf("ECS task %s: %w (StopTask sent)", res.TaskArn, cause)
}

func (e *ECS) stopWait() time.Duration {
	if e.StopWait > 0 {
		return e.StopWait
	}
	return DefaultStopWait
}

func (e *ECS) logLines() int {
	if e.LogLines > 0 {
		return e.LogLines
	}
	return DefaultLogLines
}

func (e *ECS) logsIn(ctx context.Context, region string) (*Logs, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if l, ok := e.logs[region]; ok {
		return l, nil
	}
	t := e.target
	t.Region = region
	l, err := NewLogs(ctx, t)
	if err != nil {
		return nil, err
	}
	e.logs[region] = l
	return l, nil
}

// awslogsStream names the container's log stream from the registered task
// definition's awslogs options. Amazon ECS Developer Guide, "Using the
// awslogs log driver": with awslogs-stream-prefix (required on Fargate)
// the stream is prefix-name/container-name/ecs-task-id; the task id is the
// last segment of the task ARN. awslogs-region defaults to the target's.
func awslogsStream(td ecstypes.TaskDefinition, container, taskArn, defaultRegion string) (group, stream, region string, ok bool) {
	for _, c := range td.ContainerDefinitions {
		if aws.ToString(c.Name) != container || c.LogConfiguration == nil || c.LogConfiguration.LogDriver != ecstypes.LogDriverAwslogs {
			continue
		}
		o := c.LogConfiguration.Options
		group, prefix := o["awslogs-group"], o["awslogs-stream-prefix"]
		if group == "" || prefix == "" {
			return "", "", "", false
		}
		region = o["awslogs-region"]
		if region == "" {
			region = defaultRegion
		}
		return group, prefix + "/" + container + "/" + taskID(taskArn), region, true
	}
	return "", "", "", false
}

func taskID(arn string) string {
	return arn[strings.LastIndex(arn, "/")+1:]
}

func failureText(fs []ecstypes.Failure) string {
	if len(fs) == 0 {
		return "the answer lists neither tasks nor failures"
	}
	var parts []string
	for _, f := range fs {
		p := aws.ToString(f.Reason)
		if d := aws.ToString(f.Detail); d != "" {
			p += " (" + d + ")"
		}
		if a := aws.ToString(f.Arn); a != "" {
			p += " on " + a
		}
		parts = append(parts, p)
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
