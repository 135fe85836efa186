// Package signal is the one vocabulary of a cell's health: each signal a
// wave gate checks is defined here once — its name in waves.yaml, the
// CloudWatch alarm the cell template creates for it, the ALB metrics it is
// computed from, and how a threshold compares. The cell template builds its
// alarms from these definitions and the gate evaluator reads the same
// metrics, so an alarm and the gate can never disagree about what "healthy"
// means.
//
// The package imports nothing heavy (no Pulumi, no AWS SDK) so the fleet
// loader, the cell template, the gate, the CloudWatch reader and the
// simulator can all share it.
package signal

import (
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/internal/awsname"
)

// Name is a signal's name as written under promote_if in waves.yaml.
type Name string

const (
	// ErrorRate5xx is the share of requests answered with a 5xx, in percent:
	// 100 × (target 5xx + load balancer 5xx) / requests.
	ErrorRate5xx Name = "error_rate_5xx"
	// P99LatencyMs is the 99th percentile of the targets' response time.
	P99LatencyMs Name = "p99_latency_ms"
	// UnhealthyTasks is the largest number of tasks failing the target
	// group's health check at any minute.
	UnhealthyTasks Name = "unhealthy_tasks"
	// HealthyTasks is the smallest number of tasks passing the health check
	// at any minute: a cell whose tasks all vanished has no unhealthy task
	// either, so this is what catches it.
	HealthyTasks Name = "healthy_tasks"
)

// Namespace is where the Application Load Balancer publishes its metrics.
const Namespace = "AWS/ApplicationELB"

// Dimensions says which of the cell's load-balancer identifiers a metric is
// published under.
type Dimensions int

const (
	// ByLoadBalancer: {LoadBalancer: <alb arn suffix>}.
	ByLoadBalancer Dimensions = iota
	// ByTargetGroup: {TargetGroup: <tg arn suffix>, LoadBalancer: <alb arn suffix>}.
	ByTargetGroup
	// ByDistribution: {DistributionId: <CloudFront distribution id>,
	// Region: Global} (the edge signals, edge.go).
	ByDistribution
)

// Metric is one CloudWatch metric a signal is computed from.
type Metric struct {
	// ID names the metric in a GetMetricData query and in the alarms'
	// metric math ("requests").
	ID string
	// Name is the CloudWatch metric name ("RequestCount").
	Name string
	// Namespace is the CloudWatch namespace; "" is the ALB's (Namespace).
	Namespace string
	// Stat is the CloudWatch statistic: "Sum", "Minimum", "Maximum" or an
	// extended statistic such as "p99".
	Stat       string
	Dimensions Dimensions
	// ZeroWhenAbsent says that no datapoint means zero. ALB counters are
	// published only when they are non-zero (a minute without 5xx has no
	// HTTPCode_Target_5XX_Count datapoint); a health count or a latency
	// without a datapoint is unreadable instead.
	ZeroWhenAbsent bool
}

// The ALB metrics the signals read. Reporting criteria and statistics:
// https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html
var (
	Target5xx       = Metric{ID: "target5xx", Name: "HTTPCode_Target_5XX_Count", Stat: "Sum", Dimensions: ByLoadBalancer, ZeroWhenAbsent: true}
	LoadBalancer5xx = Metric{ID: "elb5xx", Name: "HTTPCode_ELB_5XX_Count", Stat: "Sum", Dimensions: ByLoadBalancer, ZeroWhenAbsent: true}
	Requests        = Metric{ID: "requests", Name: "RequestCount", Stat: "Sum", Dimensions: ByLoadBalancer, ZeroWhenAbsent: true}
	ResponseTime    = Metric{ID: "p99", Name: "TargetResponseTime", Stat: "p99", Dimensions: ByLoadBalancer}
	HealthyHosts    = Metric{ID: "healthy", Name: "HealthyHostCount", Stat: "Minimum", Dimensions: ByTargetGroup}
	UnhealthyHosts  = Metric{ID: "unhealthy", Name: "UnHealthyHostCount", Stat: "Maximum", Dimensions: ByTargetGroup}
)

// Unit is what a threshold and a reading of a signal are measured in.
type Unit string

const (
	Percent      Unit = "%"
	Milliseconds Unit = "ms"
	Tasks        Unit = "tasks"
)

// Bound says which side of the threshold is healthy.
type Bound int

const (
	// Upper: the reading must stay below the threshold (errors, latency).
	Upper Bound = iota
	// Lower: the reading must stay above it (healthy tasks).
	Lower
)

// Signal is the definition of one health signal.
type Signal struct {
	Name Name
	Unit Unit
	// Bound says which comparisons make sense: "<"/"<=" for Upper, ">"/">=" for Lower.
	Bound Bound
	// Metrics are the CloudWatch metrics the reading is computed from.
	Metrics []Metric
	// AlarmKey is the signal's key in the cell stack's alarmNames output;
	// "" when the template creates no alarm for it.
	AlarmKey string
	// AlarmSuffix completes the alarm name cellctl-<fleet prefix>-<cell>-<suffix>. It is
	// also the gate's name in the older waves.yaml list form (gates: [5xx-rate]).
	AlarmSuffix string
	// AlarmExpression is the metric math the alarm evaluates, over the
	// Metrics' IDs, for signals computed from more than one metric.
	AlarmExpression string
	// Legacy is the name in waves.yaml's older `gates:` list that selects
	// this signal.
	Legacy string
	// Default is the threshold when neither waves.yaml nor the cell's
	// alarm keys say otherwise.
	Default Threshold
	// Min and Max bound a threshold's value (in Unit).
	Min, Max float64
	// Describe says in words what a threshold looks like, for errors.
	Describe string
}

