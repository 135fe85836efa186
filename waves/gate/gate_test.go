package gate

import (
	"github.com/cellctl/cellctl/internal/awsname"

	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/signal"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// window is what one cell's metrics look like over a poll's window.
type window struct {
	requests, target5xx, elb5xx float64
	p99Seconds                  float64
	healthy, unhealthy          float64
	// absent lists metric IDs with no datapoint; incomplete those only
	// partly returned; missing those not returned at all.
	absent, incomplete, missing []string
}

func healthy() window {
	return window{requests: 1000, target5xx: 1, elb5xx: 1, p99Seconds: 0.25, healthy: 2}
}

// fakeReader is the one-struct fake every test configures: per cell, the
// alarms' states and a function giving the metrics at the n-th poll.
type fakeReader struct {
	mu        sync.Mutex
	alarms    map[string]string
	alarmErr  error
	metricErr error
	metrics   func(cell string, poll int) window
	polls     map[string]int
	queries   []MetricQuery
}

func newReader(metrics func(cell string, poll int) window) *fakeReader {
	r := &fakeReader{alarms: map[string]string{}, metrics: metrics, polls: map[string]int{}}
	for _, c := range []string{"cell-a", "cell-b", "cell-c"} {
		for _, n := range signal.AlarmNames(awsname.For("", c)) {
			r.alarms[n] = StateOK
		}
	}
	return r
}

func (r *fakeReader) AlarmStates(_ context.Context, names []string) (map[string]AlarmState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.alarmErr != nil {
		return nil, r.alarmErr
	}
	out := map[string]AlarmState{}
	for _, n := range names {
		if st, ok := r.alarms[n]; ok {
			out[n] = AlarmState{Name: n, State: st, Reason: "Threshold Crossed"}
		}
	}
	return out, nil
}

func (r *fakeReader) MetricData(_ context.Context, q MetricQuery) ([]Series, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queries = append(r.queries, q)
	if r.metricErr != nil {
		return nil, r.metricErr
	}
	cell := strings.Split(q.Metrics[0].Dimensions["LoadBalancer"], "/")[1]
	w := r.metrics(cell, r.polls[cell])
	r.polls[cell]++
	in := func(list []string, id string) bool {
		for _, s := range list {
			if s == id {
				return true
			}
		}
		return false
	}
	var out []Series
	for _, m := range q.Metrics {
		if in(w.missing, m.ID) {
			continue
		}
		v := map[string]float64{"requests": w.requests, "target5xx": w.target5xx, "elb5xx": w.elb5xx,
			"p99": w.p99Seconds, "healthy": w.healthy, "unhealthy": w.unhealthy}[m.ID]
		s := Series{ID: m.ID, Complete: !in(w.incomplete, m.ID)}
		if !in(w.absent, m.ID) {
			s.Timestamps, s.Values = []time.Time{q.Start}, []float64{v}
		}
		out = append(out, s)
	}
	return out, nil
}

func target(cell string) Target {
	th := signal.Defaults()
	th.ErrorRate5xx = signal.Threshold{Op: signal.Below, Value: 0.5}
	th.P99LatencyMs = signal.Threshold{Op: signal.Below, Value: 400}
	return Target{Cell: cell, LoadBalancer: "app/" + cell + "/0123", TargetGroup: "targetgroup/" + cell + "/4567",
		AlarmNames: signal.AlarmNames(awsname.For("", cell)), Thresholds: th}
}

// check is one poll of one cell over the minute after t0, as the rollout
// executor's bake asks for it (waves/executor/fromwaves.Gate).
func check(r Reader, g waves.Gate, tg Target) Poll {
	return (&Checker{Reader: r, Gate: g}).Check(context.Background(), tg, t0, t0.Add(time.Minute))
}

func TestHealthyCellPasses(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	p := (&Checker{Reader: r, Gate: waves.DefaultGate()}).Check(context.Background(), target("cell-a"), t0, t0.Add(100*time.Second))
	if p.Verdict != waves.Pass || p.Requests != 1000 || !p.WindowStart.Equal(t0) || !p.WindowEnd.Equal(t0.Add(100*time.Second)) {
		t.Fatalf("poll %+v", p)
	}
	got := map[signal.Name]string{}
	for _, rd := range p.Readings {
		if rd.Source == FromMetric {
			got[rd.Signal] = rd.Text
		}
	}
	want := map[signal.Name]string{signal.ErrorRate5xx: "0.2%", signal.P99LatencyMs: "250ms", signal.UnhealthyTasks: "0 tasks", signal.HealthyTasks: "2 tasks"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s reading %q, want %q", k, got[k], v)
		}
	}
	// The query: one bucket over the window, health metrics by target group.
	q := r.queries[len(r.queries)-1]
	if q.Period != 2*time.Minute || !q.End.Equal(t0.Add(100*time.Second)) {
		t.Errorf("query period %v end %v", q.Period, q.End)
	}
	for _, m := range q.Metrics {
		wantTG := m.ID == "healthy" || m.ID == "unhealthy"
		if _, has := m.Dimensions["TargetGroup"]; has != wantTG || m.Namespace != "AWS/ApplicationELB" {
			t.Errorf("metric %+v", m)
		}
		if m.ID == "p99" && (m.Name != "TargetResponseTime" || m.Stat != "p99") {
			t.Errorf("latency metric %+v", m)
		}
	}
}

