package originsecret

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cellmodule"
	"github.com/cellctl/cellctl/internal/adapters/backend/backendtest"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves"
	"github.com/cellctl/cellctl/waves/executor"
	"github.com/cellctl/cellctl/waves/executor/executortest"
)

const (
	kCur  = "cells:originVerifySecret"
	kNext = "cells:originVerifySecretNext"
)

// fakeEngine keeps stack files and a deployed cloud: an up deploys what
// the stack's file holds (a cell accepts its primary and next value, the
// router sends its value to every cell).
type fakeEngine struct {
	cells    []string
	files    map[string]map[string]string
	deployed map[string]*engine.DeployedOrigin
	ups      []string
	failUp   string
}

func newFake(cells ...string) *fakeEngine {
	e := &fakeEngine{cells: cells, files: map[string]map[string]string{}, deployed: map[string]*engine.DeployedOrigin{}}
	for _, s := range append(cells, fleet.RouterStack) {
		e.files[s] = map[string]string{kCur: "old"}
		e.up(s)
	}
	e.ups = nil
	return e
}

func (e *fakeEngine) up(stack string) {
	f := e.files[stack]
	d := &engine.DeployedOrigin{Stack: stack, Deployed: true}
	if stack == fleet.RouterStack {
		// One CloudFront origin for the fleet; the edge function sends
		// each request to its cell.
		d.Sends = map[string]string{cellmodule.RouterOriginID: f[kCur]}
	} else {
		d.Accepts = []string{f[kCur]}
		if n, ok := f[kNext]; ok {
			d.Accepts = append(d.Accepts, n)
		}
	}
	e.deployed[stack] = d
	e.ups = append(e.ups, stack)
}

func (e *fakeEngine) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	if req.Stack == e.failUp {
		return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: errors.New("injected failure")}
	}
	e.up(req.Stack)
	return &stackrun.Result{Name: req.Stack, Result: stackrun.Succeeded}
}

func (e *fakeEngine) EnsureOriginVerifySecret(context.Context, []string) ([]string, error) {
	return nil, nil
}

func (e *fakeEngine) StackSecret(stack, key string) (string, bool, error) {
	v, ok := e.files[stack][key]
	return v, ok, nil
}

func (e *fakeEngine) SetStackSecrets(_ context.Context, stack string, values map[string]*string) (string, error) {
	for k, v := range values {
		if v == nil {
			delete(e.files[stack], k)
		} else {
			e.files[stack][k] = *v
		}
	}
	return stack, nil
}

func (e *fakeEngine) DeployedOriginSecret(_ context.Context, stack string) (*engine.DeployedOrigin, error) {
	d := *e.deployed[stack]
	return &d, nil
}

// refused lists the cells whose deployed rule refuses what the deployed
// router sends them (through the fleet origin, every cell).
func (e *fakeEngine) refused() []string {
	var out []string
	sent := e.deployed[fleet.RouterStack].Sends[cellmodule.RouterOriginID]
	for _, c := range e.cells {
		if !slices.Contains(e.deployed[c].Accepts, sent) {
			out = append(out, c)
		}
	}
	return out
}

// memStore is the real record store and fleet lock with failures and
// kills injected.
type memStore struct{ *backendtest.Store }

func newStore(t *testing.T) *memStore { return &memStore{backendtest.New()} }

// rotation is the newest rotation record in the store.
func (m *memStore) rotation(t *testing.T) *executor.Record {
	t.Helper()
	recs := m.Records(t, executor.KindRotation)
	if len(recs) == 0 {
		return nil
	}
	return recs[0]
}

type gateFunc func(q executor.GateQuery) ([]executor.Verdict, error)

func (g gateFunc) Check(_ context.Context, q executor.GateQuery) ([]executor.Verdict, error) {
	return g(q)
}

func passAll(q executor.GateQuery) ([]executor.Verdict, error) {
	var out []executor.Verdict
	for _, c := range q.Cells {
		out = append(out, executor.Verdict{Cell: c, Decision: waves.Pass})
	}
	return out, nil
}

