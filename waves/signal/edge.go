package signal

// The edge signals: what a router canary judges on the CloudFront staging
// distribution while it runs a candidate edge function version. They are
// not cell signals (not in All, not accepted under a wave's promote_if);
// the gate evaluator judges them the same way, failing closed.
//
// Where AWS publishes them (Amazon CloudFront Developer Guide, "Types of
// metrics for CloudFront" and "CloudWatch metrics and CloudWatch Logs for
// Lambda functions"): namespace AWS/CloudFront, read through the
// CloudWatch API in us-east-1 only, dimensions DistributionId and
// Region=Global. The function's own errors are read per distribution
// (LambdaExecutionError, LambdaValidationError) rather than from
// AWS/Lambda: a replicated Lambda@Edge function publishes its AWS/Lambda
// metrics in every Region it ran in, under the name us-east-1.<function>,
// mixing the primary's and the staging distribution's invocations;
// the distribution's own counters isolate the candidate.

const (
	// EdgeErrorRate5xx is the staging distribution's share of viewer
	// requests answered with a 5xx, in percent (5xxErrorRate, Average).
	EdgeErrorRate5xx Name = "edge_error_rate_5xx"
	// EdgeFunctionErrors counts the edge function's failed executions and
	// invalid responses on the staging distribution.
	EdgeFunctionErrors Name = "edge_function_errors"
)

// CloudFrontNamespace is where CloudFront publishes distribution metrics.
const CloudFrontNamespace = "AWS/CloudFront"

// CloudFrontRegion is the Region dimension of every CloudFront metric, and
// MetricsRegion the CloudWatch Region they are read from.
const (
	CloudFrontRegion = "Global"
	MetricsRegion    = "us-east-1"
)

// The CloudFront metrics the edge signals read. EdgeRequests has the ID of
// the ALB's Requests so the gate's traffic rules (min_requests) apply to
// it unchanged. The Lambda error counters, like the ALB's, are published
// only when non-zero.
var (
	EdgeRequests         = Metric{ID: Requests.ID, Namespace: CloudFrontNamespace, Name: "Requests", Stat: "Sum", Dimensions: ByDistribution, ZeroWhenAbsent: true}
	Edge5xxRate          = Metric{ID: "edge5xxrate", Namespace: CloudFrontNamespace, Name: "5xxErrorRate", Stat: "Average", Dimensions: ByDistribution}
	EdgeExecutionErrors  = Metric{ID: "lambdaexec", Namespace: CloudFrontNamespace, Name: "LambdaExecutionError", Stat: "Sum", Dimensions: ByDistribution, ZeroWhenAbsent: true}
	EdgeValidationErrors = Metric{ID: "lambdavalid", Namespace: CloudFrontNamespace, Name: "LambdaValidationError", Stat: "Sum", Dimensions: ByDistribution, ZeroWhenAbsent: true}
)

// Edge is every edge signal, in the order they are reported.
var Edge = []Signal{
	{
		Name: EdgeErrorRate5xx, Unit: Percent, Bound: Upper,
		Metrics: []Metric{Edge5xxRate, EdgeRequests},
		Default: Threshold{Op: AtMost, Value: 1},
		Min:     0, Max: 100,
		Describe: `a percentage such as "< 0.5%" or "<= 1%" (0–100%)`,
	},
	{
		Name: EdgeFunctionErrors, Unit: Errors, Bound: Upper,
		// Requests too: zero errors over no traffic proves nothing.
		Metrics: []Metric{EdgeExecutionErrors, EdgeValidationErrors, EdgeRequests},
		Default: Threshold{Op: AtMost, Value: 0},
		Min:     0, Max: 1e9,
		Describe: `an error count such as "<= 0" or "< 5" (a whole number)`,
	},
}

// Errors is the unit of an error count.
const Errors Unit = "errors"

// EdgeDefaults are the built-in thresholds of the edge signals.
func EdgeDefaults() Thresholds {
	var t Thresholds
	for _, s := range Edge {
		t.Set(s.Name, s.Default)
	}
	return t
}
