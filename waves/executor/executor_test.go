package executor

import (
	"context"
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/waves"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/outcome"
)

func oldConfig() CellConfig {
	return CellConfig{Image: "app:v1", Settings: map[string]any{"auroraInstances": 2, "cacheNodeType": "cache.t4g.small", "taskCpu": 256}}
}

func withImage(c CellConfig, img string) CellConfig {
	c = c.Clone()
	c.Image = img
	return c
}

// fleet is a five-cell fleet in three waves, every cell on app:v1, and a
// plan that ships app:v2 to all of them.
type fleet struct {
	plan   Plan
	cells  *fakeCells
	gate   *fakeGate
	store  *memStore
	events *events
	clock  *fakeClock
	ex     *Executor
	router int
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	ws := []Wave{
		{Name: "wave-1", Cells: []string{"cell-a"}, Bake: 30 * time.Minute},
		{Name: "wave-2", Cells: []string{"cell-b", "cell-c"}, Bake: time.Hour},
		{Name: "wave-3", Cells: []string{"cell-d", "cell-e"}, Bake: 10 * time.Minute, Parallel: 1},
	}
	before := map[string]CellConfig{}
	desired := map[string]CellConfig{}
	for i := range ws {
		ws[i].Gate.Poll = 30 * time.Second
		ws[i].Gate.OnBreach = waves.HaltAndRollbackWave
		ws[i].Gate.OnInconclusive = waves.InconclusiveHalt
		for _, c := range ws[i].Cells {
			before[c] = oldConfig()
			desired[c] = withImage(oldConfig(), "app:v2")
		}
	}
	f := &fleet{plan: Plan{Waves: ws, Desired: desired}, cells: newCells(before), store: newStore(), events: &events{}, clock: newClock()}
	f.gate = &fakeGate{answer: healthByImage(f.cells, nil)}
	f.ex = &Executor{Updater: f.cells, Gate: f.gate, Store: f.store, Clock: f.clock, Progress: f.events}
	return f
}

func (f *fleet) opts() Options {
	return Options{Host: "ci-1", PID: 100, Router: func(ctx context.Context, _ *Journal) error { f.router++; return nil }}
}

func (f *fleet) run(t *testing.T, o Options) (*Outcome, error) {
	t.Helper()
	return f.ex.Run(context.Background(), f.plan, o)
}

func (f *fleet) images(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, w := range f.plan.Waves {
		for _, c := range w.Cells {
			out[c] = f.cells.get(c).Image
		}
	}
	return out
}

func states(out *Outcome) map[string]string {
	m := map[string]string{}
	for _, r := range out.Summary {
		m[r.Cell] = r.State + " " + r.Image
	}
	return m
}

func TestHappyPathUpdatesWavesInOrderThenRouter(t *testing.T) {
	f := newFleet(t)
	var routerSawAll bool
	o := f.opts()
	o.Router = func(ctx context.Context, _ *Journal) error {
		f.router++
		routerSawAll = len(f.cells.applies()) == 5
		return nil
	}
	out, err := f.run(t, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Waves strictly in order: every apply of a wave before any of the next.
	waveOf := map[string]int{"cell-a": 0, "cell-b": 1, "cell-c": 1, "cell-d": 2, "cell-e": 2}
	prev := 0
	for _, a := range f.cells.applies() {
		cell, img, _ := strings.Cut(a, " ")
		if img != "app:v2" {
			t.Errorf("apply %q: want only app:v2", a)
		}
		if waveOf[cell] < prev {
			t.Errorf("apply order %v: %s of wave %d after wave %d", f.cells.applies(), cell, waveOf[cell]+1, prev+1)
		}
		prev = waveOf[cell]
	}
	// Each wave was baked (gate asked) only after its own update.
	if got := f.gate.wavesChecked(); got["wave-1"] != 60 || got["wave-2"] != 120 || got["wave-3"] != 20 {
		t.Errorf("polls per wave = %v, want bake/poll each (60, 120, 20)", got)
	}
	if f.router != 1 || !routerSawAll {
		t.Errorf("router ran %d times (after all cells: %v), want once after the last wave", f.router, routerSawAll)
	}
	for c, img := range f.images(t) {
		if img != "app:v2" {
			t.Errorf("%s runs %s, want app:v2", c, img)
		}
	}
	for c, s := range states(out) {
		if s != "new app:v2" {
			t.Errorf("summary %s = %q, want new app:v2", c, s)
		}
	}
	rec := f.store.record(t, out.Record.ID)
	if rec.State != Complete || rec.Router != "updated" {
		t.Errorf("record state %s router %q, want complete/updated", rec.State, rec.Router)
	}
	for _, c := range rec.Waves[1].Cells {
		if c.Before == nil || !c.Before.Equal(oldConfig()) {
			t.Errorf("%s before-config %+v, want the config it ran (app:v1)", c.Cell, c.Before)
		}
	}
	if h := f.store.holder(); h != nil {
		t.Errorf("lock still held by %s after a complete rollout", h)
	}
	kinds := f.events.kinds()
	if kinds[0] != RolloutStarted || kinds[len(kinds)-1] != RolloutComplete {
		t.Errorf("events start %s end %s", kinds[0], kinds[len(kinds)-1])
	}
	if i, j := slices.Index(kinds, RouterUpdating), slices.Index(kinds, RouterUpdated); i < 0 || j < i {
		t.Errorf("router events missing: %v", kinds)
	}
}

func assertWave2RolledBack(t *testing.T, f *fleet, out *Outcome, err error, cell, signal, reading string) *HaltedError {
	t.Helper()
	var h *HaltedError
	if !errors.As(err, &h) {
		t.Fatalf("err = %v, want *HaltedError", err)
	}
	if h.Wave != "wave-2" || h.Breach == nil || h.Breach.Cell != cell || h.Breach.Signal != signal || !h.RolledBack {
		t.Fatalf("halt = %+v breach %+v, want wave-2 %s %s rolled back", h, h.Breach, cell, signal)
	}
	msg := err.Error()
	for _, want := range []string{"wave-2", cell, signal, reading} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %q", msg, want)
		}
	}
	want := map[string]string{"cell-a": "app:v2", "cell-b": "app:v1", "cell-c": "app:v1", "cell-d": "app:v1", "cell-e": "app:v1"}
	if got := f.images(t); !reflect.DeepEqual(got, want) {
		t.Errorf("images %v, want %v", got, want)
	}
	for _, c := range []string{"cell-b", "cell-c"} {
		if got := f.cells.get(c); !got.Equal(oldConfig()) {
			t.Errorf("%s runs %+v after rollback, want exactly %+v", c, got, oldConfig())
		}
	}
	for _, a := range f.cells.applies() {
		if strings.HasPrefix(a, "cell-d") || strings.HasPrefix(a, "cell-e") {
			t.Errorf("wave 3 was touched: %s", a)
		}
	}
	wantStates := map[string]string{"cell-a": "new app:v2", "cell-b": "rolled back app:v1", "cell-c": "rolled back app:v1",
		"cell-d": "untouched app:v1", "cell-e": "untouched app:v1"}
	if got := states(out); !reflect.DeepEqual(got, wantStates) {
		t.Errorf("summary %v, want %v", got, wantStates)
	}
	if f.router != 0 {
		t.Errorf("router ran after a halt")
	}
	if hold := f.store.holder(); hold != nil {
		t.Errorf("lock still held by %s after a halt", hold)
	}
	rec := f.store.record(t, h.RolloutID)
	if rec.State != HaltedState || rec.Waves[1].State != WaveRolledBack || rec.Waves[2].State != WavePending {
		t.Errorf("record %s, waves %s %s, want halted, rolled-back, pending", rec.State, rec.Waves[1].State, rec.Waves[2].State)
	}
	return h
}