func rotator(e *fakeEngine, st *memStore, g executor.Gate) *Rotator {
	f := &fleet.Fleet{Project: "cells", Router: &fleet.Router{}}
	for _, c := range e.cells {
		f.Cells = append(f.Cells, &fleet.Cell{})
		f.Cells[len(f.Cells)-1].ID = c
	}
	return &Rotator{Env: gated.Env{Fleet: f, Host: "ci-1", PID: 7}, Engine: e, Store: st, Gate: g, Waves: []executor.Wave{
		{Name: "canary", Cells: e.cells[:1]},
		{Name: "rest", Cells: e.cells[1:], Parallel: 1},
	}}
}

// After every step, every origin's value is accepted by its cell; at the
// end every cell accepts only the new value and the router sends it.
func TestRotationNeverRefusesBetweenSteps(t *testing.T) {
	e := newFake("cell-a", "cell-b", "cell-c")
	st := newStore(t)
	r := rotator(e, st, gateFunc(passAll))
	steps := 0
	var last *executor.Record
	for {
		rec, err := r.Run(context.Background(), Options{Steps: 1})
		last = rec
		if got := e.refused(); len(got) > 0 {
			t.Fatalf("after step %d: %v refuse what CloudFront sends", steps, got)
		}
		// From its first step on, the record says what the rotation
		// ships, by digest (never the values): the apply path compares
		// every checkout's stack files with it.
		if o := rec.Origin; o == nil || o.From != engine.OriginDigest("old") || o.To == "" || o.To == o.From {
			t.Fatalf("after step %d the record's origin digests are %+v", steps, o)
		}
		if h := st.Held(t); h != nil {
			t.Fatalf("the lock was not released: %v", h)
		}
		steps++
		if err == nil {
			if rec.Finished.IsZero() || rec.State != executor.Complete || rec.Kind != executor.KindRotation {
				t.Fatal("no error and not finished")
			}
			break
		}
		if !errors.Is(err, ErrPaused) || steps > 10 {
			t.Fatalf("step %d: %v", steps, err)
		}
	}
	if steps != 5 { // accept×2, switch, drop×2 (the last run finishes the record)
		t.Errorf("%d runs, want 5", steps)
	}
	next := e.files[fleet.RouterStack][kCur]
	if next == "old" || next == "" {
		t.Fatal("the router still sends the old value")
	}
	if last.Origin.To != engine.OriginDigest(next) {
		t.Errorf("the record's To digest is not the new value's")
	}
	if data, _ := json.Marshal(last); strings.Contains(string(data), next) || strings.Contains(string(data), `"old"`) {
		t.Errorf("the record holds a secret value: %s", data)
	}
	for _, c := range e.cells {
		if d := e.deployed[c]; len(d.Accepts) != 1 || d.Accepts[0] != next {
			t.Errorf("%s accepts %v at the end", c, d.Accepts)
		}
		if _, ok := e.files[c][kNext]; ok {
			t.Errorf("%s's file keeps the next key", c)
		}
	}
}

