package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

// The simulator's ECS tasks, task definition revisions, CloudWatch Logs
// events and Data API statements, kept beside the resources:
//
//	ecs.json      task definition revisions registered through the ECS API
//	              (RegisterTaskDefinition; the revisions the Pulumi
//	              provider created stay resources), the revisions the API
//	              deregistered, the tasks RunTask started, and the task
//	              rules (per image: how its tasks end)
//	logs.json     CloudWatch Logs streams and their events (the tasks'
//	              awslogs output)
//	rdsdata.json  every SQL statement run through the Data API or by a
//	              task's --sql rule, per cluster
//
// All three are read and written under the cloud's lock, like kms.json;
// revision numbers come from the account's counters (cloud.json), which
// the provider's task definitions count with, so a family's revisions
// number on across both.
const (
	ecsFile     = "ecs.json"
	logsFile    = "logs.json"
	rdsDataFile = "rdsdata.json"
)

// TypeTaskDefinition, TypeECSCluster, TypeLogGroup, TypeDBCluster,
// TypeSubnet and TypeSecurityGroup are the resource types the task API
// reads.
const (
	TypeTaskDefinition = "aws:ecs/taskDefinition:TaskDefinition"
	TypeECSCluster     = "aws:ecs/cluster:Cluster"
	TypeLogGroup       = "aws:cloudwatch/logGroup:LogGroup"
	TypeDBCluster      = "aws:rds/cluster:Cluster"
	TypeSubnet         = "aws:ec2/subnet:Subnet"
	TypeSecurityGroup  = "aws:ec2/securityGroup:SecurityGroup"
)

// ECSState is ecs.json.
type ECSState struct {
	Format int `json:"format"`
	// Defs are the revisions registered through the API, by ARN: the task
	// definition as ECS describes it.
	Defs map[string]*TaskDefRecord `json:"taskDefinitions,omitempty"`
	// Inactive are provider-created revisions deregistered through the
	// API (ARN → when).
	Inactive map[string]time.Time `json:"inactive,omitempty"`
	// Tasks are the tasks RunTask started, by ARN.
	Tasks map[string]*TaskRecord `json:"tasks,omitempty"`
	// Rules decide how an image's tasks end, by image.
	Rules map[string]TaskRule `json:"rules,omitempty"`
	Seq   int                 `json:"seq,omitempty"`
}

// TaskDefRecord is a revision registered through the ECS API.
type TaskDefRecord struct {
	ARN      string `json:"arn"`
	Region   string `json:"region"`
	Family   string `json:"family"`
	Revision int    `json:"revision"`
	Status   string `json:"status"`
	// Def is the task definition as DescribeTaskDefinition returns it.
	Def        map[string]any `json:"definition"`
	Tags       []any          `json:"tags,omitempty"`
	Registered time.Time      `json:"registered"`
}

// TaskRule decides the outcome of the tasks that run an image: the sim
// runs no containers. The zero rule is a success: exit 0, the log lines
// "running migration: <command>" and "schema_version=<image tag>".
type TaskRule struct {
	Image string `json:"image"`
	// Exit is the essential container's exit code (default 0).
	Exit *int `json:"exit,omitempty"`
	// Log replaces the default last line(s) of the container's log.
	Log string `json:"log,omitempty"`
	// Hang keeps the task RUNNING until StopTask.
	Hang bool `json:"hang,omitempty"`
	// NoStart makes the task fail to start: STOPPED with stopCode
	// TaskFailedToStart and stoppedReason "CannotPullContainerError: <NoStart>".
	NoStart string `json:"noStart,omitempty"`
	// SchemaVersion is what the last line reports (default: the image tag).
	SchemaVersion string `json:"schemaVersion,omitempty"`
	// SQLFile names the migration SQL run on the cell's database when a
	// PostgreSQL server is configured; SQL is its content, read when the
	// rule was set.
	SQLFile string `json:"sqlFile,omitempty"`
	SQL     string `json:"sql,omitempty"`
}

