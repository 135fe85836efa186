package executor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/exitcode"
)

func ask(by string) Ask { return Ask{By: by, At: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)} }

// TestPauseDuringABakeKeepsTheFleetAndOnlyResumeContinues: a pause asked
// while wave-2 bakes stops the run at its next poll; the rollout keeps
// the fleet, later waves are untouched, a plain rerun (CI's next job) is
// refused naming who paused it, and resume continues the bake from where
// it stood.
func TestPauseDuringABakeKeepsTheFleetAndOnlyResumeContinues(t *testing.T) {
	f := newFleet(t)
	id := f.plan.ID()
	polls := 0
	next := f.gate.answer
	f.gate.answer = func(q GateQuery) ([]Verdict, error) {
		if q.Wave == "wave-2" {
			if polls++; polls == 2 {
				_ = f.store.Ask(context.Background(), id, func(r *Request) { a := ask("alice@laptop"); r.Pause = &a })
			}
		}
		return next(q)
	}
	out, err := f.run(t, f.opts())
	if err != nil {
		t.Fatalf("a paused run is not a failure: %v", err)
	}
	rec := f.store.record(t, id)
	if rec.State != Paused || rec.Paused == nil || rec.Paused.By != "alice@laptop" {
		t.Fatalf("record: state %s, paused %+v; want paused by alice@laptop", rec.State, rec.Paused)
	}
	if got := rec.Waves[1].State; got != WaveBaking {
		t.Fatalf("wave-2 is %s; want baking (the pause stopped its bake)", got)
	}
	if h := f.store.holder(); h == nil || h.ID != id {
		t.Fatalf("the paused rollout must keep the fleet: holder %v", h)
	}
	if img := f.images(t); img["cell-d"] != "app:v1" || img["cell-e"] != "app:v1" {
		t.Fatalf("wave-3 must be untouched while paused: %v", img)
	}
	if out == nil || out.Record.State != Paused {
		t.Fatalf("outcome: %+v", out)
	}
	bakedBefore := polls

	// CI's next job reruns the deploy: refused, exit 4, nothing changed.
	_, err = f.run(t, f.opts())
	var le *LockedError
	if !errors.As(err, &le) || exitcode.Of(err) != exitcode.Locked || !strings.Contains(err.Error(), "paused by alice@laptop") ||
		!strings.Contains(err.Error(), "cellctl rollout resume "+id) {
		t.Fatalf("rerun of a paused rollout: %v (exit %d); want a lock refusal naming who paused it and the resume command", err, exitcode.Of(err))
	}
	if polls != bakedBefore {
		t.Fatal("the refused rerun polled the gate")
	}

	o := f.opts()
	o.Resume = true
	if _, err := f.run(t, o); err != nil {
		t.Fatalf("resume: %v", err)
	}
	rec = f.store.record(t, id)
	if rec.State != Complete || rec.Paused != nil || rec.Finished.IsZero() {
		t.Fatalf("after resume: %s, paused %+v, finished %s", rec.State, rec.Paused, rec.Finished)
	}
	for c, img := range f.images(t) {
		if img != "app:v2" {
			t.Errorf("%s runs %s after the resumed rollout", c, img)
		}
	}
	if q, _ := f.store.Request(context.Background(), id); !q.Empty() {
		t.Fatalf("a finished rollout keeps requests: %+v", q)
	}
	if f.store.holder() != nil {
		t.Fatal("the completed rollout kept the fleet")
	}
}

