package health

import (
	"github.com/cellctl/cellctl/internal/awsname"
	"github.com/cellctl/cellctl/internal/fleet"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/signal"
)

var now = time.Date(2026, 12, 1, 12, 30, 20, 0, time.UTC)

// minute is what a fake cell serves every minute of the window.
type minute struct {
	requests, target5xx, p99Seconds, healthy, unhealthy float64
	// silent: CloudWatch has no datapoint at all.
	silent bool
	// quietFor: no datapoint in the last quietFor of the window; idleFor:
	// no request (counters absent) in the last idleFor.
	quietFor, idleFor time.Duration
}

func good() minute { return minute{requests: 600, target5xx: 0.6, p99Seconds: 0.12, healthy: 2} }

// fakeCW serves per-minute series by the LoadBalancer dimension
// (app/<cell>/id) and alarm states by name.
type fakeCW struct {
	cells     map[string]minute
	alarms    map[string]string
	alarmErr  error
	metricErr map[string]error
	mu        sync.Mutex // Read asks for the cells' alarms at once
	asked     []string
}

func (f *fakeCW) Alarms(_ context.Context, names []string) (map[string]awsapi.Alarm, error) {
	f.mu.Lock()
	f.asked = append(f.asked, names...)
	f.mu.Unlock()
	if f.alarmErr != nil {
		return nil, f.alarmErr
	}
	out := map[string]awsapi.Alarm{}
	for _, n := range names {
		if st, ok := f.alarms[n]; ok {
			out[n] = awsapi.Alarm{Name: n, State: st}
		}
	}
	return out, nil
}

func (f *fakeCW) MetricData(_ context.Context, qs []awsapi.Query, start, end time.Time) (map[string]awsapi.Series, error) {
	cell := strings.Split(qs[0].Dimensions["LoadBalancer"], "/")[1]
	if err := f.metricErr[cell]; err != nil {
		return nil, err
	}
	m := f.cells[cell]
	out := map[string]awsapi.Series{}
	for _, q := range qs {
		v := map[string]float64{"requests": m.requests, "target5xx": m.target5xx, "elb5xx": 0, "p99": m.p99Seconds, "healthy": m.healthy, "unhealthy": m.unhealthy}[q.ID]
		s := awsapi.Series{ID: q.ID}
		for t := start; t.Before(end) && !m.silent; t = t.Add(q.Period) {
			// Counters are absent when zero, as the ALB publishes them.
			if v == 0 && (q.ID == "elb5xx" || q.ID == "target5xx" || q.ID == "requests") {
				continue
			}
			if q.ID == "p99" && m.requests == 0 {
				continue
			}
			if !t.Before(end.Add(-m.quietFor)) && m.quietFor > 0 {
				continue
			}
			if m.idleFor > 0 && !t.Before(end.Add(-m.idleFor)) && q.ID != "healthy" && q.ID != "unhealthy" {
				continue
			}
			s.Points = append(s.Points, awsapi.Point{Time: t, Value: v})
		}
		out[q.ID] = s
	}
	return out, nil
}

func thresholds() signal.Thresholds {
	th := signal.Defaults()
	th.ErrorRate5xx = signal.Threshold{Op: signal.Below, Value: 0.5}
	th.P99LatencyMs = signal.Threshold{Op: signal.Below, Value: 400}
	return th
}

func target(cell string, capacity int) Target {
	names := map[string]any{}
	for k, v := range signal.AlarmNames(awsname.For("", cell)) {
		names[k] = v
	}
	if capacity > 0 {
		names["capacity"] = "cellctl-" + cell + "-capacity-warning"
	}
	return Target{Cell: cell, Region: "us-east-1", State: "active", Thresholds: thresholds(), DesiredTasks: 2,
		CapacityRPS: capacity, CapacityWarningPercent: 80,
		Outputs: map[string]any{"albArnSuffix": "app/" + cell + "/0123", "targetGroupArnSuffix": "targetgroup/" + cell + "/4567", "alarmNames": names}}
}

func fleetOf(f *fakeCW, cells ...string) []Target {
	var ts []Target
	for _, c := range cells {
		if _, ok := f.cells[c]; !ok {
			f.cells[c] = good()
		}
		for _, n := range signal.AlarmNames(awsname.For("", c)) {
			if _, ok := f.alarms[n]; !ok {
				f.alarms[n] = "OK"
			}
		}
		ts = append(ts, target(c, 0))
	}
	return ts
}

