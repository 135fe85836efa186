// Package health is the per-cell health view (`cellctl health`): for each
// cell, now and over a window, its request rate, 5xx rate, p99 latency,
// healthy/desired tasks, alarm states and load against its published
// capacity — read from CloudWatch with the same aws-sdk-go-v2 reader on AWS
// and on the simulator — sorted worst first, with the fleet average set
// beside the worst cell. The average is what an aggregate dashboard shows;
// when it passes a threshold the worst cell fails, the report says so,
// because that is exactly the case an aggregate hides.
//
// It fails closed: a cell whose stack exports nothing, whose metrics or
// alarms cannot be read, or that is missing an alarm it should have is a
// finding, never a healthy row.
package health

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awsname"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/waves/signal"
)

// Reader is what the view reads from CloudWatch; *awsapi.CloudWatch
// satisfies it.
type Reader interface {
	Alarms(ctx context.Context, names []string) (map[string]awsapi.Alarm, error)
	MetricData(ctx context.Context, qs []awsapi.Query, start, end time.Time) (map[string]awsapi.Series, error)
}

// Target is one cell to read: what the fleet says about it and what its
// stack exports.
type Target struct {
	Cell   string
	Region string
	// Access is how the cell's account is reached (its role, profile);
	// its region is Region. The zero value: the caller's own account.
	Access fleet.Access
	// Names are the cell's account-unique names (its fleet's name prefix,
	// internal/awsname); the zero value names a cell of a fleet without
	// a prefix.
	Names awsname.Cell
	// State is the cell's routing state (active, draining, drained); ""
	// when the fleet has no routing table.
	State        string
	Thresholds   signal.Thresholds
	DesiredTasks int
	// CapacityRPS is the published capacity (requests/s); 0: none.
	CapacityRPS            int
	CapacityWarningPercent int
	// Outputs are the cell stack's outputs (albArnSuffix,
	// targetGroupArnSuffix, alarmNames); OutputsErr why they could not be
	// read. Neither: the stack is not deployed.
	Outputs    map[string]any
	OutputsErr error
}

// Options bound one reading of the fleet.
type Options struct {
	// Now is the end of the window (the clock, injected).
	Now time.Time
	// Since is the window's length (default 15 minutes).
	Since time.Duration
	// Reader returns the CloudWatch reader of one account and region: a
	// cell in another account is read with its own credentials (the role
	// its stack assumes), never the caller's.
	Reader func(ctx context.Context, a fleet.Access) (Reader, error)
	// Parallel bounds the cells read at once (default 8).
	Parallel int
}

// DefaultSince is the window when none is given.
const DefaultSince = 15 * time.Minute

// Signals are one cell's readings over a span. A nil field was not
// measurable: no traffic for a rate, no datapoint, no published capacity.
type Signals struct {
	RequestsPerSecond *float64 `json:"requestsPerSecond"`
	ErrorRatePercent  *float64 `json:"errorRatePercent"`
	P99Ms             *float64 `json:"p99Ms"`
	HealthyTasks      *float64 `json:"healthyTasks"`
	UnhealthyTasks    *float64 `json:"unhealthyTasks"`
	// LoadPercent is the request rate as a share of the published capacity.
	LoadPercent *float64 `json:"loadPercent"`
}

// Alarm is one of the cell's alarms.
type Alarm struct {
	Key    string `json:"key"` // the alarmNames key: 5xx, p99, unhealthy, capacity
	Name   string `json:"name"`
	State  string `json:"state"` // OK, ALARM, INSUFFICIENT_DATA, missing, unreadable
	Reason string `json:"reason,omitempty"`
}

