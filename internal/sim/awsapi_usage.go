package sim

import (
	"strconv"
	"time"
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
func usagePoints(v *view, q gmdQuery, region string, start, end, now time.Time) []metricPoint {
	if q.metric != "ResourceCount" || q.dims["Service"] != "Fargate" || q.dims["Type"] != "Resource" ||
		q.dims["Resource"] != "vCPU" || q.dims["Class"] != "Standard/OnDemand" || len(q.dims) != 4 {
		return nil
	}
	vcpu, since := 0.0, time.Time{}
	for _, r := range v.st.Resources {
		if r.Type != "aws:ecs/service:Service" || r.Region != region {
			continue
		}
		outs := v.outputs(r)
		if lt := sval(plain(outs["launchType"])); lt != "" && lt != "FARGATE" {
			continue
		}
		tasks := num(plain(outs["desiredCount"]))
		_, td, ok := v.Lookup(sval(plain(outs["taskDefinition"])))
		if !ok || tasks <= 0 {
			continue
		}
		cpu, err := strconv.ParseFloat(sval(plain(td["cpu"])), 64)
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
	var out []metricPoint
	for t := start.Truncate(q.period); t.Before(end); t = t.Add(q.period) {
		if !t.Before(start.Truncate(q.period)) {
			out = append(out, metricPoint{t: t, v: vcpu})
		}
	}
	return out
}
