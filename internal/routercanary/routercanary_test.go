package routercanary

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/adapters/backend/backendtest"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router/canary"
	"github.com/cellctl/cellctl/stacks"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/executor/executortest"
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
	phase    canary.Phase
	table    float64
	ups      []*canary.Traffic
	failOn   canary.Phase
	// onUp runs after an up was applied (a kill right after it).
	onUp func(t *canary.Traffic)
}

func (f *fakeRouter) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	f.mu.Lock()
	f.ups = append(f.ups, req.Inputs.Router)
	t := req.Inputs.Router
	if t != nil && t.Phase == f.failOn {
		f.mu.Unlock()
		return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: errors.New("boom")}
	}
	f.deployed = true
	switch {
	case t == nil || t.Phase == canary.Stable && t.PrimaryFunctionArn == "":
		f.primary, f.staging, f.phase = f.newest, f.newest, canary.Stable
	case t.Phase == canary.Stable:
		f.primary, f.staging, f.phase = t.PrimaryFunctionArn, t.PrimaryFunctionArn, canary.Stable
	default:
		f.primary, f.staging, f.phase = t.PrimaryFunctionArn, f.newest, t.Phase
	}
	outs := f.outputsLocked()
	onUp := f.onUp
	f.mu.Unlock()
	if onUp != nil {
		onUp(t)
	}
	return &stackrun.Result{Name: req.Stack, Result: stackrun.Succeeded, Outputs: outs}
}

func (f *fakeRouter) outputsLocked() map[string]any {
	if !f.deployed {
		return map[string]any{}
	}
	phase := f.phase
	if phase == "" {
		phase = canary.Stable
	}
	return map[string]any{"primaryFunctionArn": f.primary, "stagingFunctionArn": f.staging, "stagingDistributionId": "E2STAGING00001",
		"canaryPhase": string(phase), "tableVersion": f.table, "functionArn": f.newest}
}

func (f *fakeRouter) phases() []canary.Phase {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []canary.Phase
	for _, u := range f.ups {
		if u == nil {
			out = append(out, "nil")
			continue
		}
		out = append(out, u.Phase)
	}
	return out
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

func newEnv(r *fakeRouter, e *edge) *Env {
	return &Env{
		Env: gated.Env{
			Runner:  r,
			Outputs: r.Outputs,
			Reader:  func(context.Context, fleet.Access) (gate.Reader, error) { return e, nil },
			Clock:   executortest.NewClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)),
			Store:   newStore(),
			Host:    "ci-1",
			PID:     7,
		},
		Token: func() (string, error) { return "tok", nil },
	}
}

// store is the real record store and fleet lock with kills injected.
type store struct{ *backendtest.Store }

func newStore() *store { return &store{backendtest.New()} }