func TestBadCellInWave2RollsBackWave2Only(t *testing.T) {
	f := newFleet(t)
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	out, err := f.run(t, f.opts())
	h := assertWave2RolledBack(t, f, out, err, "cell-c", "error_rate_5xx", "3.2%")
	if h.Breach.Threshold != "< 0.5%" || !strings.Contains(err.Error(), "< 0.5%") {
		t.Errorf("halt does not name the threshold: %v", err)
	}
	// A breach ends the bake early: the first poll saw it.
	if n := f.gate.wavesChecked()["wave-2"]; n != 1 {
		t.Errorf("wave-2 polled %d times, want the bake to end at the first breaching poll", n)
	}
	rec := f.store.record(t, h.RolloutID)
	if p := rec.Waves[1].Polls; len(p) != 1 || p[0].Verdicts[1].Readings[0].Value != "3.2%" {
		t.Errorf("the breaching poll's readings are not in the record: %+v", p)
	}
	kinds := f.events.kinds()
	if i, j := slices.Index(kinds, WaveBreached), slices.Index(kinds, RollingBack); i < 0 || j < i || !slices.Contains(kinds, RolledBack) {
		t.Errorf("events %v: want breached, rolling back, rolled back", kinds)
	}
}

func TestUpdateFailureBreachesAndRollsBackWave(t *testing.T) {
	f := newFleet(t)
	f.cells.fail = func(cell string, cfg CellConfig) error {
		if cell == "cell-b" && cfg.Image == "app:v2" {
			return errors.New("ECS deployment circuit breaker: tasks failed to start")
		}
		return nil
	}
	out, err := f.run(t, f.opts())
	assertWave2RolledBack(t, f, out, err, "cell-b", SignalUpdate, "circuit breaker")
	if n := f.gate.wavesChecked()["wave-2"]; n != 0 {
		t.Errorf("wave-2 baked (%d polls) after an update failed", n)
	}
}

func TestGateReadErrorIsABreach(t *testing.T) {
	f := newFleet(t)
	inner := f.gate.answer
	f.gate.answer = func(q GateQuery) ([]Verdict, error) {
		if q.Wave == "wave-2" {
			return nil, errors.New("GetMetricData: ThrottlingException: Rate exceeded")
		}
		return inner(q)
	}
	out, err := f.run(t, f.opts())
	assertWave2RolledBack(t, f, out, err, "cell-b", SignalGate, "ThrottlingException")
}

func TestGateSilenceAboutACellIsABreach(t *testing.T) {
	f := newFleet(t)
	inner := f.gate.answer
	f.gate.answer = func(q GateQuery) ([]Verdict, error) {
		v, err := inner(q)
		if q.Wave == "wave-2" {
			v = v[:1] // says nothing about cell-c
		}
		return v, err
	}
	out, err := f.run(t, f.opts())
	assertWave2RolledBack(t, f, out, err, "cell-c", SignalGate, "no verdict")
}

func TestConfigChangeIsRolledBackExactly(t *testing.T) {
	f := newFleet(t)
	// Not the image: an engine version bump, a size change, a removed key.
	for c := range f.plan.Desired {
		d := oldConfig()
		d.Settings["auroraInstances"] = 3
		d.Settings["auroraEngineVersion"] = "16.4"
		delete(d.Settings, "cacheNodeType")
		f.plan.Desired[c] = d
	}
	f.gate.answer = func(q GateQuery) ([]Verdict, error) {
		var out []Verdict
		for _, c := range q.Cells {
			if q.Wave == "wave-2" {
				out = append(out, Verdict{Cell: c, Decision: waves.Breached, Breach: &Breach{Signal: "p99_latency_ms", Reading: "900ms", Threshold: "< 400"}})
			} else {
				out = append(out, Verdict{Cell: c, Decision: waves.Pass})
			}
		}
		return out, nil
	}
	out, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || !h.RolledBack || h.Breach.Cell != "cell-b" || h.Breach.Signal != "p99_latency_ms" {
		t.Fatalf("err = %v, want wave-2 halted on cell-b p99", err)
	}
	for _, c := range []string{"cell-b", "cell-c", "cell-d", "cell-e"} {
		got := f.cells.get(c)
		if !reflect.DeepEqual(got, oldConfig().Clone()) {
			t.Errorf("%s runs %+v, want exactly its previous %+v", c, got, oldConfig())
		}
	}
	if got := f.cells.get("cell-a"); !got.Equal(f.plan.Desired["cell-a"]) {
		t.Errorf("cell-a runs %+v, want the new config (its wave passed)", got)
	}
	if s := states(out)["cell-b"]; s != "rolled back app:v1" {
		t.Errorf("summary cell-b = %q", s)
	}
}

func TestBeforeConfigComesFromTheCellNotTheRepo(t *testing.T) {
	f := newFleet(t)
	// cell-b was hand-tuned outside this repo state: the rollback must
	// restore what it really ran.
	tuned := oldConfig()
	tuned.Image = "app:v1-hotfix"
	tuned.Settings["taskCpu"] = 1024
	f.cells.current["cell-b"] = tuned.Clone()
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-b app:v2": true})
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) {
		t.Fatalf("err = %v, want halted", err)
	}
	if got := f.cells.get("cell-b"); !got.Equal(tuned) {
		t.Errorf("cell-b runs %+v after rollback, want what it ran before %+v", got, tuned)
	}
}

func TestHaltPolicyStopsWithoutRollback(t *testing.T) {
	f := newFleet(t)
	f.plan.Waves[1].Gate.OnBreach = waves.Halt
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	out, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.RolledBack || h.Breach.Cell != "cell-c" {
		t.Fatalf("err = %v, want a halt at cell-c without rollback", err)
	}
	if !strings.Contains(err.Error(), "not rolled back") {
		t.Errorf("message %q does not say the wave was left as it is", err)
	}
	want := map[string]string{"cell-a": "app:v2", "cell-b": "app:v2", "cell-c": "app:v2", "cell-d": "app:v1", "cell-e": "app:v1"}
	if got := f.images(t); !reflect.DeepEqual(got, want) {
		t.Errorf("images %v, want %v", got, want)
	}
	if s := states(out)["cell-c"]; s != StateNotRolledBack+" app:v2" {
		t.Errorf("summary cell-c = %q", s)
	}
}

func inconclusiveGate(cells *fakeCells) func(q GateQuery) ([]Verdict, error) {
	return func(q GateQuery) ([]Verdict, error) {
		var out []Verdict
		for _, c := range q.Cells {
			if q.Wave == "wave-2" {
				out = append(out, Verdict{Cell: c, Decision: waves.Inconclusive, Reason: "12 requests < min_requests 100"})
			} else {
				out = append(out, Verdict{Cell: c, Decision: waves.Pass})
			}
		}
		return out, nil
	}
}