// The router is switched only when every deployed cell accepts the next
// value, read from the deployed state, whatever the record says.
func TestSwitchRefusedWhenADeployedCellDoesNotAcceptTheNextValue(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	st := newStore(t)
	r := rotator(e, st, gateFunc(passAll))
	if _, err := r.Run(context.Background(), Options{Steps: 2}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	// Someone redeployed cell-b from an old checkout.
	e.deployed["cell-b"].Accepts = []string{"old"}
	_, err := r.Run(context.Background(), Options{Steps: 1})
	if err == nil || !strings.Contains(err.Error(), "cell-b do not accept the next value") {
		t.Fatalf("got %v, want the switch refused naming cell-b", err)
	}
	if e.deployed[fleet.RouterStack].Sends[cellmodule.RouterOriginID] != "old" || slices.Contains(e.ups, fleet.RouterStack) {
		t.Fatal("the router was changed")
	}
	if got := st.rotation(t).Step("switch/router").State; got != executor.WaveHalted {
		t.Errorf("switch step is %s, want halted in the record", got)
	}
}

// A breach while the router bakes on the new value puts it back.
func TestSwitchBreachPutsTheRouterBack(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	st := newStore(t)
	breach := false
	g := gateFunc(func(q executor.GateQuery) ([]executor.Verdict, error) {
		if !breach {
			return passAll(q)
		}
		vs, _ := passAll(q)
		for i := range vs {
			if vs[i].Cell == "cell-b" {
				vs[i] = executor.Verdict{Cell: "cell-b", Decision: waves.Breached, Breach: &executor.Breach{Cell: "cell-b", Signal: "error_rate_5xx", Reading: "9%"}}
			}
		}
		return vs, nil
	})
	r := rotator(e, st, g)
	if _, err := r.Run(context.Background(), Options{Steps: 2}); !errors.Is(err, ErrPaused) {
		t.Fatal(err)
	}
	breach = true
	_, err := r.Run(context.Background(), Options{})
	var halted *outcome.HaltedError
	if !errors.As(err, &halted) || !strings.Contains(err.Error(), "cell-b breached error_rate_5xx") {
		t.Fatalf("got %v, want a halt naming the breach", err)
	}
	if e.deployed[fleet.RouterStack].Sends[cellmodule.RouterOriginID] != "old" || e.files[fleet.RouterStack][kCur] != "old" {
		t.Fatal("the router was not put back on the current value")
	}
	if len(e.refused()) > 0 {
		t.Fatal("a cell refuses after the rollback")
	}
	// Fixed: the rerun retries the switch and finishes.
	breach = false
	if _, err := r.Run(context.Background(), Options{}); err != nil {
		t.Fatal(err)
	}
	if len(e.refused()) > 0 || e.deployed[fleet.RouterStack].Sends[cellmodule.RouterOriginID] == "old" {
		t.Fatal("the retried rotation did not finish")
	}
}

// An unreadable gate is a breach (fail closed), never a pass.
func TestGateErrorHalts(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	r := rotator(e, newStore(t), gateFunc(func(executor.GateQuery) ([]executor.Verdict, error) {
		return nil, errors.New("CloudWatch unreachable")
	}))
	_, err := r.Run(context.Background(), Options{})
	var halted *outcome.HaltedError
	if !errors.As(err, &halted) || !strings.Contains(err.Error(), "fail closed") {
		t.Fatalf("got %v, want a halt", err)
	}
}

// While a rollout holds the lock nothing is read or changed.
func TestRefusedWhileARolloutHoldsTheLock(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	st := newStore(t)
	st.Hold(t, executor.Holder{ID: "r-0123456789ab", Verb: "deploy", Host: "ci-1", PID: 4242, Started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Nonce: "feedface"})
	_, err := rotator(e, st, gateFunc(passAll)).Run(context.Background(), Options{})
	var locked *outcome.LockedError
	if !errors.As(err, &locked) || exitcode.Of(err) != exitcode.Locked || !strings.Contains(err.Error(), "r-0123456789ab") || len(e.ups) != 0 || st.rotation(t) != nil {
		t.Fatalf("got %v with %d ups and record %v", err, len(e.ups), st.rotation(t))
	}
}

// A cell never deployed gets the values in its file but no up: a
// rotation deploys no new cell.
func TestUndeployedCellIsNotDeployed(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	e.deployed["cell-b"] = &engine.DeployedOrigin{Stack: "cell-b"}
	e.deployed[fleet.RouterStack].Sends = map[string]string{cellmodule.RouterOriginID: "old"}
	if _, err := rotator(e, newStore(t), gateFunc(passAll)).Run(context.Background(), Options{}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(e.ups, "cell-b") {
		t.Fatal("the rotation deployed cell-b, which was never deployed")
	}
	if e.files["cell-b"][kCur] != e.files[fleet.RouterStack][kCur] {
		t.Fatal("cell-b's file did not get the new value")
	}
}

// A poll that cannot be recorded stops the rotation before it goes on: the
// record must say where the rotation is (the rollout executor's rule).
func TestAFailedRecordSaveStopsTheRotation(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	st := newStore(t)
	st.FailAfter = 4 // the start, the origin digests, the first step's start and its bake's start are saved
	polled := 0
	r := rotator(e, st, gateFunc(func(q executor.GateQuery) ([]executor.Verdict, error) {
		polled++
		return passAll(q)
	}))
	// A bake of several polls (real clock, milliseconds).
	r.Waves[0].Bake, r.Waves[0].Gate.Poll = 40*time.Millisecond, 5*time.Millisecond
	_, err := r.Run(context.Background(), Options{})
	if err == nil || !strings.Contains(err.Error(), "backend unreachable") {
		t.Fatalf("got %v, want the save failure", err)
	}
	if polled != 1 {
		t.Fatalf("the gate was polled %d times: the bake must stop at the poll it could not record", polled)
	}
	if sw := st.rotation(t).Step(Switch + "/" + fleet.RouterStack); sw == nil || sw.State != executor.WavePending {
		t.Fatal("the rotation went on past a record it could not save")
	}
}

// A cell added mid-rotation (`cellctl cell add`, before the router
// switched) gets the rotation's values and the rotation finishes, instead
// of every rerun failing "cell-c do not accept the next value".
func TestACellAddedMidRotationGetsThePhasesValues(t *testing.T) {
	for _, steps := range []int{1, 3} { // after the canary's accept; after the switch
		e := newFake("cell-a", "cell-b")
		st := newStore(t)
		r := rotator(e, st, gateFunc(passAll))
		if _, err := r.Run(context.Background(), Options{Steps: steps}); !errors.Is(err, ErrPaused) {
			t.Fatal(err)
		}
		// cell add: a new stack file with the fleet's current value, deployed,
		// in the wave "rest"; the router routes to it with what it sends.
		cur := e.files["cell-a"][kCur]
		if steps == 3 {
			cur = e.files[fleet.RouterStack][kCur]
		}
		e.cells = append(e.cells, "cell-c")
		e.files["cell-c"] = map[string]string{kCur: cur}
		e.up("cell-c")
		e.up(fleet.RouterStack)
		r.Fleet.Cells = append(r.Fleet.Cells, &fleet.Cell{})
		r.Fleet.Cells[len(r.Fleet.Cells)-1].ID = "cell-c"
		r.Waves[1].Cells = append(r.Waves[1].Cells, "cell-c")

		rec, err := r.Run(context.Background(), Options{})
		if err != nil {
			t.Fatalf("after %d step(s): %v", steps, err)
		}
		if rec.State != executor.Complete || len(e.refused()) > 0 {
			t.Fatalf("after %d step(s): %s, refused %v", steps, rec.State, e.refused())
		}
		if got := e.deployed["cell-c"].Accepts; len(got) != 1 || got[0] != e.files[fleet.RouterStack][kCur] {
			t.Fatalf("after %d step(s): cell-c accepts %v, the router sends %s", steps, got, e.files[fleet.RouterStack][kCur])
		}
	}
}

// Killed (kill -9) while a step bakes: the record says the step is
// baking, the lock stays behind. The next run on this host sees the dead
// holder's process gone, takes its lock over, and continues that bake
// from its recorded start — without deploying the step's cells again —
// then goes on.
func TestKilledWhileBakingResumesTheBake(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	st := newStore(t)
	st.DieAt = func(rec *executor.Record) bool {
		s := rec.Step(Accept + "/canary")
		return s != nil && s.State == executor.WaveBaking && len(s.Polls) > 0
	}
	r := rotator(e, st, gateFunc(passAll))
	r.Waves[0].Bake, r.Waves[0].Gate.Poll = time.Hour, time.Minute
	clock := executortest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	r.Clock = clock
	if _, err := r.Run(context.Background(), Options{}); err == nil {
		t.Fatal("the killed run did not fail")
	}
	killed := st.rotation(t)
	s := killed.Step(Accept + "/canary")
	if killed.State != executor.Running || s.State != executor.WaveBaking || s.BakeStart.IsZero() {
		t.Fatalf("after the kill: record %s, step %+v", killed.State, s)
	}
	if h := st.Held(t); h == nil || h.ID != killed.ID || h.Verb != LockVerb {
		t.Fatalf("the killed run's lock is %v, want %s's", h, killed.ID)
	}
	ups := len(e.ups)

	// Another verb meanwhile is refused by the dead rotation's lock.
	other := executor.Holder{ID: "op-1", Verb: "drain", Host: "ci-1", PID: 8, Started: clock.Now(), Nonce: "n"}
	if err := st.Store.Lock(context.Background(), other); err == nil {
		t.Fatal("another verb took the dead rotation's lock")
	}

	st.Revive()
	var log strings.Builder
	r2 := rotator(e, st, gateFunc(passAll))
	r2.Waves = r.Waves
	r2.Clock, r2.Log, r2.PID = clock, &log, 9
	r2.Alive = func(h executor.Holder) bool { return h.PID != 7 }
	rec, err := r2.Run(context.Background(), Options{Steps: 1})
	if !errors.Is(err, ErrPaused) {
		t.Fatalf("resumed run: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "is gone") || !strings.Contains(log.String(), "continuing its bake") {
		t.Errorf("the resumed run did not say it took over and continued the bake:\n%s", log.String())
	}
	if len(e.ups) != ups {
		t.Errorf("the resumed bake deployed again: %v", e.ups[ups:])
	}
	got := rec.Step(Accept + "/canary")
	if got.State != executor.WaveDone || !got.BakeStart.Equal(s.BakeStart) || len(got.Polls) <= len(s.Polls) {
		t.Errorf("resumed step %+v, killed one started its bake at %s with %d polls", got, s.BakeStart, len(s.Polls))
	}
	if rec.ID != killed.ID || rec.Holder.PID != 9 {
		t.Errorf("resumed record %s held by %+v, want %s held by pid 9", rec.ID, rec.Holder, killed.ID)
	}
}

// A rotation an older cellctl paused — its record in its own store
// (LegacyKey), its lock under the id "secret-rotate", its process gone —
// resumes: the record moves into the rollout records (one record type),
// its done steps are not run again, and the older copy is removed.
func TestARotationAnOlderCellctlPausedResumes(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	// The older run finished accept/canary: cell-a accepts both values.
	e.files["cell-a"][kNext] = "next"
	e.up("cell-a")
	e.ups = nil
	st := newStore(t)
	legacy := &fakeLegacy{data: []byte(`{"id":"20261201T090000Z-abcdef","started":"2026-12-01T09:00:00Z","updated":"2026-12-01T09:05:00Z",
 "steps":[{"name":"accept/canary","kind":"accept","wave":"canary","cells":["cell-a"],"state":"done","verdicts":[{"cell":"cell-a","decision":"pass"}]},
 {"name":"accept/rest","kind":"accept","wave":"rest","cells":["cell-b"],"state":"pending"},
 {"name":"switch/router","kind":"switch","state":"pending"},
 {"name":"drop/canary","kind":"drop","wave":"canary","cells":["cell-a"],"state":"pending"},
 {"name":"drop/rest","kind":"drop","wave":"rest","cells":["cell-b"],"state":"pending"}]}`)}
	st.Hold(t, executor.Holder{ID: "secret-rotate", Verb: "secret rotate", Host: "ci-1", PID: 7, Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Nonce: "old"})
	r := rotator(e, st, gateFunc(passAll))
	r.Legacy, r.Alive = legacy, func(h executor.Holder) bool { return h.PID != 7 }
	var log strings.Builder
	r.Log = &log
	rec, err := r.Run(context.Background(), Options{Steps: 1})
	if !errors.Is(err, ErrPaused) {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !strings.HasPrefix(rec.ID, "s-") || rec.Kind != executor.KindRotation || !strings.Contains(strings.Join(rec.Notes, "\n"), "20261201T090000Z-abcdef") {
		t.Errorf("moved record %s (%s), notes %v", rec.ID, rec.Kind, rec.Notes)
	}
	if st := rec.Step("accept/rest").State; st != executor.WaveDone {
		t.Errorf("accept/rest is %s after one step, want passed", st)
	}
	if slices.Contains(e.ups, "cell-a") {
		t.Errorf("the done step ran again: ups %v", e.ups)
	}
	if e.files["cell-b"][kNext] != "next" {
		t.Errorf("cell-b got next value %q, want the one the older run minted", e.files["cell-b"][kNext])
	}
	if legacy.data != nil {
		t.Error("the older record was not removed")
	}
	if got := st.rotation(t); got == nil || got.ID != rec.ID {
		t.Fatalf("the store holds %v, want %s", got, rec.ID)
	}
	// The next run continues the moved record to the end.
	if rec, err = r.Run(context.Background(), Options{}); err != nil || rec.State != executor.Complete {
		t.Fatalf("%v %v", rec.State, err)
	}
	if len(e.refused()) > 0 {
		t.Errorf("refused at the end: %v", e.refused())
	}
}

type fakeLegacy struct{ data []byte }

func (l *fakeLegacy) LoadLegacy(context.Context) ([]byte, error) { return l.data, nil }
func (l *fakeLegacy) RemoveLegacy(context.Context) error         { l.data = nil; return nil }

// A step's bake is never silent: the rotation says when it starts, on
// which cells, and at most once a minute of the bake how much is left and
// what the last poll read.
func TestABakeSaysHowMuchIsLeft(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	st := newStore(t)
	r := rotator(e, st, gateFunc(passAll))
	r.Waves[0].Bake, r.Waves[0].Gate.Poll = 3*time.Minute, 20*time.Second
	r.Clock = executortest.NewClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	var log strings.Builder
	r.Log = &log
	if _, err := r.Run(context.Background(), Options{Steps: 1}); !errors.Is(err, ErrPaused) {
		t.Fatalf("one step: %v\n%s", err, log.String())
	}
	out := log.String()
	if !strings.Contains(out, Accept+"/canary: baking 3m0s on the gate of cell-a (a poll every 20s)") {
		t.Errorf("no line when the bake starts:\n%s", out)
	}
	left := strings.Count(out, Accept+"/canary: baking, ")
	// Polls every 20 s over 3 minutes, a line at most once a minute: 2
	// (at 1m and 2m; the poll at 3m ends the bake).
	if left != 2 || !strings.Contains(out, "2m0s left (last poll: 1 cell(s) pass)") {
		t.Errorf("%d progress lines during the bake, want 2 (2m0s left, then 1m0s):\n%s", left, out)
	}
}

// `cellctl rollout pause s-…` asked during a step stops the rotation at
// the next step boundary: the step under way finishes, the record says
// paused and by whom, the fleet stays locked, a plain rerun is refused
// naming who paused it, and only a resume (`cellctl rollout resume`)
// continues — to the end, the request cleared and the lock released.
func TestAPauseRequestStopsTheRotationAtTheNextStep(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	st := newStore(t)
	ctx := context.Background()
	bob := executor.Ask{By: "bob@ops", At: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	asked := false
	r := rotator(e, st, gateFunc(func(q executor.GateQuery) ([]executor.Verdict, error) {
		if !asked {
			asked = true
			if err := st.Ask(ctx, st.rotation(t).ID, func(q *executor.Request) { q.Pause = &bob }); err != nil {
				t.Fatal(err)
			}
		}
		return passAll(q)
	}))
	rec, err := r.Run(ctx, Options{})
	if !errors.Is(err, ErrPaused) {
		t.Fatalf("run: %v", err)
	}
	if rec.State != executor.Paused || rec.Paused == nil || *rec.Paused != bob {
		t.Fatalf("record: %s, paused %+v", rec.State, rec.Paused)
	}
	if rec.Steps[0].State != executor.WaveDone || rec.Steps[1].State != executor.WavePending {
		t.Fatalf("the step under way did not finish, or the next one ran: %+v", rec.Steps[:2])
	}
	if h := st.Held(t); h == nil || h.ID != rec.ID {
		t.Fatalf("a paused rotation keeps the fleet: lock %v", h)
	}
	ups := len(e.ups)
	_, err = r.Run(ctx, Options{})
	if exitcode.Of(err) != exitcode.Locked || !strings.Contains(err.Error(), "paused by bob@ops") || !strings.Contains(err.Error(), "rollout resume "+rec.ID) || len(e.ups) != ups {
		t.Fatalf("plain rerun of a paused rotation: %v (%d ups)", err, len(e.ups)-ups)
	}
	rec, err = r.Run(ctx, Options{Resume: true})
	if err != nil || rec.State != executor.Complete || rec.Paused != nil {
		t.Fatalf("resume: %v, %s, paused %+v", err, rec.State, rec.Paused)
	}
	if q, err := st.Request(ctx, rec.ID); err != nil || !q.Empty() {
		t.Fatalf("requests after the end: %+v (%v)", q, err)
	}
	if h := st.Held(t); h != nil {
		t.Fatalf("lock after the end: %v", h)
	}
}