// Cell is one cell's health.
type Cell struct {
	Cell   string `json:"cell"`
	Region string `json:"region"`
	// Account is the account the cell's stack file declares ("" = the
	// caller's own).
	Account      string `json:"account,omitempty"`
	State        string `json:"state,omitempty"`
	DesiredTasks int    `json:"desiredTasks"`
	CapacityRPS  int    `json:"capacityRps,omitempty"`
	// Now is the latest minute CloudWatch has; Window the whole window.
	Now      Signals   `json:"now"`
	NowAt    time.Time `json:"nowAt,omitzero"`
	Window   Signals   `json:"window"`
	Alarms   []Alarm   `json:"alarms"`
	Findings []string  `json:"findings"`
	// Thresholds is what the cell is judged against (its gate's).
	Thresholds map[string]string `json:"thresholds"`

	severity float64
	th       signal.Thresholds
	warnPct  int
	requests float64 // window totals, for the fleet average
	errors   float64
}

// Bad reports whether the cell has findings.
func (c Cell) Bad() bool { return len(c.Findings) > 0 }

// Fleet is the fleet-wide aggregate: what an average hides.
type Fleet struct {
	Cells int `json:"cells"`
	// RequestsPerSecond is the fleet's total rate now.
	RequestsPerSecond *float64 `json:"requestsPerSecond"`
	// ErrorRatePercent is Σ 5xx / Σ requests now (request-weighted).
	ErrorRatePercent *float64 `json:"errorRatePercent"`
	// P99Ms is the request-weighted mean of the cells' p99 now: what a
	// fleet-average latency graph shows (a percentile does not average;
	// that is the point).
	P99Ms        *float64 `json:"p99Ms"`
	HealthyTasks *float64 `json:"healthyTasks"`
	DesiredTasks int      `json:"desiredTasks"`
	// LoadPercent is Σ rate / Σ published capacity.
	LoadPercent *float64 `json:"loadPercent"`
}

// Report is one reading of the fleet.
type Report struct {
	At          time.Time `json:"at"`
	WindowStart time.Time `json:"windowStart"`
	Since       string    `json:"since"`
	// Cells, worst first.
	Cells []Cell `json:"cells"`
	// Worst is the worst cell ("" with no cells).
	Worst string `json:"worst"`
	Fleet Fleet  `json:"fleetAverage"`
	// Hidden lists how the fleet average hides the worst cell: one line per
	// signal the worst cell fails while the average passes.
	Hidden []string `json:"averageHides"`
	// Findings counts the cells with findings.
	Findings int `json:"cellsWithFindings"`
	// Canary is a router canary nobody finished: a finding of the fleet's
	// edge (viewers may reach a staging distribution nothing watches).
	Canary *Canary `json:"routerCanary,omitempty"`
}

// Canary is an unfinished router canary, as the report shows it.
type Canary struct {
	// Record is the record it is in ("" when none accounts for it).
	Record string `json:"record,omitempty"`
	Phase  string `json:"phase"`
	// Weight is the share of viewers on the staging distribution.
	Weight float64   `json:"weight"`
	Since  time.Time `json:"since,omitzero"`
	// Finding says what it is and the command that finishes it.
	Finding string `json:"finding"`
}