func read(f *fakeCW, ts []Target) Report {
	return Read(context.Background(), ts, Options{Now: now, Since: 15 * time.Minute,
		Reader: func(context.Context, fleet.Access) (Reader, error) { return f, nil }})
}

func order(r Report) []string {
	var ids []string
	for _, c := range r.Cells {
		ids = append(ids, c.Cell)
	}
	return ids
}

// The seeds' case: one cell bad, three fine; the fleet's error rate still
// passes the threshold. The bad cell is listed first, the report has
// findings, and it says the average hides the cell.
func TestOneBadCellAmongFourIsFirstAndTheAverageHidesIt(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{}}
	bad := good()
	bad.target5xx = 7.2 // 1.2 % of 600
	f.cells["cell-c"] = bad
	r := read(f, fleetOf(f, "cell-a", "cell-b", "cell-c", "cell-d"))

	if got := order(r); got[0] != "cell-c" || r.Worst != "cell-c" {
		t.Fatalf("order %v, worst %q: the bad cell must be first", got, r.Worst)
	}
	if r.Findings != 1 || r.Err() == nil {
		t.Fatalf("findings %d, err %v", r.Findings, r.Err())
	}
	c := r.Cells[0]
	if c.Now.ErrorRatePercent == nil || *c.Now.ErrorRatePercent != 1.2 || len(c.Findings) != 1 || !strings.Contains(c.Findings[0], "error_rate_5xx 1.2% fails < 0.5%") {
		t.Errorf("cell-c now %+v findings %v", c.Now, c.Findings)
	}
	// (7.2 + 3 × 0.6) / 2400 = 0.375 %.
	if f := r.Fleet.ErrorRatePercent; f == nil || *f != 0.375 {
		t.Fatalf("fleet average %v, want 0.375", f)
	}
	if len(r.Hidden) != 1 || !strings.Contains(r.Hidden[0], "the fleet average 0.375% passes < 0.5%, but cell-c is at 1.2%") {
		t.Errorf("hidden %q", r.Hidden)
	}
}

// When the whole fleet is bad, the average does not hide anything.
func TestAverageThatAlsoFailsHidesNothing(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{}}
	bad := good()
	bad.target5xx = 60
	f.cells["cell-a"], f.cells["cell-b"] = bad, bad
	r := read(f, fleetOf(f, "cell-a", "cell-b"))
	if r.Findings != 2 || len(r.Hidden) != 0 {
		t.Errorf("findings %d hidden %v", r.Findings, r.Hidden)
	}
}

func TestHealthyFleetHasNoFindings(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{}}
	r := read(f, fleetOf(f, "cell-a", "cell-b"))
	if r.Findings != 0 || r.Err() != nil || len(r.Hidden) != 0 {
		t.Fatalf("a healthy fleet: %+v", r)
	}
	c := r.Cells[0]
	if *c.Now.RequestsPerSecond != 10 || *c.Window.RequestsPerSecond != 10 || *c.Now.P99Ms != 120 || *c.Now.HealthyTasks != 2 {
		t.Errorf("readings %+v", c.Now)
	}
	// Every signal's alarm is asked for.
	sort.Strings(f.asked)
	if !reflect.DeepEqual(f.asked[:3], []string{"cellctl-cell-a-5xx-rate", "cellctl-cell-a-p99-latency", "cellctl-cell-a-unhealthy-tasks"}) {
		t.Errorf("asked %v", f.asked)
	}
}

// An alarm in ALARM is a finding even when the latest minute looks fine.
func TestAlarmInAlarmIsAFinding(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{"cellctl-cell-b-p99-latency": "ALARM"}}
	r := read(f, fleetOf(f, "cell-a", "cell-b"))
	if r.Worst != "cell-b" || r.Findings != 1 || r.Cells[0].Findings[0] != "alarm cellctl-cell-b-p99-latency in ALARM" {
		t.Fatalf("%+v", r.Cells[0])
	}
}