// TaskRecord is one task RunTask started.
type TaskRecord struct {
	ARN        string `json:"arn"`
	ID         string `json:"id"`
	Region     string `json:"region"`
	ClusterARN string `json:"clusterArn"`
	Cluster    string `json:"cluster"`
	// Stack is the stack key of the cluster's stack (whose database a
	// --sql rule migrates).
	Stack          string           `json:"stack,omitempty"`
	TaskDefARN     string           `json:"taskDefinitionArn"`
	Family         string           `json:"family"`
	Revision       int              `json:"revision"`
	LaunchType     string           `json:"launchType,omitempty"`
	StartedBy      string           `json:"startedBy,omitempty"`
	Group          string           `json:"group"`
	CPU            string           `json:"cpu,omitempty"`
	Memory         string           `json:"memory,omitempty"`
	Subnets        []string         `json:"subnets,omitempty"`
	SecurityGroups []string         `json:"securityGroups,omitempty"`
	AssignPublicIP string           `json:"assignPublicIp,omitempty"`
	Overrides      map[string]any   `json:"overrides,omitempty"`
	Containers     []*TaskContainer `json:"containers"`
	// ClientToken is the RunTask clientToken that started the task, and
	// Request a digest of that call's other parameters: a RunTask with the
	// token again returns the task, or a ConflictException when its
	// parameters differ (ecs.runtask-clienttoken).
	ClientToken string `json:"clientToken,omitempty"`
	Request     string `json:"request,omitempty"`

	LastStatus    string `json:"lastStatus"`
	DesiredStatus string `json:"desiredStatus"`
	// Reported says the current status was answered to a caller: the next
	// DescribeTasks moves the task on.
	Reported      bool       `json:"reported,omitempty"`
	Entered       time.Time  `json:"entered"`
	Created       time.Time  `json:"created"`
	StartedAt     *time.Time `json:"startedAt,omitempty"`
	StoppingAt    *time.Time `json:"stoppingAt,omitempty"`
	StoppedAt     *time.Time `json:"stoppedAt,omitempty"`
	StopCode      string     `json:"stopCode,omitempty"`
	StoppedReason string     `json:"stoppedReason,omitempty"`
	Seq           int        `json:"seq"`
}

// TaskContainer is one container of a task.
type TaskContainer struct {
	Name      string   `json:"name"`
	Image     string   `json:"image"`
	Essential bool     `json:"essential"`
	Command   []string `json:"command,omitempty"`
	// LogGroup, LogRegion and LogPrefix are the awslogs options (empty:
	// no awslogs driver).
	LogGroup  string `json:"logGroup,omitempty"`
	LogRegion string `json:"logRegion,omitempty"`
	LogPrefix string `json:"logPrefix,omitempty"`
	// Rule is the image's rule when the task was run (nil: default).
	Rule       *TaskRule `json:"rule,omitempty"`
	LastStatus string    `json:"lastStatus"`
	ExitCode   *int      `json:"exitCode,omitempty"`
	Reason     string    `json:"reason,omitempty"`
}

// LogStream returns the container's awslogs stream, or "".
func (c *TaskContainer) LogStream(taskID string) string {
	if c.LogGroup == "" {
		return ""
	}
	return awsmodel.AwslogsStream(c.LogPrefix, c.Name, taskID)
}

// LogState is logs.json.
type LogState struct {
	Format  int                   `json:"format"`
	Streams map[string]*LogStream `json:"streams,omitempty"` // LogKey → stream
}

// LogStream is one CloudWatch Logs stream.
type LogStream struct {
	Region  string     `json:"region"`
	Group   string     `json:"group"`
	Name    string     `json:"name"`
	Created time.Time  `json:"created"`
	Events  []LogEvent `json:"events"`
}

// LogEvent is one event; times in milliseconds since the epoch.
type LogEvent struct {
	Timestamp int64  `json:"timestamp"`
	Message   string `json:"message"`
	Ingestion int64  `json:"ingestionTime"`
}

// LogKey keys a stream: region, group and stream name.
func LogKey(region, group, stream string) string { return region + "|" + group + "|" + stream }

// SQLState is rdsdata.json.
type SQLState struct {
	Format     int            `json:"format"`
	Statements []SQLStatement `json:"statements,omitempty"`
}

// SQLStatement is one statement run on a simulated Aurora cluster.
type SQLStatement struct {
	Seq     int       `json:"seq"`
	Time    time.Time `json:"time"`
	Region  string    `json:"region"`
	Cluster string    `json:"cluster"` // the DB cluster identifier
	Stack   string    `json:"stack,omitempty"`
	// Database is the database the caller named.
	Database string `json:"database,omitempty"`
	SQL      string `json:"sql"`
	// Source is "data-api" or "task <task id>".
	Source string `json:"source"`
	// Mode is "scripted" (recorded, not run) or "postgres".
	Mode  string `json:"mode"`
	Role  string `json:"role,omitempty"`
	Error string `json:"error,omitempty"`
}

// TaskAPI is the cloud with its ECS, Logs and Data API files loaded,
// during one locked operation.
type TaskAPI struct {
	State *State
	View  *View
	ECS   *ECSState
	Logs  *LogState
	SQL   *SQLState
	c     *Cloud
}