func TestInconclusiveHaltsByDefault(t *testing.T) {
	f := newFleet(t)
	f.gate.answer = inconclusiveGate(f.cells)
	out, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.Wave != "wave-2" || h.Breach != nil || h.RolledBack {
		t.Fatalf("err = %v, want an inconclusive halt at wave-2", err)
	}
	if !strings.Contains(err.Error(), "inconclusive") || !strings.Contains(err.Error(), "min_requests 100") {
		t.Errorf("message %q does not say why", err)
	}
	// waves.Inconclusive early in the bake is normal: only the end decides.
	if n := f.gate.wavesChecked()["wave-2"]; n != 120 {
		t.Errorf("wave-2 polled %d times, want the whole bake (120)", n)
	}
	if s := states(out)["cell-d"]; s != "untouched app:v1" {
		t.Errorf("wave 3 touched: %q", s)
	}
}

func TestInconclusivePromoteCarriesOn(t *testing.T) {
	f := newFleet(t)
	f.gate.answer = inconclusiveGate(f.cells)
	f.plan.Waves[1].Gate.OnInconclusive = waves.InconclusivePromote
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if f.cells.get("cell-e").Image != "app:v2" {
		t.Errorf("rollout did not promote past an inconclusive wave")
	}
}

func TestMaxParallelBoundsAWave(t *testing.T) {
	for _, tc := range []struct{ limit, cells, want int }{{2, 6, 2}, {0, 6, 6}, {1, 3, 1}} {
		t.Run(fmt.Sprintf("limit=%d", tc.limit), func(t *testing.T) {
			var names []string
			desired := map[string]CellConfig{}
			before := map[string]CellConfig{}
			for i := range tc.cells {
				c := fmt.Sprintf("cell-%d", i)
				names = append(names, c)
				before[c] = oldConfig()
				desired[c] = withImage(oldConfig(), "app:v2")
			}
			cells := newCells(before)
			// Each update waits until `want` are in flight at once: this
			// proves the wave really runs that many in parallel (a bound
			// that is too low would hang here). A full batch then holds a
			// moment, time enough for one update too many to start if the
			// bound let it (maxFlight catches it). Correct code cannot fail
			// on timing; only a broken bound can slip past.
			var mu sync.Mutex
			cond := sync.NewCond(&mu)
			arrived := 0
			cells.during = func(string, CellConfig) {
				mu.Lock()
				arrived++
				cond.Broadcast()
				target := ((arrived-1)/tc.want + 1) * tc.want
				for arrived < target {
					cond.Wait()
				}
				last := arrived == target
				mu.Unlock()
				if last {
					time.Sleep(20 * time.Millisecond)
				}
			}
			plan := Plan{Waves: []Wave{{Name: "w", Cells: names, Parallel: tc.limit,
				Gate: waves.Gate{Poll: time.Second, OnBreach: waves.HaltAndRollbackWave, OnInconclusive: waves.InconclusiveHalt}}}, Desired: desired}
			ex := &Executor{Updater: cells, Gate: &fakeGate{answer: healthByImage(cells, nil)}, Store: newStore(), Clock: newClock()}
			if _, err := ex.Run(context.Background(), plan, Options{}); err != nil {
				t.Fatal(err)
			}
			if cells.maxFlight != tc.want {
				t.Errorf("at most %d updates in flight, want %d", cells.maxFlight, tc.want)
			}
		})
	}
}

func TestUnchangedCellsDoNotBake(t *testing.T) {
	f := newFleet(t)
	f.cells.current["cell-a"] = withImage(oldConfig(), "app:v2") // wave-1 is already there
	f.cells.current["cell-b"] = withImage(oldConfig(), "app:v2") // half of wave-2 too
	out, err := f.run(t, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	checked := f.gate.wavesChecked()
	if checked["wave-1"] != 0 {
		t.Errorf("an unchanged wave baked (%d polls)", checked["wave-1"])
	}
	for _, q := range f.gate.calls {
		if q.Wave == "wave-2" && !reflect.DeepEqual(q.Cells, []string{"cell-c"}) {
			t.Fatalf("wave-2 gate judged %v, want only the changed cell-c", q.Cells)
		}
	}
	for _, a := range f.cells.applies() {
		if strings.HasPrefix(a, "cell-a") || strings.HasPrefix(a, "cell-b") {
			t.Errorf("unchanged cell updated: %s", a)
		}
	}
	st := states(out)
	if st["cell-a"] != "unchanged app:v2" || st["cell-b"] != "unchanged app:v2" || st["cell-c"] != "new app:v2" {
		t.Errorf("summary %v", st)
	}
}

// crashWhen makes the store "die" at the first save whose record matches:
// that save and every later one are lost, as with kill -9.
func crashWhen(s *memStore, match func(r *Record) bool) {
	dead := false
	s.onSave = func(r *Record) error {
		if dead || match(r) {
			dead = true
			return errDied
		}
		return nil
	}
}

func TestKilledDuringWave2BakeResumesWithoutRebakingWave1(t *testing.T) {
	f := newFleet(t)
	// The process dies once wave-2 has baked for 10 polls.
	crashWhen(f.store, func(r *Record) bool { return len(r.Waves[1].Polls) == 10 })
	_, err := f.run(t, f.opts())
	if !errors.Is(err, errDied) {
		t.Fatalf("first run: %v, want it to die", err)
	}
	f.store.onSave = nil
	if h := f.store.holder(); h == nil || h.PID != 100 {
		t.Fatalf("the dead run's lock is gone (%v): kill -9 cannot release it", h)
	}
	calls := len(f.gate.calls)
	appliesBefore := len(f.cells.applies())

	// Rerun on the same host: the dead pid's lock is taken over.
	o := f.opts()
	o.PID = 200
	o.Alive = func(h Holder) bool { return h.PID != 100 }
	out, err := f.run(t, o)
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	rerun := f.gate.calls[calls:]
	for _, q := range rerun {
		if q.Wave == "wave-1" {
			t.Fatalf("wave-1 re-baked on resume")
		}
	}
	// wave-2's bake continued: its window still starts where it first
	// started, and it did not start over (120 polls in all).
	rec := f.store.record(t, out.Record.ID)
	if n := len(rec.Waves[1].Polls); n < 119 || n > 121 {
		t.Errorf("wave-2 has %d polls in the record, want its bake continued (≈120)", n)
	}
	if rerun[0].Start != rec.Waves[1].BakeStart {
		t.Errorf("resumed bake window starts %v, want the recorded bake start %v", rerun[0].Start, rec.Waves[1].BakeStart)
	}
	for _, a := range f.cells.applies()[appliesBefore:] {
		if !strings.HasPrefix(a, "cell-d") && !strings.HasPrefix(a, "cell-e") {
			t.Errorf("resume re-applied %s", a)
		}
	}
	if !slices.ContainsFunc(f.events.messages(), func(m string) bool { return strings.Contains(m, "wave-2 was baking") }) {
		t.Errorf("resume did not say what it continued: %v", f.events.messages())
	}
	if rec.State != Complete || f.store.holder() != nil {
		t.Errorf("rollout %s, lock %v after resume", rec.State, f.store.holder())
	}
}

func TestKilledMidUpdateReappliesAndRollsBackToTheRecordedConfig(t *testing.T) {
	f := newFleet(t)
	f.plan.Waves[1].Parallel = 1
	// Dies right after cell-b's update finished, before cell-c started.
	crashWhen(f.store, func(r *Record) bool { return r.Waves[1].Cells[0].State == CellStateUpdated })
	if _, err := f.run(t, f.opts()); !errors.Is(err, errDied) {
		t.Fatalf("first run: %v", err)
	}
	f.store.onSave = nil
	// cell-b now runs app:v2 though the record (as saved) says it is updating.
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	o := f.opts()
	o.PID = 200
	o.Alive = func(Holder) bool { return false }
	out, err := f.run(t, o)
	// The rollback restores app:v1 on cell-b: the config recorded before
	// the wave, not what the cell ran when the rerun found it.
	assertWave2RolledBack(t, f, out, err, "cell-c", "error_rate_5xx", "3.2%")
	if !slices.ContainsFunc(f.events.messages(), func(m string) bool {
		return strings.Contains(m, "wave-2 was mid-update") && strings.Contains(m, "applying its cells again")
	}) {
		t.Errorf("resume did not say it re-applies the half-updated wave: %v", f.events.messages())
	}
}

func TestCtrlCDuringBakeKeepsTheLockAndResumes(t *testing.T) {
	f := newFleet(t)
	ctx, cancel := context.WithCancel(context.Background())
	inner := f.gate.answer
	f.gate.answer = func(q GateQuery) ([]Verdict, error) {
		if q.Wave == "wave-2" {
			cancel()
		}
		return inner(q)
	}
	_, err := f.ex.Run(ctx, f.plan, f.opts())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want canceled", err)
	}
	rec := f.store.record(t, f.plan.ID())
	if rec.State != Interrupted || rec.Waves[1].State != WaveBaking || f.store.holder() == nil {
		t.Fatalf("after Ctrl-C: record %s wave-2 %s lock %v; want interrupted, baking, held", rec.State, rec.Waves[1].State, f.store.holder())
	}
	// Another rollout is kept off the half-done fleet.
	other := f.plan
	other.Desired = map[string]CellConfig{}
	for c := range f.plan.Desired {
		other.Desired[c] = withImage(oldConfig(), "app:v3")
	}
	var le *LockedError
	if _, err := f.ex.Run(context.Background(), other, Options{Host: "laptop", PID: 7}); !errors.As(err, &le) || le.Holder.ID != rec.ID || le.State != Interrupted {
		t.Fatalf("second rollout: %v, want locked by %s (interrupted)", err, rec.ID)
	}
	if !strings.Contains(le.Error(), "stopped before it finished; rerun that deploy") {
		t.Errorf("lock message %q does not say the holder stopped", le)
	}
	// The same deploy, rerun from another machine, continues it.
	f.gate.answer = inner
	if _, err := f.run(t, Options{Host: "ci-2", PID: 1}); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if got := f.gate.wavesChecked()["wave-1"]; got != 60 {
		t.Errorf("wave-1 polled %d times in all, want 60 (not re-baked)", got)
	}
}

