package cellmodule

import (
	"fmt"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/waves/signal"
)

const alarmPeriod = 60

// alarms creates the alarms the wave gates read, one per signal that has
// one (waves/signal). Their metrics, comparison and threshold come from the
// signal definitions and the cell's thresholds — the same ones the gate
// evaluator compares readings with — so an alarm fires exactly when the gate
// would fail. None has actions: the gates poll their state.
func (b *builder) alarms() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	b.alarmNamesMap = AlarmNames(s.Names())
	thresholds := s.Thresholds()
	dims := func(d signal.Dimensions) pulumi.StringMap {
		if d == signal.ByTargetGroup {
			return pulumi.StringMap{"TargetGroup": c.TargetGroup.ArnSuffix, "LoadBalancer": c.LoadBalancer.ArnSuffix}
		}
		return pulumi.StringMap{"LoadBalancer": c.LoadBalancer.ArnSuffix}
	}
	for _, sig := range signal.AlarmSignals() {
		th := thresholds.Get(sig.Name)
		name := b.name(sig.AlarmSuffix)
		args := &cloudwatch.MetricAlarmArgs{
			Name:               pulumi.String(sig.AlarmName(s.Names())),
			AlarmDescription:   pulumi.String(fmt.Sprintf("cell %s: fires when %s %s fails (the wave gate's promote_if)", s.ID, sig.Name, sig.Format(th))),
			ComparisonOperator: pulumi.String(th.AlarmComparison()),
			Threshold:          pulumi.Float64(sig.AlarmThreshold(th)),
			EvaluationPeriods:  pulumi.Int(s.AlarmEvalPeriods),
			DatapointsToAlarm:  pulumi.Int(s.AlarmEvalPeriods),
			TreatMissingData:   pulumi.String("notBreaching"),
			Tags:               b.tags(name),
		}
		if sig.AlarmExpression != "" {
			// A ratio of several metrics: metric math over their ids.
			queries := cloudwatch.MetricAlarmMetricQueryArray{}
			for _, m := range sig.Metrics {
				queries = append(queries, cloudwatch.MetricAlarmMetricQueryArgs{
					Id: pulumi.String(m.ID),
					Metric: cloudwatch.MetricAlarmMetricQueryMetricArgs{
						Namespace:  pulumi.String(signal.Namespace),
						MetricName: pulumi.String(m.Name),
						Dimensions: dims(m.Dimensions),
						Period:     pulumi.Int(alarmPeriod),
						Stat:       pulumi.String(m.Stat),
					},
					ReturnData: pulumi.Bool(false),
				})
			}
			queries = append(queries, cloudwatch.MetricAlarmMetricQueryArgs{
				Id:         pulumi.String("value"),
				Expression: pulumi.String(sig.AlarmExpression),
				Label:      pulumi.String(string(sig.Name)),
				ReturnData: pulumi.Bool(true),
			})
			args.MetricQueries = queries
		} else {
			m := sig.Metrics[0]
			args.Namespace = pulumi.String(signal.Namespace)
			args.MetricName = pulumi.String(m.Name)
			args.Dimensions = dims(m.Dimensions)
			args.Period = pulumi.Int(alarmPeriod)
			if strings.HasPrefix(m.Stat, "p") {
				args.ExtendedStatistic = pulumi.String(m.Stat)
			} else {
				args.Statistic = pulumi.String(m.Stat)
			}
		}
		alarm, err := cloudwatch.NewMetricAlarm(ctx, name, args, b.opts()...)
		if err != nil {
			return err
		}
		switch sig.Name {
		case signal.ErrorRate5xx:
			c.Alarms.FiveXXRate = alarm
		case signal.P99LatencyMs:
			c.Alarms.P99Latency = alarm
		case signal.UnhealthyTasks:
			c.Alarms.UnhealthyTasks = alarm
		}
	}
	return b.capacityAlarm()
}

// capacityAlarm creates CellCapacityWarning: the cell's request rate above
// capacityWarningPercent of its published capacity for
// capacityWarningMinutes consecutive minutes. RequestCount's one-minute Sum
// against the same share of capacity × 60 says exactly that without metric
// math. It is not a gate signal (its key is not in waves/signal), so a
// busy cell never rolls back a good release; `cellctl health` shows it.
// A cell that publishes no capacity gets none.
func (b *builder) capacityAlarm() error {
	ctx, s, c := b.ctx, b.spec, b.cell
	if s.CapacityRPS <= 0 {
		return nil
	}
	name := b.name("capacity-warning")
	alarm, err := cloudwatch.NewMetricAlarm(ctx, name, &cloudwatch.MetricAlarmArgs{
		Name: pulumi.String(spec.CapacityAlarmName(s.Names())),
		AlarmDescription: pulumi.String(fmt.Sprintf("CellCapacityWarning: cell %s serves more than %d%% of its published capacity (%d requests/s) for %d minutes",
			s.ID, s.CapacityWarningPercent, s.CapacityRPS, s.CapacityWarningMinutes)),
		ComparisonOperator: pulumi.String("GreaterThanThreshold"),
		Threshold:          pulumi.Float64(s.CapacityWarningRequestsPerMinute()),
		EvaluationPeriods:  pulumi.Int(s.CapacityWarningMinutes),
		DatapointsToAlarm:  pulumi.Int(s.CapacityWarningMinutes),
		// ALB counters are published only when non-zero: no datapoint is
		// no traffic, which is under any capacity.
		TreatMissingData: pulumi.String("notBreaching"),
		Namespace:        pulumi.String(signal.Namespace),
		MetricName:       pulumi.String(signal.Requests.Name),
		Dimensions:       pulumi.StringMap{"LoadBalancer": c.LoadBalancer.ArnSuffix},
		Period:           pulumi.Int(alarmPeriod),
		Statistic:        pulumi.String(signal.Requests.Stat),
		Tags:             b.tags(name),
	}, b.opts()...)
	if err != nil {
		return err
	}
	c.Alarms.CapacityWarning = alarm
	b.alarmNamesMap[spec.CapacityAlarmKey] = spec.CapacityAlarmName(s.Names())
	return nil
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
		"dbClusterArn":         c.Database.Arn,
		"dbDataApi":            pulumi.Bool(dataAPI(s)),
		"cacheEndpoint":        c.Cache.PrimaryEndpointAddress,
		"cacheUser":            pulumi.String(s.Names().CacheAppUser()),
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
