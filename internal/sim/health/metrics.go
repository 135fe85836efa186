package health

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/sim/store"
)

// The simulated cloud's CloudWatch metrics, computed from the health
// model: the Application Load Balancer metrics a cell's ALB and target
// group publish, at one-minute resolution, by the dimensions AWS
// publishes them under.

const albNamespace = "AWS/ApplicationELB"

// Point is one aggregated datapoint.
type Point struct {
	Time  time.Time
	Value float64
}

// perMinute is a metric's value in one minute, and whether AWS would
// publish a datapoint at all (ALB request metrics have none for a minute
// without requests).
func perMinute(metric string, s Sample) (float64, bool) {
	served := s.Requests > 0 && s.Healthy > 0
	switch metric {
	case "RequestCount":
		return s.Requests, s.Requests > 0
	case "HTTPCode_Target_5XX_Count":
		return s.Target5xx, served
	case "HTTPCode_ELB_5XX_Count", "HTTPCode_ELB_503_Count":
		return s.ELB5xx, s.ELB5xx > 0
	case "TargetResponseTime":
		return s.P99, served
	case "HealthyHostCount":
		return float64(s.Healthy), true
	case "UnHealthyHostCount":
		return float64(max(0, s.Desired-s.Healthy)), true
	}
	return 0, false
}

// knownMetric reports whether the simulator publishes the metric, and
// whether it is a per-target-group metric (published only with both
// TargetGroup and LoadBalancer dimensions).
func knownMetric(metric string) (known, perTG bool) {
	switch metric {
	case "RequestCount", "HTTPCode_Target_5XX_Count", "HTTPCode_ELB_5XX_Count", "HTTPCode_ELB_503_Count", "TargetResponseTime":
		return true, false
	case "HealthyHostCount", "UnHealthyHostCount":
		return true, true
	}
	return false, false
}

// cellFor finds the cell whose metric the dimensions name, or nil when
// CloudWatch would have no such metric (unknown namespace, metric,
// dimension set or load balancer): CloudWatch answers that with an empty
// series, not an error.
func cellFor(cells []*cellHealth, namespace, metric string, dims map[string]string) *cellHealth {
	known, perTG := knownMetric(metric)
	if namespace != albNamespace || !known {
		return nil
	}
	for k := range dims {
		if k != "LoadBalancer" && k != "TargetGroup" {
			return nil
		}
	}
	lb, hasLB := dims["LoadBalancer"]
	tg, hasTG := dims["TargetGroup"]
	if !hasLB || (perTG && !hasTG) {
		return nil
	}
	for _, ch := range cells {
		if ch.lbSuffix == lb && (!hasTG || ch.tgSuffix == tg) {
			return ch
		}
	}
	return nil
}

// ValidStat reports whether the simulator computes a statistic: the five
// basic ones and percentiles pNN / pNN.NN.
func ValidStat(stat string) bool {
	switch stat {
	case "SampleCount", "Average", "Sum", "Minimum", "Maximum":
		return true
	}
	_, ok := percentile(stat)
	return ok
}

func percentile(stat string) (float64, bool) {
	if !strings.HasPrefix(stat, "p") {
		return 0, false
	}
	p, err := strconv.ParseFloat(stat[1:], 64)
	if err != nil || p <= 0 || p > 100 {
		return 0, false
	}
	return p, true
}

// aggregate folds one period's per-minute values. A percentile over
// minutes takes the nearest-rank percentile of the per-minute values (for
// TargetResponseTime each minute already holds its p99): an
// approximation of CloudWatch, which keeps every request's latency.
func aggregate(stat string, vs []float64) float64 {
	switch stat {
	case "Sum":
		t := 0.0
		for _, v := range vs {
			t += v
		}
		return t
	case "SampleCount":
		return float64(len(vs))
	case "Average":
		t := 0.0
		for _, v := range vs {
			t += v
		}
		return t / float64(len(vs))
	case "Minimum":
		m := math.Inf(1)
		for _, v := range vs {
			m = math.Min(m, v)
		}
		return m
	case "Maximum":
		m := math.Inf(-1)
		for _, v := range vs {
			m = math.Max(m, v)
		}
		return m
	}
	p, _ := percentile(stat)
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, i)]
}

