package health

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

func states(t *testing.T, c *store.Cloud, stack string) map[string]string {
	t.Helper()
	st, err := AlarmStates(c, stack)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func cellStatus(t *testing.T, c *store.Cloud, stack string, history int) Cell {
	t.Helper()
	rep, err := Read(c, history)
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range rep.Status {
		if cs.Stack == stack {
			return cs
		}
	}
	t.Fatalf("no health for %s in %+v", stack, rep)
	return Cell{}
}

func TestHealthFollowsTheImageAndEvaluatesAlarms(t *testing.T) {
	clk := simtest.NewClock()
	dir := t.TempDir()
	a := simtest.NewSimCell(t, dir, clk, "a", "us-east-1", "10.1.0.0/16", "registry/app:v1")
	base, _ := store.Open(dir)
	c := clk.Cloud(base)

	// Healthy by default: traffic, few errors, all tasks healthy, alarms OK.
	clk.Advance(5 * time.Minute)
	now := cellStatus(t, c, "cell-a", 3)
	if now.Image != "registry/app:v1" || now.Source != "default" || now.Now.Requests != 600 || now.Now.Target5xx != 1 || now.Now.Healthy != 2 || now.Now.Desired != 2 {
		t.Fatalf("default health = %+v", now)
	}
	if len(now.History) != 3 {
		t.Errorf("history = %d minutes, want 3", len(now.History))
	}
	for name, st := range states(t, c, "cell-a") {
		if st != store.AlarmOK {
			t.Errorf("healthy cell: alarm %s = %s", name, st)
		}
	}

	// v2 is a bad build; the cell moves onto it.
	if _, err := Set(c, Target{Image: "registry/app:v2"}, Profile{ErrorRate: simtest.Ptr(0.03), P99: simtest.Ptr(store.Duration(900 * time.Millisecond))}); err != nil {
		t.Fatal(err)
	}
	if st := states(t, c, "cell-a")["cellctl-a-5xx-rate"]; st != store.AlarmOK {
		t.Fatalf("image profile alone must not touch a cell running v1: %s", st)
	}
	clk.Advance(30 * time.Second)
	a.Deploy(t, "registry/app:v2")
	now = cellStatus(t, c, "cell-a", 0)
	if now.Image != "registry/app:v2" || now.Source != "image registry/app:v2" || now.Now.Target5xx != 18 || now.Now.P99 != 0.9 {
		t.Fatalf("after the bad deploy = %+v", now)
	}
	// 2 of 2 periods: the current minute breaches, the one before did not.
	if st := states(t, c, "cell-a")["cellctl-a-5xx-rate"]; st != store.AlarmOK {
		t.Errorf("one breaching datapoint of 2 needed: %s", st)
	}
	clk.Advance(time.Minute)
	st := states(t, c, "cell-a")
	if st["cellctl-a-5xx-rate"] != store.AlarmAlarm || st["cellctl-a-p99-latency"] != store.AlarmAlarm || st["cellctl-a-unhealthy-tasks"] != store.AlarmOK {
		t.Fatalf("two bad minutes: alarms = %v", st)
	}
	alarms, _ := Alarms(c, "cell-a")
	for _, al := range alarms {
		if al.AlarmName == "cellctl-a-5xx-rate" && !strings.Contains(al.Reason, "[3, 3] were greater than the threshold (1)") {
			t.Errorf("reason = %q", al.Reason)
		}
	}
	// The history keeps what ran when: v1 minutes before the deploy.
	hist := cellStatus(t, c, "cell-a", 10).History
	if hist[0].Image != "registry/app:v1" || hist[len(hist)-1].Image != "registry/app:v2" {
		t.Errorf("history images: first %s, last %s", hist[0].Image, hist[len(hist)-1].Image)
	}

	// Roll back: alarms recover once two good minutes pass.
	a.Deploy(t, "registry/app:v1")
	clk.Advance(2 * time.Minute)
	if st := states(t, c, "cell-a"); st["cellctl-a-5xx-rate"] != store.AlarmOK || st["cellctl-a-p99-latency"] != store.AlarmOK {
		t.Errorf("after rollback: %v", st)
	}
}

func TestHealthCellOverridesNoTrafficAndManualAlarms(t *testing.T) {
	clk := simtest.NewClock()
	dir := t.TempDir()
	simtest.NewSimCell(t, dir, clk, "a", "us-east-1", "10.1.0.0/16", "app:v1")
	simtest.NewSimCell(t, dir, clk, "b", "us-east-1", "10.2.0.0/16", "app:v1")
	base, _ := store.Open(dir)
	c := clk.Cloud(base)

	// A cell override beats the image; the other cell is untouched.
	Set(c, Target{Image: "app:v1"}, Profile{ErrorRate: simtest.Ptr(0.5)})
	if _, err := Set(c, Target{Cell: "b"}, Profile{ErrorRate: simtest.Ptr(0.0), HealthyTasks: simtest.Ptr(1)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(3 * time.Minute)
	b := cellStatus(t, c, "cell-b", 0)
	if b.Source != "cell cell-b" || b.Now.Target5xx != 0 || b.Now.Healthy != 1 {
		t.Errorf("cell-b = %+v", b)
	}
	if st := states(t, c, "b"); st["cellctl-b-unhealthy-tasks"] != store.AlarmAlarm || st["cellctl-b-5xx-rate"] != store.AlarmOK {
		t.Errorf("cell-b alarms = %v", st)
	}
	if st := states(t, c, "a"); st["cellctl-a-5xx-rate"] != store.AlarmAlarm {
		t.Errorf("cell-a alarms = %v", st)
	}

	// No traffic: no requests, no latency; the 5xx alarm treats missing
	// data as not breaching.
	Clear(c, Target{})
	if _, err := Set(c, Target{Cell: "cell-a"}, Profile{RequestsPerMinute: simtest.Ptr(0.0)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Minute)
	if a := cellStatus(t, c, "cell-a", 0); a.Now.Requests != 0 || a.Now.P99 != 0 || a.Now.Healthy != 2 {
		t.Errorf("no traffic = %+v", a.Now)
	}
	if st := states(t, c, "a")["cellctl-a-5xx-rate"]; st != store.AlarmOK {
		t.Errorf("no traffic: 5xx alarm %s", st)
	}

	// A state set by hand holds against evaluation until health clear.
	if _, err := c.SetAlarm("a", "cellctl-a-5xx-rate", store.AlarmAlarm, "rehearsal"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Minute)
	if st := states(t, c, "a")["cellctl-a-5xx-rate"]; st != store.AlarmAlarm {
		t.Fatalf("manual ALARM was overwritten: %s", st)
	}
	if err := Clear(c, Target{Cell: "a"}); err != nil {
		t.Fatal(err)
	}
	if st := states(t, c, "a")["cellctl-a-5xx-rate"]; st != store.AlarmOK {
		t.Errorf("after clear: %s", st)
	}
}

func TestHealthInputErrors(t *testing.T) {
	c, _ := store.Open(t.TempDir())
	for _, tc := range []struct {
		t    Target
		p    Profile
		want string
	}{
		{Target{}, Profile{ErrorRate: simtest.Ptr(0.1)}, "exactly one of an image (--image) or a cell (--cell)"},
		{Target{Image: "x", Cell: "a"}, Profile{ErrorRate: simtest.Ptr(0.1)}, "exactly one"},
		{Target{Image: "x"}, Profile{}, "nothing to set"},
		{Target{Image: "x"}, Profile{ErrorRate: simtest.Ptr(1.5)}, "error rate 150% must be between 0% and 100%"},
		{Target{Cell: "a"}, Profile{P99: simtest.Ptr(store.Duration(-1))}, "p99 -1ns must be more than 0"},
		{Target{Cell: "a"}, Profile{RequestsPerMinute: simtest.Ptr(-3.0)}, "requests per minute -3 must be a number ≥ 0"},
		{Target{Cell: "a"}, Profile{HealthyTasks: simtest.Ptr(-1)}, "healthy tasks -1 must not be negative"},
	} {
		if _, err := Set(c, tc.t, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetHealth(%+v) error = %v, want %q", tc.t, err, tc.want)
		}
	}
	if err := Clear(c, Target{Image: "never-set"}); err == nil || !strings.Contains(err.Error(), `no health profile for image "never-set"`) {
		t.Errorf("clear unknown image: %v", err)
	}
	for in, want := range map[string]float64{"3%": 0.03, "0.5 %": 0.005, "0.02": 0.02, "100%": 1} {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"3", "abc", "-1%", "101%", ""} {
		if _, err := ParsePercent(in); err == nil {
			t.Errorf("ParsePercent(%q) accepted", in)
		}
	}
}

func TestMetricMath(t *testing.T) {
	vals := map[string]float64{"a": 3, "b": 4}
	look := func(id string) (float64, bool, error) { v, ok := vals[id]; return v, ok, nil }
	for src, want := range map[string]float64{
		"100 * (FILL(a, 0) + FILL(missing, 0)) / b": 75, "a + b * 2": 11, "-(a - b)": 1, "FILL(missing, 7)": 7,
	} {
		e, err := parseExpr(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, err := e.eval(func(id string) (float64, bool, error) {
			if id == "missing" {
				return 0, false, nil
			}
			return look(id)
		})
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
	for _, bad := range []string{"METRICS()", "a +", "(a", "FILL(a)", "a $ b"} {
		if _, err := parseExpr(bad); err == nil || !strings.Contains(err.Error(), "the simulator cannot evaluate expression") {
			t.Errorf("%q: error = %v", bad, err)
		}
	}
}

func TestAlarmTreatsMissingDataAsConfigured(t *testing.T) {
	now := simtest.NewClock().T
	ch := &cellHealth{stack: "cell-a", lbSuffix: "app/a/1", tgSuffix: "targetgroup/a/2"}
	cells := []*cellHealth{ch}
	def := func(treat string) alarmDef {
		return alarmDef{comparison: "GreaterThanThreshold", threshold: 1, evalPeriods: 3, toAlarm: 2, treatMissing: treat, period: time.Minute,
			namespace: albNamespace, metric: "RequestCount", stat: "Sum", dims: map[string]string{"LoadBalancer": "app/a/1"}}
	}
	for treat, want := range map[string]string{"missing": store.AlarmInsufficientData, "breaching": store.AlarmAlarm, "notBreaching": store.AlarmOK, "ignore": "PREVIOUS"} {
		if got, reason := def(treat).evaluate(cells, ch, nil, now, "PREVIOUS"); got != want {
			t.Errorf("no data, treat %s: %s (%s), want %s", treat, got, reason, want)
		}
	}
	// 2 of 3: one breaching minute is not enough, two are.
	one := []Sample{{Time: now.Add(-2 * time.Minute), Requests: 5, Healthy: 1}, {Time: now.Add(-time.Minute), Requests: 1, Healthy: 1}, {Time: now, Requests: 1, Healthy: 1}}
	if got, _ := def("missing").evaluate(cells, ch, one, now, store.AlarmOK); got != store.AlarmOK {
		t.Errorf("1 of 3 breaching: %s", got)
	}
	one[2].Requests = 9
	if got, reason := def("missing").evaluate(cells, ch, one, now, store.AlarmOK); got != store.AlarmAlarm || !strings.Contains(reason, "2 out of the last 3 datapoints [5, 1, 9]") {
		t.Errorf("2 of 3 breaching: %s %s", got, reason)
	}
	// Another cell's load balancer is not this cell's data.
	other := def("missing")
	other.dims = map[string]string{"LoadBalancer": "app/b/9"}
	if got, _ := other.evaluate(cells, ch, one, now, store.AlarmOK); got != store.AlarmInsufficientData {
		t.Errorf("foreign dimensions: %s", got)
	}
	bad := def("missing")
	bad.stat = "tm99"
	if got, reason := bad.evaluate(cells, ch, one, now, store.AlarmOK); got != store.AlarmInsufficientData || !strings.Contains(reason, `does not compute statistic "tm99"`) {
		t.Errorf("unsupported statistic: %s %s", got, reason)
	}
}

// Several processes (here: separately opened clouds, each with its own
// lock file handle) advancing the model at once leave one clean history:
// one sample per minute, in order.
func TestHealthHistoryIsSafeAcrossProcesses(t *testing.T) {
	clk := simtest.NewClock()
	dir := t.TempDir()
	simtest.NewSimCell(t, dir, clk, "a", "us-east-1", "10.1.0.0/16", "app:v1")
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clk.T }
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			c, err := store.Open(dir)
			if err != nil {
				errs <- err
				return
			}
			c = c.WithClock(now)
			for j := 0; j < 20; j++ {
				if _, err := Read(c, 0); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				clk.T = clk.T.Add(7 * time.Second)
				mu.Unlock()
			}
			errs <- nil
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	c, _ := store.Open(dir)
	hist := cellStatus(t, c.WithClock(now), "cell-a", historyMinutes).History
	for i := 1; i < len(hist); i++ {
		if d := hist[i].Time.Sub(hist[i-1].Time); d != time.Minute {
			t.Fatalf("samples %d and %d are %s apart: %v, %v", i-1, i, d, hist[i-1].Time, hist[i].Time)
		}
	}
	// From the load balancer's creation (no backfill before it) to the
	// last complete minute.
	if want := int(clk.T.Sub(simtest.NewClock().T) / time.Minute); len(hist) != want {
		t.Errorf("history = %d minutes, want %d", len(hist), want)
	}
}

func TestResetClearsHealthProfiles(t *testing.T) {
	c, _ := store.Open(t.TempDir())
	if _, err := Set(c, Target{Image: "bad:1"}, Profile{ErrorRate: simtest.Ptr(0.5)}); err != nil {
		t.Fatal(err)
	}
	if err := Reset(c); err != nil {
		t.Fatal(err)
	}
	rep, err := Read(c, 0)
	if err != nil || len(rep.Images) != 0 {
		t.Errorf("after reset: %+v, %v", rep.Images, err)
	}
}

// TestDefaultHealthServesTheRateItStates: the default profile's rate is
// what a minute of it reads (requests and 5xx are whole numbers, so a
// stated 0.1 % read 0.167 %: one 5xx in 600, docs included), and a set
// rate reads round(600 × rate) of 600, as `sim health --help` says.
func TestDefaultHealthServesTheRateItStates(t *testing.T) {
	d := Default()
	m := sample(time.Unix(0, 0), "app:1", d, 2, false)
	if m.Requests != 600 || m.Target5xx != 1 || m.Target5xx/m.Requests != *d.ErrorRate {
		t.Errorf("default minute: %v requests, %v 5xx (%.4g%%); the profile says %.4g%%", m.Requests, m.Target5xx, 100*m.Target5xx/m.Requests, 100**d.ErrorRate)
	}
	rate := 0.012
	set := sample(time.Unix(0, 0), "app:1", Profile{ErrorRate: &rate}.over(d), 2, false)
	if set.Target5xx != 7 {
		t.Errorf("--error-rate 1.2%%: %v of 600, want 7 (1.167%%)", set.Target5xx)
	}
}