func (s *store) canaries(t *testing.T) []*executor.Record { return s.Records(t, executor.KindCanary) }

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
	env.Reader = func(context.Context, fleet.Access) (gate.Reader, error) {
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

// --discard with no canary in flight — no unfinished record, the staging
// distribution on the primary's version, the policy off — has nothing to
// discard: it says so, runs no engine, writes no record and exits 0 (it
// ran an up and recorded "reverted"); its dry run says the same.
func TestDiscardWithNothingInFlightDoesNothing(t *testing.T) {
	r := deployedRouter()
	env := newEnv(r, &edge{requests: 5000, rate5xx: 0.1})
	var log strings.Builder
	env.Log = &log
	if rt := dryRun(t, env, r, Options{Discard: true}); rt.Start != StartNothingToDiscard || len(rt.Phases) != 0 {
		t.Fatalf("dry run: %+v", rt)
	}
	res, err := Run(context.Background(), env, Options{Discard: true})
	if err != nil || res.Outcome != NothingToDiscard || res.ID != "" {
		t.Fatalf("discard: %v %+v", err, res)
	}
	if len(r.ups) != 0 {
		t.Errorf("ran the engine %d times: %v", len(r.ups), r.phases())
	}
	if recs := env.Store.(*store).canaries(t); len(recs) != 0 {
		t.Errorf("wrote %d records", len(recs))
	}
	if !strings.Contains(log.String(), "nothing to discard") {
		t.Errorf("log %q does not say there was nothing to discard", log.String())
	}
	// The lock is free: a canary runs next.
	if _, err := Run(context.Background(), env, Options{}); err != nil {
		t.Fatalf("a canary after it: %v", err)
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

// killAt makes the store die (kill -9) at the first save for which cond
// holds of the record's canary.
func killAt(st *store, cond func(cr *executor.CanaryRecord) bool) {
	st.DieAt = func(r *executor.Record) bool { return r.Canary != nil && cond(r.Canary) }
}

func bakingWithAPoll(phase string) func(cr *executor.CanaryRecord) bool {
	return func(cr *executor.CanaryRecord) bool {
		i := lastPhase(cr, phase)
		return cr.Phase == phase && i >= 0 && cr.Phases[i].State == executor.WaveBaking && len(cr.Phases[i].Polls) > 0
	}
}

// rerun is the next `cellctl router canary` on this host after the kill:
// another pid, the dead one's process gone.
func rerun(env *Env) *Env {
	next := *env
	next.PID = 8
	next.Alive = func(h executor.Holder) bool { return h.PID != 7 }
	next.Store.(*store).Revive()
	return &next
}

// Killed while a phase bakes, the canary is never invisible: its record
// says which phase, since when, which weight; its lock refuses every
// other change. The next run takes the dead run's lock over and continues
// that bake from its recorded start — without publishing the phase again
// — then goes on and promotes.
func TestKilledWhileAPhaseBakesResumesItsBake(t *testing.T) {
	for _, phase := range []string{executor.CanaryHeader, executor.CanaryWeight} {
		t.Run(phase, func(t *testing.T) {
			r := deployedRouter()
			env := newEnv(r, &edge{requests: 5000, rate5xx: 0.1})
			st := env.Store.(*store)
			killAt(st, bakingWithAPoll(phase))
			if _, err := Run(context.Background(), env, Options{}); err == nil {
				t.Fatal("the killed run did not fail")
			}
			recs := st.canaries(t)
			if len(recs) != 1 || !recs[0].Canary.Unfinished() || recs[0].Canary.Phase != phase || recs[0].Canary.PhaseSince.IsZero() {
				t.Fatalf("after the kill: %+v", recs)
			}
			killed := recs[0]
			if killed.Canary.Weight != DefaultWeight || killed.Canary.Primary != v1 || killed.Canary.Candidate != v2 {
				t.Errorf("record %+v", killed.Canary)
			}
			if h := st.Held(t); h == nil || h.ID != killed.ID || h.Verb != LockVerb {
				t.Fatalf("the killed canary's lock is %v", h)
			}
			// Another verb is refused by the dead canary's lock.
			if err := st.Store.Lock(context.Background(), executor.Holder{ID: "op-1", Verb: "up", Host: "ci-1", PID: 9, Nonce: "x"}); err == nil {
				t.Fatal("another verb took the unfinished canary's lock")
			}
			before := len(r.ups)
			var log strings.Builder
			next := rerun(env)
			next.Log = &log
			res, err := Run(context.Background(), next, Options{})
			if err != nil || res.Outcome != Promoted || r.primary != v2 || res.ID != killed.ID {
				t.Fatalf("resumed: %v %+v\n%s", err, res, log.String())
			}
			want := []canary.Phase{canary.Weight, canary.Stable}
			if phase == executor.CanaryWeight {
				want = want[1:]
			}
			if got := r.phases()[before:]; !slices.Equal(got, want) {
				t.Errorf("the resumed run's ups %v, want %v (the baking phase is not published again)", got, want)
			}
			if !strings.Contains(log.String(), "is gone") || !strings.Contains(log.String(), "continuing its bake") {
				t.Errorf("log:\n%s", log.String())
			}
			done := st.canaries(t)[0]
			i := lastPhase(done.Canary, phase)
			if done.State != executor.Complete || !done.Canary.Phases[i].BakeStart.Equal(killed.Canary.Phases[lastPhase(killed.Canary, phase)].BakeStart) {
				t.Errorf("record %s, the bake's start moved: %+v", done.State, done.Canary.Phases[i])
			}
			if st.Held(t) != nil {
				t.Errorf("the lock is still held after the canary finished")
			}
		})
	}
}

// Killed right after a phase's update, before its bake was recorded: the
// deployed router is in a state the record does not vouch for, so the
// next run publishes the smoke phase again (never straight to viewers).
func TestKilledMidUpdateRunsTheSmokePhaseAgain(t *testing.T) {
	r := deployedRouter()
	env := newEnv(r, &edge{requests: 5000, rate5xx: 0.1})
	st := env.Store.(*store)
	r.onUp = func(tr *canary.Traffic) {
		if tr != nil && tr.Phase == canary.Weight {
			st.Dead = true // killed as the weighted split lands
		}
	}
	if _, err := Run(context.Background(), env, Options{}); err == nil {
		t.Fatal("the killed run did not fail")
	}
	r.onUp = nil
	before := len(r.ups)
	res, err := Run(context.Background(), rerun(env), Options{})
	if err != nil || res.Outcome != Promoted {
		t.Fatalf("%v %+v", err, res)
	}
	if got, want := r.phases()[before:], []canary.Phase{canary.Header, canary.Weight, canary.Stable}; !slices.Equal(got, want) {
		t.Errorf("ups %v, want %v", got, want)
	}
}

// Killed while the staging distribution was being reverted after a
// breach: the next run finishes the revert (the primary never runs the
// candidate) and reports the halt again (exit 3), rather than canarying
// the breached candidate anew.
func TestKilledWhileDiscardingFinishesTheRevert(t *testing.T) {
	// The revert failed (or the run was killed in it): the record says
	// discarding, the staging distribution still runs the candidate.
	r := deployedRouter()
	env := newEnv(r, &edge{requests: 5000, rate5xx: 9})
	st := env.Store.(*store)
	r.failOn = canary.Stable
	if _, err := Run(context.Background(), env, Options{}); err == nil || r.staging != v2 {
		t.Fatalf("the revert did not fail: %v, staging %s", err, r.staging)
	}
	if cr := st.canaries(t)[0].Canary; cr.Phase != executor.CanaryDiscarding || st.Held(t) == nil {
		t.Fatalf("after the failed revert: phase %s, lock %v", cr.Phase, st.Held(t))
	}
	r.failOn = ""
	before := len(r.ups)
	res, err := Run(context.Background(), rerun(env), Options{})
	var halted *outcome.HaltedError
	if !errors.As(err, &halted) || !strings.Contains(err.Error(), "revert was finished") || res.Outcome != Discarded {
		t.Fatalf("%v %+v", err, res)
	}
	if r.primary != v1 || r.staging != v1 || len(r.ups) != before+1 || r.ups[before].PrimaryFunctionArn != v1 {
		t.Errorf("primary %s staging %s, ups after the kill %v", r.primary, r.staging, r.phases()[before:])
	}
	if rec := st.canaries(t)[0]; rec.State != executor.HaltedState || st.Held(t) != nil {
		t.Errorf("record %s, lock %v", rec.State, st.Held(t))
	}

	// Killed between the bake's breach and the revert: the next run acts
	// on the recorded decision — it reverts, it does not bake again.
	r = deployedRouter()
	env = newEnv(r, &edge{requests: 5000, rate5xx: 9})
	killAt(env.Store.(*store), func(cr *executor.CanaryRecord) bool { return cr.Phase == executor.CanaryDiscarding })
	_, _ = Run(context.Background(), env, Options{})
	polled := 0
	next := rerun(env)
	next.Reader = func(context.Context, fleet.Access) (gate.Reader, error) { polled++; return &edge{}, nil }
	if _, err := Run(context.Background(), next, Options{}); !errors.As(err, &halted) || polled != 0 || r.staging != v1 {
		t.Fatalf("%v, polled %d, staging %s", err, polled, r.staging)
	}

	// --discard of an unfinished canary reverts to its recorded primary.
	r2 := deployedRouter()
	env2 := newEnv(r2, &edge{requests: 5000, rate5xx: 0.1})
	killAt(env2.Store.(*store), bakingWithAPoll(executor.CanaryWeight))
	_, _ = Run(context.Background(), env2, Options{})
	res, err = Run(context.Background(), rerun(env2), Options{Discard: true})
	if err != nil || res.Outcome != Reverted || r2.primary != v1 || r2.staging != v1 {
		t.Fatalf("--discard: %v %+v, primary %s staging %s", err, res, r2.primary, r2.staging)
	}
}

// While another change holds the fleet, a canary changes nothing and
// exits 4 naming the holder.
func TestRefusedWhileTheFleetIsHeld(t *testing.T) {
	r := deployedRouter()
	env := newEnv(r, &edge{})
	st := env.Store.(*store)
	st.Hold(t, executor.Holder{ID: "r-0123456789ab", Verb: "deploy", Host: "ci-9", PID: 4242, Started: time.Now(), Nonce: "n"})
	_, err := Run(context.Background(), env, Options{})
	var locked *outcome.LockedError
	if !errors.As(err, &locked) || !strings.Contains(err.Error(), "r-0123456789ab") || len(r.ups) != 0 || len(st.canaries(t)) != 0 {
		t.Fatalf("%v, %d ups, %d records", err, len(r.ups), len(st.canaries(t)))
	}
}

// As deploy's router step the canary writes its state into the rollout's
// record (under the rollout's lock) and takes no lock of its own.
func TestAsARolloutsRouterStepTheCanaryIsInTheRolloutsRecord(t *testing.T) {
	r := deployedRouter()
	env := newEnv(r, &edge{requests: 5000, rate5xx: 0.1})
	st := env.Store.(*store)
	rec := &executor.Record{ID: "r-0123456789ab", Kind: executor.KindRollout, State: executor.Running}
	env.Journal = executor.NewJournal(st, env.Clock, rec)
	res, err := Run(context.Background(), env, Options{})
	if err != nil || res.Outcome != Promoted || res.ID != rec.ID {
		t.Fatalf("%v %+v", err, res)
	}
	got, err := st.Load(context.Background(), rec.ID)
	if err != nil || got.Canary == nil || got.Canary.Outcome != Promoted || len(got.Canary.Phases) != 2 {
		t.Fatalf("%v %+v", err, got)
	}
	if len(st.canaries(t)) != 0 || st.Held(t) != nil {
		t.Errorf("the router step made a record or took a lock of its own")
	}
}

// A router step with nothing to change costs no engine run: with the
// router's inputs and deployed outputs those the last shipped canary
// recorded, the canary is unchanged without an up; any change ships.
func TestNothingToChangeRunsNoEngine(t *testing.T) {
	fl, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	r := deployedRouter()
	env := newEnv(r, &edge{requests: 5000, rate5xx: 0.1})
	env.Fleet = fl
	env.Outputs = func(ctx context.Context, stack string) (map[string]any, error) {
		if stack != fleet.RouterStack {
			return map[string]any{"dnsName": stack + ".cells.example.com"}, nil
		}
		return r.Outputs(ctx, stack)
	}
	if res, err := Run(context.Background(), env, Options{}); err != nil || res.Outcome != Promoted {
		t.Fatalf("first: %v %+v", err, res)
	}
	n := len(r.ups)
	res, err := Run(context.Background(), env, Options{})
	if err != nil || res.Outcome != Unchanged || len(r.ups) != n {
		t.Fatalf("nothing changed: %v %+v, %d ups", err, res, len(r.ups)-n)
	}
	// The deployed router changed since (another verb's up): ship.
	r.mu.Lock()
	r.table = 99
	r.mu.Unlock()
	if res, err := Run(context.Background(), env, Options{}); err != nil || len(r.ups) == n {
		t.Fatalf("deployed changed: %v %+v, no up", err, res)
	}
	n = len(r.ups)
	// The inputs changed (a new routing table): ship.
	cp := *fl
	cp.Router = &fleet.Router{}
	*cp.Router = *fl.Router
	cp.Router.PriceClass = "PriceClass_All"
	env.Fleet = &cp
	if _, err := Run(context.Background(), env, Options{}); err != nil || len(r.ups) == n {
		t.Fatalf("inputs changed: %v, no up", err)
	}
}

// A router change that leaves the edge function as it was shipped (a
// price class) is one update of both distributions, no canary — and the
// dry run says so. It predicted a three-phase canary; the run then updated
// the staging distribution, found the same version there, updated again
// and called it unchanged. Should the update publish a new version after
// all, that version is canaried, never shipped ungated.
func TestSameEdgeFunctionIsOneUpdateAsTheDryRunSays(t *testing.T) {
	fl, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	r := deployedRouter()
	env := newEnv(r, &edge{requests: 5000, rate5xx: 0.1})
	env.Fleet = fl
	env.Outputs = func(ctx context.Context, stack string) (map[string]any, error) {
		if stack != fleet.RouterStack {
			return map[string]any{"dnsName": stack + ".cells.example.com"}, nil
		}
		return r.Outputs(ctx, stack)
	}
	if res, err := Run(context.Background(), env, Options{}); err != nil || res.Outcome != Promoted {
		t.Fatalf("first: %v %+v", err, res)
	}
	cp := *fl
	rt := *fl.Router
	rt.PriceClass = "PriceClass_All"
	cp.Router = &rt
	env.Fleet = &cp
	route := dryRun(t, env, r, Options{})
	if route.Start != StartSameFunction || len(ups(route)) != 1 {
		t.Fatalf("dry run: starts %s with updates %v, want %s with one", route.Start, ups(route), StartSameFunction)
	}
	before := len(r.phases())
	res, err := Run(context.Background(), env, Options{})
	if err != nil || res.Outcome != Unchanged {
		t.Fatalf("same function: %v %+v", err, res)
	}
	if got, want := r.phases()[before:], ups(route); !slices.Equal(got, want) {
		t.Errorf("the dry run planned %v, the run made %v", want, got)
	}
	if r.primary != v2 || r.staging != v2 {
		t.Errorf("primary %s, staging %s, want both on %s", r.primary, r.staging, v2)
	}
	// Nothing changed since: no engine run at all.
	before = len(r.phases())
	if res, err := Run(context.Background(), env, Options{}); err != nil || res.Outcome != Unchanged || len(r.phases()) != before {
		t.Fatalf("after it: %v %+v, %d updates", err, res, len(r.phases())-before)
	}

	// The update published a new version after all: it is canaried.
	rt2 := rt
	rt2.PriceClass = "PriceClass_200"
	cp.Router = &rt2
	r.mu.Lock()
	r.newest = "arn:aws:lambda:us-east-1:123456789012:function:router-edge:3"
	r.mu.Unlock()
	if res, err := Run(context.Background(), env, Options{}); err != nil || res.Outcome != Promoted || r.primary != r.newest {
		t.Fatalf("a new version behind an unchanged render: %v %+v, primary %s", err, res, r.primary)
	}
}

// The fingerprint of the router's inputs is deterministic, ignores the
// image a cell runs (the router never reads it: a deploy of a new image
// ships no router), and changes with what the router is built from.
func TestInputsFollowTheRouterNotTheImages(t *testing.T) {
	fl, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	outs := func(context.Context, string) (map[string]any, error) {
		return map[string]any{"dnsName": "x.example.com", "image": "app:1", "deployedSpec": "{}"}, nil
	}
	ctx := context.Background()
	a, err := Inputs(ctx, fl, outs)
	if err != nil || a == "" {
		t.Fatal(err)
	}
	if b, _ := Inputs(ctx, fl, outs); b != a {
		t.Fatal("two renders of the same fleet differ")
	}
	img := *fl
	img.Cells = nil
	for _, c := range fl.Cells {
		cc := *c
		cc.Image = "registry.example.com/other:9.9.9"
		img.Cells = append(img.Cells, &cc)
	}
	other := func(context.Context, string) (map[string]any, error) {
		return map[string]any{"dnsName": "x.example.com", "image": "app:2", "deployedSpec": "{\"image\":\"app:2\"}"}, nil
	}
	if b, _ := Inputs(ctx, &img, other); b != a {
		t.Error("a new image changed the router's inputs")
	}
	// A release (or its rollback) changes more of a cell's outputs than
	// its image — the migration task's definition revision — and the
	// router reads none of them: after the demo's rolled-back deploys the
	// router step found "changed" inputs, ran the engine twice and called
	// the canary unchanged.
	released := func(context.Context, string) (map[string]any, error) {
		return map[string]any{"dnsName": "x.example.com", "image": "app:1", "deployedSpec": "{}",
			"migration": map[string]any{"taskDefinition": "arn:aws:ecs:us-east-1:123456789012:task-definition/cell-a-migrate:7"}}, nil
	}
	if b, _ := Inputs(ctx, fl, released); b != a {
		t.Error("a cell output the router never reads (its migration task definition) changed the router's inputs")
	}
	for _, key := range stacks.RouterCellOutputs {
		changed := func(context.Context, string) (map[string]any, error) {
			return map[string]any{"dnsName": "x.example.com", key: "changed"}, nil
		}
		if key == "dnsName" {
			continue
		}
		if b, _ := Inputs(ctx, fl, changed); b == a {
			t.Errorf("a cell's %s, which the router reads, did not change the router's inputs", key)
		}
	}
	moved := func(context.Context, string) (map[string]any, error) {
		return map[string]any{"dnsName": "y.example.com"}, nil
	}
	if b, _ := Inputs(ctx, fl, moved); b == a {
		t.Error("a cell's new DNS name did not change the router's inputs")
	}
	pc := *fl
	rt := *fl.Router
	rt.PriceClass = "PriceClass_All"
	pc.Router = &rt
	if b, _ := Inputs(ctx, &pc, outs); b == a {
		t.Error("a new price class did not change the router's inputs")
	}
}

// An unfinished canary is never invisible: the record's phase, weight and
// start, and the primary's own table version (not the candidate's, which
// the router's tableVersion output reports during a canary); without a
// record, the deployed router's canary phase still shows.
func TestUnfinishedCanaryAndThePrimarysTable(t *testing.T) {
	since := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	outs := map[string]any{"canaryPhase": "weight", "tableVersion": 8.0, "primaryFunctionArn": v1, "stagingFunctionArn": v2}
	recs := []*executor.Record{
		{ID: "c-000000000001", Kind: executor.KindCanary, Updated: since.Add(-time.Hour), Canary: &executor.CanaryRecord{Phase: executor.CanaryDone, Outcome: Promoted, PrimaryTable: 6}},
		{ID: "c-000000000002", Kind: executor.KindCanary, Updated: since, Canary: &executor.CanaryRecord{Phase: executor.CanaryWeight, PhaseSince: since, Weight: 0.05, Primary: v1, Candidate: v2, PrimaryTable: 7, CandidateTable: 8}},
	}
	p := Unfinished(recs, outs)
	if p == nil || p.Record != "c-000000000002" || p.Phase != "weight" || p.Weight != 0.05 || !p.Since.Equal(since) {
		t.Fatalf("%+v", p)
	}
	if s := p.String(); !strings.Contains(s, "5% of viewers") || !strings.Contains(s, "2026-12-01T12:00:00Z") || !strings.Contains(s, "cellctl router canary") {
		t.Errorf("%s", s)
	}
	if v, ok := PrimaryTable(recs, outs); !ok || v != 7 {
		t.Errorf("primary table %d %v, want 7 (the candidate carries 8)", v, ok)
	}
	p = Unfinished(recs[:1], outs)
	if p == nil || p.Record != "" || p.Phase != "weight" || p.Candidate != v2 {
		t.Fatalf("unrecorded: %+v", p)
	}
	if _, ok := PrimaryTable(recs[:1], outs); ok {
		t.Error("an unrecorded canary's primary table is not known")
	}
	stable := map[string]any{"canaryPhase": "stable", "tableVersion": 8.0}
	if p := Unfinished(recs[:1], stable); p != nil {
		t.Errorf("a finished canary shows as %+v", p)
	}
	if v, ok := PrimaryTable(recs[:1], stable); !ok || v != 8 {
		t.Errorf("stable router: table %d %v", v, ok)
	}
}

// asking calls ask at the first metrics read (during the first bake).
type asking struct {
	*edge
	ask func()
}

func (a *asking) MetricData(ctx context.Context, q gate.MetricQuery) ([]gate.Series, error) {
	if a.ask != nil {
		a.ask()
		a.ask = nil
	}
	return a.edge.MetricData(ctx, q)
}

// `cellctl rollout pause c-…` asked while the smoke phase bakes stops the
// canary at its next step boundary: the bake finishes, the weighted
// phase never starts, the record says paused and by whom, the fleet stays
// locked, a plain `cellctl router canary` is refused naming who paused
// it, and only a resume (`cellctl rollout resume`) continues it — its
// smoke phase anew, then promoted, the request cleared and the lock
// released.
func TestAPauseRequestStopsTheCanaryAtTheNextStep(t *testing.T) {
	ctx := context.Background()
	r := deployedRouter()
	env := newEnv(r, nil)
	st := env.Store.(*store)
	bob := executor.Ask{By: "bob@ops", At: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	reader := &asking{edge: &edge{requests: 5000, rate5xx: 0.1}, ask: func() {
		if err := st.Ask(ctx, st.canaries(t)[0].ID, func(q *executor.Request) { q.Pause = &bob }); err != nil {
			t.Fatal(err)
		}
	}}
	env.Reader = func(context.Context, fleet.Access) (gate.Reader, error) { return reader, nil }
	res, err := Run(ctx, env, Options{})
	if err != nil || res.Paused == nil || *res.Paused != bob || res.Outcome != "" {
		t.Fatalf("paused run: %v %+v", err, res)
	}
	if got := r.phases(); !slices.Equal(got, []canary.Phase{canary.Header}) {
		t.Fatalf("ups %v: the smoke phase alone, nothing after the pause", got)
	}
	rec := st.canaries(t)[0]
	if rec.State != executor.Paused || rec.Paused == nil || *rec.Paused != bob || !rec.Canary.Unfinished() {
		t.Fatalf("record %s, paused %+v", rec.State, rec.Paused)
	}
	if h := st.Held(t); h == nil || h.ID != rec.ID {
		t.Fatalf("a paused canary keeps the fleet: lock %v", h)
	}
	_, err = Run(ctx, env, Options{})
	if exitcode.Of(err) != exitcode.Locked || !strings.Contains(err.Error(), "paused by bob@ops") || !strings.Contains(err.Error(), "rollout resume "+rec.ID) || len(r.ups) != 1 {
		t.Fatalf("plain rerun of a paused canary: %v (%d ups)", err, len(r.ups))
	}
	res, err = Run(ctx, env, Options{Resume: true})
	if err != nil || res.Outcome != Promoted || r.primary != v2 || res.ID != rec.ID {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if q, err := st.Request(ctx, rec.ID); err != nil || !q.Empty() {
		t.Fatalf("requests after the end: %+v (%v)", q, err)
	}
	if done := st.canaries(t)[0]; done.Paused != nil || done.State != executor.Complete || st.Held(t) != nil {
		t.Fatalf("after the resume: %s, paused %+v, lock %v", done.State, done.Paused, st.Held(t))
	}
}