// Fail closed: whatever cannot be read is a finding, never a healthy row.
func TestUnreadableSignalsAreFindings(t *testing.T) {
	cases := map[string]struct {
		setup func(f *fakeCW, ts []Target)
		want  string
	}{
		"metrics unreadable": {func(f *fakeCW, ts []Target) { f.metricErr = map[string]error{"cell-a": errors.New("AccessDenied")} }, "metrics unreadable: AccessDenied"},
		"alarms unreadable":  {func(f *fakeCW, ts []Target) { f.alarmErr = errors.New("Throttling") }, "alarm cellctl-cell-a-5xx-rate unreadable: Throttling"},
		"alarm missing":      {func(f *fakeCW, ts []Target) { delete(f.alarms, "cellctl-cell-a-unhealthy-tasks") }, "alarm cellctl-cell-a-unhealthy-tasks missing"},
		"not deployed":       {func(f *fakeCW, ts []Target) { ts[0].Outputs = nil }, "not deployed"},
		"outputs unreadable": {func(f *fakeCW, ts []Target) { ts[0].OutputsErr = errors.New("backend gone") }, "stack outputs unreadable: backend gone"},
		"no dimensions":      {func(f *fakeCW, ts []Target) { delete(ts[0].Outputs, "albArnSuffix") }, "exports no albArnSuffix"},
		"no datapoints":      {func(f *fakeCW, ts []Target) { f.cells["cell-a"] = minute{silent: true} }, "no datapoints"},
		"no healthy count": {func(f *fakeCW, ts []Target) {
			m := good()
			m.healthy = -1
			f.cells["cell-a"] = m
		}, "healthy_tasks -1 tasks fails >= 1 task"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{}}
			ts := fleetOf(f, "cell-a", "cell-b")
			tc.setup(f, ts)
			r := read(f, ts)
			if r.Worst != "cell-a" || r.Err() == nil || !strings.Contains(strings.Join(r.Cells[0].Findings, "|"), tc.want) {
				t.Fatalf("worst %s findings %v, want %q", r.Worst, r.Cells[0].Findings, tc.want)
			}
		})
	}
}

// A reader that cannot be built for a region is a finding for its cells.
func TestRegionWithoutReaderIsAFinding(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{}}
	ts := fleetOf(f, "cell-a", "cell-b")
	ts[1].Region = "eu-west-1"
	r := Read(context.Background(), ts, Options{Now: now, Reader: func(_ context.Context, a fleet.Access) (Reader, error) {
		if a.Region == "eu-west-1" {
			return nil, errors.New("no credentials")
		}
		return f, nil
	}})
	if r.Worst != "cell-b" || !strings.Contains(r.Cells[0].Findings[0], "cannot read CloudWatch in eu-west-1: no credentials") {
		t.Fatalf("%+v", r.Cells[0])
	}
	if len(r.Hidden) != 1 || !strings.Contains(r.Hidden[0], "the fleet average leaves cell-b out") {
		t.Errorf("hidden %v", r.Hidden)
	}
}

// A cell in another account is read with that account's access (its
// role), never the caller's: one reader per (account, region), and a role
// that cannot be assumed is a finding for that account's cells only.
func TestCellInAnotherAccountIsReadWithItsAccess(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{}}
	ts := fleetOf(f, "cell-a", "cell-b", "cell-c")
	role := fleet.AssumeRole{RoleARN: "arn:aws:iam::222233334444:role/cellctl-deploy"}
	ts[1].Access = fleet.Access{Account: "222233334444", Role: role}
	ts[2].Access = fleet.Access{Account: "222233334444", Role: role}
	var asked []fleet.Access
	r := Read(context.Background(), ts, Options{Now: now, Parallel: 1, Reader: func(_ context.Context, a fleet.Access) (Reader, error) {
		asked = append(asked, a)
		if a.Role.RoleARN != "" {
			return nil, errors.New("AccessDenied")
		}
		return f, nil
	}})
	if len(asked) != 2 || asked[1].Region != "us-east-1" {
		t.Errorf("readers asked for %+v: want one per (account, region)", asked)
	}
	for _, c := range r.Cells {
		read := !strings.Contains(strings.Join(c.Findings, "; "), "cannot read CloudWatch")
		switch c.Cell {
		case "cell-a":
			if c.Account != "" || !read {
				t.Errorf("cell-a (the caller's account): account %q, findings %v", c.Account, c.Findings)
			}
		default:
			if c.Account != "222233334444" || len(c.Findings) == 0 || !strings.Contains(c.Findings[0], "cannot read CloudWatch in account 222233334444, us-east-1: AccessDenied") {
				t.Errorf("%s: account %q, findings %v", c.Cell, c.Account, c.Findings)
			}
		}
	}
}

