package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/awsmodel"
)

// The simulator's ECS task model. It runs no containers: a task's outcome
// is its image's task rule (SetTaskRule; default success), and its life
// advances deterministically, on the cloud's clock, with no sleeps:
//
//   - RunTask answers PROVISIONING (desiredStatus RUNNING).
//   - Each DescribeTasks that sees a task moves it one step on from the
//     status the caller was last told: PROVISIONING → RUNNING (startedAt,
//     the first log line) → STOPPED (exit code, stopCode
//     EssentialContainerExited, the last log lines). A rule with hang
//     stays RUNNING; a rule with noStart, or an awslogs group that does
//     not exist, stops from PROVISIONING with TaskFailedToStart and no
//     exit code.
//   - Time moves a task on too, whoever looks (DescribeTasks, GetLogEvents,
//     `sim task list`): PROVISIONING lasts at most ProvisionTime, RUNNING
//     RunTime (a hanging task forever).
//   - StopTask sets desiredStatus STOPPED, stopCode UserInitiated and the
//     reason; the next DescribeTasks (or StopTimeout later) reports STOPPED,
//     a running container with exit code 137 (SIGKILL after the stop
//     timeout, awsmodel.StopTimeoutExitCode), a task that never started
//     with none.
const (
	ProvisionTime = 10 * time.Second
	RunTime       = 30 * time.Second
	StopTimeout   = 30 * time.Second
)

// TaskDef is one task definition revision: created by the provider (a
// resource) or registered through the API.
type TaskDef struct {
	ARN      string
	Region   string
	Family   string
	Revision int
	Status   string
	// Stack is the stack key of a provider-created revision.
	Stack                   string
	NetworkMode, CPU, Mem   string
	RequiresCompatibilities []string
	Compatibilities         []string
	Containers              []ContainerDef
	// JSON is the task definition as DescribeTaskDefinition returns it.
	JSON map[string]any
	Tags []any
}

// ContainerDef is what the task model reads of a container definition.
type ContainerDef struct {
	Name, Image string
	Essential   bool
	Command     []string
	LogDriver   string
	LogOptions  map[string]string
}

func strsOf(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func containerDefs(defs []any) []ContainerDef {
	var out []ContainerDef
	for _, d := range defs {
		m, _ := d.(map[string]any)
		c := ContainerDef{Name: Str(m["name"]), Image: Str(m["image"]), Essential: m["essential"] != false, Command: strsOf(m["command"])}
		if lc, ok := m["logConfiguration"].(map[string]any); ok {
			c.LogDriver = Str(lc["logDriver"])
			c.LogOptions = StrMap(lc["options"])
		}
		out = append(out, c)
	}
	return out
}

// plainMap is a decoded property map as plain JSON values.
func plainMap(m resource.PropertyMap) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[string(k)] = Plain(v)
	}
	return out
}

// providerTaskDef renders a provider-created revision as ECS describes it.
func (t *TaskAPI) providerTaskDef(r *Record) *TaskDef {
	o := plainMap(t.View.Outputs(r))
	var defs []any
	json.Unmarshal([]byte(Str(o["containerDefinitions"])), &defs)
	td := &TaskDef{ARN: Str(o["arn"]), Region: r.Region, Family: Str(o["family"]), Revision: int(Num(o["revision"])), Status: "ACTIVE",
		Stack: r.Key(), NetworkMode: Str(o["networkMode"]), CPU: Str(o["cpu"]), Mem: Str(o["memory"]),
		RequiresCompatibilities: strsOf(o["requiresCompatibilities"]), Containers: containerDefs(defs)}
	if td.Family == "" {
		td.Family = r.ID
	}
	if td.NetworkMode == "" {
		td.NetworkMode = "bridge"
	}
	if at, ok := t.ECS.Inactive[td.ARN]; ok {
		td.Status = "INACTIVE"
		_ = at
	}
	td.Compatibilities = awsmodel.TaskCompatibilities(td.NetworkMode, td.CPU, td.Mem)
	j := map[string]any{
		"taskDefinitionArn": td.ARN, "family": td.Family, "revision": td.Revision, "status": td.Status,
		"containerDefinitions": defs, "networkMode": td.NetworkMode, "compatibilities": td.Compatibilities,
		"requiresCompatibilities": nonNil(td.RequiresCompatibilities), "requiresAttributes": []any{}, "placementConstraints": []any{},
		"registeredAt": float64(r.Created.Unix()), "registeredBy": "arn:aws:sts::" + t.View.Account() + ":assumed-role/cellctl-simulated/pulumi",
	}
	for _, k := range []string{"cpu", "memory", "executionRoleArn", "taskRoleArn"} {
		if s := Str(o[k]); s != "" {
			j[k] = s
		}
	}
	var vols []any
	for _, v := range asList(o["volumes"]) {
		if m, ok := v.(map[string]any); ok {
			vols = append(vols, map[string]any{"name": Str(m["name"]), "host": map[string]any{}})
		}
	}
	j["volumes"] = nonNilAny(vols)
	for k, v := range StrMap(o["tags"]) {
		td.Tags = append(td.Tags, map[string]any{"key": k, "value": v})
	}
	td.JSON = j
	return td
}

