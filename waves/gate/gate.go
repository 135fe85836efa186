// Package gate decides whether a baking wave may be promoted. Every poll it
// reads, for each cell of the wave, the cell's CloudWatch alarms, its ALB
// and target-group metrics over the bake so far, and the result of the
// cell's update, and compares them with the cell's thresholds (the same
// ones its alarms were built from, see waves/signal).
//
// The gate fails closed: a missing alarm, an unreadable metric or a read
// error is a breach, never a pass. Too little traffic is inconclusive.
// Every reading of every poll is returned as data so the rollout record can
// show afterwards why a wave was promoted or rolled back.
package gate

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/signal"
)

// Alarm states, as CloudWatch names them.
const (
	StateOK               = "OK"
	StateAlarm            = "ALARM"
	StateInsufficientData = "INSUFFICIENT_DATA"
)

// Reader is what the gate reads from the cloud: CloudWatch DescribeAlarms
// and GetMetricData, in plain types. The aws-sdk-go-v2 CloudWatch reader
// (the same client on AWS and on the simulator's endpoint) satisfies it
// through a small adapter.
type Reader interface {
	// AlarmStates returns the state of each named alarm that exists. A name
	// missing from the result is an alarm that does not exist.
	AlarmStates(ctx context.Context, names []string) (map[string]AlarmState, error)
	// MetricData returns one series per requested metric (matched by ID),
	// after following every page. A series the reader could not read
	// completely has Complete false.
	MetricData(ctx context.Context, q MetricQuery) ([]Series, error)
}

// AlarmState is one alarm's current state.
type AlarmState struct {
	Name   string
	State  string // OK, ALARM or INSUFFICIENT_DATA
	Reason string
}

// MetricQuery asks for metrics over [Start, End) in Period-long buckets.
type MetricQuery struct {
	Start, End time.Time
	// Period is a multiple of 60 seconds.
	Period  time.Duration
	Metrics []MetricStat
}

// MetricStat is one metric of a query: GetMetricData's MetricDataQuery
// with a MetricStat.
type MetricStat struct {
	ID         string
	Namespace  string
	Name       string
	Stat       string // Sum, Minimum, Maximum, p99 …
	Dimensions map[string]string
}

// Series is the answer for one MetricStat.
type Series struct {
	ID         string
	Timestamps []time.Time
	Values     []float64
	// Complete is GetMetricData's StatusCode "Complete": every datapoint
	// of the range was returned.
	Complete bool
}

// Target is one cell of a baking wave, as the gate needs it.
type Target struct {
	Cell string
	// LoadBalancer and TargetGroup are the ARN suffixes CloudWatch uses as
	// dimensions (the cell stack's albArnSuffix and targetGroupArnSuffix
	// outputs).
	LoadBalancer string
	TargetGroup  string
	// Distribution is the CloudFront distribution id the edge signals are
	// read for (a router canary's staging distribution).
	Distribution string
	// AlarmNames is the cell stack's alarmNames output (key → alarm name).
	AlarmNames map[string]string
	// Thresholds is the cell's spec.Cell.Thresholds(): what its alarms
	// were built with.
	Thresholds signal.Thresholds
	// Update is how the cell's update in this wave ended.
	Update Update
}

// Update is the outcome of a cell's update, as the executor saw it.
type Update struct {
	// Failed is true when the update errored, including an ECS deployment
	// the circuit breaker rolled back.
	Failed  bool   `json:"failed"`
	Message string `json:"message,omitempty"`
}

// Source says where a reading came from.
type Source string

const (
	FromAlarm  Source = "alarm"
	FromMetric Source = "metric"
	FromUpdate Source = "update"
)

// Reading is one observation of one signal of one cell.
type Reading struct {
	Source Source      `json:"source"`
	Signal signal.Name `json:"signal,omitempty"`
	// Alarm is the alarm's name, for alarm readings.
	Alarm string `json:"alarm,omitempty"`
	// Value is the metric reading in the signal's unit; nil when there is
	// no number (an alarm state, an unreadable metric).
	Value *float64 `json:"value,omitempty"`
	// Text is the reading as an operator reads it: "3.2%", "ALARM",
	// "unreadable".
	Text      string         `json:"text"`
	Threshold string         `json:"threshold,omitempty"`
	Verdict   waves.Decision `json:"verdict"`
	// Detail says why, in words, when the verdict is not a plain pass.
	Detail string `json:"detail,omitempty"`
}