func TestConcurrentRolloutIsRefusedNamingTheHolder(t *testing.T) {
	f := newFleet(t)
	started := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	holder := Holder{ID: "r-0123456789ab", Host: "ci-7", PID: 4242, Started: started}
	if err := f.store.Lock(context.Background(), holder); err != nil {
		t.Fatal(err)
	}
	_, err := f.run(t, f.opts())
	var le *LockedError
	if !errors.As(err, &le) || !le.Holder.Same(holder) {
		t.Fatalf("err = %v, want *LockedError held by %s", err, holder)
	}
	for _, want := range []string{"r-0123456789ab", "ci-7", "4242", "2026-12-01T08:00:00Z", "--abandon r-0123456789ab"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not name %q", err, want)
		}
	}
	if n := len(f.cells.applies()); n != 0 {
		t.Errorf("%d updates despite the lock", n)
	}
}

func TestSameRolloutRunningElsewhereIsRefused(t *testing.T) {
	f := newFleet(t)
	// A live run of the same rollout on this host, mid-bake.
	blocked := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	inner := f.gate.answer
	f.gate.answer = func(q GateQuery) ([]Verdict, error) {
		once.Do(func() { close(blocked); <-release })
		return inner(q)
	}
	done := make(chan error)
	go func() { _, err := f.run(t, f.opts()); done <- err }()
	<-blocked
	o := f.opts()
	o.PID = 101
	o.Alive = func(Holder) bool { return true }
	_, err := f.run(t, o)
	close(release)
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.PID != 100 {
		t.Fatalf("concurrent same deploy: %v, want locked by pid 100", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("first run: %v", err)
	}
}

func TestThroughAndWavePromoteOneWaveAtATime(t *testing.T) {
	f := newFleet(t)
	o := f.opts()
	o.Through = "wave-1"
	out, err := f.run(t, o)
	if err != nil {
		t.Fatalf("--through wave-1: %v", err)
	}
	if st := states(out); st["cell-a"] != "new app:v2" || st["cell-b"] != "untouched app:v1" {
		t.Errorf("after --through wave-1: %v", st)
	}
	rec := f.store.record(t, out.Record.ID)
	if rec.State != Paused || f.store.holder() == nil || f.router != 0 {
		t.Fatalf("after --through: %s, lock %v, router %d; want paused, held, not run", rec.State, f.store.holder(), f.router)
	}
	// A different rollout between the jobs is kept off, and told why.
	other := Plan{Waves: f.plan.Waves, Desired: map[string]CellConfig{}}
	for c := range f.plan.Desired {
		other.Desired[c] = withImage(oldConfig(), "app:v3")
	}
	_, err = f.ex.Run(context.Background(), other, Options{Host: "laptop", PID: 7})
	var le *LockedError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "paused before wave wave-2") || !strings.Contains(err.Error(), "--abandon "+rec.ID) {
		t.Fatalf("another rollout while paused: %v", err)
	}

	// --wave wave-3 before wave-2 passed: refused, nothing changes.
	o = f.opts()
	o.Host, o.PID, o.Wave = "ci-2", 2, "wave-3"
	_, err = f.run(t, o)
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "wave-2") || !strings.Contains(err.Error(), "--through wave-2") {
		t.Fatalf("--wave wave-3 early: %v, want refused naming wave-2", err)
	}
	if n := len(f.cells.applies()); n != 1 {
		t.Errorf("a refused run applied something (%d applies)", n)
	}

	// The next job runs wave-2 only, on another machine.
	o = f.opts()
	o.Host, o.PID, o.Wave = "ci-3", 3, "wave-2"
	if _, err := f.run(t, o); err != nil {
		t.Fatalf("--wave wave-2: %v", err)
	}
	if f.cells.get("cell-b").Image != "app:v2" || f.cells.get("cell-d").Image != "app:v1" {
		t.Errorf("--wave wave-2 did not run exactly wave-2: %v", f.images(t))
	}
	if got := f.gate.wavesChecked()["wave-1"]; got != 60 {
		t.Errorf("wave-1 polled %d times, want 60 (baked once)", got)
	}
	// The last wave's job finishes the rollout: router, lock released.
	o = f.opts()
	o.Host, o.PID, o.Wave = "ci-4", 4, "wave-3"
	if _, err := f.run(t, o); err != nil {
		t.Fatalf("--wave wave-3: %v", err)
	}
	rec = f.store.record(t, out.Record.ID)
	if rec.State != Complete || f.router != 1 || f.store.holder() != nil {
		t.Errorf("after the last wave: %s, router %d, lock %v", rec.State, f.router, f.store.holder())
	}
}

