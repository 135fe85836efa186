package routercanary

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router/canary"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/gate"
)

const (
	v1 = "arn:aws:lambda:us-east-1:123456789012:function:router-edge:1"
	v2 = "arn:aws:lambda:us-east-1:123456789012:function:router-edge:2"
)

// fakeRouter is the router stack as the engine would deploy it: the
// function's newest version is newest; each up records its traffic split.
type fakeRouter struct {
	mu       sync.Mutex
	deployed bool
	newest   string
	primary  string
	staging  string
	ups      []*canary.Traffic
	failOn   canary.Phase
}

func (f *fakeRouter) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ups = append(f.ups, req.Inputs.Router)
	t := req.Inputs.Router
	if t != nil && t.Phase == f.failOn {
		return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: errors.New("boom")}
	}
	f.deployed = true
	switch {
	case t == nil || t.Phase == canary.Stable && t.PrimaryFunctionArn == "":
		f.primary, f.staging = f.newest, f.newest
	case t.Phase == canary.Stable:
		f.primary, f.staging = t.PrimaryFunctionArn, t.PrimaryFunctionArn
	default:
		f.primary, f.staging = t.PrimaryFunctionArn, f.newest
	}
	return &stackrun.Result{Name: req.Stack, Result: stackrun.Succeeded, Outputs: f.outputsLocked()}
}

func (f *fakeRouter) outputsLocked() map[string]any {
	if !f.deployed {
		return map[string]any{}
	}
	return map[string]any{"primaryFunctionArn": f.primary, "stagingFunctionArn": f.staging, "stagingDistributionId": "E2STAGING00001", "canaryPhase": "stable"}
}

func (f *fakeRouter) Outputs(context.Context, string) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.outputsLocked(), nil
}

// edge is the staging distribution's CloudWatch: requests and 5xx rate
// per minute, the function errors.
type edge struct {
	requests, rate5xx, fnErrors float64
	err                         error
}

func (e *edge) AlarmStates(context.Context, []string) (map[string]gate.AlarmState, error) {
	return nil, errors.New("no alarms")
}

func (e *edge) MetricData(_ context.Context, q gate.MetricQuery) ([]gate.Series, error) {
	if e.err != nil {
		return nil, e.err
	}
	var out []gate.Series
	for _, m := range q.Metrics {
		if m.Dimensions["DistributionId"] != "E2STAGING00001" {
			continue
		}
		v := map[string]float64{"Requests": e.requests, "5xxErrorRate": e.rate5xx, "LambdaExecutionError": e.fnErrors}[m.Name]
		s := gate.Series{ID: m.ID, Complete: true}
		if v > 0 || m.Name == "5xxErrorRate" {
			s.Timestamps, s.Values = []time.Time{q.Start}, []float64{v}
		}
		out = append(out, s)
	}
	return out, nil
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func newEnv(r *fakeRouter, e *edge) *Env {
	return &Env{
		Runner:  r,
		Outputs: r.Outputs,
		Reader:  func(context.Context, string) (gate.Reader, error) { return e, nil },
		Clock:   &clock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)},
		Token:   func() (string, error) { return "tok", nil },
	}
}

func deployedRouter() *fakeRouter {
	return &fakeRouter{deployed: true, newest: v2, primary: v1, staging: v1}
}