// Poll is one cell's readings at one poll.
type Poll struct {
	Cell        string    `json:"cell"`
	At          time.Time `json:"at"`
	WindowStart time.Time `json:"windowStart"`
	WindowEnd   time.Time `json:"windowEnd"`
	// Requests is the ALB request count over the window (-1 when unread).
	Requests float64        `json:"requests"`
	Verdict  waves.Decision `json:"verdict"`
	Readings []Reading      `json:"readings"`
}

// Breaches are the readings of the poll that breached.
func (p Poll) Breaches() []Reading {
	var out []Reading
	for _, r := range p.Readings {
		if r.Verdict == waves.Breached {
			out = append(out, r)
		}
	}
	return out
}

// Summary is the poll's verdict in one line: for a breach, which signal,
// which reading, which threshold.
func (p Poll) Summary() string {
	var parts []string
	for _, r := range p.Readings {
		if r.Verdict != p.Verdict || p.Verdict == waves.Pass {
			continue
		}
		parts = append(parts, r.describe())
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%s: %s", p.Cell, p.Verdict)
	}
	return fmt.Sprintf("%s: %s: %s", p.Cell, p.Verdict, strings.Join(parts, "; "))
}

func (r Reading) describe() string {
	what := string(r.Signal)
	switch r.Source {
	case FromAlarm:
		what = "alarm " + r.Alarm
	case FromUpdate:
		what = "update"
	}
	s := what + " " + r.Text
	if r.Threshold != "" {
		s += " (threshold " + r.Threshold + ")"
	}
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s
}

// Checker evaluates one poll of one cell.
type Checker struct {
	Reader Reader
	Gate   waves.Gate
	// Signals are the signals judged; nil: the cell signals the gate
	// checks (signal.All, filtered by Gate.Checks). A router canary passes
	// signal.Edge.
	Signals []signal.Signal
}

// Check reads one cell over the window [start, end) and judges it. It never
// returns an error: what it cannot read is a breach reading.
func (c *Checker) Check(ctx context.Context, t Target, start, end time.Time) Poll {
	p := Poll{Cell: t.Cell, At: end, WindowStart: start, WindowEnd: end, Requests: -1}
	if t.Update.Failed {
		msg := t.Update.Message
		if msg == "" {
			msg = "the update failed"
		}
		p.Readings = append(p.Readings, Reading{Source: FromUpdate, Text: "failed", Verdict: waves.Breached, Detail: msg})
	}
	p.Readings = append(p.Readings, c.alarms(ctx, t)...)
	metrics, requests := c.metrics(ctx, t, start, end)
	p.Readings = append(p.Readings, metrics...)
	p.Requests = requests
	p.Verdict = waves.Pass
	for _, r := range p.Readings {
		switch {
		case r.Verdict == waves.Breached:
			p.Verdict = waves.Breached
		case r.Verdict == waves.Inconclusive && p.Verdict == waves.Pass:
			p.Verdict = waves.Inconclusive
		}
	}
	return p
}

func (c *Checker) signals() []signal.Signal {
	if c.Signals != nil {
		return c.Signals
	}
	var out []signal.Signal
	for _, s := range signal.All {
		if c.Gate.Checks(s.Name) {
			out = append(out, s)
		}
	}
	return out
}

func (c *Checker) alarms(ctx context.Context, t Target) []Reading {
	// The names come from the cell stack's alarmNames output only: the
	// names a stack was deployed with are the truth (they carry the
	// fleet's name prefix, internal/awsname), and an output that names no
	// alarm is a breach, never a guess.
	names := t.AlarmNames
	var readings []Reading
	var ask []string
	for _, s := range c.signals() {
		if s.AlarmKey == "" {
			continue
		}
		name := names[s.AlarmKey]
		if name == "" {
			readings = append(readings, Reading{Source: FromAlarm, Signal: s.Name, Alarm: "(" + s.AlarmKey + ")", Text: "missing", Verdict: waves.Breached,
				Detail: fmt.Sprintf("the cell stack exports no %q alarm: run `cellctl up %s`", s.AlarmKey, t.Cell)})
			continue
		}
		readings = append(readings, Reading{Source: FromAlarm, Signal: s.Name, Alarm: name})
		ask = append(ask, name)
	}
	if len(ask) == 0 {
		return readings
	}
	states, err := c.Reader.AlarmStates(ctx, ask)
	for i := range readings {
		r := &readings[i]
		if r.Verdict != "" {
			continue
		}
		st, ok := states[r.Alarm]
		switch {
		case err != nil:
			r.Text, r.Verdict, r.Detail = "unreadable", waves.Breached, "DescribeAlarms: "+err.Error()
		case !ok:
			r.Text, r.Verdict, r.Detail = "missing", waves.Breached, "no such alarm in CloudWatch"
		case st.State == StateOK:
			r.Text, r.Verdict = st.State, waves.Pass
		case st.State == StateAlarm:
			r.Text, r.Verdict, r.Detail = st.State, waves.Breached, st.Reason
		case st.State == StateInsufficientData:
			// Only a just-created alarm has no data yet (the template's
			// alarms treat missing data as not breaching): not a pass.
			r.Text, r.Verdict, r.Detail = st.State, waves.Inconclusive, "the alarm has not evaluated yet"
		default:
			r.Text, r.Verdict, r.Detail = st.State, waves.Breached, "unknown alarm state"
		}
	}
	return readings
}