func TestFailingCellBreachesNamingSignalReadingAndThreshold(t *testing.T) {
	r := newReader(func(string, int) window {
		w := healthy()
		w.target5xx = 30 // 3.1 % with the 1 ELB 5xx
		return w
	})
	p := check(r, waves.DefaultGate(), target("cell-b"))
	if p.Verdict != waves.Breached {
		t.Fatalf("poll %+v", p)
	}
	if want := "cell-b: breach: error_rate_5xx 3.1% (threshold < 0.5%)"; p.Summary() != want {
		t.Errorf("summary %q, want %q", p.Summary(), want)
	}
	br := p.Breaches()
	if len(br) != 1 || br[0].Signal != signal.ErrorRate5xx || *br[0].Value < 3.09 || br[0].Threshold != "< 0.5%" {
		t.Errorf("breaches %+v", br)
	}
	// Latency over its threshold, on another poll of a flapping cell.
	r = newReader(func(_ string, poll int) window {
		w := healthy()
		if poll%2 == 1 {
			w.p99Seconds = 0.9
		}
		return w
	})
	if p := check(r, waves.DefaultGate(), target("cell-a")); p.Verdict != waves.Pass {
		t.Fatalf("first poll of the flapping cell: %s", p.Summary())
	}
	if p := check(r, waves.DefaultGate(), target("cell-a")); p.Verdict != waves.Breached || !strings.Contains(p.Summary(), "p99_latency_ms 900ms (threshold < 400ms)") {
		t.Fatalf("its bad poll: %s", p.Summary())
	}
}

func TestAlarmInAlarmBreachesEvenWithGoodMetrics(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	r.alarms["cellctl-cell-a-unhealthy-tasks"] = StateAlarm
	if p := check(r, waves.DefaultGate(), target("cell-a")); p.Verdict != waves.Breached || !strings.Contains(p.Summary(), "alarm cellctl-cell-a-unhealthy-tasks ALARM") {
		t.Fatalf("%s", p.Summary())
	}
}