// All is every signal, in the order they are reported.
var All = []Signal{
	{
		Name: ErrorRate5xx, Unit: Percent, Bound: Upper,
		Metrics:         []Metric{Target5xx, LoadBalancer5xx, Requests},
		AlarmKey:        "5xx",
		AlarmSuffix:     "5xx-rate",
		AlarmExpression: "100 * (FILL(target5xx, 0) + FILL(elb5xx, 0)) / requests",
		Legacy:          "5xx-rate",
		Default:         Threshold{Op: AtMost, Value: 1},
		Min:             0, Max: 100,
		Describe: `a percentage such as "< 0.5%" or "<= 1%" (0–100%)`,
	},
	{
		Name: P99LatencyMs, Unit: Milliseconds, Bound: Upper,
		Metrics:     []Metric{ResponseTime},
		AlarmKey:    "p99",
		AlarmSuffix: "p99-latency",
		Legacy:      "p99-latency",
		Default:     Threshold{Op: AtMost, Value: 1000},
		Min:         1, Max: 60000,
		Describe: `a latency such as "< 400", "< 400ms" or "<= 1.5s" (1ms–60s)`,
	},
	{
		Name: UnhealthyTasks, Unit: Tasks, Bound: Upper,
		Metrics:     []Metric{UnhealthyHosts},
		AlarmKey:    "unhealthy",
		AlarmSuffix: "unhealthy-tasks",
		Legacy:      "unhealthy-tasks",
		Default:     Threshold{Op: AtMost, Value: 0},
		Min:         0, Max: 1000,
		Describe: `a task count such as "< 1" or "<= 0" (a whole number 0–1000)`,
	},
	{
		Name: HealthyTasks, Unit: Tasks, Bound: Lower,
		Metrics: []Metric{HealthyHosts},
		// No alarm of its own: the unhealthy-tasks alarm covers failing
		// health checks; this catches a service with no tasks at all.
		Legacy:  "unhealthy-tasks",
		Default: Threshold{Op: AtLeast, Value: 1},
		Min:     0, Max: 1000,
		Describe: `a task count such as ">= 2" or "> 0" (a whole number 0–1000)`,
	},
}

// Lookup finds a signal by its waves.yaml name.
func Lookup(name Name) (Signal, bool) {
	for _, s := range All {
		if s.Name == name {
			return s, true
		}
	}
	return Signal{}, false
}

// MustLookup is Lookup for the package's own constants.
func MustLookup(name Name) Signal {
	s, ok := Lookup(name)
	if !ok {
		panic(fmt.Sprintf("signal: unknown signal %q", name))
	}
	return s
}

// Names lists every signal name, for "allowed:" messages.
func Names() []string {
	out := make([]string, len(All))
	for i, s := range All {
		out[i] = string(s.Name)
	}
	return out
}

// ByLegacy returns the signals an older `gates:` entry selects.
func ByLegacy(gate string) []Name {
	var out []Name
	for _, s := range All {
		if s.Legacy == gate {
			out = append(out, s.Name)
		}
	}
	return out
}

// LegacyNames lists the accepted `gates:` entries.
func LegacyNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range All {
		if s.Legacy != "" && !seen[s.Legacy] {
			seen[s.Legacy] = true
			out = append(out, s.Legacy)
		}
	}
	return out
}

// AlarmName is the CloudWatch alarm name of a signal in a cell
// (internal/awsname: cellctl-<fleet prefix>-<cell>-<suffix>); "" when the
// signal has no alarm.
func (s Signal) AlarmName(cell awsname.Cell) string {
	if s.AlarmSuffix == "" || s.AlarmKey == "" {
		return ""
	}
	return cell.Alarm(s.AlarmSuffix)
}

// AlarmNames is the cell stack's alarmNames output: alarm key → alarm name.
func AlarmNames(cell awsname.Cell) map[string]string {
	out := map[string]string{}
	for _, s := range All {
		if n := s.AlarmName(cell); n != "" {
			out[s.AlarmKey] = n
		}
	}
	return out
}

// AlarmSignals lists the signals that have an alarm, in order.
func AlarmSignals() []Signal {
	var out []Signal
	for _, s := range All {
		if s.AlarmKey != "" {
			out = append(out, s)
		}
	}
	return out
}

// Metrics lists every metric the given signals read, each once, in a stable
// order (the signals' order, then their metrics' order).
func Metrics(names []Name) []Metric {
	seen := map[string]bool{}
	var out []Metric
	for _, n := range names {
		s, ok := Lookup(n)
		if !ok {
			continue
		}
		for _, m := range s.Metrics {
			if !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// SortNames orders signal names as All does.
func SortNames(names []Name) {
	pos := map[Name]int{}
	for i, s := range All {
		pos[s.Name] = i
	}
	sort.SliceStable(names, func(i, j int) bool { return pos[names[i]] < pos[names[j]] })
}