// TestAbortMidWaveRestoresEveryChangedCell: an abort asked while wave-2
// updates rolls wave-2 back, then wave-1, each cell to exactly the
// configuration it ran before, and releases the fleet; wave-3 is never
// touched; a rerun is refused until --retry starts it again.
func TestAbortMidWaveRestoresEveryChangedCell(t *testing.T) {
	f := newFleet(t)
	id := f.plan.ID()
	// Each cell ran its own configuration before: the abort must restore
	// each exactly, not a common one.
	before := map[string]CellConfig{}
	for i, c := range []string{"cell-a", "cell-b", "cell-c", "cell-d", "cell-e"} {
		cfg := oldConfig()
		cfg.Settings["taskCpu"] = 256 * (i + 1)
		before[c] = cfg
		f.cells.current[c] = cfg.Clone()
	}
	f.cells.during = func(cell string, cfg CellConfig) {
		if cell == "cell-b" && cfg.Image == "app:v2" {
			// The cells store's lock is held during Apply: ask from
			// another goroutine, as another terminal would.
			done := make(chan struct{})
			go func() {
				_ = f.store.Ask(context.Background(), id, func(r *Request) { a := ask("bob@ops"); r.Abort = &a })
				close(done)
			}()
			<-done
		}
	}
	_, err := f.run(t, f.opts())
	var ae *AbortedError
	if !errors.As(err, &ae) || exitcode.Of(err) != exitcode.Halted || ae.By.By != "bob@ops" {
		t.Fatalf("aborted run: %v (exit %d); want *AbortedError by bob@ops, exit 3", err, exitcode.Of(err))
	}
	for c, want := range before {
		if got := f.cells.get(c); !got.Equal(want) {
			t.Errorf("%s runs %+v after the abort; want its before-config %+v", c, got, want)
		}
	}
	rec := f.store.record(t, id)
	if rec.State != Aborted || rec.Aborted == nil || rec.Aborted.By != "bob@ops" {
		t.Fatalf("record: %s, aborted %+v", rec.State, rec.Aborted)
	}
	if rec.Waves[2].State != WavePending {
		t.Fatalf("wave-3 is %s; the abort must not touch a wave that never started", rec.Waves[2].State)
	}
	// Last first: wave-2's cells go back before wave-1's.
	log := f.cells.applies()
	lastB, lastA := -1, -1
	for i, l := range log {
		switch l {
		case "cell-b app:v1", "cell-c app:v1":
			lastB = i
		case "cell-a app:v1":
			lastA = i
		}
	}
	if lastA < lastB {
		t.Fatalf("wave-1 was rolled back before wave-2: %v", log)
	}
	for _, l := range log {
		if strings.HasPrefix(l, "cell-d") || strings.HasPrefix(l, "cell-e") {
			t.Fatalf("the abort touched wave-3: %v", log)
		}
	}
	if f.store.holder() != nil {
		t.Fatal("an aborted rollout keeps the fleet")
	}

	_, err = f.run(t, f.opts())
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "aborted by bob@ops") {
		t.Fatalf("rerun of an aborted rollout: %v; want a refusal naming the abort", err)
	}
	f.cells.during = nil
	o := f.opts()
	o.Retry = true
	if _, err := f.run(t, o); err != nil {
		t.Fatalf("--retry of an aborted rollout: %v", err)
	}
	if rec := f.store.record(t, id); rec.State != Complete || rec.Aborted != nil {
		t.Fatalf("after --retry: %s, aborted %+v", rec.State, rec.Aborted)
	}
}

// TestAbortOfAPausedRolloutRunsHere: `rollout abort` of a rollout no run
// holds (stopped by --through) rolls its passed waves back itself.
func TestAbortOfAPausedRolloutRunsHere(t *testing.T) {
	f := newFleet(t)
	o := f.opts()
	o.Through = "wave-2"
	if _, err := f.run(t, o); err != nil {
		t.Fatal(err)
	}
	a := ask("carol@ci")
	o = f.opts()
	o.Abort = &a
	_, err := f.run(t, o)
	if !errors.As(err, new(*AbortedError)) {
		t.Fatalf("abort: %v", err)
	}
	for c, img := range f.images(t) {
		if img != "app:v1" {
			t.Errorf("%s runs %s after the abort", c, img)
		}
	}
	if rec := f.store.record(t, f.plan.ID()); rec.State != Aborted {
		t.Fatalf("record: %s", rec.State)
	}
}

// TestKilledMidAbortIsFinishedByTheNextRun: a run killed after wave-2's
// rollback leaves the record aborting; the next run of the rollout
// finishes the abort (wave-1) rather than continuing the rollout.
func TestKilledMidAbortIsFinishedByTheNextRun(t *testing.T) {
	f := newFleet(t)
	abortKilledWhen(t, f, func(r *Record) bool { return r.Aborted != nil && r.Waves[1].State == WaveRolledBack })
	rec := f.store.record(t, f.plan.ID())
	if rec.Aborted == nil || rec.State == Aborted {
		t.Fatalf("killed mid-abort: %s, aborted %+v", rec.State, rec.Aborted)
	}
	_, err := f.run(t, f.opts())
	if !errors.As(err, new(*AbortedError)) {
		t.Fatalf("the rerun must finish the abort: %v", err)
	}
	for c, img := range f.images(t) {
		if img != "app:v1" {
			t.Errorf("%s runs %s after the finished abort", c, img)
		}
	}
}