func asList(v any) []any { l, _ := v.([]any); return l }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilAny(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}

func apiTaskDef(d *TaskDefRecord) *TaskDef {
	j := d.Def
	td := &TaskDef{ARN: d.ARN, Region: d.Region, Family: d.Family, Revision: d.Revision, Status: d.Status,
		NetworkMode: Str(j["networkMode"]), CPU: Str(j["cpu"]), Mem: Str(j["memory"]),
		RequiresCompatibilities: strsOf(j["requiresCompatibilities"]), Containers: containerDefs(asList(j["containerDefinitions"])), Tags: d.Tags}
	if td.NetworkMode == "" {
		td.NetworkMode = "bridge"
	}
	td.Compatibilities = strsOf(j["compatibilities"])
	td.JSON = maps.Clone(j)
	td.JSON["status"] = d.Status
	return td
}

// Revisions lists a family's revisions in region, oldest first.
func (t *TaskAPI) Revisions(region, family string) []*TaskDef {
	var out []*TaskDef
	for _, r := range t.State.Resources {
		if r.Type == TypeTaskDefinition && r.Region == region && (r.ID == family || Str(r.Outputs["family"]) == family) {
			out = append(out, t.providerTaskDef(r))
		}
	}
	for _, d := range t.ECS.Defs {
		if d.Region == region && d.Family == family {
			out = append(out, apiTaskDef(d))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
	return out
}

// ResolveTaskDef finds the revision a reference names in region: a
// revision, or (revision 0) the latest ACTIVE one.
func (t *TaskAPI) ResolveTaskDef(region string, ref awsmodel.TaskDefRef) *TaskDef {
	if ref.Region != "" && ref.Region != region {
		return nil
	}
	revs := t.Revisions(region, ref.Family)
	for i := len(revs) - 1; i >= 0; i-- {
		if ref.Revision == 0 && revs[i].Status == "ACTIVE" || ref.Revision != 0 && revs[i].Revision == ref.Revision {
			return revs[i]
		}
	}
	return nil
}

// RegisterTaskDefinition registers a new revision of a family from
// RegisterTaskDefinition's input (ECS JSON names), numbered after every
// revision the family has (the provider's included).
func (t *TaskAPI) RegisterTaskDefinition(region string, in map[string]any) (*TaskDef, error) {
	family := Str(in["family"])
	defs := asList(in["containerDefinitions"])
	spec := awsmodel.TaskDefinitionSpec{Family: family, NetworkMode: Str(in["networkMode"]), CPU: Str(in["cpu"]), Memory: Str(in["memory"]),
		RequiresCompatibilities: strsOf(in["requiresCompatibilities"])}
	for _, c := range containerDefs(defs) {
		spec.Containers = append(spec.Containers, awsmodel.ContainerSpec{Name: c.Name, Image: c.Image})
	}
	if err := awsmodel.CheckRegisterTaskDefinition(spec); err != nil {
		return nil, err
	}
	counter := "ecs-task-definition:" + region + ":" + family
	rev := t.View.Next(counter)
	for _, r := range t.Revisions(region, family) {
		if r.Revision >= rev {
			rev = r.Revision + 1
		}
	}
	t.State.Counters[counter] = rev
	t.State.TouchMeta()
	arn := awsmodel.TaskDefinitionARN(region, t.View.Account(), family, rev)
	j := map[string]any{}
	for k, v := range in {
		if k != "tags" {
			j[k] = v
		}
	}
	nm := spec.NetworkMode
	if nm == "" {
		nm = "bridge"
	}
	// Container definitions as ECS returns them: essential defaults to true.
	var cds []any
	for _, d := range defs {
		m := maps.Clone(d.(map[string]any))
		if _, ok := m["essential"]; !ok {
			m["essential"] = true
		}
		cds = append(cds, m)
	}
	j["containerDefinitions"] = cds
	j["taskDefinitionArn"], j["revision"], j["status"], j["networkMode"] = arn, rev, "ACTIVE", nm
	j["compatibilities"] = awsmodel.TaskCompatibilities(nm, spec.CPU, spec.Memory)
	j["requiresCompatibilities"] = nonNil(spec.RequiresCompatibilities)
	j["requiresAttributes"] = []any{}
	if _, ok := j["placementConstraints"]; !ok {
		j["placementConstraints"] = []any{}
	}
	if _, ok := j["volumes"]; !ok {
		j["volumes"] = []any{}
	}
	now := t.c.Now()
	j["registeredAt"] = float64(now.UnixMilli()) / 1000
	j["registeredBy"] = "arn:aws:sts::" + t.View.Account() + ":assumed-role/cellctl-simulated/cellctl"
	// A JSON round trip makes every value plain (ints as float64), as a
	// later load reads it.
	var plain map[string]any
	b, _ := json.Marshal(j)
	json.Unmarshal(b, &plain)
	rec := &TaskDefRecord{ARN: arn, Region: region, Family: family, Revision: rev, Status: "ACTIVE", Def: plain, Tags: asList(in["tags"]), Registered: now}
	t.ECS.Defs[arn] = rec
	return apiTaskDef(rec), nil
}

// DeregisterTaskDefinition marks a revision INACTIVE ("family:revision"
// or an ARN with revision: "You must specify a revision").
func (t *TaskAPI) DeregisterTaskDefinition(region, ref string) (*TaskDef, error) {
	r, err := awsmodel.ParseTaskDefRef(ref, "The specified task definition does not exist.")
	if err != nil {
		return nil, err
	}
	if r.Revision == 0 {
		return nil, &awsmodel.ECSError{Code: awsmodel.ECSClient, Message: "Invalid revision number. Number: " + ref}
	}
	td := t.ResolveTaskDef(region, r)
	if td == nil {
		return nil, &awsmodel.ECSError{Code: awsmodel.ECSClient, Message: "The specified task definition does not exist."}
	}
	now := t.c.Now()
	if d, ok := t.ECS.Defs[td.ARN]; ok {
		d.Status = "INACTIVE"
		d.Def["deregisteredAt"] = float64(now.UnixMilli()) / 1000
		return apiTaskDef(d), nil
	}
	t.ECS.Inactive[td.ARN] = now
	td.Status = "INACTIVE"
	td.JSON["status"] = "INACTIVE"
	td.JSON["deregisteredAt"] = float64(now.UnixMilli()) / 1000
	return td, nil
}

// ---- RunTask ------------------------------------------------------------------

// RunTaskInput is what the task model reads of a RunTask call.
type RunTaskInput struct {
	Cluster        string
	TaskDefinition string
	Count          int
	CountGiven     bool
	LaunchType     string
	// CapacityProviders are the capacity provider strategy's providers.
	CapacityProviders []string
	Network           *awsmodel.AwsVpcConfig
	StartedBy         string
	Group             string
	// Overrides is RunTask's overrides as sent; CommandOverrides the
	// containerOverrides' commands by container name.
	Overrides        map[string]any
	CommandOverrides map[string][]string
	// ClientToken is RunTask's idempotency token ("": none).
	ClientToken string
}

// digest identifies a RunTask call's parameters other than its
// clientToken: a retry with the same token must send the same.
func (in RunTaskInput) digest() string {
	in.ClientToken = ""
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// byClientToken is what a RunTask with a clientToken already used in the
// cluster within its lifetime answers: the tasks that token started when
// the parameters are the same, else ConflictException naming them.
func (t *TaskAPI) byClientToken(cl *Record, in RunTaskInput, now time.Time) ([]*TaskRecord, error) {
	var same []*TaskRecord
	for _, tr := range t.ECS.Tasks {
		if tr.ClientToken == in.ClientToken && tr.ClusterARN == Str(cl.Outputs["arn"]) && now.Sub(tr.Created) < awsmodel.ClientTokenTTL {
			same = append(same, tr)
		}
	}
	if len(same) == 0 {
		return nil, nil
	}
	slices.SortFunc(same, func(a, b *TaskRecord) int { return a.Seq - b.Seq })
	if same[0].Request != in.digest() {
		arns := make([]string, len(same))
		for i, tr := range same {
			arns[i] = tr.ARN
		}
		return nil, awsmodel.ClientTokenConflictError(arns)
	}
	return same, nil
}

// RunTaskFailure is a RunTask or DescribeTasks Failure.
type RunTaskFailure struct {
	ARN    string `json:"arn,omitempty"`
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

// Cluster finds an ECS cluster by name or ARN in region.
func (t *TaskAPI) Cluster(region, ref string) *Record {
	name := awsmodel.ECSClusterName(ref)
	for _, r := range t.State.Resources {
		if r.Type == TypeECSCluster && r.Region == region && (Str(r.Outputs["name"]) == name || r.ID == ref || Str(r.Outputs["arn"]) == ref) {
			return r
		}
	}
	return nil
}

// RunTask starts count tasks of a task definition, checked as ECS checks
// RunTask (awsmodel/ecs_runtask.go).
func (t *TaskAPI) RunTask(region string, in RunTaskInput) ([]*TaskRecord, []RunTaskFailure, error) {
	if err := awsmodel.CheckRunTaskCount(in.Count, in.CountGiven); err != nil {
		return nil, nil, err
	}
	if err := awsmodel.CheckLaunchType(in.LaunchType, len(in.CapacityProviders)); err != nil {
		return nil, nil, err
	}
	if err := awsmodel.CheckStartedBy(in.StartedBy); err != nil {
		return nil, nil, err
	}
	if err := awsmodel.CheckClientToken(in.ClientToken); err != nil {
		return nil, nil, err
	}
	cl := t.Cluster(region, in.Cluster)
	if cl == nil {
		return nil, nil, awsmodel.ClusterNotFoundError()
	}
	if in.ClientToken != "" {
		if done, err := t.byClientToken(cl, in, t.c.Now()); err != nil || len(done) > 0 {
			return done, nil, err
		}
	}
	ref, err := awsmodel.ParseTaskDefRef(in.TaskDefinition, "TaskDefinition not found.")
	if err != nil {
		return nil, nil, err
	}
	td := t.ResolveTaskDef(region, ref)
	if td == nil {
		return nil, nil, &awsmodel.ECSError{Code: awsmodel.ECSClient, Message: "TaskDefinition not found."}
	}
	if err := awsmodel.CheckTaskDefActive(td.Status); err != nil {
		return nil, nil, err
	}
	launch := in.LaunchType
	if launch == "" {
		for _, p := range in.CapacityProviders {
			if p == "FARGATE" || p == "FARGATE_SPOT" {
				launch = "FARGATE"
			}
		}
	}
	if launch == "" {
		launch = "EC2" // no strategy: the cluster's default, which a cluster without capacity providers lacks
	}
	if err := awsmodel.CheckLaunchCompatibility(launch, td.Compatibilities); err != nil {
		return nil, nil, err
	}
	if err := awsmodel.CheckNetworkConfiguration(td.NetworkMode, in.Network); err != nil {
		return nil, nil, err
	}
	if in.Network != nil {
		if err := t.checkVPC(region, in.Network); err != nil {
			return nil, nil, err
		}
	}
	count := max(1, in.Count)
	if launch != "FARGATE" {
		// The simulated account registers no container instances: EC2 and
		// EXTERNAL tasks are placed nowhere (RunTask's failures).
		var fails []RunTaskFailure
		for range count {
			fails = append(fails, RunTaskFailure{ARN: Str(cl.Outputs["arn"]), Reason: "No Container Instances were found in your cluster."})
		}
		return nil, fails, nil
	}
	now := t.c.Now()
	var out []*TaskRecord
	for range count {
		id, err := taskID()
		if err != nil {
			return nil, nil, err
		}
		clusterName := Str(cl.Outputs["name"])
		t.ECS.Seq++
		tr := &TaskRecord{ARN: awsmodel.ECSTaskARN(region, t.View.Account(), clusterName, id), ID: id, Region: region,
			ClusterARN: Str(cl.Outputs["arn"]), Cluster: clusterName, Stack: cl.Key(), TaskDefARN: td.ARN, Family: td.Family, Revision: td.Revision,
			LaunchType: launch, StartedBy: in.StartedBy, Group: in.Group, CPU: td.CPU, Memory: td.Mem, Overrides: in.Overrides,
			LastStatus: awsmodel.TaskProvisioning, DesiredStatus: awsmodel.TaskRunning, Reported: true, Entered: now, Created: now, Seq: t.ECS.Seq}
		if in.ClientToken != "" {
			tr.ClientToken, tr.Request = in.ClientToken, in.digest()
		}
		if tr.Group == "" {
			tr.Group = "family:" + td.Family
		}
		if in.Network != nil {
			tr.Subnets, tr.SecurityGroups, tr.AssignPublicIP = in.Network.Subnets, in.Network.SecurityGroups, in.Network.AssignPublicIP
			if tr.AssignPublicIP == "" {
				tr.AssignPublicIP = "DISABLED"
			}
		}
		for _, c := range td.Containers {
			tc := &TaskContainer{Name: c.Name, Image: c.Image, Essential: c.Essential, Command: c.Command, LastStatus: awsmodel.TaskPending}
			if cmd, ok := in.CommandOverrides[c.Name]; ok {
				tc.Command = cmd
			}
			if c.LogDriver == "awslogs" {
				tc.LogGroup, tc.LogRegion, tc.LogPrefix = c.LogOptions["awslogs-group"], c.LogOptions["awslogs-region"], c.LogOptions["awslogs-stream-prefix"]
				if tc.LogRegion == "" {
					tc.LogRegion = region
				}
			}
			if r, ok := t.ECS.Rules[c.Image]; ok {
				tc.Rule = &r
			}
			tr.Containers = append(tr.Containers, tc)
		}
		t.ECS.Tasks[tr.ARN] = tr
		out = append(out, tr)
	}
	return out, nil, nil
}

// checkVPC checks that the subnets and security groups exist and share
// one VPC (AwsVpcConfiguration).
func (t *TaskAPI) checkVPC(region string, n *awsmodel.AwsVpcConfig) error {
	vpc := ""
	for _, id := range n.Subnets {
		r := t.View.LookupTyped(TypeSubnet, id, region)
		if r == nil {
			return awsmodel.SubnetNotFoundError(id)
		}
		v := Str(r.Outputs["vpcId"])
		if vpc != "" && v != vpc {
			return awsmodel.SubnetsVPCError()
		}
		vpc = v
	}
	for _, id := range n.SecurityGroups {
		r := t.View.LookupTyped(TypeSecurityGroup, id, region)
		if r == nil {
			return awsmodel.SecurityGroupNotFoundError(id)
		}
		if v := Str(r.Outputs["vpcId"]); v != "" && v != vpc {
			return awsmodel.SecurityGroupVPCError(id)
		}
	}
	return nil
}

func taskID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// FindTask finds a task by id or ARN in a cluster.
func (t *TaskAPI) FindTask(cluster *Record, ref string) *TaskRecord {
	id := awsmodel.ECSTaskID(ref)
	if id == "" {
		return nil
	}
	for _, tr := range t.ECS.Tasks {
		if tr.ID == id && tr.ClusterARN == Str(cluster.Outputs["arn"]) {
			return tr
		}
	}
	return nil
}

// StopTask asks a task to stop (StopTask): desiredStatus STOPPED, stopCode
// UserInitiated; a stopped task is answered as it is.
func (t *TaskAPI) StopTask(tr *TaskRecord, reason string) error {
	if err := awsmodel.CheckStopReason(reason); err != nil {
		return err
	}
	if tr.LastStatus == awsmodel.TaskStopped || tr.DesiredStatus == awsmodel.TaskStopped {
		return nil
	}
	now := t.c.Now()
	t.Advance(tr, now, false)
	if tr.LastStatus == awsmodel.TaskStopped {
		return nil
	}
	if reason == "" {
		reason = awsmodel.ReasonUserStopped
	}
	tr.DesiredStatus, tr.StopCode, tr.StoppedReason, tr.StoppingAt, tr.Reported = awsmodel.TaskStopped, awsmodel.StopUserInitiated, reason, &now, true
	return nil
}

// ---- the lifecycle --------------------------------------------------------------

func (tr *TaskRecord) hangs() bool {
	for _, c := range tr.Containers {
		if c.Essential && c.Rule != nil && c.Rule.Hang {
			return true
		}
	}
	return false
}

// Advance moves a task on as of now: by time always, and one step when
// byReport (a DescribeTasks) and the caller was told its current status.
func (t *TaskAPI) Advance(tr *TaskRecord, now time.Time, byReport bool) {
	for tr.LastStatus != awsmodel.TaskStopped {
		stopping := tr.DesiredStatus == awsmodel.TaskStopped
		var deadline time.Time
		switch {
		case tr.LastStatus == awsmodel.TaskProvisioning:
			deadline = tr.Entered.Add(ProvisionTime)
		case stopping:
			deadline = tr.StoppingAt.Add(StopTimeout)
		case tr.hangs():
			return // RUNNING until StopTask
		default:
			deadline = tr.Entered.Add(RunTime)
		}
		var at time.Time
		switch {
		case byReport && tr.Reported:
			at = now
		case !now.Before(deadline):
			at = deadline
		default:
			return
		}
		t.step(tr, at)
		tr.Entered, tr.Reported = at, false
	}
}

func (t *TaskAPI) step(tr *TaskRecord, at time.Time) {
	stop := func(code, reason string) {
		tr.LastStatus, tr.DesiredStatus, tr.StoppedAt = awsmodel.TaskStopped, awsmodel.TaskStopped, &at
		if tr.StoppingAt == nil {
			tr.StoppingAt = &at
		}
		if code != "" {
			tr.StopCode, tr.StoppedReason = code, reason
		}
		for _, c := range tr.Containers {
			c.LastStatus = awsmodel.TaskStopped
		}
	}
	if tr.LastStatus == awsmodel.TaskProvisioning {
		if tr.DesiredStatus == awsmodel.TaskStopped {
			stop("", "") // stopped before it started: no exit codes
			return
		}
		for _, c := range tr.Containers {
			if c.Rule != nil && c.Rule.NoStart != "" {
				reason := awsmodel.CannotPullReason(c.Rule.NoStart)
				c.Reason = reason
				stop(awsmodel.StopTaskFailedToStart, reason)
				return
			}
		}
		for _, c := range tr.Containers {
			if c.LogGroup != "" && t.View.LookupTyped(TypeLogGroup, c.LogGroup, c.LogRegion) == nil {
				reason := awsmodel.MissingLogGroupReason(c.LogGroup)
				c.Reason = reason
				stop(awsmodel.StopTaskFailedToStart, reason)
				return
			}
		}
		tr.LastStatus, tr.StartedAt = awsmodel.TaskRunning, &at
		for _, c := range tr.Containers {
			c.LastStatus = awsmodel.TaskRunning
			t.containerLog(tr, c, at, "running migration: "+commandLine(c.Command))
		}
		return
	}
	if tr.DesiredStatus == awsmodel.TaskStopped {
		for _, c := range tr.Containers {
			code := awsmodel.StopTimeoutExitCode
			c.ExitCode = &code
		}
		stop("", "")
		return
	}
	for _, c := range tr.Containers {
		exit, lines := t.finish(tr, c, at)
		c.ExitCode = &exit
		t.containerLog(tr, c, at, lines...)
	}
	stop(awsmodel.StopEssentialContainerExited, awsmodel.ReasonEssentialExited)
}

func commandLine(cmd []string) string {
	if len(cmd) == 0 {
		return "(the image's default command)"
	}
	return strings.Join(cmd, " ")
}

func (t *TaskAPI) containerLog(tr *TaskRecord, c *TaskContainer, at time.Time, lines ...string) {
	if s := c.LogStream(tr.ID); s != "" && len(lines) > 0 {
		t.AppendLog(c.LogRegion, c.LogGroup, s, at, lines...)
	}
}

// ImageTag is an image reference's tag ("registry/app:v2" → "v2"), its
// digest, or "latest".
func ImageTag(image string) string {
	if i := strings.LastIndex(image, "@"); i >= 0 {
		return image[i+1:]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[i+1:]
	}
	return "latest"
}

// finish decides a container's exit code and last log lines from its rule
// (running its --sql on the cell's database when PostgreSQL is
// configured).
func (t *TaskAPI) finish(tr *TaskRecord, c *TaskContainer, at time.Time) (int, []string) {
	r := TaskRule{}
	if c.Rule != nil {
		r = *c.Rule
	}
	exit := 0
	if r.Exit != nil {
		exit = *r.Exit
	}
	version := r.SchemaVersion
	if version == "" {
		version = ImageTag(c.Image)
	}
	var last []string
	if r.SQL != "" {
		code, msg := t.runMigrationSQL(tr, r, at)
		if code != 0 {
			return code, []string{msg}
		}
	}
	switch {
	case r.Log != "":
		last = strings.Split(strings.TrimRight(r.Log, "\n"), "\n")
		if r.SchemaVersion != "" && exit == 0 {
			last = append(last, "schema_version="+version)
		}
	case exit == 0:
		last = []string{"schema_version=" + version}
	default:
		last = []string{"migration failed: exit status " + strconv.Itoa(exit)}
	}
	return exit, last
}

// DBClusterOf is the Aurora cluster of a stack (the cell whose ECS cluster
// ran a task), or nil.
func (t *TaskAPI) DBClusterOf(stack, region string) *Record {
	for _, r := range t.State.Resources {
		if r.Type == TypeDBCluster && r.Key() == stack && r.Region == region {
			return r
		}
	}
	return nil
}

// runMigrationSQL runs a --sql rule's SQL on the task's cell database as
// cellctl_migrator: psql's exit (0, or 1 on the first error) and the last
// log line (PostgreSQL's error). Without PostgreSQL the SQL is recorded
// and the rule's exit stands.
func (t *TaskAPI) runMigrationSQL(tr *TaskRecord, r TaskRule, at time.Time) (int, string) {
	db := t.DBClusterOf(tr.Stack, tr.Region)
	stmt := SQLStatement{Time: at, Region: tr.Region, Stack: tr.Stack, SQL: r.SQL, Source: "task " + tr.ID, Mode: "scripted", Role: MigratorRole}
	pg := PGFromEnv()
	if db == nil {
		stmt.Error = "the cell has no Aurora cluster"
		t.RecordStatement(stmt)
		if pg != nil {
			return 2, "psql: error: could not translate host name: the simulated cell (stack " + tr.Stack + ") has no Aurora cluster"
		}
		return 0, ""
	}
	stmt.Cluster, stmt.Database = db.ID, Str(db.Outputs["databaseName"])
	if pg == nil {
		t.RecordStatement(stmt)
		return 0, ""
	}
	stmt.Mode = "postgres"
	// One transaction, as migration tools run a migration: a file that
	// fails leaves nothing of itself behind.
	_, err := pg.Run(PGTargetOf(db), MigratorRole, r.SQL, "--single-transaction")
	if err != nil {
		stmt.Error = err.Error()
		t.RecordStatement(stmt)
		return 1, pgMessage(err)
	}
	t.RecordStatement(stmt)
	return 0, ""
}

// PGTargetOf is a DB cluster resource as the PostgreSQL server holds it.
func PGTargetOf(db *Record) PGTarget {
	return PGTarget{ClusterID: db.ID, Master: Str(db.Outputs["masterUsername"]), Database: Str(db.Outputs["databaseName"])}
}

// MigratorRole is the role a migration task runs its SQL as.
const MigratorRole = "cellctl_migrator"

// ---- rendering ------------------------------------------------------------------

func epoch(t *time.Time) any {
	if t == nil {
		return nil
	}
	return float64(t.UnixMilli()) / 1000
}

// TaskJSON renders a task as ECS's Task.
func (t *TaskAPI) TaskJSON(tr *TaskRecord) map[string]any {
	var containers []any
	for _, c := range tr.Containers {
		cm := map[string]any{"containerArn": fmt.Sprintf("arn:aws:ecs:%s:%s:container/%s/%s/%s", tr.Region, t.View.Account(), tr.Cluster, tr.ID, containerUUID(tr.ID, c.Name)),
			"taskArn": tr.ARN, "name": c.Name, "image": c.Image, "lastStatus": c.LastStatus, "healthStatus": "UNKNOWN", "cpu": "0", "networkInterfaces": []any{}}
		if c.ExitCode != nil {
			cm["exitCode"] = *c.ExitCode
		}
		if c.Reason != "" {
			cm["reason"] = c.Reason
		}
		containers = append(containers, cm)
	}
	m := map[string]any{
		"taskArn": tr.ARN, "clusterArn": tr.ClusterARN, "taskDefinitionArn": tr.TaskDefARN, "group": tr.Group,
		"lastStatus": tr.LastStatus, "desiredStatus": tr.DesiredStatus, "launchType": tr.LaunchType, "containers": nonNilAny(containers),
		"createdAt": epoch(&tr.Created), "version": 1, "platformVersion": "1.4.0", "platformFamily": "Linux", "connectivity": "CONNECTED",
		"enableExecuteCommand": false, "healthStatus": "UNKNOWN", "ephemeralStorage": map[string]any{"sizeInGiB": 20},
		"attributes": []any{map[string]any{"name": "ecs.cpu-architecture", "value": "x86_64"}}, "tags": []any{},
	}
	if tr.CPU != "" {
		m["cpu"] = tr.CPU
	}
	if tr.Memory != "" {
		m["memory"] = tr.Memory
	}
	if tr.StartedBy != "" {
		m["startedBy"] = tr.StartedBy
	}
	if len(tr.Subnets) > 0 {
		details := []any{map[string]any{"name": "subnetId", "value": tr.Subnets[0]}}
		m["attachments"] = []any{map[string]any{"id": containerUUID(tr.ID, "eni"), "type": "ElasticNetworkInterface", "status": attachmentStatus(tr), "details": details}}
		m["availabilityZone"] = t.subnetZone(tr.Subnets[0], tr.Region)
	}
	if tr.Overrides != nil {
		m["overrides"] = tr.Overrides
	} else {
		m["overrides"] = map[string]any{"containerOverrides": []any{}}
	}
	for k, v := range map[string]*time.Time{"startedAt": tr.StartedAt, "stoppingAt": tr.StoppingAt, "stoppedAt": tr.StoppedAt, "executionStoppedAt": tr.StoppedAt, "pullStartedAt": tr.StartedAt, "pullStoppedAt": tr.StartedAt} {
		if v != nil {
			m[k] = epoch(v)
		}
	}
	if tr.StopCode != "" {
		m["stopCode"] = tr.StopCode
	}
	if tr.StoppedReason != "" && (tr.LastStatus == awsmodel.TaskStopped || tr.DesiredStatus == awsmodel.TaskStopped) {
		m["stoppedReason"] = tr.StoppedReason
	}
	return m
}

func attachmentStatus(tr *TaskRecord) string {
	switch tr.LastStatus {
	case awsmodel.TaskProvisioning:
		return "PRECREATED"
	case awsmodel.TaskStopped:
		return "DELETED"
	}
	return "ATTACHED"
}

func (t *TaskAPI) subnetZone(id, region string) string {
	if r := t.View.LookupTyped(TypeSubnet, id, region); r != nil {
		return Str(r.Outputs["availabilityZone"])
	}
	return ""
}

// containerUUID is a stable UUID-shaped id for a task's container.
func containerUUID(taskID, name string) string {
	h := slices.Concat([]byte(taskID), []byte(name))
	var sum [16]byte
	for i, b := range h {
		sum[i%16] = sum[i%16]*31 + b
	}
	x := hex.EncodeToString(sum[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}