// points aggregates a cell's metric into periods whose start lies in
// [start, end); start is rounded down to the period, as CloudWatch does.
func points(samples []Sample, metric, stat string, period time.Duration, start, end time.Time) []Point {
	start = start.Truncate(period)
	buckets := map[time.Time][]float64{}
	for _, s := range samples {
		if s.Time.Before(start) || !s.Time.Before(end) {
			continue
		}
		if v, ok := perMinute(metric, s); ok {
			b := s.Time.Truncate(period)
			buckets[b] = append(buckets[b], v)
		}
	}
	out := make([]Point, 0, len(buckets))
	for t, vs := range buckets {
		out = append(out, Point{Time: t, Value: aggregate(stat, vs)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// MetricData answers GetMetricData's queries in region over [start, end):
// one series per query, oldest point first, from the model advanced to now
// under the cloud's exclusive lock.
func MetricData(c *store.Cloud, qs []Query, region string, start, end time.Time) ([][]Point, error) {
	var out [][]Point
	err := withHealth(c, func(st *store.State, hs *healthState, now time.Time) error {
		v := c.NewView(st)
		cells := healthCells(v)
		for _, q := range qs {
			var pts []Point
			ch := cellFor(cells, q.Namespace, q.Metric, q.Dims)
			if q.Namespace == usageNamespace {
				pts = usagePoints(v, q, region, start, end, now)
			} else if ch != nil && ch.lb.Region == region {
				pts = points(hs.samples(ch, now), q.Metric, q.Stat, q.Period, start, end)
			} else if ch == nil {
				pts = edgePoints(v, c.Dir(), hs, q, region, start, end, now)
			}
			out = append(out, pts)
		}
		return nil
	})
	return out, err
}

// ---- alarm evaluation ----------------------------------------------------

func alarmKey(r *store.Record) string { return r.Key() + "/" + r.Name }

// alarmDef is the part of an aws:cloudwatch/metricAlarm the evaluator reads.
type alarmDef struct {
	comparison   string
	threshold    float64
	evalPeriods  int
	toAlarm      int
	treatMissing string
	period       time.Duration
	// a single metric …
	namespace, metric, stat string
	dims                    map[string]string
	// … or metric queries.
	queries []alarmQuery
}

type alarmQuery struct {
	id, expression          string
	namespace, metric, stat string
	dims                    map[string]string
	period                  time.Duration
	returnData              bool
}

func parseAlarm(outs resource.PropertyMap) alarmDef {
	get := func(k string) any { return store.Plain(outs[resource.PropertyKey(k)]) }
	d := alarmDef{
		comparison: store.Str(get("comparisonOperator")), threshold: store.Num(get("threshold")),
		evalPeriods: int(store.Num(get("evaluationPeriods"))), toAlarm: int(store.Num(get("datapointsToAlarm"))),
		treatMissing: store.Str(get("treatMissingData")), period: time.Duration(store.Num(get("period"))) * time.Second,
		namespace: store.Str(get("namespace")), metric: store.Str(get("metricName")), dims: store.StrMap(get("dimensions")),
		stat: store.Str(get("statistic")),
	}
	if es := store.Str(get("extendedStatistic")); es != "" {
		d.stat = es
	}
	if qs, ok := get("metricQueries").([]any); ok {
		for _, x := range qs {
			q, _ := x.(map[string]any)
			aq := alarmQuery{id: store.Str(q["id"]), expression: store.Str(q["expression"]), returnData: q["returnData"] == true}
			if m, ok := q["metric"].(map[string]any); ok {
				aq.namespace, aq.metric, aq.stat, aq.dims = store.Str(m["namespace"]), store.Str(m["metricName"]), store.Str(m["stat"]), store.StrMap(m["dimensions"])
				aq.period = time.Duration(store.Num(m["period"])) * time.Second
				if d.period == 0 {
					d.period = aq.period
				}
			}
			d.queries = append(d.queries, aq)
		}
	}
	if d.evalPeriods < 1 {
		d.evalPeriods = 1
	}
	if d.toAlarm < 1 || d.toAlarm > d.evalPeriods {
		d.toAlarm = d.evalPeriods
	}
	if d.treatMissing == "" {
		d.treatMissing = "missing"
	}
	if d.period <= 0 {
		d.period = time.Minute
	}
	return d
}

func breaches(comparison string, v, threshold float64) (bool, error) {
	switch comparison {
	case "GreaterThanThreshold":
		return v > threshold, nil
	case "GreaterThanOrEqualToThreshold":
		return v >= threshold, nil
	case "LessThanThreshold":
		return v < threshold, nil
	case "LessThanOrEqualToThreshold":
		return v <= threshold, nil
	}
	return false, fmt.Errorf("the simulator does not evaluate comparison %q", comparison)
}

var comparisonWords = map[string]string{
	"GreaterThanThreshold": "greater than", "GreaterThanOrEqualToThreshold": "greater than or equal to",
	"LessThanThreshold": "less than", "LessThanOrEqualToThreshold": "less than or equal to",
}

// datapoints computes an alarm's values for its last evalPeriods periods
// (the newest includes the current minute), oldest first; a missing
// datapoint is NaN.
func (d alarmDef) datapoints(cells []*cellHealth, ch *cellHealth, samples []Sample, now time.Time) ([]float64, []time.Time, error) {
	newest := now.Truncate(d.period)
	start := newest.Add(-time.Duration(d.evalPeriods-1) * d.period)
	end := newest.Add(d.period)
	var times []time.Time
	for t := start; t.Before(end); t = t.Add(d.period) {
		times = append(times, t)
	}
	series := func(namespace, metric, stat string, dims map[string]string, period time.Duration) (map[time.Time]float64, error) {
		out := map[time.Time]float64{}
		if !ValidStat(stat) {
			return nil, fmt.Errorf("the simulator does not compute statistic %q", stat)
		}
		if period != d.period {
			return nil, fmt.Errorf("metric periods differ (%s and %s)", period, d.period)
		}
		if got := cellFor(cells, namespace, metric, dims); got == nil || got.key != ch.key {
			return out, nil // another cell's or no metric: no data
		}
		for _, p := range points(samples, metric, stat, period, start, end) {
			out[p.Time] = p.Value
		}
		return out, nil
	}
	vals := make([]float64, len(times))
	if len(d.queries) == 0 {
		s, err := series(d.namespace, d.metric, d.stat, d.dims, d.period)
		if err != nil {
			return nil, nil, err
		}
		for i, t := range times {
			v, ok := s[t]
			vals[i] = v
			if !ok {
				vals[i] = math.NaN()
			}
		}
		return vals, times, nil
	}
	env := map[string]map[time.Time]float64{}
	var ret *alarmQuery
	for i := range d.queries {
		q := &d.queries[i]
		if q.returnData {
			ret = q
		}
		if q.expression != "" {
			continue
		}
		s, err := series(q.namespace, q.metric, q.stat, q.dims, q.period)
		if err != nil {
			return nil, nil, err
		}
		env[q.id] = s
	}
	if ret == nil {
		return nil, nil, fmt.Errorf("no metric query returns data")
	}
	if ret.expression == "" {
		for i, t := range times {
			v, ok := env[ret.id][t]
			vals[i] = v
			if !ok {
				vals[i] = math.NaN()
			}
		}
		return vals, times, nil
	}
	expr, err := parseExpr(ret.expression)
	if err != nil {
		return nil, nil, err
	}
	for i, t := range times {
		v, err := expr.eval(func(id string) (float64, bool, error) {
			s, ok := env[id]
			if !ok {
				return 0, false, fmt.Errorf("expression %q names unknown id %q", ret.expression, id)
			}
			x, ok := s[t]
			return x, ok, nil
		})
		if err != nil {
			return nil, nil, err
		}
		vals[i] = v
	}
	return vals, times, nil
}

// evaluateAlarms sets the state of a cell's metric alarms from their
// datapoints, as CloudWatch does ("Evaluating an alarm", CloudWatch user
// guide: M out of N datapoints breaching → ALARM; missing data treated per
// TreatMissingData). States set by hand are left alone.
func evaluateAlarms(v *store.View, h *healthState, ch *cellHealth, now time.Time) {
	cells := healthCells(v)
	samples := h.samples(ch, now)
	for _, r := range v.State.Resources {
		if r.Type != store.TypeAlarm || r.Key() != ch.key {
			continue
		}
		key := alarmKey(r)
		if legacy := r.Stack + "/" + r.Name; legacy != key {
			if at, ok := h.Evaluated[legacy]; ok {
				// Kept by a cellctl before project-qualified stacks.
				delete(h.Evaluated, legacy)
				h.Evaluated[key], h.dirty = at, true
			}
		}
		if r.Alarm != nil {
			if at, ok := h.Evaluated[key]; !ok || !at.Equal(r.Alarm.Updated) {
				continue // set by hand
			}
		}
		d := parseAlarm(v.Outputs(r))
		state, reason := d.evaluate(cells, ch, samples, now, r.CurrentAlarm().State)
		if cur := r.CurrentAlarm(); cur.State == state && r.Alarm != nil {
			continue
		}
		r.Alarm = &store.AlarmState{State: state, Reason: reason, Updated: now}
		h.Evaluated[key] = now
		h.dirty = true
		v.State.Touch(r.Key())
	}
}

func (d alarmDef) evaluate(cells []*cellHealth, ch *cellHealth, samples []Sample, now time.Time, current string) (string, string) {
	vals, _, err := d.datapoints(cells, ch, samples, now)
	if err != nil {
		return store.AlarmInsufficientData, "Simulator: " + err.Error()
	}
	var present []string
	breaching, missing := 0, 0
	for _, x := range vals {
		if math.IsNaN(x) {
			missing++
			continue
		}
		present = append(present, strconv.FormatFloat(math.Round(x*1e4)/1e4, 'f', -1, 64))
		if b, err := breaches(d.comparison, x, d.threshold); err != nil {
			return store.AlarmInsufficientData, "Simulator: " + err.Error()
		} else if b {
			breaching++
		}
	}
	hot := breaching // breaching datapoints actually present
	switch d.treatMissing {
	case "breaching":
		breaching += missing
	case "ignore":
		if missing == len(vals) {
			return current, "No datapoints; missing data is ignored"
		}
	case "missing":
		if missing == len(vals) {
			return store.AlarmInsufficientData, fmt.Sprintf("Insufficient Data: %d datapoints were unknown.", missing)
		}
	}
	cmp := comparisonWords[d.comparison]
	th := strconv.FormatFloat(d.threshold, 'f', -1, 64)
	if breaching >= d.toAlarm {
		return store.AlarmAlarm, fmt.Sprintf("Threshold Crossed: %d out of the last %d datapoints [%s] were %s the threshold (%s) (minimum %d datapoints for OK -> ALARM transition).",
			breaching, len(vals), strings.Join(present, ", "), cmp, th, d.toAlarm)
	}
	return store.AlarmOK, fmt.Sprintf("Threshold Crossed: %d of %d datapoints [%s] were not %s the threshold (%s); %d missing, treated as %s.",
		len(present)-hot, len(present), strings.Join(present, ", "), cmp, th, missing, d.treatMissing)
}