// Load against the published capacity: over the warning share is a
// finding, the capacity alarm is read (and in ALARM is a finding too).
func TestLoadOverCapacityWarning(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{"cellctl-cell-a-capacity-warning": "OK", "cellctl-cell-b-capacity-warning": "ALARM"}}
	ts := fleetOf(f, "cell-a", "cell-b")
	ts[0] = target("cell-a", 100) // 10 req/s of 100: 10 %
	ts[1] = target("cell-b", 11)  // 10 req/s of 11: 91 %
	r := read(f, ts)
	b := r.Cells[0]
	if b.Cell != "cell-b" || b.Now.LoadPercent == nil || len(b.Findings) != 2 ||
		b.Findings[0] != "alarm cellctl-cell-b-capacity-warning in ALARM" || !strings.Contains(b.Findings[1], "load 91% of capacity (11 req/s) is over the 80% warning") {
		t.Fatalf("cell-b %+v", b)
	}
	a := r.Cells[1]
	if a.Bad() || *a.Now.LoadPercent != 10 {
		t.Errorf("cell-a %+v", a)
	}
	// (10 + 10) / (100 + 11) = 18 %: the fleet has room, cell-b does not.
	if len(r.Hidden) != 1 || !strings.Contains(r.Hidden[0], "load: the fleet runs at 18% of its capacity, but cell-b is at 91%") {
		t.Errorf("hidden %v", r.Hidden)
	}
}

// The documented -o json shape (docs/OBSERVABILITY.md): these keys, with
// null for what was not measurable.
func TestJSONShape(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{"cell-b": {requests: 0, healthy: 2}}, alarms: map[string]string{}}
	r := read(f, fleetOf(f, "cell-a", "cell-b"))
	var buf bytes.Buffer
	if err := render.JSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	if got, want := keys(doc), []string{"at", "averageHides", "cells", "cellsWithFindings", "fleetAverage", "since", "windowStart", "worst"}; !reflect.DeepEqual(got, want) {
		t.Errorf("top-level keys %v, want %v", got, want)
	}
	cells := doc["cells"].([]any)
	cell := cells[0].(map[string]any)
	if got, want := keys(cell), []string{"alarms", "capacityRps", "cell", "desiredTasks", "findings", "now", "nowAt", "region", "state", "thresholds", "window"}; !reflect.DeepEqual(got, want) {
		// capacityRps is omitted when no capacity is published.
		want = []string{"alarms", "cell", "desiredTasks", "findings", "now", "nowAt", "region", "state", "thresholds", "window"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("cell keys %v, want %v", got, want)
		}
	}
	signals := []string{"errorRatePercent", "healthyTasks", "loadPercent", "p99Ms", "requestsPerSecond", "unhealthyTasks"}
	for _, span := range []string{"now", "window"} {
		if got := keys(cell[span].(map[string]any)); !reflect.DeepEqual(got, signals) {
			t.Errorf("%s keys %v, want %v", span, got, signals)
		}
	}
	if got := keys(doc["fleetAverage"].(map[string]any)); !reflect.DeepEqual(got, []string{"cells", "desiredTasks", "errorRatePercent", "healthyTasks", "loadPercent", "p99Ms", "requestsPerSecond"}) {
		t.Errorf("fleetAverage keys %v", got)
	}
	alarm := cell["alarms"].([]any)[0].(map[string]any)
	if got := keys(alarm); !reflect.DeepEqual(got, []string{"key", "name", "state"}) {
		t.Errorf("alarm keys %v", got)
	}
	// No traffic: no error rate, no p99 — null, not 0.
	for _, c := range cells {
		c := c.(map[string]any)
		if c["cell"] == "cell-b" {
			now := c["now"].(map[string]any)
			if now["errorRatePercent"] != nil || now["p99Ms"] != nil || now["requestsPerSecond"] != float64(0) {
				t.Errorf("cell-b without traffic: %v", now)
			}
		}
	}
}