// period covers the whole window in as few buckets as CloudWatch allows
// (a multiple of 60 s), so a p99 is the window's p99, not a per-minute one.
func period(start, end time.Time) time.Duration {
	d := end.Sub(start)
	p := time.Duration(math.Ceil(d.Minutes())) * time.Minute
	if p < time.Minute {
		p = time.Minute
	}
	return p
}

func (c *Checker) metrics(ctx context.Context, t Target, start, end time.Time) ([]Reading, float64) {
	sigs := c.signals()
	wanted := metricsOf(sigs)
	trafficSignals := false
	for _, s := range sigs {
		for _, m := range s.Metrics {
			if isTraffic(m) {
				trafficSignals = true
			}
		}
	}
	if trafficSignals {
		// Request count decides whether the traffic signals are conclusive.
		has := false
		for _, m := range wanted {
			has = has || m.ID == signal.Requests.ID
		}
		if !has {
			wanted = append(wanted, signal.Requests)
		}
	}
	unreadable := func(detail string) ([]Reading, float64) {
		var out []Reading
		for _, s := range sigs {
			out = append(out, Reading{Source: FromMetric, Signal: s.Name, Text: "unreadable", Threshold: s.Format(t.Thresholds.Get(s.Name)), Verdict: waves.Breached, Detail: detail})
		}
		return out, -1
	}
	if len(wanted) == 0 {
		return nil, -1
	}
	q := MetricQuery{Start: start, End: end, Period: period(start, end)}
	for _, m := range wanted {
		dims := map[string]string{"LoadBalancer": t.LoadBalancer}
		switch m.Dimensions {
		case signal.ByTargetGroup:
			dims["TargetGroup"] = t.TargetGroup
		case signal.ByDistribution:
			dims = map[string]string{"DistributionId": t.Distribution, "Region": signal.CloudFrontRegion}
		}
		for k, v := range dims {
			if v == "" {
				return unreadable(fmt.Sprintf("the cell's %s is not known (stack output missing): run `cellctl up %s`", k, t.Cell))
			}
		}
		ns := m.Namespace
		if ns == "" {
			ns = signal.Namespace
		}
		q.Metrics = append(q.Metrics, MetricStat{ID: m.ID, Namespace: ns, Name: m.Name, Stat: m.Stat, Dimensions: dims})
	}
	series, err := c.Reader.MetricData(ctx, q)
	if err != nil {
		return unreadable("GetMetricData: " + err.Error())
	}
	byID := map[string]Series{}
	for _, s := range series {
		byID[s.ID] = s
	}
	values := map[string]agg{}
	for _, m := range wanted {
		s, ok := byID[m.ID]
		switch {
		case !ok:
			values[m.ID] = agg{problem: m.Name + " was not returned"}
		case !s.Complete:
			values[m.ID] = agg{problem: m.Name + " was only partly returned"}
		case len(s.Values) == 0 && m.ZeroWhenAbsent:
			values[m.ID] = agg{v: 0}
		case len(s.Values) == 0:
			values[m.ID] = agg{absent: true, problem: "no " + m.Name + " datapoint in the window"}
		default:
			values[m.ID] = agg{v: aggregate(m.Stat, s.Values)}
		}
	}
	requests := -1.0
	if r, ok := values[signal.Requests.ID]; ok && r.problem == "" {
		requests = r.v
	}
	tooLittle := requests >= 0 && requests < float64(c.Gate.MinRequests)
	noTraffic := requests == 0

	var out []Reading
	for _, s := range sigs {
		th := t.Thresholds.Get(s.Name)
		r := Reading{Source: FromMetric, Signal: s.Name, Threshold: s.Format(th)}
		// hard: not returned, partly returned; soft: no datapoint at all,
		// which low traffic can explain for a latency.
		var hard, soft []string
		for _, m := range s.Metrics {
			if a := values[m.ID]; a.problem != "" {
				if a.absent {
					soft = append(soft, a.problem)
				} else {
					hard = append(hard, a.problem)
				}
			}
		}
		traffic := false
		for _, m := range s.Metrics {
			traffic = traffic || isTraffic(m)
		}
		switch {
		case traffic && requests < 0:
			r.Text, r.Verdict, r.Detail = "unreadable", waves.Breached, strings.Join(append(append(hard, soft...), values[signal.Requests.ID].problem), "; ")
		case len(hard) > 0:
			r.Text, r.Verdict, r.Detail = "unreadable", waves.Breached, strings.Join(append(hard, soft...), "; ")
		case traffic && tooLittle:
			r.Text, r.Verdict = "no verdict", waves.Inconclusive
			r.Detail = fmt.Sprintf("%g requests in the window, fewer than min_requests %d", requests, c.Gate.MinRequests)
		case traffic && noTraffic:
			// min_requests is 0 and nothing came: nothing to judge, and
			// the operator said that is acceptable.
			r.Text, r.Verdict, r.Detail = "no requests", waves.Pass, "min_requests is 0"
		case len(soft) > 0:
			r.Text, r.Verdict, r.Detail = "unreadable", waves.Breached, strings.Join(soft, "; ")
		case !th.IsSet():
			r.Text, r.Verdict, r.Detail = "no threshold", waves.Breached, "the cell has no threshold for this signal"
		default:
			v := compute(s.Name, values, requests)
			r.Value = &v
			r.Text = s.FormatValue(v)
			if th.Passes(v) {
				r.Verdict = waves.Pass
			} else {
				r.Verdict = waves.Breached
			}
		}
		if r.Value == nil && r.Verdict == waves.Breached && r.Text == "" {
			r.Text = "unreadable"
		}
		out = append(out, r)
	}
	return out, requests
}