func TestWaveOptionRefusals(t *testing.T) {
	f := newFleet(t)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Wave: "wave-2"}, "no rollout of this release has run yet, so wave wave-1 has not passed"},
		{Options{Wave: "wave-9"}, `"wave-9": no such wave (waves: wave-1, wave-2, wave-3)`},
		{Options{Through: "nope"}, `--through "nope": no such wave`},
		{Options{Wave: "wave-1", Through: "wave-2"}, "cannot be combined"},
	} {
		out, err := f.run(t, tc.o)
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want refused with %q", tc.o, err, tc.want)
		}
		// A refused first run started nothing: no outcome to show (a
		// record never saved read "rollout …: running").
		if out != nil {
			t.Errorf("%+v: refused, yet reports rollout %s as %s", tc.o, out.Record.ID, out.Record.State)
		}
		// Nor does its reason name the rollout id it would have had.
		if err != nil && strings.Contains(err.Error(), "rollout r-") {
			t.Errorf("%+v: refused naming a rollout no record holds: %v", tc.o, err)
		}
	}
	if len(f.cells.applies()) != 0 || f.store.holder() != nil {
		t.Errorf("refusals changed cells (%v) or kept the lock (%v)", f.cells.applies(), f.store.holder())
	}
	// --wave of the first wave needs nothing before it.
	if _, err := f.run(t, Options{Wave: "wave-1"}); err != nil {
		t.Errorf("--wave wave-1 on a new rollout: %v", err)
	}
}

func TestHaltedRolloutIsNotRetriedSilently(t *testing.T) {
	f := newFleet(t)
	bad := map[string]bool{"cell-c app:v2": true}
	f.gate.answer = healthByImage(f.cells, bad)
	if _, err := f.run(t, f.opts()); err == nil {
		t.Fatal("want a halt")
	}
	n := len(f.cells.applies())
	// Rerunning the same deploy repeats the halt, changing nothing.
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.Breach.Cell != "cell-c" || !strings.Contains(err.Error(), "--retry") {
		t.Fatalf("rerun of a halted rollout: %v, want the recorded halt and a --retry hint", err)
	}
	if len(f.cells.applies()) != n || f.store.holder() != nil {
		t.Errorf("rerun changed cells or kept the lock")
	}
	// --retry after the cell recovers: wave-2 again from its real state.
	delete(bad, "cell-c app:v2")
	o := f.opts()
	o.Retry = true
	if _, err := f.run(t, o); err != nil {
		t.Fatalf("--retry: %v", err)
	}
	rec := f.store.record(t, f.plan.ID())
	if rec.State != Complete || len(rec.Waves[1].History) != 1 || rec.Waves[1].History[0].Breach.Cell != "cell-c" {
		t.Errorf("after retry: %s, history %+v; want complete with the first attempt kept", rec.State, rec.Waves[1].History)
	}
	if got := f.gate.wavesChecked()["wave-1"]; got != 60 {
		t.Errorf("wave-1 polled %d times, want 60", got)
	}
}

func TestRerunOfACompleteRolloutConvergesWithoutBakingUnchangedCells(t *testing.T) {
	f := newFleet(t)
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatal(err)
	}
	calls, applies := len(f.gate.calls), len(f.cells.applies())
	// Rerun of the same deploy: every cell is on it, nothing bakes.
	out, err := f.run(t, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.gate.calls) != calls || len(f.cells.applies()) != applies {
		t.Errorf("rerun of a converged fleet did work: %d polls, %d applies", len(f.gate.calls)-calls, len(f.cells.applies())-applies)
	}
	for c, s := range states(out) {
		if s != "unchanged app:v2" {
			t.Errorf("%s: %q, want unchanged", c, s)
		}
	}
	if h := out.Record.Waves[0].History; len(h) != 1 || h[0].State != WaveDone {
		t.Errorf("the first run's wave-1 is not kept in history: %+v", h)
	}
	// A cell changed by hand since is rolled out (and baked) again.
	f.cells.current["cell-d"] = oldConfig()
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatal(err)
	}
	if got := f.cells.applies()[applies:]; !reflect.DeepEqual(got, []string{"cell-d app:v2"}) {
		t.Errorf("converging applied %v, want only cell-d", got)
	}
	if n := f.gate.wavesChecked()["wave-3"]; n != 40 {
		t.Errorf("wave-3 polled %d times in all, want 20 + 20", n)
	}
	// A rerun CI job of the finished pipeline (--wave) has nothing to do.
	calls, applies = len(f.gate.calls), len(f.cells.applies())
	f.cells.current["cell-a"] = oldConfig()
	o := f.opts()
	o.Wave = "wave-3"
	if _, err := f.run(t, o); err != nil || len(f.cells.applies()) != applies {
		t.Errorf("--wave on a complete rollout: %v, %d applies", err, len(f.cells.applies())-applies)
	}
	// --rebake bakes every wave again without re-applying.
	f.cells.current["cell-a"] = withImage(oldConfig(), "app:v2")
	o = f.opts()
	o.Rebake = true
	if _, err := f.run(t, o); err != nil {
		t.Fatal(err)
	}
	if len(f.gate.calls)-calls != 20 || len(f.cells.applies()) != applies {
		t.Errorf("--rebake: %d polls (want wave-3's 20: the other waves' cells were unchanged), %d applies", len(f.gate.calls)-calls, len(f.cells.applies())-applies)
	}
}

func TestEveryPollIsRecorded(t *testing.T) {
	f := newFleet(t)
	out, err := f.run(t, f.opts())
	if err != nil {
		t.Fatal(err)
	}
	rec := f.store.record(t, out.Record.ID)
	polls := rec.Waves[0].Polls
	if len(polls) != 60 {
		t.Fatalf("wave-1 recorded %d polls, want 60", len(polls))
	}
	for i, p := range polls {
		if len(p.Verdicts) != 1 || p.Verdicts[0].Readings[0].Value != "0.1%" {
			t.Fatalf("poll %d: %+v", i, p)
		}
		if i > 0 && p.At.Sub(polls[i-1].At) != 30*time.Second {
			t.Fatalf("poll %d came %s after the last, want every 30s", i, p.At.Sub(polls[i-1].At))
		}
	}
	if last := polls[59].At.Sub(rec.Waves[0].BakeStart); last != 30*time.Minute {
		t.Errorf("last poll at %s into the bake, want at its end (30m)", last)
	}
}

func TestCurrentReadFailureChangesNothing(t *testing.T) {
	f := newFleet(t)
	f.cells.currentErr = map[string]error{"cell-c": errors.New("stack cell-c: not deployed")}
	_, err := f.run(t, f.opts())
	if err == nil || !strings.Contains(err.Error(), "cell-c") || !strings.Contains(err.Error(), "nothing in the wave was changed") {
		t.Fatalf("err = %v", err)
	}
	for _, a := range f.cells.applies() {
		if !strings.HasPrefix(a, "cell-a") {
			t.Errorf("wave-2 changed %s without a recorded before-config", a)
		}
	}
}

func TestRollbackFailureKeepsTheWaveForARerun(t *testing.T) {
	f := newFleet(t)
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	f.cells.fail = func(cell string, cfg CellConfig) error {
		if cell == "cell-b" && cfg.Image == "app:v1" {
			return errors.New("engine: stack cell-b is locked")
		}
		return nil
	}
	out, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.RollbackErr == nil || !strings.Contains(err.Error(), "rolling back failed") {
		t.Fatalf("err = %v, want a halt whose rollback failed", err)
	}
	if s := states(out)["cell-b"]; s != StateRollbackFailed+" " {
		t.Errorf("summary cell-b = %q", s)
	}
	rec := f.store.record(t, h.RolloutID)
	if rec.Waves[1].State != WaveRollingBack || f.store.holder() == nil {
		t.Fatalf("wave-2 %s, lock %v: want rolling-back, kept", rec.Waves[1].State, f.store.holder())
	}
	f.cells.fail = nil
	out, err = f.run(t, Options{Host: "ci-1", PID: 101})
	assertWave2RolledBack(t, f, out, err, "cell-c", "error_rate_5xx", "3.2%")
}

