package cellmodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ecs"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/lb"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// roles creates the task execution role (what ECS itself needs to start the
// task: pull the image, write logs, inject the DB secret) and the task role
// (what the app may do: its prefix, its queue, its cache).
func (b *builder) roles() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	execTrust, err := assumeRolePolicy("").JSON()
	if err != nil {
		return err
	}
	name := b.name("execution-role")
	c.ExecutionRole, err = iam.NewRole(ctx, name, &iam.RoleArgs{
		Description:      pulumi.String("cellctl " + s.ID + ": ECS task execution"),
		AssumeRolePolicy: pulumi.String(execTrust),
		Tags:             b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	// Not the AWS managed AmazonECSTaskExecutionRolePolicy: it allows
	// logs:PutLogEvents on every log group of the account, so one cell's
	// execution role could write another cell's logs (the isolation
	// paths, internal/access, find it). The same actions, logs scoped to
	// this cell's own group.
	execDoc, err := executionRolePolicy(b.partition, s.Region, b.account, s.Names().LogGroup()).JSON()
	if err != nil {
		return err
	}
	managed, err := iam.NewRolePolicy(ctx, b.name("execution-policy"), &iam.RolePolicyArgs{
		Role:   c.ExecutionRole.Name,
		Policy: pulumi.String(execDoc),
	}, b.opts()...)
	if err != nil {
		return err
	}
	b.execPolicies = []pulumi.Resource{managed}

	taskTrust, err := assumeRolePolicy(b.account).JSON()
	if err != nil {
		return err
	}
	name = b.name("task-role")
	c.TaskRole, err = iam.NewRole(ctx, name, &iam.RoleArgs{
		Description:      pulumi.String("cellctl " + s.ID + ": the app; only this cell's prefix, queue and cache"),
		AssumeRolePolicy: pulumi.String(taskTrust),
		Tags:             b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	taskDoc := pulumi.All(c.Queue.Arn, c.Cache.Arn, c.CacheUser.Arn, c.Database.ClusterResourceId).ApplyT(func(v []any) (string, error) {
		return taskRolePolicy(taskRolePolicyInput{
			BucketArn:     b.bucketArn,
			Prefix:        StoragePrefix(s.ID),
			QueueArn:      v[0].(string),
			CacheGroupArn: v[1].(string),
			CacheUserArn:  v[2].(string),
			DBUserArn:     DBUserARN(b.partition, s.Region, b.account, v[3].(string), DatabaseAppUser),
			FleetKey:      b.fleetKey,
			Account:       b.account,
			AccessPoint:   b.accessPointARN(),
		}).JSON()
	}).(pulumi.StringOutput)
	c.TaskRolePolicy, err = iam.NewRolePolicy(ctx, b.name("task-policy"), &iam.RolePolicyArgs{
		Role:   c.TaskRole.Name,
		Policy: taskDoc,
	}, b.opts()...)
	return err
}

// Container definition JSON, as ECS documents it.
type (
	containerDefinition struct {
		Name                   string           `json:"name"`
		Image                  string           `json:"image"`
		Essential              bool             `json:"essential"`
		Command                []string         `json:"command,omitempty"`
		PortMappings           []portMapping    `json:"portMappings"`
		Environment            []keyValue       `json:"environment"`
		Secrets                []secretRef      `json:"secrets"`
		LogConfiguration       logConfiguration `json:"logConfiguration"`
		ReadonlyRootFilesystem bool             `json:"readonlyRootFilesystem"`
		MountPoints            []mountPoint     `json:"mountPoints"`
	}
	portMapping struct {
		Name          string `json:"name"`
		ContainerPort int    `json:"containerPort"`
		HostPort      int    `json:"hostPort"`
		Protocol      string `json:"protocol"`
	}
	keyValue struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	secretRef struct {
		Name      string `json:"name"`
		ValueFrom string `json:"valueFrom"`
	}
	logConfiguration struct {
		LogDriver string            `json:"logDriver"`
		Options   map[string]string `json:"options"`
	}
	mountPoint struct {
		SourceVolume  string `json:"sourceVolume"`
		ContainerPath string `json:"containerPath"`
		ReadOnly      bool   `json:"readOnly"`
	}
)

// scratchVolume is the task-local volume mounted at /tmp, so the root file
// system can stay read-only.
const scratchVolume = "tmp"

// checkOriginSecret refuses values the ALB would misread: header condition
// values are at most 128 characters and treat * and ? as wildcards, which
// would turn the secret into a pattern. The value itself is never printed.
func checkOriginSecret(v string) error {
	if len(v) == 0 || len(v) > 128 {
		return fmt.Errorf("cells:originVerifySecret must be 1 to 128 characters (it has %d)", len(v))
	}
	for _, r := range v {
		if r < 0x21 || r > 0x7e || r == '*' || r == '?' {
			return errors.New("cells:originVerifySecret may contain printable ASCII except spaces, '*' and '?' (the ALB reads those as wildcards)")
		}
	}
	return nil
}

// service creates the ALB and the ECS service behind it.
func (b *builder) service() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	net := &c.Network
	var err error

	name := b.name("logs")
	c.LogGroup, err = cloudwatch.NewLogGroup(ctx, name, &cloudwatch.LogGroupArgs{
		Name:            pulumi.String(s.Names().LogGroup()),
		RetentionInDays: pulumi.Int(s.LogRetentionDays),
		Tags:            b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	name = b.name("ecs")
	c.EcsCluster, err = ecs.NewCluster(ctx, name, &ecs.ClusterArgs{
		Settings: ecs.ClusterSettingArray{ecs.ClusterSettingArgs{
			Name: pulumi.String("containerInsights"), Value: pulumi.String("enabled"),
		}},
		Tags: b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}

	// Load balancer: reachable only from CloudFront (security group), and
	// serving only requests routed to this cell (listener rule).
	name = b.name("tg")
	c.TargetGroup, err = lb.NewTargetGroup(ctx, name, &lb.TargetGroupArgs{
		VpcId:               net.VPC.ID(),
		TargetType:          pulumi.String("ip"),
		Protocol:            pulumi.String("HTTP"),
		Port:                pulumi.Int(s.ContainerPort),
		DeregistrationDelay: pulumi.Int(30),
		HealthCheck: lb.TargetGroupHealthCheckArgs{
			Enabled:            pulumi.Bool(true),
			Protocol:           pulumi.String("HTTP"),
			Port:               pulumi.String("traffic-port"),
			Path:               pulumi.String(s.HealthCheckPath),
			Matcher:            pulumi.String("200-399"),
			Interval:           pulumi.Int(15),
			Timeout:            pulumi.Int(5),
			HealthyThreshold:   pulumi.Int(3),
			UnhealthyThreshold: pulumi.Int(3),
		},
		Tags: b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	publicIDs := pulumi.StringArray{}
	for _, sn := range net.PublicSubnets {
		publicIDs = append(publicIDs, sn.ID())
	}
	name = b.name("alb")
	c.LoadBalancer, err = lb.NewLoadBalancer(ctx, name, &lb.LoadBalancerArgs{
		LoadBalancerType:        pulumi.String("application"),
		Internal:                pulumi.Bool(false),
		Subnets:                 publicIDs,
		SecurityGroups:          pulumi.StringArray{c.SG.ALB.ID()},
		DropInvalidHeaderFields: pulumi.Bool(true),
		Tags:                    b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	name = b.name("https")
	c.Listener, err = lb.NewListener(ctx, name, &lb.ListenerArgs{
		LoadBalancerArn: c.LoadBalancer.Arn,
		Port:            pulumi.Int(httpsPort),
		Protocol:        pulumi.String("HTTPS"),
		SslPolicy:       pulumi.String(TLSPolicy),
		CertificateArn:  c.CertificateArn,
		DefaultActions: lb.ListenerDefaultActionArray{lb.ListenerDefaultActionArgs{
			Type: pulumi.String("fixed-response"),
			FixedResponse: lb.ListenerDefaultActionFixedResponseArgs{
				ContentType: pulumi.String("text/plain"),
				MessageBody: pulumi.String("misdirected request"),
				StatusCode:  pulumi.String(MisdirectedStatus),
			},
		}},
		Tags: b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	// The secret stays a Pulumi secret end to end: the check runs inside an
	// apply (whose result inherits the secret flag) and the result is marked
	// secret again in case the caller passed a plain value.
	checked := func(in pulumi.StringInput) pulumi.StringOutput {
		return pulumi.ToSecret(in.ToStringOutput().ApplyT(func(v string) (string, error) {
			return v, checkOriginSecret(v)
		})).(pulumi.StringOutput)
	}
	// During a rotation the rule accepts the current and the next value
	// (an http-header condition matches any of its values), so CloudFront
	// may switch from one to the other without a refused request.
	accepted := pulumi.StringArray{checked(b.originSecret)}
	if b.originNext != nil {
		accepted = append(accepted, checked(b.originNext))
	}
	name = b.name("forward-own-cell")
	c.ListenerRule, err = lb.NewListenerRule(ctx, name, &lb.ListenerRuleArgs{
		ListenerArn: c.Listener.Arn,
		Priority:    pulumi.Int(100),
		Actions: lb.ListenerRuleActionArray{lb.ListenerRuleActionArgs{
			Type:           pulumi.String("forward"),
			TargetGroupArn: c.TargetGroup.Arn,
		}},
		Conditions: lb.ListenerRuleConditionArray{
			lb.ListenerRuleConditionArgs{HttpHeader: lb.ListenerRuleConditionHttpHeaderArgs{
				HttpHeaderName: pulumi.String(CellIDHeader),
				Values:         pulumi.StringArray{pulumi.String(s.ID)},
			}},
			lb.ListenerRuleConditionArgs{HttpHeader: lb.ListenerRuleConditionHttpHeaderArgs{
				HttpHeaderName: pulumi.String(OriginVerifyHeader),
				Values:         accepted,
			}},
		},
		Tags: b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}

	// Task definition. Endpoints and the DB secret ARN are outputs, so the
	// container definitions are encoded inside an apply.
	containers := b.containerJSON(func(env map[string]string, logGroup string) containerDefinition {
		def := b.appContainer(ContainerName, ContainerName, logGroup, env)
		def.PortMappings = []portMapping{{
			Name: "http", ContainerPort: s.ContainerPort, HostPort: s.ContainerPort, Protocol: "tcp",
		}}
		return def
	})
	name = b.name("task")
	c.TaskDefinition, err = ecs.NewTaskDefinition(ctx, name, b.taskDefinitionArgs(name, s.Names().TaskFamily(), c.TaskRole.Arn, containers), b.opts()...)
	if err != nil {
		return err
	}

	privateIDs := pulumi.StringArray{}
	for _, sn := range net.PrivateSubnets {
		privateIDs = append(privateIDs, sn.ID())
	}
	// The target group must be attached to the ALB (through the rule) before
	// ECS accepts it, and tasks need their roles' policies in place before the
	// first one starts, or the circuit breaker trips on a brand-new cell.
	deps := append([]pulumi.Resource{c.ListenerRule, c.TaskRolePolicy}, b.execPolicies...)
	for _, p := range c.LaneQueuePolicies {
		deps = append(deps, p) // the task role's only grant on its lanes
	}
	name = b.name("service")
	c.Service, err = ecs.NewService(ctx, name, &ecs.ServiceArgs{
		Cluster:        c.EcsCluster.Arn,
		TaskDefinition: c.TaskDefinition.Arn,
		LaunchType:     pulumi.String("FARGATE"),
		// desiredCount is owned by config, not ignored: the template declares
		// no autoscaling, so any other value is drift worth reporting.
		DesiredCount: pulumi.Int(s.DesiredCount),
		NetworkConfiguration: ecs.ServiceNetworkConfigurationArgs{
			Subnets:        privateIDs,
			SecurityGroups: pulumi.StringArray{c.SG.Service.ID()},
			AssignPublicIp: pulumi.Bool(false),
		},
		LoadBalancers: ecs.ServiceLoadBalancerArray{ecs.ServiceLoadBalancerArgs{
			TargetGroupArn: c.TargetGroup.Arn,
			ContainerName:  pulumi.String(ContainerName),
			ContainerPort:  pulumi.Int(s.ContainerPort),
		}},
		DeploymentCircuitBreaker: ecs.ServiceDeploymentCircuitBreakerArgs{
			Enable:   pulumi.Bool(true),
			Rollback: pulumi.Bool(true),
		},
		DeploymentMinimumHealthyPercent: pulumi.Int(100),
		DeploymentMaximumPercent:        pulumi.Int(200),
		HealthCheckGracePeriodSeconds:   pulumi.Int(60),
		PropagateTags:                   pulumi.String("SERVICE"),
		EnableEcsManagedTags:            pulumi.Bool(true),
		// `up` returns only when the deployment settled, so a rollout wave
		// sees a circuit-breaker rollback as a failed update.
		WaitForSteadyState: pulumi.Bool(true),
		Tags:               b.tags(name),
	}, b.opts(pulumi.DependsOn(deps))...)
	return err
}

// containerEnv is the environment of the service's container (and, with
// its own user, of the migration task's): the cell's endpoints and names,
// nothing secret.
func (b *builder) containerEnv(dbEndpoint, dbReaderEndpoint, cacheEndpoint, queueURL, laneURLs string) map[string]string {
	s := b.spec
	env := map[string]string{
		// The cell label of the application's own telemetry: CELL_ID
		// for its logs and metrics, and the OpenTelemetry resource
		// attribute every OTel SDK reads, so its traces and metrics
		// carry cell.id without code (docs/OBSERVABILITY.md).
		"CELL_ID":                  s.ID,
		"OTEL_RESOURCE_ATTRIBUTES": "cell.id=" + s.ID,
		"AWS_REGION":               s.Region,
		"PORT":                     strconv.Itoa(s.ContainerPort),
		"DB_ENDPOINT":              dbEndpoint,
		"DB_READER_ENDPOINT":       dbReaderEndpoint,
		"DB_PORT":                  strconv.Itoa(postgresPort),
		"DB_NAME":                  DatabaseName,
		"DB_USER":                  DatabaseAppUser,
		"DB_AUTH":                  "iam",
		"CACHE_ENDPOINT":           cacheEndpoint,
		"CACHE_PORT":               strconv.Itoa(cachePort),
		"CACHE_USER":               s.Names().CacheAppUser(),
		"QUEUE_URL":                queueURL,
		"BUCKET":                   s.FleetBucket,
		"BUCKET_PREFIX":            StoragePrefix(s.ID),
	}
	// A cell in another account than the bucket's reaches its prefix
	// only through its access point: the SDKs take the access point's ARN
	// where they take a bucket name (Amazon S3 User Guide, "Using access
	// points"). Known when the fleet names the bucket's account.
	if ap := b.accessPointARN(); ap != "" && !strings.Contains(ap, ":*:") {
		env[BucketAccessPointEnv] = ap
	}
	if laneURLs != "" {
		env[LaneEnv] = laneURLs
	}
	return env
}

// BucketAccessPointEnv is the task's variable holding the fleet bucket's
// access point for a cell in another account than the bucket's.
const BucketAccessPointEnv = "BUCKET_ACCESS_POINT"

// accessPointARN is the cell's access point of the fleet bucket, "" when
// the bucket shares the cell's account (FleetKey.AccessPointARN).
func (b *builder) accessPointARN() string {
	if b.fleetKey == nil {
		return ""
	}
	return b.fleetKey.AccessPointARN(b.partition, b.spec.FleetBucket, b.spec.ID)
}

// containerJSON is a task definition's containerDefinitions: the one
// container build makes from the cell's environment and log group name,
// encoded inside an apply (the endpoints are outputs).
func (b *builder) containerJSON(build func(env map[string]string, logGroup string) containerDefinition) pulumi.StringOutput {
	c := b.cell
	return pulumi.All(
		c.Database.Endpoint, c.Database.ReaderEndpoint, c.Cache.PrimaryEndpointAddress,
		c.Queue.Url, c.LogGroup.Name, b.laneQueueURLs(),
	).ApplyT(func(v []any) (string, error) {
		env := b.containerEnv(v[0].(string), v[1].(string), v[2].(string), v[3].(string), v[5].(string))
		j, err := json.Marshal([]containerDefinition{build(env, v[4].(string))})
		return string(j), err
	}).(pulumi.StringOutput)
}

// appContainer is the one container of the cell's task definitions (the
// service's and the migration task's): the cell's image and environment,
// awslogs into the cell's log group under streamPrefix, and — the same
// for both — no secrets (the database takes IAM tokens, DB_AUTH=iam, the
// cache IAM auth; the master secret stays with the operators) and a
// read-only root file system with a scratch /tmp. Ports and a command
// are the caller's.
func (b *builder) appContainer(name, streamPrefix, logGroup string, env map[string]string) containerDefinition {
	return containerDefinition{
		Name:         name,
		Image:        b.spec.Image,
		Essential:    true,
		PortMappings: []portMapping{},
		Environment:  sortedEnv(env),
		Secrets:      []secretRef{},
		LogConfiguration: logConfiguration{LogDriver: "awslogs", Options: map[string]string{
			"awslogs-group":         logGroup,
			"awslogs-region":        b.spec.Region,
			"awslogs-stream-prefix": streamPrefix,
		}},
		ReadonlyRootFilesystem: true,
		MountPoints:            []mountPoint{{SourceVolume: scratchVolume, ContainerPath: "/tmp"}},
	}
}

// taskDefinitionArgs are a Fargate task definition of the cell's size,
// run by its execution role as taskRole.
func (b *builder) taskDefinitionArgs(name, family string, taskRole pulumi.StringInput, containers pulumi.StringOutput) *ecs.TaskDefinitionArgs {
	return &ecs.TaskDefinitionArgs{
		Family:                  pulumi.String(family),
		NetworkMode:             pulumi.String("awsvpc"),
		RequiresCompatibilities: pulumi.StringArray{pulumi.String("FARGATE")},
		Cpu:                     pulumi.String(strconv.Itoa(b.spec.TaskCPU)),
		Memory:                  pulumi.String(strconv.Itoa(b.spec.TaskMemory)),
		ExecutionRoleArn:        b.cell.ExecutionRole.Arn,
		TaskRoleArn:             taskRole,
		ContainerDefinitions:    containers,
		Volumes:                 ecs.TaskDefinitionVolumeArray{ecs.TaskDefinitionVolumeArgs{Name: pulumi.String(scratchVolume)}},
		Tags:                    b.tags(name),
	}
}

func sortedEnv(env map[string]string) []keyValue {
	out := make([]keyValue, 0, len(env))
	for k, v := range env {
		out = append(out, keyValue{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
