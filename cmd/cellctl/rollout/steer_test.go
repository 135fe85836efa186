package rollout

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

// steerFake is the record store with requests, in memory.
type steerFake struct {
	records
	reqs map[string]executor.Request
}

func (s *steerFake) Request(_ context.Context, id string) (executor.Request, error) {
	return s.reqs[id], nil
}
func (s *steerFake) Ask(_ context.Context, id string, fn func(*executor.Request)) error {
	q := s.reqs[id]
	fn(&q)
	s.reqs[id] = q
	return nil
}

// deployCall is one deploy a steering command ran.
type deployCall struct {
	kind      executor.Kind
	id, image string
	resume    bool
	abort     *executor.Ask
}

func steerOpts(t *testing.T, format string, live bool, recs ...*executor.Record) (*SteerOptions, *steerFake, *[]deployCall, *bytes.Buffer) {
	t.Helper()
	io, _, stdout, _ := iostreams.Test()
	v, err := render.Pick(format, steerFormats...)
	if err != nil {
		t.Fatal(err)
	}
	fake := &steerFake{records: records(recs), reqs: map[string]executor.Request{}}
	var calls []deployCall
	o := &SteerOptions{IO: io, View: v, By: "alice@ops",
		Now:   func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) },
		Store: func(context.Context) (Steering, func(), error) { return fake, func() {}, nil },
		Live:  func(*executor.Record) bool { return live },
		Deploy: func(_ context.Context, d DeployRequest) error {
			calls = append(calls, deployCall{d.Kind, d.ID, d.Image, d.Resume, d.Abort})
			if d.Abort != nil {
				return &executor.AbortedError{RolloutID: d.ID, By: *d.Abort}
			}
			return nil
		}}
	return o, fake, &calls, stdout
}

// running is a rollout through its canary, with --image app:2 given.
func running(state executor.RolloutState) *executor.Record {
	return &executor.Record{ID: "r-0000000000aa", State: state, Started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Waves: []executor.WaveRecord{
			{Name: "canary", State: executor.WaveDone, Cells: []executor.CellRecord{{Cell: "cell-a", State: executor.CellStateUpdated,
				After: executor.CellConfig{Image: "app:2"}, RepoImage: "app:1"}}},
			{Name: "prod", State: executor.WavePending, Cells: []executor.CellRecord{{Cell: "cell-b", State: executor.CellPending,
				After: executor.CellConfig{Image: "app:2"}, RepoImage: "app:1"}}},
		}}
}

func TestPauseOfARunningRolloutIsARequestWithWhoAndWhen(t *testing.T) {
	o, fake, calls, out := steerOpts(t, cmdutil.FormatJSON, true, running(executor.Running))
	o.ID = "r-0000000000aa"
	if err := pauseRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	q := fake.reqs[o.ID]
	if q.Pause == nil || q.Pause.By != "alice@ops" || !q.Pause.At.Equal(o.Now()) {
		t.Fatalf("pause request: %+v", q.Pause)
	}
	var got Steered
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got.Action != "pause" || !got.Requested || got.By != "alice@ops" {
		t.Fatalf("json: %s (%v)", out, err)
	}
	if len(*calls) != 0 {
		t.Fatal("pause ran a deploy")
	}
	// Paused already: said, not asked twice.
	r := running(executor.Paused)
	r.Paused = &executor.Ask{By: "bob", At: o.Now()}
	o, _, _, _ = steerOpts(t, cmdutil.FormatTable, false, r)
	o.ID = r.ID
	if err := pauseRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), "already paused (by bob") {
		t.Fatalf("pause of a paused rollout: %v", err)
	}
}

func TestResumeRunsTheSameDeployWithItsImage(t *testing.T) {
	r := running(executor.Paused)
	r.Paused = &executor.Ask{By: "bob", At: time.Now()}
	o, _, calls, _ := steerOpts(t, cmdutil.FormatTable, false, r)
	o.ID = r.ID
	if err := resumeRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if len(*calls) != 1 || (*calls)[0] != (deployCall{id: r.ID, image: "app:2", resume: true}) {
		t.Fatalf("deploys: %+v", *calls)
	}
	// A run drives it: nothing to resume.
	o, _, calls, _ = steerOpts(t, cmdutil.FormatTable, true, running(executor.Running))
	o.ID = r.ID
	if err := resumeRun(context.Background(), o); err == nil || len(*calls) != 0 {
		t.Fatalf("resume of a live rollout: %v, %+v", err, *calls)
	}
}

