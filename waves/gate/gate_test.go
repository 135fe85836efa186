package gate

import (
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

// fakeClock jumps forward on every wait.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

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
		for _, n := range signal.AlarmNames(c) {
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
		AlarmNames: signal.AlarmNames(cell), Thresholds: th}
}

func bake(r Reader, g waves.Gate, d time.Duration) (*Bake, *fakeClock) {
	clock := &fakeClock{now: t0}
	return &Bake{Reader: r, Gate: g, Duration: d, Clock: clock}, clock
}

func TestHealthyWavePromotesAfterTheWholeBake(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	b, _ := bake(r, waves.DefaultGate(), 100*time.Second)
	var recorded []Poll
	b.OnPoll = func(p Poll) error { recorded = append(recorded, p); return nil }
	res, err := b.Run(context.Background(), []Target{target("cell-a"), target("cell-b")}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision != Promote || res.Verdict != Pass {
		t.Fatalf("result %+v", res)
	}
	// Polls every 30 s from the start of the bake, and at its end.
	var ends []time.Duration
	for _, p := range res.Polls {
		if p.Cell == "cell-a" {
			ends = append(ends, p.WindowEnd.Sub(t0))
			if !p.WindowStart.Equal(t0) {
				t.Errorf("window starts %v, want the bake's start", p.WindowStart)
			}
		}
	}
	if want := []time.Duration{30 * time.Second, 60 * time.Second, 90 * time.Second, 100 * time.Second}; !equalDurations(ends, want) {
		t.Errorf("polls at %v, want %v", ends, want)
	}
	if len(recorded) != 8 || len(res.Polls) != 8 {
		t.Errorf("recorded %d polls, result %d, want 8", len(recorded), len(res.Polls))
	}
	p := res.Decisive[0]
	if p.Requests != 1000 || p.Verdict != Pass {
		t.Errorf("final poll %+v", p)
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

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAlwaysFailingCellBreachesAtTheFirstPoll(t *testing.T) {
	r := newReader(func(cell string, _ int) window {
		w := healthy()
		if cell == "cell-b" {
			w.target5xx = 30 // 3.1 % with the 1 ELB 5xx
		}
		return w
	})
	b, clock := bake(r, waves.DefaultGate(), 30*time.Minute)
	res, err := b.Run(context.Background(), []Target{target("cell-a"), target("cell-b")}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision != RollBack || res.Verdict != Breach || len(res.Decisive) != 1 || res.Decisive[0].Cell != "cell-b" {
		t.Fatalf("result %+v", res)
	}
	if want := "cell-b: breach: error_rate_5xx 3.1% (threshold < 0.5%)"; res.Reason != want {
		t.Errorf("reason %q, want %q", res.Reason, want)
	}
	if got := clock.Now().Sub(t0); got != 30*time.Second {
		t.Errorf("the bake went on for %v after the breach", got)
	}
	br := res.Decisive[0].Breaches()
	if len(br) != 1 || br[0].Signal != signal.ErrorRate5xx || *br[0].Value < 3.09 || br[0].Threshold != "< 0.5%" {
		t.Errorf("breaches %+v", br)
	}

	g := waves.DefaultGate()
	g.OnBreach = waves.Halt
	b, _ = bake(r, g, 30*time.Minute)
	if res, _ := b.Run(context.Background(), []Target{target("cell-b")}, t0); res.Decision != Halt {
		t.Errorf("on_breach halt: decision %s", res.Decision)
	}
}

func TestFlappingCellIsCaughtOnItsFirstBadPoll(t *testing.T) {
	r := newReader(func(_ string, poll int) window {
		w := healthy()
		if poll%2 == 1 {
			w.p99Seconds = 0.9
		}
		return w
	})
	b, _ := bake(r, waves.DefaultGate(), 10*time.Minute)
	res, err := b.Run(context.Background(), []Target{target("cell-a")}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Breach || len(res.Polls) != 2 || !strings.Contains(res.Reason, "p99_latency_ms 900ms (threshold < 400ms)") {
		t.Fatalf("polls %d, result %+v", len(res.Polls), res)
	}
}

func TestAlarmInAlarmBreachesEvenWithGoodMetrics(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	r.alarms["cellctl-cell-a-unhealthy-tasks"] = StateAlarm
	b, _ := bake(r, waves.DefaultGate(), time.Minute)
	res, _ := b.Run(context.Background(), []Target{target("cell-a")}, t0)
	if res.Verdict != Breach || !strings.Contains(res.Reason, "alarm cellctl-cell-a-unhealthy-tasks ALARM") {
		t.Fatalf("result %+v", res)
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
			b, _ := bake(r, waves.DefaultGate(), time.Minute)
			res, err := b.Run(context.Background(), []Target{target("cell-a")}, t0)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != Breach || res.Decision != RollBack || !strings.Contains(res.Reason, c.want) {
				t.Fatalf("verdict %s, reason:\n  %s\nwant it to contain:\n  %s", res.Verdict, res.Reason, c.want)
			}
		})
	}
}

func TestMissingStackOutputsBreach(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	tg := target("cell-a")
	tg.TargetGroup = ""
	delete(tg.AlarmNames, "5xx")
	p := (&Checker{Reader: r, Gate: waves.DefaultGate()}).Check(context.Background(), tg, t0, t0.Add(time.Minute))
	s := p.Summary()
	for _, want := range []string{`the cell stack exports no "5xx" alarm`, "the cell's TargetGroup is not known"} {
		if p.Verdict != Breach || !strings.Contains(s, want) {
			t.Errorf("%s\nwant %q", s, want)
		}
	}
}

func TestFailedUpdateBreaches(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	tg := target("cell-a")
	tg.Update = Update{Failed: true, Message: "ECS deployment circuit breaker: rolling back to deployment ecs-svc/123"}
	b, _ := bake(r, waves.DefaultGate(), 10*time.Minute)
	res, _ := b.Run(context.Background(), []Target{tg}, t0)
	if res.Verdict != Breach || !strings.Contains(res.Reason, "update failed: ECS deployment circuit breaker") {
		t.Fatalf("%+v", res)
	}
}

func TestNoTrafficIsInconclusiveNeverAPass(t *testing.T) {
	quiet := func(string, int) window {
		return window{requests: 40, healthy: 2, absent: []string{"target5xx", "elb5xx"}, p99Seconds: 0.1}
	}
	b, _ := bake(newReader(quiet), waves.DefaultGate(), 5*time.Minute)
	res, err := b.Run(context.Background(), []Target{target("cell-a")}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Inconclusive || res.Decision != Halt ||
		!strings.Contains(res.Reason, "40 requests in the window, fewer than min_requests 100 (on_inconclusive: halt)") {
		t.Fatalf("%+v", res)
	}
	// Low traffic does not excuse a metric that was only partly read.
	partial := func(c string, p int) window { w := quiet(c, p); w.incomplete = []string{"target5xx"}; return w }
	b, _ = bake(newReader(partial), waves.DefaultGate(), 5*time.Minute)
	if res, _ := b.Run(context.Background(), []Target{target("cell-a")}, t0); res.Verdict != Breach ||
		!strings.Contains(res.Reason, "HTTPCode_Target_5XX_Count was only partly returned") {
		t.Errorf("partial read under low traffic: %+v", res)
	}
	g := waves.DefaultGate()
	g.OnInconclusive = waves.InconclusivePromote
	b, _ = bake(newReader(quiet), g, 5*time.Minute)
	if res, _ := b.Run(context.Background(), []Target{target("cell-a")}, t0); res.Decision != Promote || res.Verdict != Inconclusive {
		t.Errorf("on_inconclusive promote: %+v", res)
	}
	// No traffic at all and min_requests 0: the operator accepted that;
	// task health is still checked.
	g = waves.DefaultGate()
	g.MinRequests = 0
	none := func(string, int) window {
		return window{healthy: 2, absent: []string{"requests", "target5xx", "elb5xx", "p99"}}
	}
	b, _ = bake(newReader(none), g, time.Minute)
	if res, _ := b.Run(context.Background(), []Target{target("cell-a")}, t0); res.Decision != Promote || res.Verdict != Pass {
		t.Errorf("min_requests 0: %+v", res)
	}
	b, _ = bake(newReader(func(c string, p int) window { w := none(c, p); w.healthy = 0; return w }), g, time.Minute)
	if res, _ := b.Run(context.Background(), []Target{target("cell-a")}, t0); res.Verdict != Breach {
		t.Errorf("no traffic and no task must still breach: %+v", res)
	}
}

func TestAlarmWithoutDataYetIsNotAPass(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	r.alarms["cellctl-cell-a-5xx-rate"] = StateInsufficientData
	b, _ := bake(r, waves.DefaultGate(), time.Minute)
	res, _ := b.Run(context.Background(), []Target{target("cell-a")}, t0)
	if res.Verdict != Inconclusive || res.Decision != Halt {
		t.Fatalf("%+v", res)
	}
}

func TestLegacyGatesListLimitsTheSignals(t *testing.T) {
	r := newReader(func(string, int) window { w := healthy(); w.p99Seconds = 5; return w })
	g := waves.DefaultGate()
	g.Signals = []signal.Name{signal.ErrorRate5xx}
	b, _ := bake(r, g, time.Minute)
	res, _ := b.Run(context.Background(), []Target{target("cell-a")}, t0)
	if res.Decision != Promote {
		t.Fatalf("a wave gating only 5xx-rate must not read latency: %+v", res)
	}
	for _, rd := range res.Polls[0].Readings {
		if rd.Signal != signal.ErrorRate5xx {
			t.Errorf("read %s", rd.Signal)
		}
	}
}

func TestRecordFailureAndCancelStopTheBake(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	b, _ := bake(r, waves.DefaultGate(), 10*time.Minute)
	b.OnPoll = func(Poll) error { return errors.New("disk full") }
	if _, err := b.Run(context.Background(), []Target{target("cell-a")}, t0); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b, _ = bake(r, waves.DefaultGate(), 10*time.Minute)
	n := 0
	b.OnPoll = func(Poll) error {
		n++
		if n == 2 {
			cancel()
		}
		return nil
	}
	if _, err := b.Run(ctx, []Target{target("cell-a")}, t0); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestResumedBakeKeepsItsWindowAndZeroBakePollsOnce(t *testing.T) {
	r := newReader(func(string, int) window { return healthy() })
	b, clock := bake(r, waves.DefaultGate(), 10*time.Minute)
	clock.now = t0.Add(9*time.Minute + 50*time.Second) // the rerun after a crash
	res, err := b.Run(context.Background(), []Target{target("cell-a")}, t0)
	if err != nil || res.Decision != Promote || len(res.Polls) != 1 || !res.Polls[0].WindowEnd.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("%v %+v", err, res)
	}
	b, _ = bake(r, waves.DefaultGate(), 0)
	if res, _ := b.Run(context.Background(), []Target{target("cell-a")}, t0); len(res.Polls) != 1 {
		t.Errorf("zero bake polled %d times", len(res.Polls))
	}
}

func TestTargetFromOutputs(t *testing.T) {
	outputs := map[string]any{
		"albArnSuffix": "app/cell-a/0123", "targetGroupArnSuffix": "targetgroup/cell-a/4567",
		"alarmNames": map[string]any{"5xx": "cellctl-cell-a-5xx-rate", "p99": "cellctl-cell-a-p99-latency", "unhealthy": "cellctl-cell-a-unhealthy-tasks"},
	}
	tg := TargetFromOutputs("cell-a", outputs, target("cell-a").Thresholds, Update{})
	p := (&Checker{Reader: newReader(func(string, int) window { return healthy() }), Gate: waves.DefaultGate()}).Check(context.Background(), tg, t0, t0.Add(time.Minute))
	if p.Verdict != Pass {
		t.Fatalf("%s", p.Summary())
	}
	// A cell whose stack has no outputs (never deployed) must not pass.
	empty := TargetFromOutputs("cell-a", map[string]any{}, target("cell-a").Thresholds, Update{})
	if p := (&Checker{Reader: newReader(func(string, int) window { return healthy() }), Gate: waves.DefaultGate()}).Check(context.Background(), empty, t0, t0.Add(time.Minute)); p.Verdict != Breach {
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
		for _, n := range signal.AlarmNames(c) {
			r.alarms[n] = StateOK
		}
		targets = append(targets, target(c))
	}
	bk := &Bake{Reader: r, Gate: waves.DefaultGate()}
	c := &Checker{Reader: r, Gate: bk.Gate}
	b.ReportAllocs()
	for b.Loop() {
		polls, err := bk.pollAll(context.Background(), c, targets, t0, t0.Add(time.Minute))
		if err != nil || len(polls) != 16 || polls[15].Verdict != Pass {
			b.Fatal(err, polls[15].Summary())
		}
		r.queries = r.queries[:0]
	}
}
