package cellmodule

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

const (
	albNamespace = "AWS/ApplicationELB"
	alarmPeriod  = 60
)

// alarms creates the three alarms the wave gates read. None has actions:
// the gates poll their state.
func (b *builder) alarms() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	names := AlarmNames(s.ID)
	b.alarmNamesMap = names
	lbDims := pulumi.StringMap{"LoadBalancer": c.LoadBalancer.ArnSuffix}
	metric := func(id, metricName string) cloudwatch.MetricAlarmMetricQueryArgs {
		return cloudwatch.MetricAlarmMetricQueryArgs{
			Id: pulumi.String(id),
			Metric: cloudwatch.MetricAlarmMetricQueryMetricArgs{
				Namespace:  pulumi.String(albNamespace),
				MetricName: pulumi.String(metricName),
				Dimensions: lbDims,
				Period:     pulumi.Int(alarmPeriod),
				Stat:       pulumi.String("Sum"),
			},
			ReturnData: pulumi.Bool(false),
		}
	}
	var err error
	name := b.name("5xx-rate")
	c.Alarms.FiveXXRate, err = cloudwatch.NewMetricAlarm(ctx, name, &cloudwatch.MetricAlarmArgs{
		Name:             pulumi.String(names["5xx"]),
		AlarmDescription: pulumi.String(fmt.Sprintf("cell %s: 5xx responses above %g%% of requests", s.ID, s.Alarm5xxRatePercent)),
		MetricQueries: cloudwatch.MetricAlarmMetricQueryArray{
			metric("target5xx", "HTTPCode_Target_5XX_Count"),
			metric("elb5xx", "HTTPCode_ELB_5XX_Count"),
			metric("requests", "RequestCount"),
			cloudwatch.MetricAlarmMetricQueryArgs{
				Id:         pulumi.String("rate"),
				Expression: pulumi.String("100 * (FILL(target5xx, 0) + FILL(elb5xx, 0)) / requests"),
				Label:      pulumi.String("5xx rate (%)"),
				ReturnData: pulumi.Bool(true),
			},
		},
		ComparisonOperator: pulumi.String("GreaterThanThreshold"),
		Threshold:          pulumi.Float64(s.Alarm5xxRatePercent),
		EvaluationPeriods:  pulumi.Int(s.AlarmEvalPeriods),
		DatapointsToAlarm:  pulumi.Int(s.AlarmEvalPeriods),
		TreatMissingData:   pulumi.String("notBreaching"),
		Tags:               b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	name = b.name("p99-latency")
	c.Alarms.P99Latency, err = cloudwatch.NewMetricAlarm(ctx, name, &cloudwatch.MetricAlarmArgs{
		Name:               pulumi.String(names["p99"]),
		AlarmDescription:   pulumi.String(fmt.Sprintf("cell %s: p99 target response time above %d ms", s.ID, s.AlarmP99LatencyMs)),
		Namespace:          pulumi.String(albNamespace),
		MetricName:         pulumi.String("TargetResponseTime"),
		Dimensions:         lbDims,
		ExtendedStatistic:  pulumi.String("p99"),
		Period:             pulumi.Int(alarmPeriod),
		ComparisonOperator: pulumi.String("GreaterThanThreshold"),
		Threshold:          pulumi.Float64(float64(s.AlarmP99LatencyMs) / 1000),
		EvaluationPeriods:  pulumi.Int(s.AlarmEvalPeriods),
		DatapointsToAlarm:  pulumi.Int(s.AlarmEvalPeriods),
		TreatMissingData:   pulumi.String("notBreaching"),
		Tags:               b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	name = b.name("unhealthy-tasks")
	c.Alarms.UnhealthyTasks, err = cloudwatch.NewMetricAlarm(ctx, name, &cloudwatch.MetricAlarmArgs{
		Name:             pulumi.String(names["unhealthy"]),
		AlarmDescription: pulumi.String(fmt.Sprintf("cell %s: a task fails its ALB health check", s.ID)),
		Namespace:        pulumi.String(albNamespace),
		MetricName:       pulumi.String("UnHealthyHostCount"),
		Dimensions: pulumi.StringMap{
			"TargetGroup":  c.TargetGroup.ArnSuffix,
			"LoadBalancer": c.LoadBalancer.ArnSuffix,
		},
		Statistic:          pulumi.String("Maximum"),
		Period:             pulumi.Int(alarmPeriod),
		ComparisonOperator: pulumi.String("GreaterThanThreshold"),
		Threshold:          pulumi.Float64(0),
		EvaluationPeriods:  pulumi.Int(s.AlarmEvalPeriods),
		DatapointsToAlarm:  pulumi.Int(s.AlarmEvalPeriods),
		TreatMissingData:   pulumi.String("notBreaching"),
		Tags:               b.tags(name),
	}, b.opts()...)
	return err
}

// outputs assembles what the stack exports; NewCell registers it last.
func (b *builder) outputs() error {
	s, c := b.spec, b.cell
	alarmNames := pulumi.StringMap{}
	for k, v := range b.alarmNamesMap {
		alarmNames[k] = pulumi.String(v)
	}
	azs := pulumi.StringArray{}
	for _, az := range c.Network.AvailabilityZones {
		azs = append(azs, pulumi.String(az))
	}
	c.Outputs = pulumi.Map{
		"cellId":               pulumi.String(s.ID),
		"index":                pulumi.Int(s.Index),
		"cidr":                 pulumi.String(s.CIDR()),
		"region":               pulumi.String(s.Region),
		"availabilityZones":    azs,
		"natMode":              pulumi.String(s.NATMode),
		"image":                pulumi.String(s.Image),
		"vpcId":                c.Network.VPC.ID(),
		"albDnsName":           c.LoadBalancer.DnsName,
		"albArnSuffix":         c.LoadBalancer.ArnSuffix,
		"targetGroupArnSuffix": c.TargetGroup.ArnSuffix,
		"alarmNames":           alarmNames,
		"queueUrl":             c.Queue.Url,
		"queueArn":             c.Queue.Arn,
		"dlqUrl":               c.DeadLetterQueue.Url,
		"dlqArn":               c.DeadLetterQueue.Arn,
		"dbEndpoint":           c.Database.Endpoint,
		"dbReaderEndpoint":     c.Database.ReaderEndpoint,
		"dbSecretArn":          c.DatabaseSecretArn,
		"dbClusterId":          c.Database.ClusterIdentifier,
		"cacheEndpoint":        c.Cache.PrimaryEndpointAddress,
		"cacheUser":            pulumi.String(CacheUserName(s.ID)),
		"bucket":               pulumi.String(s.FleetBucket),
		"storagePrefix":        pulumi.String("s3://" + s.FleetBucket + "/" + StoragePrefix(s.ID)),
		"ecsCluster":           c.EcsCluster.Name,
		"ecsService":           c.Service.Name,
		"logGroup":             c.LogGroup.Name,
		"taskRoleArn":          c.TaskRole.Arn,
	}
	b.laneOutputs()
	return nil
}