// Fail closed: nothing the gate cannot read may pass.
func TestUnreadableSignalsBreach(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(r *fakeReader)
		window func(w *window)
		want   string
	}{
		{"alarm read error", func(r *fakeReader) { r.alarmErr = errors.New("ThrottlingException: Rate exceeded") }, nil,
			"alarm cellctl-cell-a-5xx-rate unreadable: DescribeAlarms: ThrottlingException: Rate exceeded"},
		{"missing alarm", func(r *fakeReader) { delete(r.alarms, "cellctl-cell-a-p99-latency") }, nil,
			"alarm cellctl-cell-a-p99-latency missing: no such alarm in CloudWatch"},
		{"unknown alarm state", func(r *fakeReader) { r.alarms["cellctl-cell-a-p99-latency"] = "PENDING" }, nil,
			"alarm cellctl-cell-a-p99-latency PENDING: unknown alarm state"},
		{"metric read error", func(r *fakeReader) { r.metricErr = errors.New("AccessDenied") }, nil,
			"error_rate_5xx unreadable (threshold < 0.5%): GetMetricData: AccessDenied"},
		{"partial series", nil, func(w *window) { w.incomplete = []string{"target5xx"} },
			"error_rate_5xx unreadable (threshold < 0.5%): HTTPCode_Target_5XX_Count was only partly returned"},
		{"series not returned", nil, func(w *window) { w.missing = []string{"healthy"} },
			"healthy_tasks unreadable (threshold >= 1 task): HealthyHostCount was not returned"},
		{"no latency datapoint despite traffic", nil, func(w *window) { w.absent = []string{"p99"} },
			"p99_latency_ms unreadable (threshold < 400ms): no TargetResponseTime datapoint in the window"},
		{"no health datapoint", nil, func(w *window) { w.absent = []string{"unhealthy"} },
			"unhealthy_tasks unreadable (threshold <= 0 tasks): no UnHealthyHostCount datapoint in the window"},
		{"request count unreadable", nil, func(w *window) { w.incomplete = []string{"requests"} },
			"p99_latency_ms unreadable (threshold < 400ms): RequestCount was only partly returned"},
		{"no task left", nil, func(w *window) { w.healthy = 0 }, "healthy_tasks 0 tasks (threshold >= 1 task)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newReader(func(string, int) window {
				w := healthy()
				if c.window != nil {
					c.window(&w)
				}
				return w
			})
			if c.setup != nil {
				c.setup(r)
			}
			p := check(r, waves.DefaultGate(), target("cell-a"))
			if p.Verdict != waves.Breached || !strings.Contains(p.Summary(), c.want) {
				t.Fatalf("verdict %s, summary:\n  %s\nwant it to contain:\n  %s", p.Verdict, p.Summary(), c.want)
			}
		})
	}
}

func TestMissingStackOutputsBreach(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	tg := target("cell-a")
	tg.TargetGroup = ""
	delete(tg.AlarmNames, "5xx")
	p := check(r, waves.DefaultGate(), tg)
	s := p.Summary()
	for _, want := range []string{`the cell stack exports no "5xx" alarm`, "the cell's TargetGroup is not known"} {
		if p.Verdict != waves.Breached || !strings.Contains(s, want) {
			t.Errorf("%s\nwant %q", s, want)
		}
	}
}

func TestFailedUpdateBreaches(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	tg := target("cell-a")
	tg.Update = Update{Failed: true, Message: "ECS deployment circuit breaker: rolling back to deployment ecs-svc/123"}
	if p := check(r, waves.DefaultGate(), tg); p.Verdict != waves.Breached || !strings.Contains(p.Summary(), "update failed: ECS deployment circuit breaker") {
		t.Fatalf("%s", p.Summary())
	}
}

func TestNoTrafficIsInconclusiveNeverAPass(t *testing.T) {
	quiet := func(string, int) window {
		return window{requests: 40, healthy: 2, absent: []string{"target5xx", "elb5xx"}, p99Seconds: 0.1}
	}
	p := check(newReader(quiet), waves.DefaultGate(), target("cell-a"))
	if p.Verdict != waves.Inconclusive || !strings.Contains(p.Summary(), "40 requests in the window, fewer than min_requests 100") {
		t.Fatalf("%s", p.Summary())
	}
	// Low traffic does not excuse a metric that was only partly read.
	partial := func(c string, n int) window { w := quiet(c, n); w.incomplete = []string{"target5xx"}; return w }
	if p := check(newReader(partial), waves.DefaultGate(), target("cell-a")); p.Verdict != waves.Breached ||
		!strings.Contains(p.Summary(), "HTTPCode_Target_5XX_Count was only partly returned") {
		t.Errorf("partial read under low traffic: %s", p.Summary())
	}
	// No traffic at all and min_requests 0: the operator accepted that;
	// task health is still checked.
	g := waves.DefaultGate()
	g.MinRequests = 0
	none := func(string, int) window {
		return window{healthy: 2, absent: []string{"requests", "target5xx", "elb5xx", "p99"}}
	}
	if p := check(newReader(none), g, target("cell-a")); p.Verdict != waves.Pass {
		t.Errorf("min_requests 0: %s", p.Summary())
	}
	if p := check(newReader(func(c string, n int) window { w := none(c, n); w.healthy = 0; return w }), g, target("cell-a")); p.Verdict != waves.Breached {
		t.Errorf("no traffic and no task must still breach: %s", p.Summary())
	}
}