// Cloud is the cloud the operation runs on.
func (t *TaskAPI) Cloud() *Cloud { return t.c }

func loadJSONFile(dir, name string, v any) error {
	path := filepath.Join(dir, name)
	if err := ReadJSON(path, v); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var f struct {
		Format int `json:"format"`
	}
	b, _ := json.Marshal(v)
	json.Unmarshal(b, &f)
	if f.Format > FormatV1 {
		return fmt.Errorf("%s was written by a newer cellctl (format %d)", path, f.Format)
	}
	return nil
}

// WithTasks runs fn under the cloud's lock (exclusive when change) with
// ecs.json, logs.json and rdsdata.json loaded, and saves them (and the
// account's counters) when fn succeeds and change is set.
func (c *Cloud) WithTasks(change bool, fn func(t *TaskAPI) error) error {
	run := c.s.view
	if change {
		run = c.s.update
	}
	return run(func(st *State, _ *Control) error {
		t := &TaskAPI{State: st, View: c.NewView(st), ECS: &ECSState{}, Logs: &LogState{}, SQL: &SQLState{}, c: c}
		for name, v := range map[string]any{ecsFile: t.ECS, logsFile: t.Logs, rdsDataFile: t.SQL} {
			if err := loadJSONFile(c.s.dir, name, v); err != nil {
				return err
			}
		}
		if t.ECS.Defs == nil {
			t.ECS.Defs = map[string]*TaskDefRecord{}
		}
		if t.ECS.Inactive == nil {
			t.ECS.Inactive = map[string]time.Time{}
		}
		if t.ECS.Tasks == nil {
			t.ECS.Tasks = map[string]*TaskRecord{}
		}
		if t.ECS.Rules == nil {
			t.ECS.Rules = map[string]TaskRule{}
		}
		if t.Logs.Streams == nil {
			t.Logs.Streams = map[string]*LogStream{}
		}
		if err := fn(t); err != nil {
			return err
		}
		if !change {
			return nil
		}
		t.ECS.Format, t.Logs.Format, t.SQL.Format = FormatV1, FormatV1, FormatV1
		for name, v := range map[string]any{ecsFile: t.ECS, logsFile: t.Logs, rdsDataFile: t.SQL} {
			if err := WriteJSON(filepath.Join(c.s.dir, name), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// AppendLog adds events to a stream, creating it.
func (t *TaskAPI) AppendLog(region, group, stream string, at time.Time, lines ...string) {
	key := LogKey(region, group, stream)
	s := t.Logs.Streams[key]
	if s == nil {
		s = &LogStream{Region: region, Group: group, Name: stream, Created: at}
		t.Logs.Streams[key] = s
	}
	ms := at.UnixMilli()
	for _, l := range lines {
		s.Events = append(s.Events, LogEvent{Timestamp: ms, Message: l, Ingestion: ms})
	}
}

// ---- task rules -------------------------------------------------------------

// SetTaskRule sets (replaces) the rule of an image's tasks.
func (c *Cloud) SetTaskRule(r TaskRule) (TaskRule, error) {
	if strings.TrimSpace(r.Image) == "" {
		return r, fmt.Errorf("a task rule needs the image it applies to (--image)")
	}
	if r.Hang && r.NoStart != "" {
		return r, fmt.Errorf("--hang and --no-start contradict each other: a task that never starts cannot hang")
	}
	if r.NoStart != "" && (r.Exit != nil || r.Log != "" || r.SQL != "") {
		return r, fmt.Errorf("--no-start: a task that never starts has no exit code, log or SQL")
	}
	if r.Exit != nil && (*r.Exit < 0 || *r.Exit > 255) {
		return r, fmt.Errorf("--exit %d: a container's exit code is 0 to 255", *r.Exit)
	}
	err := c.WithTasks(true, func(t *TaskAPI) error {
		t.ECS.Rules[r.Image] = r
		return nil
	})
	return r, err
}

// TaskRules lists the rules, by image.
func (c *Cloud) TaskRules() ([]TaskRule, error) {
	var out []TaskRule
	err := c.WithTasks(false, func(t *TaskAPI) error {
		for _, r := range t.ECS.Rules {
			out = append(out, r)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Image < out[j].Image })
	return out, err
}

// ClearTasks removes the task rules and the recorded tasks (the task
// definition revisions, logs and statements stay).
func (c *Cloud) ClearTasks() error {
	return c.WithTasks(true, func(t *TaskAPI) error {
		t.ECS.Rules = map[string]TaskRule{}
		t.ECS.Tasks = map[string]*TaskRecord{}
		return nil
	})
}

// TaskRun is a recorded task as `sim task list` shows it.
type TaskRun struct {
	ARN            string     `json:"taskArn"`
	ID             string     `json:"taskId"`
	Cluster        string     `json:"cluster"`
	Stack          string     `json:"stack,omitempty"`
	Region         string     `json:"region"`
	TaskDefinition string     `json:"taskDefinition"` // family:revision
	Image          string     `json:"image"`
	Command        []string   `json:"command,omitempty"`
	StartedBy      string     `json:"startedBy,omitempty"`
	LastStatus     string     `json:"lastStatus"`
	DesiredStatus  string     `json:"desiredStatus"`
	ExitCode       *int       `json:"exitCode,omitempty"`
	StopCode       string     `json:"stopCode,omitempty"`
	StoppedReason  string     `json:"stoppedReason,omitempty"`
	Subnets        []string   `json:"subnets,omitempty"`
	SecurityGroups []string   `json:"securityGroups,omitempty"`
	Created        time.Time  `json:"createdAt"`
	Stopped        *time.Time `json:"stoppedAt,omitempty"`
}

// Tasks lists the tasks RunTask started, oldest first, as of the cloud's
// clock (a task whose time is up has moved on; listing does not count as
// a DescribeTasks).
func (c *Cloud) Tasks() ([]TaskRun, error) {
	var out []TaskRun
	err := c.WithTasks(true, func(t *TaskAPI) error {
		now := c.Now()
		for _, tr := range t.ECS.Tasks {
			t.Advance(tr, now, false)
			out = append(out, tr.Run())
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		return out[i].Created.Before(out[j].Created) || out[i].Created.Equal(out[j].Created) && out[i].ARN < out[j].ARN
	})
	return out, err
}

// Run is the task as `sim task list` shows it: the first essential
// container's image, command and exit code.
func (tr *TaskRecord) Run() TaskRun {
	r := TaskRun{ARN: tr.ARN, ID: tr.ID, Cluster: tr.Cluster, Stack: tr.Stack, Region: tr.Region,
		TaskDefinition: fmt.Sprintf("%s:%d", tr.Family, tr.Revision), StartedBy: tr.StartedBy,
		LastStatus: tr.LastStatus, DesiredStatus: tr.DesiredStatus, StopCode: tr.StopCode, StoppedReason: tr.StoppedReason,
		Subnets: tr.Subnets, SecurityGroups: tr.SecurityGroups, Created: tr.Created, Stopped: tr.StoppedAt}
	if c := tr.essential(); c != nil {
		r.Image, r.Command, r.ExitCode = c.Image, c.Command, c.ExitCode
	}
	return r
}

func (tr *TaskRecord) essential() *TaskContainer {
	for _, c := range tr.Containers {
		if c.Essential {
			return c
		}
	}
	if len(tr.Containers) > 0 {
		return tr.Containers[0]
	}
	return nil
}

// ---- logs and statements, for tests and `sim` ---------------------------------

// LogLines returns the messages of a stream ("" region: any region).
func (c *Cloud) LogLines(region, group, stream string) ([]string, error) {
	var out []string
	err := c.WithTasks(true, func(t *TaskAPI) error {
		now := c.Now()
		for _, tr := range t.ECS.Tasks {
			t.Advance(tr, now, false)
		}
		for _, s := range t.Logs.Streams {
			if s.Group == group && s.Name == stream && (region == "" || s.Region == region) {
				for _, e := range s.Events {
					out = append(out, e.Message)
				}
				return nil
			}
		}
		return fmt.Errorf("no log stream %s in log group %s of the simulated cloud", stream, group)
	})
	return out, err
}

// Statements lists the SQL statements run on a DB cluster (its
// identifier, ARN or stack; "" for every cluster), oldest first.
func (c *Cloud) Statements(cluster string) ([]SQLStatement, error) {
	var out []SQLStatement
	err := c.WithTasks(false, func(t *TaskAPI) error {
		for _, s := range t.SQL.Statements {
			if cluster == "" || s.Cluster == cluster || strings.HasSuffix(cluster, ":cluster:"+s.Cluster) || MatchStack(cluster, s.Stack) {
				out = append(out, s)
			}
		}
		return nil
	})
	return out, err
}

// RecordStatement appends a statement to the record.
func (t *TaskAPI) RecordStatement(s SQLStatement) {
	s.Seq = len(t.SQL.Statements) + 1
	t.SQL.Statements = append(t.SQL.Statements, s)
}