func TestAbortAsksALiveRunAndRollsBackAnIdleOneHere(t *testing.T) {
	o, fake, calls, out := steerOpts(t, cmdutil.FormatTable, true, running(executor.Running))
	o.ID = "r-0000000000aa"
	if err := abortRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if q := fake.reqs[o.ID]; q.Abort == nil || q.Abort.By != "alice@ops" || len(*calls) != 0 {
		t.Fatalf("abort of a live run: request %+v, deploys %+v", q, *calls)
	}
	if !strings.Contains(out.String(), "asked rollout r-0000000000aa to abort") {
		t.Fatalf("output: %s", out)
	}

	o, fake, calls, _ = steerOpts(t, cmdutil.FormatTable, false, running(executor.Interrupted))
	o.ID = "r-0000000000aa"
	// The deploy exits 3 for a rollout that did not ship; the abort
	// command did what was asked: exit 0.
	if err := abortRun(context.Background(), o); err != nil {
		t.Fatalf("abort of an idle rollout: %v", err)
	}
	if len(*calls) != 1 || (*calls)[0].abort == nil || (*calls)[0].abort.By != "alice@ops" || (*calls)[0].image != "app:2" || !fake.reqs[o.ID].Empty() {
		t.Fatalf("abort of an idle rollout: deploys %+v, requests %+v", *calls, fake.reqs)
	}
}

func TestApproveNamesTheWaitingWave(t *testing.T) {
	r := running(executor.Waiting)
	r.Waves[1].State = executor.WaveWaiting
	o, fake, _, out := steerOpts(t, cmdutil.FormatTable, true, r)
	o.ID = r.ID
	if err := approveRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if a, ok := fake.reqs[r.ID].Approve["prod"]; !ok || a.By != "alice@ops" {
		t.Fatalf("approval: %+v", fake.reqs[r.ID])
	}
	if !strings.Contains(out.String(), "approved wave prod") {
		t.Fatalf("output: %s", out)
	}
	// Nothing waits, and no wave named: refused; an unknown wave: refused.
	o, _, _, _ = steerOpts(t, cmdutil.FormatTable, true, running(executor.Running))
	o.ID = r.ID
	if err := approveRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), "no wave waiting") {
		t.Fatalf("approve with nothing waiting: %v", err)
	}
	o.Wave = "qa"
	if err := approveRun(context.Background(), o); err == nil || !strings.Contains(err.Error(), `no wave "qa" (waves: canary, prod)`) {
		t.Fatalf("approve of an unknown wave: %v", err)
	}
}