func TestAlarmWithoutDataYetIsNotAPass(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	r.alarms["cellctl-cell-a-5xx-rate"] = StateInsufficientData
	if p := check(r, waves.DefaultGate(), target("cell-a")); p.Verdict != waves.Inconclusive {
		t.Fatalf("%s", p.Summary())
	}
}

func TestLegacyGatesListLimitsTheSignals(t *testing.T) {
	r := newReader(func(string, int) window { w := healthy(); w.p99Seconds = 5; return w })
	g := waves.DefaultGate()
	g.Signals = []signal.Name{signal.ErrorRate5xx}
	p := check(r, g, target("cell-a"))
	if p.Verdict != waves.Pass {
		t.Fatalf("a wave gating only 5xx-rate must not read latency: %s", p.Summary())
	}
	for _, rd := range p.Readings {
		if rd.Signal != signal.ErrorRate5xx {
			t.Errorf("read %s", rd.Signal)
		}
	}
}

func TestTargetFromOutputs(t *testing.T) {
	outputs := map[string]any{
		"albArnSuffix": "app/cell-a/0123", "targetGroupArnSuffix": "targetgroup/cell-a/4567",
		"alarmNames": map[string]any{"5xx": "cellctl-cell-a-5xx-rate", "p99": "cellctl-cell-a-p99-latency", "unhealthy": "cellctl-cell-a-unhealthy-tasks"},
	}
	tg := TargetFromOutputs("cell-a", outputs, target("cell-a").Thresholds, Update{})
	p := (&Checker{Reader: newReader(func(string, int) window { return healthy() }), Gate: waves.DefaultGate()}).Check(context.Background(), tg, t0, t0.Add(time.Minute))
	if p.Verdict != waves.Pass {
		t.Fatalf("%s", p.Summary())
	}
	// A cell whose stack has no outputs (never deployed) must not pass.
	empty := TargetFromOutputs("cell-a", map[string]any{}, target("cell-a").Thresholds, Update{})
	if p := (&Checker{Reader: newReader(func(string, int) window { return healthy() }), Gate: waves.DefaultGate()}).Check(context.Background(), empty, t0, t0.Add(time.Minute)); p.Verdict != waves.Breached {
		t.Fatalf("no outputs: %s", p.Summary())
	}
}

// BenchmarkPoll16Cells is one poll of a 16-cell wave against an in-memory
// reader: the gate's own overhead per poll, without CloudWatch latency.
func BenchmarkPoll16Cells(b *testing.B) {
	r := newReader(func(string, int) window { return healthy() })
	var targets []Target
	for i := 0; i < 16; i++ {
		c := fmt.Sprintf("cell-%02d", i)
		for _, n := range signal.AlarmNames(awsname.For("", c)) {
			r.alarms[n] = StateOK
		}
		targets = append(targets, target(c))
	}
	c := &Checker{Reader: r, Gate: waves.DefaultGate()}
	b.ReportAllocs()
	for b.Loop() {
		// Cell by cell, as the executor's gate (fromwaves.Gate) polls a wave.
		var last Poll
		for _, tg := range targets {
			last = c.Check(context.Background(), tg, t0, t0.Add(time.Minute))
		}
		if last.Verdict != waves.Pass {
			b.Fatal(last.Summary())
		}
		r.queries = r.queries[:0]
	}
}