// Read reads every target and assembles the report. Cells are read in
// parallel; nothing a cell cannot read stops another.
func Read(ctx context.Context, targets []Target, o Options) Report {
	since := o.Since
	if since <= 0 {
		since = DefaultSince
	}
	par := o.Parallel
	if par <= 0 {
		par = 8
	}
	// The window ends after the current minute: CloudWatch buckets by
	// period start, and the simulator reports the current minute whole.
	end := o.Now.UTC().Truncate(time.Minute).Add(time.Minute)
	start := end.Add(-since.Truncate(time.Minute))
	if !start.Before(end) {
		start = end.Add(-time.Minute)
	}
	rep := Report{At: o.Now.UTC(), WindowStart: start, Since: since.String(), Cells: make([]Cell, len(targets))}

	var mu sync.Mutex
	readers := map[fleet.Access]Reader{}
	readerErrs := map[fleet.Access]error{}
	reader := func(ctx context.Context, a fleet.Access) (Reader, error) {
		mu.Lock()
		defer mu.Unlock()
		if r, ok := readers[a]; ok {
			return r, nil
		}
		if err, ok := readerErrs[a]; ok {
			return nil, err
		}
		r, err := o.Reader(ctx, a)
		if err != nil {
			readerErrs[a] = err
			return nil, err
		}
		readers[a] = r
		return r, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(par)
	for i, t := range targets {
		g.Go(func() error {
			rep.Cells[i] = readCell(gctx, t, reader, start, end)
			return nil
		})
	}
	_ = g.Wait()

	sort.SliceStable(rep.Cells, func(i, j int) bool { return worse(rep.Cells[i], rep.Cells[j]) })
	for _, c := range rep.Cells {
		if c.Bad() {
			rep.Findings++
		}
	}
	rep.Fleet = average(rep.Cells)
	if len(rep.Cells) > 0 {
		rep.Worst = rep.Cells[0].Cell
		rep.Hidden = hidden(rep.Cells[0], rep.Fleet)
	}
	return rep
}

// worse orders cells worst first: cells with findings first, then by how
// far past its thresholds a cell is, then by id.
func worse(a, b Cell) bool {
	if a.Bad() != b.Bad() {
		return a.Bad()
	}
	if a.severity != b.severity {
		return a.severity > b.severity
	}
	return a.Cell < b.Cell
}

// period is the metric period: one minute up to 6 hours, then coarser so a
// long window stays a few hundred points.
func period(span time.Duration) time.Duration {
	p := time.Minute
	if span > 6*time.Hour {
		p = (span / 360).Truncate(time.Minute)
	}
	return p
}

func readCell(ctx context.Context, t Target, reader func(context.Context, fleet.Access) (Reader, error), start, end time.Time) Cell {
	c := Cell{Cell: t.Cell, Region: t.Region, Account: t.Access.Account, State: t.State, DesiredTasks: t.DesiredTasks, CapacityRPS: t.CapacityRPS,
		th: t.Thresholds, warnPct: t.CapacityWarningPercent, Alarms: []Alarm{}, Findings: []string{}, Thresholds: map[string]string{}}
	for _, s := range signal.All {
		if th := t.Thresholds.Get(s.Name); th.IsSet() {
			c.Thresholds[string(s.Name)] = s.Format(th)
		}
	}
	if t.CapacityRPS > 0 {
		c.Thresholds["load_percent"] = fmt.Sprintf("<= %d%%", t.CapacityWarningPercent)
	}
	finding := func(sev float64, format string, args ...any) {
		c.Findings = append(c.Findings, fmt.Sprintf(format, args...))
		c.severity += sev
	}
	if t.OutputsErr != nil {
		finding(1, "stack outputs unreadable: %v", t.OutputsErr)
		return c
	}
	if len(t.Outputs) == 0 {
		finding(1, "not deployed: the stack has no outputs (run `cellctl up %s`)", t.Cell)
		return c
	}
	lb, _ := t.Outputs["albArnSuffix"].(string)
	tg, _ := t.Outputs["targetGroupArnSuffix"].(string)
	names := alarmNames(t)
	r, err := reader(ctx, t.Access.InRegion(t.Region))
	if err != nil {
		if t.Access.Account != "" {
			finding(1, "cannot read CloudWatch in account %s, %s: %v", t.Access.Account, t.Region, err)
		} else {
			finding(1, "cannot read CloudWatch in %s: %v", t.Region, err)
		}
		return c
	}

	// Alarms: every one the cell should have, whatever the stack exports.
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]string, 0, len(keys))
	for _, k := range keys {
		list = append(list, names[k])
	}
	states, aerr := r.Alarms(ctx, list)
	for _, k := range keys {
		a := Alarm{Key: k, Name: names[k]}
		st, ok := states[a.Name]
		switch {
		case aerr != nil:
			a.State, a.Reason = "unreadable", aerr.Error()
			finding(1, "alarm %s unreadable: %v", a.Name, aerr)
		case !ok:
			a.State = "missing"
			finding(1, "alarm %s missing in CloudWatch (run `cellctl up %s`)", a.Name, t.Cell)
		default:
			a.State, a.Reason = st.State, st.Reason
			switch st.State {
			case "ALARM":
				finding(2, "alarm %s in ALARM", a.Name)
			case "OK", "INSUFFICIENT_DATA":
			default:
				finding(1, "alarm %s in unknown state %q", a.Name, st.State)
			}
		}
		c.Alarms = append(c.Alarms, a)
	}

	if lb == "" || tg == "" {
		finding(1, "the stack exports no albArnSuffix/targetGroupArnSuffix: its metrics cannot be read")
		return c
	}
	p := period(end.Sub(start))
	series, err := r.MetricData(ctx, queries(lb, tg, p), start, end)
	if err != nil {
		finding(1, "metrics unreadable: %v", err)
		return c
	}
	c.judge(series, start, end, p, finding)
	return c
}

