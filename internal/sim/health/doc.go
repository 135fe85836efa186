// Package health is the simulated AWS's health model over the cloud in
// internal/sim/store: every cell stack with a load balancer serves
// traffic, minute by minute, from the profile of the image its ECS
// service runs and of the cell (health.go), and answers 5xx while its
// live policies deny a request its app serves with (access.go, decided by
// internal/access); its CloudWatch metrics are
// computed from that history and its metric alarms evaluated against
// their own thresholds, metric math included (metrics.go,
// metricmath.go); the router's distributions publish CloudFront metrics
// from the edge function build they run (edge.go); Fargate usage is
// published as AWS/Usage (usage.go). The AWS API (internal/sim/awsapi)
// answers GetMetricData and DescribeAlarms from it.
package health
