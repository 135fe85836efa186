package backend

import (
	"context"
	"errors"
	"github.com/cellctl/cellctl/waves"
	"path/filepath"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/rollout"
	"github.com/cellctl/cellctl/waves/executor"
)

func open(t *testing.T) (*Store, *rollout.Store) {
	t.Helper()
	s, err := rollout.Open(context.Background(), "file://"+filepath.ToSlash(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return New(s), s
}

func holder(id string, pid int, nonce string) executor.Holder {
	return executor.Holder{ID: id, Host: "ci-1", PID: pid, Started: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Nonce: nonce}
}

func TestRecordsRoundTrip(t *testing.T) {
	b, _ := open(t)
	ctx := context.Background()
	if _, err := b.Load(ctx, "r-0123456789ab"); !errors.Is(err, executor.ErrNoRecord) {
		t.Fatalf("missing record: %v, want ErrNoRecord", err)
	}
	before := executor.CellConfig{Image: "app:v1", Settings: map[string]any{"AuroraInstances": 2.0}}
	rec := &executor.Record{ID: "r-0123456789ab", State: executor.Running, Waves: []executor.WaveRecord{{Name: "canary", State: executor.WaveBaking,
		Cells: []executor.CellRecord{{Cell: "cell-a", State: executor.CellStateUpdated, Before: &before, After: executor.CellConfig{Image: "app:v2"}}}}}}
	if err := b.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, err := b.Load(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Waves[0].Cells[0].Before == nil || !got.Waves[0].Cells[0].Before.Equal(before) || got.Waves[0].State != executor.WaveBaking {
		t.Errorf("record came back as %+v", got.Waves[0])
	}
	if err := b.Save(ctx, &executor.Record{ID: "../../etc"}); err == nil {
		t.Errorf("a made-up id became an object key")
	}
}

func TestLockNamesTheHolderAndBreaksOnlyThatHolder(t *testing.T) {
	b, s := open(t)
	ctx := context.Background()
	first := holder("r-0123456789ab", 100, "n1")
	if err := b.Lock(ctx, first); err != nil {
		t.Fatal(err)
	}
	other := New(s) // another process on the same backend
	err := other.Lock(ctx, holder("r-ffffffffffff", 200, "n2"))
	var le *executor.LockedError
	if !errors.As(err, &le) || !le.Holder.Same(first) {
		t.Fatalf("second lock: %v, want LockedError held by %v", err, first)
	}
	// Breaking a holder that is no longer the one holding does nothing.
	if err := other.BreakLock(ctx, holder("r-0123456789ab", 100, "stale")); err != nil {
		t.Fatal(err)
	}
	if err := other.Lock(ctx, holder("r-ffffffffffff", 200, "n2")); !errors.As(err, &le) {
		t.Fatalf("a stale break freed the lock: %v", err)
	}
	// Another process cannot release it either; only BreakLock of the
	// exact holder frees it.
	if err := other.Unlock(ctx, first); err != nil {
		t.Fatal(err)
	}
	if cur, _ := s.Holder(ctx); cur == nil || cur.Nonce != "n1" {
		t.Fatalf("lock released by a process that did not take it: %v", cur)
	}
	if err := other.BreakLock(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := other.Lock(ctx, holder("r-ffffffffffff", 200, "n2")); err != nil {
		t.Fatalf("after breaking the holder: %v", err)
	}
	if err := other.Unlock(ctx, holder("r-ffffffffffff", 200, "n2")); err != nil {
		t.Fatal(err)
	}
	if cur, _ := s.Holder(ctx); cur != nil {
		t.Errorf("lock still held by %v after Unlock", cur)
	}
}

// The executor over the real backend: a --through run pauses holding the
// lock, another rollout is refused naming it, the next job (a new process)
// takes the paused rollout over and finishes it.
func TestExecutorOverTheBackend(t *testing.T) {
	_, s := open(t)
	cells := map[string]executor.CellConfig{"cell-a": {Image: "app:v1"}, "cell-b": {Image: "app:v1"}}
	up := &fleet{cur: cells}
	gate := passGate{}
	wave := func(name, cell string) executor.Wave {
		return executor.Wave{Name: name, Cells: []string{cell}, Bake: time.Millisecond,
			Gate: waves.Gate{Poll: time.Millisecond, OnBreach: waves.HaltAndRollbackWave, OnInconclusive: waves.InconclusiveHalt}}
	}
	plan := executor.Plan{Waves: []executor.Wave{wave("canary", "cell-a"), wave("rest", "cell-b")},
		Desired: map[string]executor.CellConfig{"cell-a": {Image: "app:v2"}, "cell-b": {Image: "app:v2"}}}
	job := func() *executor.Executor { return &executor.Executor{Updater: up, Gate: gate, Store: New(s)} }
	ctx := context.Background()
	if _, err := job().Run(ctx, plan, executor.Options{Host: "ci-1", PID: 1, Through: "canary"}); err != nil {
		t.Fatal(err)
	}
	other := plan
	other.Desired = map[string]executor.CellConfig{"cell-a": {Image: "app:v3"}, "cell-b": {Image: "app:v3"}}
	_, err := job().Run(ctx, other, executor.Options{Host: "laptop", PID: 2})
	var le *executor.LockedError
	if !errors.As(err, &le) || le.Holder.ID != plan.ID() || le.State != executor.Paused {
		t.Fatalf("another rollout while paused: %v", err)
	}
	out, err := job().Run(ctx, plan, executor.Options{Host: "ci-2", PID: 3, Wave: "rest"})
	if err != nil {
		t.Fatalf("next job: %v", err)
	}
	if out.Record.State != executor.Complete || up.cur["cell-b"].Image != "app:v2" {
		t.Errorf("rollout %s, cell-b %s", out.Record.State, up.cur["cell-b"].Image)
	}
	if cur, _ := s.Holder(ctx); cur != nil {
		t.Errorf("lock still held by %v after the rollout completed", cur)
	}
}

type fleet struct {
	cur map[string]executor.CellConfig
}

func (f *fleet) Current(_ context.Context, c string) (executor.CellConfig, error) {
	return f.cur[c].Clone(), nil
}

func (f *fleet) Apply(_ context.Context, c string, cfg executor.CellConfig) (executor.ApplyResult, error) {
	f.cur[c] = cfg.Clone()
	return executor.ApplyResult{}, nil
}

type passGate struct{}

func (passGate) Check(_ context.Context, q executor.GateQuery) ([]executor.Verdict, error) {
	var out []executor.Verdict
	for _, c := range q.Cells {
		out = append(out, executor.Verdict{Cell: c, Decision: waves.Pass})
	}
	return out, nil
}

// A cell add's record (a- id) is saved and listed beside the rollouts:
// the desired state, status and drift read a new cell's image and schema
// from it.
func TestCellAddRecordIsListed(t *testing.T) {
	b, _ := open(t)
	ctx := context.Background()
	id := executor.NewID(executor.KindCellAdd)
	if err := b.Save(ctx, &executor.Record{ID: id, Kind: executor.KindCellAdd, State: executor.Complete}); err != nil {
		t.Fatal(err)
	}
	recs, err := b.List(ctx)
	if err != nil || len(recs) != 1 || recs[0].ID != id || recs[0].Kind != executor.KindCellAdd {
		t.Fatalf("list: %v %+v", err, recs)
	}
}