func TestAbandonFreesTheFleetAndTheRolloutResumes(t *testing.T) {
	f := newFleet(t)
	crashWhen(f.store, func(r *Record) bool { return r.Waves[1].State == WaveBaking })
	if _, err := f.run(t, f.opts()); !errors.Is(err, errDied) {
		t.Fatal(err)
	}
	f.store.onSave = nil
	id := f.plan.ID()
	if _, err := Abandon(context.Background(), f.store, "r-other", Holder{Host: "x"}); err == nil {
		t.Errorf("abandoning a rollout that does not hold the lock succeeded")
	}
	held, err := Abandon(context.Background(), f.store, id, Holder{Host: "laptop", PID: 9})
	if err != nil || held.PID != 100 {
		t.Fatalf("Abandon: %v %v", held, err)
	}
	if f.store.holder() != nil || f.store.record(t, id).State != Abandoned {
		t.Fatalf("after abandon: lock %v state %s", f.store.holder(), f.store.record(t, id).State)
	}
	if _, err := f.run(t, Options{Host: "laptop", PID: 9}); err != nil {
		t.Fatalf("rerun after abandon: %v", err)
	}
	if got := f.gate.wavesChecked()["wave-1"]; got != 60 {
		t.Errorf("wave-1 polled %d times, want 60", got)
	}
}

func TestSaveFailureStopsBeforeChanging(t *testing.T) {
	f := newFleet(t)
	f.store.onSave = func(r *Record) error {
		if r.Waves[1].Cells[0].Before != nil {
			return errors.New("s3: AccessDenied")
		}
		return nil
	}
	_, err := f.run(t, f.opts())
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("err = %v", err)
	}
	for _, a := range f.cells.applies() {
		if !strings.HasPrefix(a, "cell-a") {
			t.Errorf("changed %s though its before-config could not be recorded", a)
		}
	}
}

func TestPlanValidate(t *testing.T) {
	f := newFleet(t)
	p := f.plan
	p.Waves = append([]Wave(nil), p.Waves...)
	p.Waves[1].Gate.OnBreach = "rollback"
	p.Waves[2].Cells = []string{"cell-a", "cell-zz"}
	err := p.Validate()
	for _, want := range []string{`on_breach "rollback"`, `cell "cell-a" is in wave "wave-1" and wave "wave-3"`, `cell "cell-zz" (wave "wave-3") has no desired configuration`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
	if _, err := f.ex.Run(context.Background(), p, Options{}); err == nil || f.store.holder() != nil {
		t.Errorf("an invalid plan ran (%v) or took the lock", err)
	}
}

func TestIDFollowsWhatShips(t *testing.T) {
	f := newFleet(t)
	id := f.plan.ID()
	same := Plan{Waves: f.plan.Waves, Desired: map[string]CellConfig{}}
	for c, d := range f.plan.Desired {
		d = d.Clone() // numbers come back as float64: still the same rollout
		same.Desired[c] = d
	}
	if same.ID() != id {
		t.Errorf("the same plan has another id")
	}
	same.Desired["cell-e"] = withImage(oldConfig(), "app:v3")
	if same.ID() == id {
		t.Errorf("a different image keeps the id")
	}
}

func TestAnExplicitIDMustBeTheSameRollout(t *testing.T) {
	f := newFleet(t)
	o := f.opts()
	o.Through = "wave-1"
	out, err := f.run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	other := Plan{Waves: f.plan.Waves, Desired: map[string]CellConfig{}}
	for c := range f.plan.Desired {
		other.Desired[c] = withImage(oldConfig(), "app:v3")
	}
	_, err = f.ex.Run(context.Background(), other, Options{ID: out.Record.ID, Host: "ci-1", PID: 100})
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "another configuration") {
		t.Fatalf("err = %v, want refused: another rollout", err)
	}
	if f.cells.get("cell-b").Image != "app:v1" {
		t.Errorf("a refused rollout changed cell-b")
	}
}

func TestCtrlCDuringRollbackIsFinishedByTheRerun(t *testing.T) {
	f := newFleet(t)
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	ctx, cancel := context.WithCancel(context.Background())
	f.cells.fail = func(cell string, cfg CellConfig) error {
		if cfg.Image == "app:v1" && cell == "cell-b" {
			cancel()
			return context.Canceled
		}
		return nil
	}
	_, err := f.ex.Run(ctx, f.plan, f.opts())
	var h *HaltedError
	if errors.As(err, &h) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "finish the rollback") {
		t.Fatalf("err = %v, want an interruption that says to rerun", err)
	}
	if rec := f.store.record(t, f.plan.ID()); rec.Waves[1].State != WaveRollingBack || rec.State != Interrupted {
		t.Fatalf("record %s, wave-2 %s", rec.State, rec.Waves[1].State)
	}
	f.cells.fail = nil
	out, err := f.run(t, f.opts())
	assertWave2RolledBack(t, f, out, err, "cell-c", "error_rate_5xx", "3.2%")
	if !slices.ContainsFunc(f.events.messages(), func(m string) bool { return strings.Contains(m, "was rolling back when the last run stopped") }) {
		t.Errorf("rerun did not say it finishes the rollback")
	}
}

func TestFirstInterruptFinishesRunningCellsThenStops(t *testing.T) {
	f := newFleet(t)
	f.plan.Waves[1].Parallel = 1
	stop := make(chan struct{})
	f.cells.during = func(cell string, cfg CellConfig) {
		if cell == "cell-b" {
			close(stop) // Ctrl-C while cell-b updates
		}
	}
	o := f.opts()
	o.Stop = stop
	_, err := f.run(t, o)
	if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "cell-c") {
		t.Fatalf("err = %v, want stopped naming the cell not updated", err)
	}
	if f.cells.get("cell-b").Image != "app:v2" || f.cells.get("cell-c").Image != "app:v1" {
		t.Errorf("want cell-b's running update finished and cell-c not started: %v", f.images(t))
	}
	rec := f.store.record(t, f.plan.ID())
	if rec.State != Interrupted || rec.Waves[1].State != WaveUpdating || f.store.holder() == nil {
		t.Fatalf("record %s wave-2 %s lock %v", rec.State, rec.Waves[1].State, f.store.holder())
	}
	f.cells.during = nil
	n := len(f.cells.applies())
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if got := f.cells.applies()[n]; got != "cell-c app:v2" {
		t.Errorf("rerun started with %q, want cell-c (cell-b was done)", got)
	}

	// A stop during a bake ends it at once, resumable.
	g := newFleet(t)
	stop2 := make(chan struct{})
	inner := g.gate.answer
	g.gate.answer = func(q GateQuery) ([]Verdict, error) {
		if q.Wave == "wave-1" && len(g.gate.calls) == 5 {
			close(stop2)
		}
		return inner(q)
	}
	o = g.opts()
	o.Stop = stop2
	if _, err := g.run(t, o); !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "baking") {
		t.Fatalf("stop during bake: %v", err)
	}
	if n := g.gate.wavesChecked()["wave-1"]; n != 5 {
		t.Errorf("bake went on for %d polls after the stop", n)
	}
}

