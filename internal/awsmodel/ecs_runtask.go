package awsmodel

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Amazon ECS's task API as the simulator answers it for one-off tasks
// (schema migrations): RegisterTaskDefinition, DescribeTaskDefinition,
// DeregisterTaskDefinition, RunTask, DescribeTasks and StopTask, AWS JSON
// 1.1 with X-Amz-Target AmazonEC2ContainerServiceV20141113.<Op>. Sources:
// the Amazon ECS API Reference pages of those operations and of the
// AwsVpcConfiguration, Task, Container and Failure data types; the Amazon
// ECS Developer Guide ("Amazon ECS task lifecycle", "Amazon ECS stopped
// task error codes", "Using the awslogs log driver", "Task definition
// parameters", "Task CPU and memory"). Every ECS error is HTTP 400 with
// the error shape's name as __type.

// ECS error shapes (API Reference, "Common Errors" and each operation's
// "Errors").
const (
	ECSClient           = "ClientException"
	ECSInvalidParameter = "InvalidParameterException"
	ECSClusterNotFound  = "ClusterNotFoundException"
	ECSServer           = "ServerException"
	ECSConflict         = "ConflictException"
)

// ClientTokenTTL is how long ECS keeps a RunTask clientToken (API
// Reference, "Ensuring idempotency": RunTask's client token lives 24
// hours).
const ClientTokenTTL = 24 * time.Hour

// ECSError is an ECS API error: the shape and AWS's message.
type ECSError struct {
	Code    string
	Message string
	// ResourceIDs are a ConflictException's resourceIds: the task ARNs
	// already associated with the clientToken.
	ResourceIDs []string
}

func (e *ECSError) Error() string { return e.Code + ": " + e.Message }