// alarmNames is every alarm the cell should have: the stack's alarmNames
// output over the names the signals (and a published capacity) imply, so
// an alarm missing from an old stack is still asked for, and missed.
func alarmNames(t Target) map[string]string {
	n := t.Names
	if n.ID == "" {
		n.ID = t.Cell
	}
	names := signal.AlarmNames(n)
	if t.CapacityRPS > 0 {
		names[spec.CapacityAlarmKey] = spec.CapacityAlarmName(n)
	}
	switch out := t.Outputs["alarmNames"].(type) {
	case map[string]any:
		for k, v := range out {
			if s, ok := v.(string); ok && s != "" {
				names[k] = s
			}
		}
	case map[string]string:
		for k, v := range out {
			if v != "" {
				names[k] = v
			}
		}
	}
	return names
}

// The metrics the view reads: the gate's vocabulary (waves/signal).
var viewMetrics = []signal.Metric{signal.Requests, signal.Target5xx, signal.LoadBalancer5xx, signal.ResponseTime, signal.HealthyHosts, signal.UnhealthyHosts}

func queries(lb, tg string, p time.Duration) []awsapi.Query {
	qs := make([]awsapi.Query, 0, len(viewMetrics))
	for _, m := range viewMetrics {
		dims := map[string]string{"LoadBalancer": lb}
		if m.Dimensions == signal.ByTargetGroup {
			dims["TargetGroup"] = tg
		}
		qs = append(qs, awsapi.Query{ID: m.ID, Namespace: signal.Namespace, Metric: m.Name, Dimensions: dims, Stat: m.Stat, Period: p})
	}
	return qs
}

func ptr(v float64) *float64 { return &v }

// MaxNowLag is how far behind the current minute the newest datapoint may
// be and still be "now": ALB metrics land in CloudWatch within a minute or
// two of their period.
const MaxNowLag = 2 * time.Minute