// TestApprovalHoldsAWaveUntilApproved: a wave with approve: true waits,
// recorded waiting and holding the fleet, with none of its cells
// changed; a stop leaves it waiting; once approved, the rerun records who
// approved and goes on.
func TestApprovalHoldsAWaveUntilApproved(t *testing.T) {
	f := newFleet(t)
	f.plan.Waves[1].Approve = true
	id := f.plan.ID()
	stop := make(chan struct{})
	reads := 0
	f.store.onRequest = func(string) {
		rec, err := f.store.Load(context.Background(), id)
		if err == nil && rec.State == Waiting {
			if reads++; reads == 3 {
				close(stop)
			}
		}
	}
	o := f.opts()
	o.Stop = stop
	_, err := f.run(t, o)
	if !errors.Is(err, ErrStopped) {
		t.Fatalf("stopped while waiting: %v", err)
	}
	rec := f.store.record(t, id)
	if rec.State != Interrupted || rec.Waves[1].State != WaveWaiting || rec.Waves[0].State != WaveDone {
		t.Fatalf("record: %s, waves %s %s", rec.State, rec.Waves[0].State, rec.Waves[1].State)
	}
	if img := f.images(t); img["cell-b"] != "app:v1" || img["cell-c"] != "app:v1" {
		t.Fatalf("a waiting wave changed its cells: %v", img)
	}
	if h := f.store.holder(); h == nil {
		t.Fatal("a waiting rollout must keep the fleet")
	}
	// Another process approves; this run reads it while it waits.
	waits := 0
	f.store.onRequest = func(string) {
		if waits++; waits == 3 {
			go func() {
				_ = f.store.Ask(context.Background(), id, func(r *Request) {
					r.Approve = map[string]Ask{"wave-2": ask("dana@release")}
				})
			}()
		}
	}
	if _, err := f.run(t, f.opts()); err != nil {
		t.Fatalf("after approval: %v", err)
	}
	rec = f.store.record(t, id)
	if rec.State != Complete || rec.Waves[1].Approval == nil || rec.Waves[1].Approval.By != "dana@release" {
		t.Fatalf("record: %s, approval %+v", rec.State, rec.Waves[1].Approval)
	}
}

// TestKilledAfterAWavesCellsWentBackFinishesItsRollback: killed once
// wave-1's cell is back but before the wave is recorded rolled back, the
// next run finishes that wave's rollback rather than skipping it.
func TestKilledAfterAWavesCellsWentBackFinishesItsRollback(t *testing.T) {
	f := newFleet(t)
	// The save that would record wave-1 rolled back is lost: the record
	// says its cell is back and the wave still rolling back.
	abortKilledWhen(t, f, func(r *Record) bool { return r.Aborted != nil && r.Waves[0].State == WaveRolledBack })
	if _, err := f.run(t, f.opts()); !errors.As(err, new(*AbortedError)) {
		t.Fatalf("the rerun must finish the abort: %v", err)
	}
	rec := f.store.record(t, f.plan.ID())
	if got := rec.Waves[0].State; got != WaveRolledBack || rec.State != Aborted {
		t.Fatalf("wave-1 is %s, the rollout %s; want rolled-back, aborted", got, rec.State)
	}
}

// abortKilledWhen pauses the fleet after wave-2 (--through), then aborts
// it with a run that dies at the first save died matches (the save is
// lost); the killed run's lock is left for the next run to take over.
func abortKilledWhen(t *testing.T, f *fleet, died func(*Record) bool) {
	t.Helper()
	o := f.opts()
	o.Through = "wave-2"
	if _, err := f.run(t, o); err != nil {
		t.Fatal(err)
	}
	crashWhen(f.store, died)
	a := ask("carol@ci")
	o = f.opts()
	o.Abort = &a
	if _, err := f.run(t, o); !errors.Is(err, errDied) {
		t.Fatalf("the first abort should die: %v", err)
	}
	f.store.onSave = nil
	f.store.lock = nil // the killed process's lock, taken over by the rerun
}