func ecsErr(code, format string, args ...any) error {
	return &ECSError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// APIRule is one rule of an AWS API call the simulator enforces, with the
// document it comes from: what `sim` refuses is listed here, so a rule
// without a citation does not exist.
type APIRule struct {
	ID   string `json:"id"`
	Doc  string `json:"doc"`
	Code string `json:"code"`
}

// ECSTaskRules lists the rules of the ECS task API the check functions of
// this file enforce.
var ECSTaskRules = []APIRule{
	{"ecs.taskdef-ref", "Amazon ECS API Reference, DescribeTaskDefinition: taskDefinition is \"The family for the latest ACTIVE revision, family and revision (family:revision) for a specific revision in the family, or full Amazon Resource Name (ARN) of the task definition\"; an unknown one is ClientException \"Unable to describe task definition.\"", ECSClient},
	{"ecs.taskdef-family", "Amazon ECS API Reference, RegisterTaskDefinition: family \"Up to 255 letters (uppercase and lowercase), numbers, underscores, and hyphens are allowed.\"", ECSClient},
	{"ecs.taskdef-containers", "Amazon ECS API Reference, RegisterTaskDefinition: containerDefinitions is required; ContainerDefinition name and image are required", ECSClient},
	{"ecs.taskdef-fargate", "Amazon ECS Developer Guide, Task definition parameters (requiresCompatibilities FARGATE: networkMode awsvpc, task-level cpu and memory) and Task CPU and memory (the Fargate cpu/memory table)", ECSClient},
	{"ecs.runtask-count", "Amazon ECS API Reference, RunTask: count \"You can specify up to 10 tasks for each call.\" (Valid Range: 1-10)", ECSInvalidParameter},
	{"ecs.runtask-cluster", "Amazon ECS API Reference, RunTask: ClusterNotFoundException \"The specified cluster wasn't found.\" (the default cluster when none is named)", ECSClusterNotFound},
	{"ecs.runtask-taskdef", "Amazon ECS API Reference, RunTask: \"If a revision isn't specified, the latest ACTIVE revision is used\"; a task definition that does not exist is ClientException \"TaskDefinition not found.\", an INACTIVE one \"TaskDefinition is inactive\"", ECSClient},
	{"ecs.runtask-launchtype", "Amazon ECS API Reference, RunTask: launchType EC2 | FARGATE | EXTERNAL | MANAGED_INSTANCES; \"If a launchType is specified, the capacityProviderStrategy parameter must be omitted.\"", ECSInvalidParameter},
	{"ecs.runtask-compatibility", "Amazon ECS Developer Guide, Amazon ECS launch types: a task definition runs on FARGATE only when its compatibilities include FARGATE (InvalidParameterException \"Task definition does not support launch_type FARGATE.\")", ECSInvalidParameter},
	{"ecs.runtask-awsvpc", "Amazon ECS API Reference, RunTask: networkConfiguration \"is required for task definitions that use the awsvpc network mode ... and it isn't supported for other network modes\"", ECSInvalidParameter},
	{"ecs.awsvpc-limits", "Amazon ECS API Reference, AwsVpcConfiguration: subnets (required) \"There's a limit of 16 subnets\", securityGroups \"There's a limit of 5 security groups\", all from the same VPC; assignPublicIp ENABLED | DISABLED", ECSInvalidParameter},
	{"ecs.runtask-clienttoken", "Amazon ECS API Reference, Ensuring idempotency (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/ECS_Idempotency.html), RunTask: the client token is up to 64 ASCII characters in the range 33-126; requests with the same token are idempotent within one cluster for 24 hours — a retry with the same parameters returns the original request's result, one with other parameters fails with ConflictException, whose resourceIds are \"the existing task ARNs which are already associated with the clientToken\" (API Reference, ConflictException)", ECSConflict},
	{"ecs.runtask-startedby", "Amazon ECS API Reference, RunTask: startedBy \"Up to 128 letters (uppercase and lowercase), numbers, hyphens (-), forward slash (/), and underscores (_) are allowed.\"", ECSInvalidParameter},
	{"ecs.describetasks-limit", "Amazon ECS API Reference, DescribeTasks: tasks \"A list of up to 100 task IDs or full ARN entries.\"; a task not found is a Failure with reason MISSING", ECSInvalidParameter},
	{"ecs.stoptask-reason", "Amazon ECS API Reference, StopTask: reason \"Up to 255 characters are allowed in this message.\"; the stopped task's stopCode is UserInitiated", ECSInvalidParameter},
}

var (
	reTaskFamily  = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,255}$`)
	reStartedBy   = regexp.MustCompile(`^[a-zA-Z0-9/_-]{0,128}$`)
	reTaskDefARN  = regexp.MustCompile(`^arn:aws[a-z-]*:ecs:([a-z0-9-]+):(\d{12}):task-definition/([a-zA-Z0-9_-]{1,255})(?::(\d+|\*))?$`)
	reTaskARN     = regexp.MustCompile(`^arn:aws[a-z-]*:ecs:([a-z0-9-]+):(\d{12}):task/(?:([a-zA-Z0-9_-]+)/)?([a-z0-9]{32})$`)
	reClusterARN  = regexp.MustCompile(`^arn:aws[a-z-]*:ecs:([a-z0-9-]+):(\d{12}):cluster/([a-zA-Z0-9_-]{1,255})$`)
	ecsLaunchType = []string{"EC2", "FARGATE", "EXTERNAL", "MANAGED_INSTANCES"}
)

// TaskDefRef is a taskDefinition parameter as ECS reads it.
type TaskDefRef struct {
	Family string
	// Revision is 0 for "the latest ACTIVE revision".
	Revision int
	// Region is the ARN's, or "" for a family.
	Region string
}

// ParseTaskDefRef reads a taskDefinition parameter: "family",
// "family:revision" or a task definition ARN (with or without revision).
// Anything else is ClientException with msg ("Unable to describe task
// definition." for DescribeTaskDefinition, "TaskDefinition not found."
// for RunTask).
func ParseTaskDefRef(ref, msg string) (TaskDefRef, error) {
	if m := reTaskDefARN.FindStringSubmatch(ref); m != nil {
		out := TaskDefRef{Family: m[3], Region: m[1]}
		if m[4] != "" && m[4] != "*" {
			out.Revision, _ = strconv.Atoi(m[4])
		}
		return out, nil
	}
	if strings.HasPrefix(ref, "arn:") {
		return TaskDefRef{}, ecsErr(ECSClient, "%s", msg)
	}
	family, rev, hasRev := strings.Cut(ref, ":")
	if !reTaskFamily.MatchString(family) {
		return TaskDefRef{}, ecsErr(ECSClient, "%s", msg)
	}
	out := TaskDefRef{Family: family}
	if hasRev {
		n, err := strconv.Atoi(rev)
		if err != nil || n < 1 {
			return TaskDefRef{}, ecsErr(ECSClient, "%s", msg)
		}
		out.Revision = n
	}
	return out, nil
}

// TaskDefinitionARN is a revision's ARN.
func TaskDefinitionARN(region, account, family string, revision int) string {
	return fmt.Sprintf("arn:aws:ecs:%s:%s:task-definition/%s:%d", region, account, family, revision)
}

// ECSClusterName is the cluster a cluster parameter names: a short name
// or an ARN; "" is the account's default cluster.
func ECSClusterName(ref string) string {
	if ref == "" {
		return "default"
	}
	if m := reClusterARN.FindStringSubmatch(ref); m != nil {
		return m[3]
	}
	return ref
}

// ClusterNotFoundError is RunTask's, DescribeTasks' and StopTask's answer
// for a cluster the account does not have.
func ClusterNotFoundError() error { return ecsErr(ECSClusterNotFound, "Cluster not found.") }

// ECSTaskARN is a task's ARN in the long format ("task/cluster/id").
func ECSTaskARN(region, account, cluster, id string) string {
	return fmt.Sprintf("arn:aws:ecs:%s:%s:task/%s/%s", region, account, cluster, id)
}

// ECSTaskID is the id a task reference (an id or a task ARN) names, or "".
func ECSTaskID(ref string) string {
	if m := reTaskARN.FindStringSubmatch(ref); m != nil {
		return m[4]
	}
	if regexp.MustCompile(`^[a-z0-9]{32}$`).MatchString(ref) {
		return ref
	}
	return ""
}

// TaskDefinitionSpec is what RegisterTaskDefinition checks of a task
// definition.
type TaskDefinitionSpec struct {
	Family                  string
	NetworkMode             string
	CPU, Memory             string
	RequiresCompatibilities []string
	// Containers are the container definitions' names and images.
	Containers []ContainerSpec
}

// ContainerSpec is one container definition's name and image.
type ContainerSpec struct{ Name, Image string }

// CheckRegisterTaskDefinition checks a new revision as
// RegisterTaskDefinition does (rules ecs.taskdef-*).
func CheckRegisterTaskDefinition(s TaskDefinitionSpec) error {
	if !reTaskFamily.MatchString(s.Family) {
		return ecsErr(ECSClient, "Family contains invalid characters or is too long: up to 255 letters (uppercase and lowercase), numbers, underscores, and hyphens are allowed.")
	}
	if len(s.Containers) == 0 {
		return ecsErr(ECSClient, "Container list cannot be empty.")
	}
	seen := map[string]bool{}
	for _, c := range s.Containers {
		if c.Name == "" {
			return ecsErr(ECSClient, "Container.name should not be null or empty.")
		}
		if c.Image == "" {
			return ecsErr(ECSClient, "Container.image should not be null or empty.")
		}
		if seen[c.Name] {
			return ecsErr(ECSClient, "Duplicate container name found: %s. Container names must be unique within a task definition.", c.Name)
		}
		seen[c.Name] = true
	}
	switch s.NetworkMode {
	case "", "bridge", "host", "awsvpc", "none":
	default:
		return ecsErr(ECSClient, "Invalid networkMode %s: use bridge, host, awsvpc or none.", s.NetworkMode)
	}
	for _, rc := range s.RequiresCompatibilities {
		if !slices.Contains([]string{"EC2", "FARGATE", "EXTERNAL", "MANAGED_INSTANCES"}, rc) {
			return ecsErr(ECSClient, "Invalid requiresCompatibilities %s.", rc)
		}
	}
	if slices.Contains(s.RequiresCompatibilities, "FARGATE") {
		if s.NetworkMode != "awsvpc" {
			return ecsErr(ECSClient, "Fargate only supports network mode ‘awsvpc’.")
		}
		if !FargateSize(s.CPU, s.Memory) {
			return ecsErr(ECSClient, "No Fargate configuration exists for given values: %s CPU, %s memory. See the Amazon ECS documentation for the valid values.", s.CPU, s.Memory)
		}
	}
	return nil
}

// FargateSize reports whether task-level cpu and memory (units and MiB,
// as strings) are a Fargate size (Developer Guide, "Task CPU and memory").
func FargateSize(cpu, memory string) bool {
	c, err1 := strconv.Atoi(strings.TrimSpace(cpu))
	m, err2 := strconv.Atoi(strings.TrimSpace(memory))
	ok := fargateMemory[c]
	return err1 == nil && err2 == nil && ok != nil && ok(m)
}

// TaskCompatibilities is the compatibilities ECS reports for a task
// definition: EC2 always; FARGATE when the definition meets Fargate's
// requirements (awsvpc and a Fargate cpu/memory size).
func TaskCompatibilities(networkMode, cpu, memory string) []string {
	out := []string{"EC2"}
	if networkMode == "awsvpc" && FargateSize(cpu, memory) {
		out = append(out, "FARGATE")
	}
	return out
}

// CheckRunTaskCount checks RunTask's count (ecs.runtask-count); 0 means
// absent (1).
func CheckRunTaskCount(count int, given bool) error {
	if given && (count < 1 || count > 10) {
		return ecsErr(ECSInvalidParameter, "instanceCount should be between 1 and 10.")
	}
	return nil
}

// CheckLaunchType checks RunTask's launchType and capacityProviderStrategy
// (ecs.runtask-launchtype).
func CheckLaunchType(launchType string, capacityProviders int) error {
	if launchType != "" && !slices.Contains(ecsLaunchType, launchType) {
		return ecsErr(ECSInvalidParameter, "1 validation error detected: Value '%s' at 'launchType' failed to satisfy constraint: Member must satisfy enum value set: [EC2, FARGATE, EXTERNAL, MANAGED_INSTANCES]", launchType)
	}
	if launchType != "" && capacityProviders > 0 {
		return ecsErr(ECSInvalidParameter, "Specifying both a launch type and capacity provider strategy is not supported. Remove one and try again.")
	}
	return nil
}

// CheckTaskDefActive refuses an INACTIVE revision (ecs.runtask-taskdef).
func CheckTaskDefActive(status string) error {
	if status != "ACTIVE" {
		return ecsErr(ECSClient, "TaskDefinition is inactive")
	}
	return nil
}

// CheckLaunchCompatibility refuses a launch type the task definition's
// compatibilities do not include (ecs.runtask-compatibility).
func CheckLaunchCompatibility(launchType string, compatibilities []string) error {
	if launchType == "" || launchType == "EC2" && slices.Contains(compatibilities, "EC2") {
		return nil
	}
	if !slices.Contains(compatibilities, launchType) {
		return ecsErr(ECSInvalidParameter, "Task definition does not support launch_type %s.", launchType)
	}
	return nil
}

// AwsVpcConfig is a RunTask networkConfiguration.awsvpcConfiguration.
type AwsVpcConfig struct {
	Subnets        []string
	SecurityGroups []string
	AssignPublicIP string
}

// CheckNetworkConfiguration checks RunTask's networkConfiguration against
// the task definition's network mode and AwsVpcConfiguration's limits
// (ecs.runtask-awsvpc, ecs.awsvpc-limits). cfg is nil when absent.
func CheckNetworkConfiguration(networkMode string, cfg *AwsVpcConfig) error {
	if networkMode != "awsvpc" {
		if cfg != nil {
			return ecsErr(ECSInvalidParameter, "Network Configuration is not valid for the given networkMode of this task definition.")
		}
		return nil
	}
	if cfg == nil {
		return ecsErr(ECSInvalidParameter, "Network Configuration must be provided when networkMode 'awsvpc' is specified.")
	}
	switch {
	case len(cfg.Subnets) == 0:
		return ecsErr(ECSInvalidParameter, "subnets can not be empty.")
	case len(cfg.Subnets) > 16:
		return ecsErr(ECSInvalidParameter, "subnets can have at most 16 items.")
	case len(cfg.SecurityGroups) > 5:
		return ecsErr(ECSInvalidParameter, "securityGroups can have at most 5 items.")
	}
	switch cfg.AssignPublicIP {
	case "", "ENABLED", "DISABLED":
	default:
		return ecsErr(ECSInvalidParameter, "1 validation error detected: Value '%s' at 'networkConfiguration.awsvpcConfiguration.assignPublicIp' failed to satisfy constraint: Member must satisfy enum value set: [ENABLED, DISABLED]", cfg.AssignPublicIP)
	}
	return nil
}

// SubnetNotFoundError is RunTask's answer for a subnet the account does
// not have (ECS passes on EC2's InvalidSubnetID.NotFound).
func SubnetNotFoundError(id string) error {
	return ecsErr(ECSInvalidParameter, "Error retrieving subnet information for [%s]: The subnet ID '%s' does not exist (ErrorCode: InvalidSubnetID.NotFound)", id, id)
}

// SecurityGroupNotFoundError is RunTask's answer for a security group the
// account does not have (EC2's InvalidGroup.NotFound).
func SecurityGroupNotFoundError(id string) error {
	return ecsErr(ECSInvalidParameter, "Error retrieving security group information for [%s]: The security group '%s' does not exist (ErrorCode: InvalidGroup.NotFound)", id, id)
}

// SubnetsVPCError and SecurityGroupVPCError are RunTask's answers for
// subnets or security groups of different VPCs ("All specified subnets
// must be from the same VPC", AwsVpcConfiguration).
func SubnetsVPCError() error {
	return ecsErr(ECSInvalidParameter, "Subnets must all be in the same VPC.")
}

func SecurityGroupVPCError(sg string) error {
	return ecsErr(ECSInvalidParameter, "Security group %s does not appear to belong to the same VPC as the input subnets.", sg)
}

// CheckClientToken checks RunTask's clientToken (ecs.runtask-clienttoken).
func CheckClientToken(s string) error {
	ok := len(s) <= 64
	for i := 0; ok && i < len(s); i++ {
		ok = s[i] >= 33 && s[i] <= 126
	}
	if !ok {
		return ecsErr(ECSInvalidParameter, "clientToken can have up to 64 ASCII characters in the range 33-126.")
	}
	return nil
}

// ClientTokenConflictError is RunTask's answer to a clientToken already
// used with other parameters (ecs.runtask-clienttoken).
func ClientTokenConflictError(tasks []string) error {
	return &ECSError{Code: ECSConflict, Message: "The clientToken is already in use with a different RunTask request.", ResourceIDs: tasks}
}

// CheckStartedBy checks RunTask's startedBy (ecs.runtask-startedby).
func CheckStartedBy(s string) error {
	if !reStartedBy.MatchString(s) {
		return ecsErr(ECSInvalidParameter, "startedBy may contain up to 128 letters (uppercase and lowercase), numbers, hyphens (-), forward slash (/), and underscores (_).")
	}
	return nil
}

// CheckDescribeTasks checks DescribeTasks' task list
// (ecs.describetasks-limit).
func CheckDescribeTasks(n int) error {
	switch {
	case n == 0:
		return ecsErr(ECSInvalidParameter, "Tasks cannot be empty.")
	case n > 100:
		return ecsErr(ECSInvalidParameter, "Tasks cannot have more than 100 elements")
	}
	return nil
}

// CheckStopReason checks StopTask's reason (ecs.stoptask-reason).
func CheckStopReason(reason string) error {
	if len(reason) > 255 {
		return ecsErr(ECSInvalidParameter, "Reason cannot be longer than 255 characters.")
	}
	return nil
}

// Task lifecycle (Developer Guide, "Amazon ECS task lifecycle": a task
// moves PROVISIONING → PENDING → ACTIVATING → RUNNING → DEACTIVATING →
// STOPPING → DEPROVISIONING → STOPPED; desiredStatus is RUNNING until the
// task is told, or decides, to stop).
const (
	TaskProvisioning = "PROVISIONING"
	TaskPending      = "PENDING"
	TaskRunning      = "RUNNING"
	TaskStopped      = "STOPPED"
)

// Stop codes (API Reference, Task: stopCode; Developer Guide, "Amazon ECS
// stopped task error codes").
const (
	StopEssentialContainerExited = "EssentialContainerExited"
	StopUserInitiated            = "UserInitiated"
	StopTaskFailedToStart        = "TaskFailedToStart"
)

// Stopped reasons ECS reports (Developer Guide, "Viewing Amazon ECS
// stopped task errors"): an essential container's exit, and a stop the
// caller asked for without a reason.
const (
	ReasonEssentialExited = "Essential container in task exited"
	ReasonUserStopped     = "Task stopped by user"
)

// StopTimeoutExitCode is the exit code of a container StopTask killed: the
// equivalent of docker stop sends SIGTERM, then "a default 30-second
// timeout, after which SIGKILL is sent" (StopTask); a process killed by
// SIGKILL exits 128+9.
const StopTimeoutExitCode = 137

// CannotPullReason is the stoppedReason of a task whose image could not be
// pulled (stopped task error codes: "CannotPullContainerError").
func CannotPullReason(detail string) string {
	if strings.HasPrefix(detail, "CannotPullContainerError") {
		return detail
	}
	return "CannotPullContainerError: " + detail
}

// MissingLogGroupReason is the stoppedReason of a task whose awslogs log
// group does not exist (stopped task error codes:
// "ResourceInitializationError: failed to validate logger args").
func MissingLogGroupReason(group string) string {
	return "ResourceInitializationError: failed to validate logger args: create stream has been retried 1 times: failed to create Cloudwatch log stream: ResourceNotFoundException: The specified log group does not exist. : exit status 1 (log group " + group + ")"
}

// AwslogsStream is the log stream of a container's output under the
// awslogs driver: "prefix-name/container-name/ecs-task-id" (Developer
// Guide, "Using the awslogs log driver", awslogs-stream-prefix; without a
// prefix on Fargate the driver refuses to start — the option is required).
func AwslogsStream(prefix, container, taskID string) string {
	return prefix + "/" + container + "/" + taskID
}