// judge computes the readings from the series and checks them against the
// cell's thresholds. "Now" is the latest period with any datapoint.
func (c *Cell) judge(series map[string]awsapi.Series, start, end time.Time, p time.Duration, finding func(float64, string, ...any)) {
	var latest, first time.Time
	for _, s := range series {
		for _, pt := range s.Points {
			if pt.Time.After(latest) {
				latest = pt.Time
			}
			if first.IsZero() || pt.Time.Before(first) {
				first = pt.Time
			}
		}
	}
	if latest.IsZero() {
		finding(1, "no datapoints in CloudWatch for the window (is the load balancer publishing?)")
		return
	}
	// On AWS the newest minute can hold a gauge (HealthyHostCount) before
	// its RequestCount lands; judging that minute would read a serving cell
	// as idle. Now is the newest minute with requests, when any minute of
	// the window had some.
	// "Now" must be now: the newest period of the window, or at most
	// MaxNowLag behind it (CloudWatch's publishing delay). An older one is
	// a stale reading of a cell that stopped serving or publishing, and a
	// stale or missing "now" is unreadable — never an ok row.
	current := end.Add(-p)
	if age := current.Sub(latest); age > MaxNowLag {
		c.NowAt = latest
		finding(1, "now unreadable: the newest datapoint is %s old (%s); CloudWatch has nothing newer for the cell", age.Round(time.Second), latest.Format(time.RFC3339))
		return
	}
	pts := series[signal.Requests.ID].Points
	switch {
	case len(pts) == 0:
		c.NowAt = latest
		finding(1, "now unreadable: no RequestCount datapoint in the window (the cell serves no traffic, so its error rate and latency cannot be judged)")
	case current.Sub(pts[len(pts)-1].Time) > MaxNowLag:
		c.NowAt = pts[len(pts)-1].Time
		finding(1, "now unreadable: the newest RequestCount datapoint is %s old (%s): no traffic since", current.Sub(c.NowAt).Round(time.Second), c.NowAt.Format(time.RFC3339))
		return
	default:
		latest = pts[len(pts)-1].Time
		c.NowAt = latest
	}
	at := func(id string) (float64, bool) {
		for _, pt := range series[id].Points {
			if pt.Time.Equal(latest) {
				return pt.Value, true
			}
		}
		return 0, false
	}
	total := func(id string) float64 {
		var n float64
		for _, pt := range series[id].Points {
			n += pt.Value
		}
		return n
	}
	extreme := func(id string, max bool) (float64, bool) {
		pts := series[id].Points
		if len(pts) == 0 {
			return 0, false
		}
		v := pts[0].Value
		for _, pt := range pts[1:] {
			if max {
				v = math.Max(v, pt.Value)
			} else {
				v = math.Min(v, pt.Value)
			}
		}
		return v, true
	}

	// Now: counters without a datapoint are zero (ALB publishes them only
	// when non-zero); gauges without one are unknown.
	req, _ := at(signal.Requests.ID)
	t5, _ := at(signal.Target5xx.ID)
	e5, _ := at(signal.LoadBalancer5xx.ID)
	c.Now.RequestsPerSecond = ptr(req / p.Seconds())
	if req > 0 {
		c.Now.ErrorRatePercent = ptr(100 * (t5 + e5) / req)
	}
	if v, ok := at(signal.ResponseTime.ID); ok {
		c.Now.P99Ms = ptr(v * 1000)
	}
	if v, ok := at(signal.HealthyHosts.ID); ok {
		c.Now.HealthyTasks = ptr(v)
	}
	if v, ok := at(signal.UnhealthyHosts.ID); ok {
		c.Now.UnhealthyTasks = ptr(v)
	}
	if c.CapacityRPS > 0 {
		c.Now.LoadPercent = ptr(100 * *c.Now.RequestsPerSecond / float64(c.CapacityRPS))
	}

	// Window.
	wreq := total(signal.Requests.ID)
	werr := total(signal.Target5xx.ID) + total(signal.LoadBalancer5xx.ID)
	c.requests, c.errors = req, t5+e5
	// A rate over the part of the window the cell existed in: a cell
	// deployed five minutes ago did not serve a third of its load over a
	// 15-minute window.
	c.Window.RequestsPerSecond = ptr(wreq / end.Sub(first).Seconds())
	if wreq > 0 {
		c.Window.ErrorRatePercent = ptr(100 * werr / wreq)
	}
	if v, ok := extreme(signal.ResponseTime.ID, true); ok {
		c.Window.P99Ms = ptr(v * 1000)
	}
	if v, ok := extreme(signal.HealthyHosts.ID, false); ok {
		c.Window.HealthyTasks = ptr(v)
	}
	if v, ok := extreme(signal.UnhealthyHosts.ID, true); ok {
		c.Window.UnhealthyTasks = ptr(v)
	}
	if c.CapacityRPS > 0 {
		c.Window.LoadPercent = ptr(100 * *c.Window.RequestsPerSecond / float64(c.CapacityRPS))
	}

	// Judged now, against the cell's own (gate) thresholds.
	check := func(name signal.Name, v *float64, need bool, missing string) {
		s := signal.MustLookup(name)
		th := c.th.Get(name)
		if !th.IsSet() {
			return
		}
		if v == nil {
			if need {
				finding(1, "%s unreadable: %s", name, missing)
			}
			return
		}
		if !th.Passes(*v) {
			finding(1+ratio(s, th, *v), "%s %s fails %s", name, s.FormatValue(round(*v)), s.Format(th))
		} else {
			c.severity += ratio(s, th, *v) / 100
		}
	}
	check(signal.ErrorRate5xx, c.Now.ErrorRatePercent, false, "")
	check(signal.P99LatencyMs, c.Now.P99Ms, req > 0, "no TargetResponseTime datapoint while serving requests")
	check(signal.HealthyTasks, c.Now.HealthyTasks, true, "no HealthyHostCount datapoint")
	check(signal.UnhealthyTasks, c.Now.UnhealthyTasks, true, "no UnHealthyHostCount datapoint")
	if l := c.Now.LoadPercent; l != nil && *l > float64(c.warnPct) {
		finding(1+*l/float64(max(c.warnPct, 1)), "load %.0f%% of capacity (%d req/s) is over the %d%% warning", *l, c.CapacityRPS, c.warnPct)
	}
}

