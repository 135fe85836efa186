package health

import (
	"strconv"
	"time"

	"github.com/cellctl/cellctl/internal/sim/store"
)

// The AWS/Usage metrics the simulator publishes, from its own resources,
// for the quotas AWS meters that way. AWS documents (Amazon ECS Developer
// Guide, "AWS Fargate usage metrics"): namespace AWS/Usage, metric
// ResourceCount, dimensions Service=Fargate, Type=Resource, Resource=vCPU,
// Class=Standard/OnDemand — the vCPUs of the running Fargate tasks. Like
// AWS, nothing is published while nothing runs.

const usageNamespace = "AWS/Usage"

// usagePoints answers one GetMetricData query in AWS/Usage: a datapoint
// per period, at the usage of now (the simulator keeps no usage history).
func usagePoints(v *store.View, q Query, region string, start, end, now time.Time) []Point {
	if q.Metric != "ResourceCount" || q.Dims["Service"] != "Fargate" || q.Dims["Type"] != "Resource" ||
		q.Dims["Resource"] != "vCPU" || q.Dims["Class"] != "Standard/OnDemand" || len(q.Dims) != 4 {
		return nil
	}
	vcpu, since := 0.0, time.Time{}
	for _, r := range v.State.Resources {
		if r.Type != "aws:ecs/service:Service" || r.Region != region {
			continue
		}
		outs := v.Outputs(r)
		if lt := store.Str(store.Plain(outs["launchType"])); lt != "" && lt != "FARGATE" {
			continue
		}
		tasks := store.Num(store.Plain(outs["desiredCount"]))
		_, td, ok := v.Lookup(store.Str(store.Plain(outs["taskDefinition"])))
		if !ok || tasks <= 0 {
			continue
		}
		cpu, err := strconv.ParseFloat(store.Str(store.Plain(td["cpu"])), 64)
		if err != nil {
			continue
		}
		vcpu += tasks * cpu / 1024
		if since.IsZero() || r.Created.Before(since) {
			since = r.Created
		}
	}
	if vcpu == 0 {
		return nil
	}
	if end.After(now) {
		end = now
	}
	if start.Before(since) {
		start = since
	}
	var out []Point
	for t := start.Truncate(q.Period); t.Before(end); t = t.Add(q.Period) {
		if !t.Before(start.Truncate(q.Period)) {
			out = append(out, Point{Time: t, Value: vcpu})
		}
	}
	return out
}
