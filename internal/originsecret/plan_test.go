package originsecret

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// readOnlyStore fails the test on any write: a record saved, the lock
// taken, released or broken.
type readOnlyStore struct {
	*memStore
	t *testing.T
}

func (s readOnlyStore) Save(context.Context, *executor.Record) error {
	s.t.Error("the dry run saved a record")
	return errors.New("read-only")
}
func (s readOnlyStore) Lock(context.Context, executor.Holder) error {
	s.t.Error("the dry run took the fleet lock")
	return errors.New("read-only")
}
func (s readOnlyStore) Unlock(context.Context, executor.Holder) error {
	s.t.Error("the dry run released a lock")
	return nil
}
func (s readOnlyStore) BreakLock(context.Context, executor.Holder) error {
	s.t.Error("the dry run broke a lock")
	return errors.New("read-only")
}

// readOnlyEngine fails the test on any write: a stack file's secret set,
// a stack run, the origin secret ensured.
type readOnlyEngine struct {
	*fakeEngine
	t *testing.T
}

func (e readOnlyEngine) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	e.t.Errorf("the dry run ran %s %s", req.Op, req.Stack)
	return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: errors.New("read-only")}
}
func (e readOnlyEngine) SetStackSecrets(_ context.Context, stack string, _ map[string]*string) (string, error) {
	e.t.Errorf("the dry run wrote %s's stack file", stack)
	return "", errors.New("read-only")
}
func (e readOnlyEngine) EnsureOriginVerifySecret(context.Context, []string) ([]string, error) {
	e.t.Error("the dry run ensured the origin secret (it writes stack files)")
	return nil, errors.New("read-only")
}

// executed is the order in which a run's steps ran, from its log: one
// "<step>: <what it does>" line per step started.
func executed(log string, does map[string]string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		name, text, _ := strings.Cut(l, ": ")
		if d, ok := does[name]; ok && text == d {
			out = append(out, name)
		}
	}
	return out
}

// The dry run is the record the run executes: the steps it prints, in
// order, are the steps the run then runs, and the stacks it names are the
// stacks deployed — fresh, and resuming a paused rotation. It writes
// nothing and takes no lock.
func TestDryRunPrintsTheStepsTheRunExecutes(t *testing.T) {
	for _, paused := range []int{0, 2} {
		e := newFake("cell-a", "cell-b", "cell-c")
		st := newStore(t)
		r := rotator(e, st, gateFunc(passAll))
		if paused > 0 {
			if _, err := r.Run(context.Background(), Options{Steps: paused}); !errors.Is(err, ErrPaused) {
				t.Fatal(err)
			}
		}
		before := e.ups
		e.ups = nil

		dry := *r
		dry.Store = readOnlyStore{st, t}
		dry.Engine = readOnlyEngine{e, t}
		p, err := dry.Plan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if p.Resumes != (paused > 0) {
			t.Errorf("paused %d: resumes %v", paused, p.Resumes)
		}
		var names, stacks []string
		does := map[string]string{}
		for _, s := range p.Steps {
			does[s.Name] = s.Does
		}
		for _, s := range p.Steps {
			if s.Pending() {
				names = append(names, s.Name)
				stacks = append(stacks, s.Stacks...)
			}
		}
		if len(e.ups) != 0 {
			t.Fatalf("the dry run deployed %v", e.ups)
		}

		var log bytes.Buffer
		r.Log = &log
		rec, err := r.Run(context.Background(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if paused > 0 && rec.ID != p.ID {
			t.Errorf("resumed %s, the plan named %s", rec.ID, p.ID)
		}
		if got := executed(log.String(), does); !slices.Equal(got, names) {
			t.Errorf("paused %d: the dry run printed %v, the run executed %v\n%s", paused, names, got, log.String())
		}
		if !slices.Equal(e.ups, stacks) {
			t.Errorf("paused %d: the dry run named the stacks %v, the run deployed %v (before: %v)", paused, stacks, e.ups, before)
		}
	}
}

// A new rotation's plan: accept wave by wave, switch the router, drop
// wave by wave, each step baking on its wave's gate.
func TestDryRunOfANewRotation(t *testing.T) {
	e := newFake("cell-a", "cell-b")
	st := newStore(t)
	r := rotator(e, st, gateFunc(passAll))
	r.Store, r.Engine = readOnlyStore{st, t}, readOnlyEngine{e, t}
	p, err := r.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Steps {
		got = append(got, s.Name+" "+strings.Join(s.Stacks, ","))
	}
	want := []string{"accept/canary cell-a", "accept/rest cell-b", "switch/" + fleet.RouterStack + " " + fleet.RouterStack, "drop/canary cell-a", "drop/rest cell-b"}
	if !slices.Equal(got, want) || p.Resumes || !strings.HasPrefix(p.ID, "s-") {
		t.Errorf("plan %s (resumes %v): %v, want %v", p.ID, p.Resumes, got, want)
	}
	if recs := st.Records(t, executor.KindRotation); len(recs) != 0 {
		t.Errorf("the dry run left %d records", len(recs))
	}
}