func TestSteeringRefusesFinishedAndOtherKinds(t *testing.T) {
	done := running(executor.Complete)
	canary := &executor.Record{ID: "c-0000000000cc", Kind: executor.KindCanary, State: executor.Interrupted}
	promoted := &executor.Record{ID: "c-0000000000dd", Kind: executor.KindCanary, State: executor.Complete}
	rotation := &executor.Record{ID: "s-0000000000ee", Kind: executor.KindRotation, State: executor.Interrupted}
	add := &executor.Record{ID: "a-0000000000ff", Kind: executor.KindCellAdd, State: executor.Complete}
	for _, tc := range []struct {
		verb, id, want string
		live           bool
	}{
		{"abort", done.ID, "is complete: nothing to abort (`cellctl rollout undo`", false},
		// A rotation only goes forward: refused, saying what to do.
		{"abort", rotation.ID, "cannot be rolled back", false},
		// A canary's run honours a pause, not an abort.
		{"abort", canary.ID, "`cellctl rollout pause c-0000000000cc` stops it", true},
		{"resume", promoted.ID, "router canary c-0000000000dd is complete: nothing to resume (`cellctl router canary` starts another)", false},
		{"approve", canary.ID, "has no waves waiting for an approval", false},
		{"approve", rotation.ID, "has no waves waiting for an approval", false},
		{"pause", add.ID, "is a cell add", false},
	} {
		o, _, calls, _ := steerOpts(t, cmdutil.FormatTable, tc.live, done, canary, promoted, rotation, add)
		o.ID = tc.id
		run := map[string]func(context.Context, *SteerOptions) error{"abort": abortRun, "resume": resumeRun, "approve": approveRun, "pause": pauseRun}[tc.verb]
		err := run(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(*calls) != 0 {
			t.Errorf("%s %s: %v; want a refusal with %q and no deploy", tc.verb, tc.id, err, tc.want)
		}
	}
}

// A router canary and a secret rotation are steered as a rollout is: a
// pause is the same request; resume and abort run the command that
// continues (or discards) that change, told by the record's kind.
func TestSteeringACanaryOrARotationRunsItsOwnCommand(t *testing.T) {
	canary := &executor.Record{ID: "c-0000000000cc", Kind: executor.KindCanary, State: executor.Running}
	rotation := &executor.Record{ID: "s-0000000000ee", Kind: executor.KindRotation, State: executor.Running}
	for _, r := range []*executor.Record{canary, rotation} {
		o, fake, calls, out := steerOpts(t, cmdutil.FormatTable, true, canary, rotation)
		o.ID = r.ID
		if err := pauseRun(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if q := fake.reqs[r.ID]; q.Pause == nil || q.Pause.By != "alice@ops" || len(*calls) != 0 {
			t.Fatalf("pause %s: request %+v, deploys %+v", r.ID, q, *calls)
		}
		if want := "asked " + noun(r) + " " + r.ID + " to pause"; !strings.Contains(out.String(), want) {
			t.Fatalf("pause %s: %q, want %q", r.ID, out, want)
		}
	}
	pausedAt := &executor.Ask{By: "bob", At: time.Now()}
	canary.State, canary.Paused = executor.Paused, pausedAt
	rotation.State, rotation.Paused = executor.Paused, pausedAt
	o, _, calls, _ := steerOpts(t, cmdutil.FormatTable, false, canary, rotation)
	o.BakeScale = 0.01
	for _, id := range []string{canary.ID, rotation.ID} {
		o.ID = id
		if err := resumeRun(context.Background(), o); err != nil {
			t.Fatalf("resume %s: %v", id, err)
		}
	}
	o.ID = canary.ID
	if err := abortRun(context.Background(), o); err != nil {
		t.Fatalf("abort %s: %v", canary.ID, err)
	}
	want := []deployCall{
		{kind: executor.KindCanary, id: canary.ID, resume: true},
		{kind: executor.KindRotation, id: rotation.ID, resume: true},
		{kind: executor.KindCanary, id: canary.ID, abort: &executor.Ask{By: "alice@ops", At: o.Now()}},
	}
	if len(*calls) != len(want) {
		t.Fatalf("runs: %+v", *calls)
	}
	for i, c := range *calls {
		w := want[i]
		if c.kind != w.kind || c.id != w.id || c.resume != w.resume || (c.abort == nil) != (w.abort == nil) || c.abort != nil && *c.abort != *w.abort {
			t.Errorf("run %d: %+v, want %+v", i, c, w)
		}
	}
}

func TestStatusExitsNonZeroOnlyForAChangeThatDidNotShip(t *testing.T) {
	for state, want := range map[executor.RolloutState]int{
		executor.Complete: 0, executor.Paused: 0, executor.Running: 0, executor.Waiting: 0,
		executor.HaltedState: exitcode.Halted, executor.Aborted: exitcode.Halted,
	} {
		r := running(state)
		if state == executor.Aborted {
			r.Aborted = &executor.Ask{By: "carol", At: time.Now()}
		}
		o, _ := statusOpts(t, cmdutil.FormatJSON, r.ID, r)
		if err := statusRun(context.Background(), o); exitcode.Of(err) != want {
			t.Errorf("status of a %s rollout: %v (exit %d), want exit %d", state, err, exitcode.Of(err), want)
		}
	}
}

func TestHistoryShowsOutcomeImageAndWhoSteered(t *testing.T) {
	a := running(executor.Aborted)
	a.Aborted = &executor.Ask{By: "carol@ops", At: time.Now()}
	b := running(executor.Complete)
	b.ID = "r-0000000000bb"
	b.Waves[1].State = executor.WaveDone
	io, _, stdout, _ := iostreams.Test()
	v, _ := render.Pick(cmdutil.FormatJSON, historyFormats...)
	canary := &executor.Record{ID: "c-0000000000cc", Kind: executor.KindCanary}
	o := &HistoryOptions{IO: io, View: v, Store: store(b, a, canary)}
	if err := historyRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var h History
	if err := json.Unmarshal(stdout.Bytes(), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Rollouts) != 2 {
		t.Fatalf("history lists %d rollouts (the canary is not one): %+v", len(h.Rollouts), h.Rollouts)
	}
	if e := h.Rollouts[0]; e.Outcome != "complete" || e.Waves != "2/2 passed" || strings.Join(e.Images, ",") != "app:2" {
		t.Errorf("first: %+v", e)
	}
	if e := h.Rollouts[1]; e.Outcome != "aborted" || e.By != "aborted by carol@ops" || e.Waves != "1/2 passed" {
		t.Errorf("second: %+v", e)
	}
}