// ratio is how far a reading is toward (or past) its threshold, for
// ordering: value/threshold for upper bounds, threshold/value for lower.
func ratio(s signal.Signal, th signal.Threshold, v float64) float64 {
	if s.Bound == signal.Lower {
		if v <= 0 {
			return 10
		}
		return th.Value / v
	}
	if th.Value <= 0 {
		if v > 0 {
			return 10
		}
		return 0
	}
	return v / th.Value
}

func round(v float64) float64 { return math.Round(v*1000) / 1000 }

// average is the fleet-wide aggregate over the cells that have readings.
func average(cells []Cell) Fleet {
	var f Fleet
	var rate, req, errs, p99w, healthy, capacity float64
	var haveP99, haveHealthy, haveRate bool
	for _, c := range cells {
		f.Cells++
		f.DesiredTasks += c.DesiredTasks
		if c.Now.RequestsPerSecond == nil {
			continue
		}
		haveRate = true
		rate += *c.Now.RequestsPerSecond
		req += c.requests
		errs += c.errors
		if c.Now.P99Ms != nil && c.requests > 0 {
			p99w += *c.Now.P99Ms * c.requests
			haveP99 = true
		}
		if c.Now.HealthyTasks != nil {
			healthy += *c.Now.HealthyTasks
			haveHealthy = true
		}
		if c.CapacityRPS > 0 {
			capacity += float64(c.CapacityRPS)
		}
	}
	if haveRate {
		f.RequestsPerSecond = ptr(rate)
	}
	if req > 0 {
		f.ErrorRatePercent = ptr(100 * errs / req)
		if haveP99 {
			f.P99Ms = ptr(p99w / req)
		}
	}
	if haveHealthy {
		f.HealthyTasks = ptr(healthy)
	}
	if capacity > 0 {
		f.LoadPercent = ptr(100 * rate / capacity)
	}
	return f
}

// hidden lists the signals the worst cell fails while the fleet average,
// judged by the same threshold, passes.
func hidden(worst Cell, f Fleet) []string {
	var out []string
	try := func(name signal.Name, cell, fleet *float64) {
		s := signal.MustLookup(name)
		th := worst.th.Get(name)
		if !th.IsSet() || cell == nil || fleet == nil || th.Passes(*cell) || !th.Passes(*fleet) {
			return
		}
		out = append(out, fmt.Sprintf("%s: the fleet average %s passes %s, but %s is at %s",
			name, s.FormatValue(round(*fleet)), s.Format(th), worst.Cell, s.FormatValue(round(*cell))))
	}
	try(signal.ErrorRate5xx, worst.Now.ErrorRatePercent, f.ErrorRatePercent)
	try(signal.P99LatencyMs, worst.Now.P99Ms, f.P99Ms)
	if l := worst.Now.LoadPercent; l != nil && f.LoadPercent != nil && *l > float64(worst.warnPct) && *f.LoadPercent <= float64(worst.warnPct) {
		out = append(out, fmt.Sprintf("load: the fleet runs at %.0f%% of its capacity, but %s is at %.0f%% (warning above %d%%)", *f.LoadPercent, worst.Cell, *l, worst.warnPct))
	}
	if worst.Bad() && worst.Now.RequestsPerSecond == nil && f.RequestsPerSecond != nil {
		// A cell with no readings is not in the average at all.
		out = append(out, fmt.Sprintf("the fleet average leaves %s out: %s", worst.Cell, worst.Findings[0]))
	}
	return out
}