// agg is a metric aggregated over the window, or why it is unreadable.
type agg struct {
	v       float64
	absent  bool // no datapoint at all
	problem string
}

// compute turns the window's aggregates into the signal's reading.
func compute(n signal.Name, v map[string]agg, requests float64) float64 {
	switch n {
	case signal.ErrorRate5xx:
		errs := v[signal.Target5xx.ID].v + v[signal.LoadBalancer5xx.ID].v
		if requests <= 0 {
			return 0
		}
		return 100 * errs / requests
	case signal.P99LatencyMs:
		return v[signal.ResponseTime.ID].v * 1000 // CloudWatch reports seconds
	case signal.UnhealthyTasks:
		return v[signal.UnhealthyHosts.ID].v
	case signal.HealthyTasks:
		return v[signal.HealthyHosts.ID].v
	case signal.EdgeErrorRate5xx:
		return v[signal.Edge5xxRate.ID].v
	case signal.EdgeFunctionErrors:
		return v[signal.EdgeExecutionErrors.ID].v + v[signal.EdgeValidationErrors.ID].v
	}
	return math.NaN()
}

// isTraffic reports the metrics whose readings mean nothing without
// enough requests: the request count itself and the latency.
func isTraffic(m signal.Metric) bool {
	return m.ID == signal.Requests.ID || m.ID == signal.ResponseTime.ID
}

// metricsOf lists every metric the signals read, each once, in order.
func metricsOf(sigs []signal.Signal) []signal.Metric {
	seen := map[string]bool{}
	var out []signal.Metric
	for _, s := range sigs {
		for _, m := range s.Metrics {
			if !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// aggregate folds a window's datapoints: counts add up, a minimum stays the
// smallest, and a maximum or a percentile the largest (the worst bucket; a
// window normally has one bucket, see period).
func aggregate(stat string, values []float64) float64 {
	out := values[0]
	for _, v := range values[1:] {
		switch {
		case stat == "Sum":
			out += v
		case stat == "Minimum":
			out = math.Min(out, v)
		default:
			out = math.Max(out, v)
		}
	}
	return out
}

// TargetFromOutputs builds a cell's gate target from its stack outputs
// (albArnSuffix, targetGroupArnSuffix, alarmNames, as cellmodule exports
// them). What is missing stays empty, and Check then breaches on it.
func TargetFromOutputs(cell string, outputs map[string]any, thresholds signal.Thresholds, update Update) Target {
	t := Target{Cell: cell, Thresholds: thresholds, Update: update, AlarmNames: map[string]string{}}
	t.LoadBalancer, _ = outputs["albArnSuffix"].(string)
	t.TargetGroup, _ = outputs["targetGroupArnSuffix"].(string)
	switch names := outputs["alarmNames"].(type) {
	case map[string]string:
		for k, v := range names {
			t.AlarmNames[k] = v
		}
	case map[string]any:
		for k, v := range names {
			if s, ok := v.(string); ok {
				t.AlarmNames[k] = s
			}
		}
	}
	return t
}