type stackLocked struct{ stack string }

func (e *stackLocked) Error() string { return "stack " + e.stack + " is locked by another update" }

func TestALockedCellStackStopsTheWaveWithoutABreach(t *testing.T) {
	f := newFleet(t)
	locked := true
	f.cells.fail = func(cell string, cfg CellConfig) error {
		if cell == "cell-c" && locked {
			return fmt.Errorf("%w: %w", ErrNotApplied, &stackLocked{cell})
		}
		return nil
	}
	_, err := f.run(t, f.opts())
	var sl *stackLocked
	var h *HaltedError
	if errors.As(err, &h) || !errors.As(err, &sl) || !strings.Contains(err.Error(), "half-updated") {
		t.Fatalf("err = %v, want the stack's lock error (not a halt), saying the wave is half-updated", err)
	}
	if f.cells.get("cell-b").Image != "app:v2" {
		t.Errorf("cell-b was rolled back: a lock on a sibling is not a breach")
	}
	rec := f.store.record(t, f.plan.ID())
	if c := rec.Waves[1].Cells[1]; c.State != CellPending || rec.Waves[1].State != WaveUpdating || rec.State != Interrupted {
		t.Fatalf("record %s, wave-2 %s, cell-c %s", rec.State, rec.Waves[1].State, c.State)
	}
	locked = false
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if f.cells.get("cell-e").Image != "app:v2" {
		t.Errorf("rerun did not finish the rollout")
	}
}

func TestRetryOfAWaveHaltedWithoutRollbackKeepsItsBeforeConfig(t *testing.T) {
	f := newFleet(t)
	f.plan.Waves[1].Gate.OnBreach = waves.Halt
	bad := map[string]bool{"cell-c app:v2": true}
	f.gate.answer = healthByImage(f.cells, bad)
	if _, err := f.run(t, f.opts()); err == nil {
		t.Fatal("want a halt")
	}
	delete(bad, "cell-c app:v2")
	o := f.opts()
	o.Retry = true
	if _, err := f.run(t, o); err != nil {
		t.Fatalf("--retry: %v", err)
	}
	rec := f.store.record(t, f.plan.ID())
	// The cells ran app:v2 when the retry started; what they ran before
	// the wave is still app:v1, so a later rollback would restore that.
	for _, c := range rec.Waves[1].Cells {
		if c.Before == nil || c.Before.Image != "app:v1" {
			t.Errorf("%s before-config after retry: %+v, want app:v1", c.Cell, c.Before)
		}
	}
	if slices.ContainsFunc(f.events.messages(), func(m string) bool { return strings.Contains(m, "mid-update") }) {
		t.Errorf("a retry is reported as a crash recovery: %v", f.events.messages())
	}
	if rec.State != Complete {
		t.Errorf("rollout %s after retry", rec.State)
	}
}

func TestOutcomesMapToTheProductsExitCodes(t *testing.T) {
	f := newFleet(t)
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true})
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if code := exitcode.Of(err); code != exitcode.Halted || !errors.As(err, &h) {
		t.Errorf("a halt exits %d (%v), want %d with the executor's HaltedError inside", code, err, exitcode.Halted)
	}
	if err.Error() != h.Error() {
		t.Errorf("the wrapper changed the message: %q vs %q", err, h)
	}

	g := newFleet(t)
	_ = g.store.Lock(context.Background(), Holder{ID: "r-other", Host: "h", PID: 1})
	_, err = g.run(t, g.opts())
	if code := exitcode.Of(err); code != exitcode.Locked {
		t.Errorf("a held fleet exits %d (%v), want %d", code, err, exitcode.Locked)
	}

	// A cell stack locked by another operation: the engine's lock error,
	// kept through the executor, exits 4 too.
	k := newFleet(t)
	k.cells.fail = func(cell string, cfg CellConfig) error {
		if cell == "cell-a" {
			return fmt.Errorf("%w: %w", ErrNotApplied, outcome.Locked(cell, errors.New("the stack is locked")))
		}
		return nil
	}
	_, err = k.run(t, k.opts())
	if code := exitcode.Of(err); code != exitcode.Locked {
		t.Errorf("a locked cell stack exits %d (%v), want %d", code, err, exitcode.Locked)
	}
	if code := exitcode.Of(&RefusedError{Reason: "x"}); code != exitcode.Error {
		t.Errorf("a refusal exits %d", code)
	}
}

// killedMidRollbackThenAbandoned leaves rollout app:v2 as issue 21 found
// it: cell-c breached in wave-2, the run died while rolling cell-c back
// (it still runs app:v2), and the operator broke its lock with `deploy
// --abandon`.
func killedMidRollbackThenAbandoned(t *testing.T, f *fleet) string {
	t.Helper()
	f.gate.answer = healthByImage(f.cells, map[string]bool{"cell-c app:v2": true, "cell-c app:v3": true})
	ctx, cancel := context.WithCancel(context.Background())
	f.cells.fail = func(cell string, cfg CellConfig) error {
		if cfg.Image == "app:v1" && cell == "cell-c" {
			cancel()
			return context.Canceled
		}
		return nil
	}
	if _, err := f.ex.Run(ctx, f.plan, f.opts()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the run interrupted mid-rollback", err)
	}
	f.cells.fail = nil
	id := f.plan.ID()
	if rec := f.store.record(t, id); rec.Waves[1].State != WaveRollingBack || f.cells.get("cell-c").Image != "app:v2" {
		t.Fatalf("setup: wave-2 %s, cell-c on %s", rec.Waves[1].State, f.cells.get("cell-c").Image)
	}
	// deploy --abandon: the lock broken, the record says abandoned.
	if err := f.store.BreakLock(context.Background(), *f.store.holder()); err != nil {
		t.Fatal(err)
	}
	rec := f.store.record(t, id)
	rec.State = Abandoned
	if err := f.store.Save(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestANewRolloutFinishesAnAbandonedRollbackAndNeverRollsBackToTheBreachedImage(t *testing.T) {
	f := newFleet(t)
	abandoned := killedMidRollbackThenAbandoned(t, f)

	// A new rollout (app:v3), which breaches on cell-c too.
	for c := range f.plan.Desired {
		f.plan.Desired[c] = withImage(oldConfig(), "app:v3")
	}
	_, err := f.run(t, f.opts())
	var h *HaltedError
	if !errors.As(err, &h) || h.Wave != "wave-2" || !h.RolledBack {
		t.Fatalf("err = %v, want wave-2 of the new rollout breached and rolled back", err)
	}
	if got := f.cells.get("cell-c").Image; got != "app:v1" {
		t.Fatalf("cell-c runs %s after the new rollout's rollback: want app:v1, the last image that passed (app:v2 breached)", got)
	}
	rec := f.store.record(t, f.plan.ID())
	for _, c := range rec.Waves[1].Cells {
		if c.Before == nil || c.Before.Image != "app:v1" {
			t.Errorf("the new rollout recorded %s's configuration before it as %+v, want app:v1", c.Cell, c.Before)
		}
	}
	old := f.store.record(t, abandoned)
	if old.Waves[1].State != WaveRolledBack || old.State != HaltedState {
		t.Errorf("the abandoned rollout's record says %s / wave-2 %s, want its rollback finished", old.State, old.Waves[1].State)
	}
	if !slices.ContainsFunc(f.events.messages(), func(m string) bool {
		return strings.Contains(m, abandoned) && strings.Contains(m, "finishing that rollback")
	}) {
		t.Errorf("the new rollout did not say it finished rollout %s's rollback: %v", abandoned, f.events.messages())
	}
}

func TestANewRolloutIsRefusedWhileAnAbandonedRollbackCannotBeFinished(t *testing.T) {
	f := newFleet(t)
	abandoned := killedMidRollbackThenAbandoned(t, f)
	f.cells.fail = func(cell string, cfg CellConfig) error {
		if cell == "cell-c" {
			return errors.New("stack locked")
		}
		return nil
	}
	for c := range f.plan.Desired {
		f.plan.Desired[c] = withImage(oldConfig(), "app:v3")
	}
	applied := len(f.cells.applies())
	_, err := f.run(t, f.opts())
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), abandoned) || !strings.Contains(err.Error(), "rolling back") ||
		!strings.Contains(err.Error(), "cell-c") || !strings.Contains(err.Error(), "rerun `cellctl deploy`") {
		t.Fatalf("err = %v, want a refusal naming the rollout left mid-rollback, its cell and the next command", err)
	}
	for _, a := range f.cells.applies()[applied:] {
		if strings.HasSuffix(a, " app:v3") {
			t.Fatalf("the new rollout shipped %q while a rollback was unfinished", a)
		}
	}
	if f.store.holder() != nil {
		t.Errorf("a refused new rollout keeps the lock: %v", f.store.holder())
	}
}