func TestGoodCandidateIsPromotedAfterSmokeAndWeight(t *testing.T) {
	r := deployedRouter()
	res, err := Run(context.Background(), newEnv(r, &edge{requests: 5000, rate5xx: 0.1}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Promoted || r.primary != v2 {
		t.Fatalf("outcome %s, primary %s; want promoted to %s", res.Outcome, r.primary, v2)
	}
	want := []canary.Phase{canary.Header, canary.Weight, canary.Stable}
	if len(r.ups) != len(want) {
		t.Fatalf("%d ups, want %d", len(r.ups), len(want))
	}
	for i, p := range want {
		if r.ups[i].Phase != p {
			t.Errorf("up %d: phase %s, want %s", i, r.ups[i].Phase, p)
		}
	}
	if r.ups[0].PrimaryFunctionArn != v1 || r.ups[1].PrimaryFunctionArn != v1 || r.ups[1].Weight != DefaultWeight {
		t.Errorf("the primary must keep %s while the candidate bakes: %+v %+v", v1, r.ups[0], r.ups[1])
	}
	if len(res.Steps) != 2 || res.Steps[0].Decision != waves.Pass || res.Steps[1].Decision != waves.Pass {
		t.Errorf("steps %+v: want two passed bakes", res.Steps)
	}
}

func TestBadCandidateIsDiscardedAndThePrimaryNeverRunsIt(t *testing.T) {
	cases := map[string]*edge{
		"5xx on staging":        {requests: 5000, rate5xx: 7},
		"the function fails":    {requests: 5000, rate5xx: 0.1, fnErrors: 3},
		"too little traffic":    {requests: 10, rate5xx: 0},
		"CloudWatch unreadable": {err: errors.New("AccessDenied")},
	}
	for name, e := range cases {
		t.Run(name, func(t *testing.T) {
			r := deployedRouter()
			res, err := Run(context.Background(), newEnv(r, e), Options{})
			var halted *outcome.HaltedError
			if !errors.As(err, &halted) {
				t.Fatalf("error %v, want a halt (exit 3)", err)
			}
			if res.Outcome != Discarded || r.primary != v1 || r.staging != v1 {
				t.Fatalf("outcome %s, primary %s, staging %s; want discarded with both on %s", res.Outcome, r.primary, r.staging, v1)
			}
			for i, u := range r.ups {
				if u != nil && u.PrimaryFunctionArn != v1 {
					t.Fatalf("up %d gave the primary %q: a breached candidate must never reach it", i, u.PrimaryFunctionArn)
				}
			}
			if !strings.Contains(err.Error(), "header phase") || !strings.Contains(err.Error(), "cellctl router canary") {
				t.Errorf("halt %q must name the phase and the next command", err)
			}
		})
	}
}

func TestBreachInTheWeightedPhaseIsDiscardedToo(t *testing.T) {
	r := deployedRouter()
	e := &edge{requests: 5000, rate5xx: 0.1}
	env := newEnv(r, e)
	calls := 0
	env.Reader = func(context.Context, string) (gate.Reader, error) {
		calls++
		if calls > 1 { // the weighted phase meets the real traffic and fails
			return &edge{requests: 5000, rate5xx: 12}, nil
		}
		return e, nil
	}
	_, err := Run(context.Background(), env, Options{})
	if err == nil || !strings.Contains(err.Error(), "weight phase") || r.primary != v1 || r.staging != v1 {
		t.Fatalf("err %v, primary %s, staging %s", err, r.primary, r.staging)
	}
}

func TestUnchangedFunctionAndFirstDeployNeedNoCanary(t *testing.T) {
	r := &fakeRouter{deployed: true, newest: v1, primary: v1, staging: v1}
	res, err := Run(context.Background(), newEnv(r, &edge{}), Options{})
	if err != nil || res.Outcome != Unchanged || len(r.ups) != 2 || r.ups[1].Phase != canary.Stable {
		t.Fatalf("unchanged: %v %+v, ups %d", err, res, len(r.ups))
	}
	r = &fakeRouter{newest: v1}
	res, err = Run(context.Background(), newEnv(r, &edge{}), Options{})
	if err != nil || res.Outcome != FirstDeploy || len(r.ups) != 1 || r.ups[0] != nil || r.primary != v1 {
		t.Fatalf("first deploy: %v %+v", err, res)
	}
}

func TestFailedStepRevertsTheStaging(t *testing.T) {
	r := deployedRouter()
	r.failOn = canary.Weight
	res, err := Run(context.Background(), newEnv(r, &edge{requests: 5000, rate5xx: 0.1}), Options{})
	if err == nil || res.Outcome != Discarded || r.staging != v1 || r.primary != v1 {
		t.Fatalf("err %v, outcome %s, staging %s", err, res.Outcome, r.staging)
	}
}

func TestDiscardRevertsAndOptionsAreChecked(t *testing.T) {
	r := &fakeRouter{deployed: true, newest: v2, primary: v1, staging: v2}
	res, err := Run(context.Background(), newEnv(r, &edge{}), Options{Discard: true})
	if err != nil || res.Outcome != Reverted || r.staging != v1 || r.primary != v1 {
		t.Fatalf("discard: %v %+v staging %s", err, res, r.staging)
	}
	r = deployedRouter()
	if _, err := Run(context.Background(), newEnv(r, &edge{}), Options{Weight: 0.2}); err == nil || !strings.Contains(err.Error(), "at most 0.15") || len(r.ups) != 0 {
		t.Fatalf("weight 0.2: %v, %d ups", err, len(r.ups))
	}
}

// An inconclusive canary says it was inconclusive; only a breach blames
// the table or the handler.
func TestInconclusiveCanaryIsNotBlamedOnTheTable(t *testing.T) {
	for name, tc := range map[string]struct {
		e          *edge
		want, deny string
	}{
		"too little traffic": {&edge{requests: 10}, "inconclusive, not failed", "fix the routing table"},
		"5xx on staging":     {&edge{requests: 5000, rate5xx: 7}, "fix the routing table", "inconclusive"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Run(context.Background(), newEnv(deployedRouter(), tc.e), Options{})
			var halted *outcome.HaltedError
			if !errors.As(err, &halted) || !strings.Contains(halted.Next, tc.want) || strings.Contains(halted.Next, tc.deny) {
				t.Fatalf("halt %v next %q, want %q and not %q", err, halted.Next, tc.want, tc.deny)
			}
		})
	}
}

// A rehearsal's canary (--bake-scale) scales its minimum request counts
// with its bakes: the default 500 in a bake a hundredth as long was never
// met, so every rehearsal of an edge change halted.
func TestScaledCanaryScalesItsMinimumWithItsBakes(t *testing.T) {
	o := Options{}.WithDefaults()
	s := o.Scaled(0.01)
	if s.HeaderBake >= o.HeaderBake || s.WeightBake >= o.WeightBake || s.Poll >= o.Poll {
		t.Errorf("bakes not scaled: %+v", s)
	}
	if want := int(math.Ceil(float64(o.WeightMinRequests) * 0.01)); s.WeightMinRequests != want || s.HeaderMinRequests < 1 {
		t.Errorf("min requests %d/%d, want the weighted phase's %d scaled to %d (at least 1)", s.HeaderMinRequests, s.WeightMinRequests, o.WeightMinRequests, want)
	}
	if u := o.Scaled(1); u != o {
		t.Errorf("scale 1 changed the options: %+v", u)
	}
	// Traffic a scaled window sees (20 requests) meets the scaled minimum.
	r := deployedRouter()
	res, err := Run(context.Background(), newEnv(r, &edge{requests: 20, rate5xx: 0.1}), s)
	if err != nil || res.Outcome != Promoted {
		t.Fatalf("scaled rehearsal: %v %s", err, res.Outcome)
	}
}