// --watch draws every complete report and stops when the context ends;
// a read cut short by the interrupt is not drawn, and the last complete
// report decides the exit.
func TestWatchDrawsEachCompleteUpdate(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{"cellctl-cell-b-5xx-rate": "ALARM"}}
	ts := fleetOf(f, "cell-a", "cell-b")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	readFn := func(ctx context.Context) Report {
		n++
		if n == 3 {
			cancel()
		}
		return read(f, ts)
	}
	tick := func(time.Duration) <-chan time.Time {
		ch := make(chan time.Time, 1)
		ch <- now
		return ch
	}
	var drawn []Report
	last := Watch(ctx, time.Second, readFn, func(r Report) { drawn = append(drawn, r) }, tick)
	if len(drawn) != 2 {
		t.Fatalf("%d updates drawn, want 2 (the third read was cut by the interrupt)", len(drawn))
	}
	for _, r := range drawn {
		if r.Worst != "cell-b" {
			t.Errorf("worst %q", r.Worst)
		}
	}
	if last.Err() == nil {
		t.Error("the last report must carry the findings")
	}
}

// The newest minute with only a gauge (RequestCount not landed yet, as on
// AWS) is not "now": the cell is judged on its newest minute with traffic.
func TestNowIsTheNewestMinuteWithRequests(t *testing.T) {
	f := &fakeCW{cells: map[string]minute{}, alarms: map[string]string{}}
	bad := good()
	bad.target5xx = 60
	f.cells["cell-a"] = bad
	ts := fleetOf(f, "cell-a")
	late := &lateCW{fakeCW: f}
	r := Read(context.Background(), ts, Options{Now: now, Since: 15 * time.Minute,
		Reader: func(context.Context, fleet.Access) (Reader, error) { return late, nil }})
	c := r.Cells[0]
	if c.Now.ErrorRatePercent == nil || *c.Now.ErrorRatePercent != 10 || !c.Bad() || !c.NowAt.Equal(now.Truncate(time.Minute).Add(-time.Minute)) {
		t.Fatalf("now %+v at %s findings %v", c.Now, c.NowAt, c.Findings)
	}
}

// lateCW drops the counters' newest minute.
type lateCW struct{ *fakeCW }

func (l *lateCW) MetricData(ctx context.Context, qs []awsapi.Query, start, end time.Time) (map[string]awsapi.Series, error) {
	out, err := l.fakeCW.MetricData(ctx, qs, start, end)
	for id, s := range out {
		if (id == "requests" || id == "target5xx" || id == "elb5xx") && len(s.Points) > 0 {
			s.Points = s.Points[:len(s.Points)-1]
			out[id] = s
		}
	}
	return out, err
}

// A stale or missing "now" is unreadable: a cell whose newest datapoint,
// or newest request, is minutes old is a finding naming its age, never a
// row judged on old data (every cell read ok, exit 0, with no traffic).
func TestStaleOrMissingNowIsAFinding(t *testing.T) {
	cases := map[string]struct {
		m    minute
		want string
	}{
		"nothing published for 4 minutes": {minute{requests: 600, healthy: 2, p99Seconds: 0.1, quietFor: 4 * time.Minute}, "now unreadable: the newest datapoint is 4m0s old"},
		"no requests for 4 minutes":       {minute{requests: 600, healthy: 2, p99Seconds: 0.1, idleFor: 4 * time.Minute}, "now unreadable: the newest RequestCount datapoint is 4m0s old"},
		"no requests in the window":       {minute{requests: 0, healthy: 2}, "now unreadable: no RequestCount datapoint in the window"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &fakeCW{cells: map[string]minute{"cell-a": tc.m}, alarms: map[string]string{}}
			r := read(f, fleetOf(f, "cell-a", "cell-b"))
			if r.Worst != "cell-a" || r.Err() == nil || !strings.Contains(strings.Join(r.Cells[0].Findings, "|"), tc.want) {
				t.Fatalf("worst %s findings %v, want %q", r.Worst, r.Cells[0].Findings, tc.want)
			}
		})
	}
	// Two minutes behind (CloudWatch's delay) is still now.
	f := &fakeCW{cells: map[string]minute{"cell-a": {requests: 600, healthy: 2, p99Seconds: 0.1, quietFor: 2 * time.Minute}}, alarms: map[string]string{}}
	if r := read(f, fleetOf(f, "cell-a")); r.Err() != nil {
		t.Errorf("a two-minute publishing delay is now: %v", r.Err())
	}
}