// settledCells is a fleet whose cells say whether their last update
// completed (Settler).
type settledCells struct {
	*fakeCells
	unsettled map[string]string
	mu        sync.Mutex // a wave's cells are asked at once
	asked     []string
}

func (s *settledCells) Settled(_ context.Context, cell string) (bool, string, error) {
	s.mu.Lock()
	s.asked = append(s.asked, cell)
	s.mu.Unlock()
	if why := s.unsettled[cell]; why != "" {
		return false, why, nil
	}
	return true, "", nil
}

// A cell already on the desired configuration costs no engine run — unless
// its last update did not complete (failed half-way, killed): then its
// recorded configuration says nothing about what all its resources run,
// and it is updated like any changed cell. Only cells that would be
// skipped are asked.
func TestAnUnsettledCellIsUpdatedAlthoughItsConfigurationIsTheDesiredOne(t *testing.T) {
	cells := newCells(map[string]CellConfig{"cell-a": {Image: "app:v2"}, "cell-b": {Image: "app:v2"}, "cell-c": {Image: "app:v1"}})
	sc := &settledCells{fakeCells: cells, unsettled: map[string]string{"cell-b": "its last update failed"}}
	ev := &events{}
	ex := &Executor{Updater: sc, Gate: &fakeGate{answer: healthByImage(cells, nil)}, Store: newStore(), Clock: newClock(), Progress: ev}
	plan := Plan{Waves: []Wave{{Name: "all", Cells: []string{"cell-a", "cell-b", "cell-c"}, Bake: time.Minute,
		Gate: waves.Gate{Poll: time.Minute, OnBreach: waves.HaltAndRollbackWave, OnInconclusive: waves.InconclusiveHalt}}},
		Desired: map[string]CellConfig{"cell-a": {Image: "app:v2"}, "cell-b": {Image: "app:v2"}, "cell-c": {Image: "app:v2"}}}
	if _, err := ex.Run(context.Background(), plan, Options{Host: "ci-1", PID: 1}); err != nil {
		t.Fatal(err)
	}
	applied := cells.applies()
	slices.Sort(applied)
	if !slices.Equal(applied, []string{"cell-b app:v2", "cell-c app:v2"}) {
		t.Errorf("applies %v, want cell-b (unsettled) and cell-c (changed) only", applied)
	}
	slices.Sort(sc.asked)
	if !slices.Equal(sc.asked, []string{"cell-a", "cell-b"}) {
		t.Errorf("asked %v, want only the cells that would be skipped", sc.asked)
	}
	if !slices.ContainsFunc(ev.messages(), func(m string) bool {
		return strings.Contains(m, "cell-b") && strings.Contains(m, "its last update failed")
	}) {
		t.Errorf("no note says why cell-b was updated: %v", ev.messages())
	}
}

// TestDelayHoldsTheWaveAndResumesWithWhatIsLeft: a wave's delay (the
// pipeline shape's `delay`) holds its cells unchanged for that long after
// the wave before it passed; a run stopped during the hold waits only what
// is left when it is resumed, and an unchanged wave does not wait at all.
func TestDelayHoldsTheWaveAndResumesWithWhatIsLeft(t *testing.T) {
	f := newFleet(t)
	f.plan.Waves[1].Delay = 20 * time.Minute
	var applied time.Time
	f.cells.during = func(cell string, cfg CellConfig) {
		if cell == "cell-b" && applied.IsZero() {
			applied = f.clock.Now()
		}
	}
	// The first run is stopped (Ctrl-C) while it holds: the hold's clock
	// never fires, the stop comes when the hold is announced.
	ctx, cancel := context.WithCancel(context.Background())
	f.ex.Clock = stuckClock{f.clock, 20 * time.Minute}
	f.ex.Progress = cancelOn{f.events, "holding", cancel}
	if _, err := f.ex.Run(ctx, f.plan, f.opts()); !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want it stopped during the hold", err)
	}
	if !applied.IsZero() {
		t.Fatal("cell-b changed before its wave's delay")
	}
	rec := f.store.record(t, f.plan.ID())
	until := rec.Waves[1].DelayUntil
	if want := rec.Waves[0].Finished.Add(20 * time.Minute); until.Before(want) {
		t.Fatalf("the hold ends %v, before wave-1 finished + 20m (%v)", until, want)
	}
	f.clock.Advance(15 * time.Minute) // the operator comes back 15 minutes later
	f.ex.Clock, f.ex.Progress = f.clock, f.events
	out, err := f.run(t, f.opts())
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if applied.Before(until) {
		t.Errorf("cell-b changed at %v, before the hold ended at %v", applied, until)
	}
	if !slices.ContainsFunc(f.events.messages(), func(m string) bool { return strings.Contains(m, "wave-2: holding 5m0s before it starts") }) {
		t.Errorf("the resumed run did not hold for what was left (5m): %v", f.events.messages())
	}
	if out.Record.State != Complete {
		t.Errorf("rollout %s, want complete", out.Record.State)
	}

	// Run again with nothing left to change: no hold.
	f.events = &events{}
	f.ex.Progress = f.events
	same := f.plan
	if _, err := f.ex.Run(context.Background(), same, f.opts()); err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(f.events.messages(), func(m string) bool { return strings.Contains(m, "holding") }) {
		t.Errorf("a wave with nothing to change held for its delay: %v", f.events.messages())
	}
}

// stuckClock is a clock whose waits of one length never end (the test
// stops the run there).
type stuckClock struct {
	*fakeClock
	stuck time.Duration
}

func (c stuckClock) After(d time.Duration) <-chan time.Time {
	if d == c.stuck {
		return make(chan time.Time)
	}
	return c.fakeClock.After(d)
}

// cancelOn passes events on and cancels when a message contains text.
type cancelOn struct {
	next   Progress
	text   string
	cancel context.CancelFunc
}

func (c cancelOn) Event(e Event) {
	c.next.Event(e)
	if strings.Contains(e.Message, c.text) {
		c.cancel()
	}
}
