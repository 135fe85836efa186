package routercanary

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/router/canary"
	"github.com/cellctl/cellctl/waves/executor"
)

// readOnly is the record store as a dry run must use it: reads only.
type readOnly struct {
	*store
	t *testing.T
}

func (s readOnly) Save(context.Context, *executor.Record) error {
	s.t.Error("the dry run saved a record")
	return errors.New("read-only")
}
func (s readOnly) Lock(context.Context, executor.Holder) error {
	s.t.Error("the dry run took the fleet lock")
	return errors.New("read-only")
}
func (s readOnly) Unlock(context.Context, executor.Holder) error {
	s.t.Error("the dry run released a lock")
	return nil
}
func (s readOnly) BreakLock(context.Context, executor.Holder) error {
	s.t.Error("the dry run broke a lock")
	return errors.New("read-only")
}

// ups is the router stack updates a route plans, as the traffic phase of
// each (the promotion and a revert deploy a stable split; a first deploy
// none).
func ups(rt *Route) []canary.Phase {
	var out []canary.Phase
	for _, p := range rt.Phases {
		if !p.Update {
			continue
		}
		switch p.Phase {
		case executor.CanaryHeader:
			out = append(out, canary.Header)
		case executor.CanaryWeight:
			out = append(out, canary.Weight)
		case "deploy":
			out = append(out, "nil")
		default:
			out = append(out, canary.Stable)
		}
	}
	return out
}

// dryRun runs the dry run against env with a store that fails the test on
// any write, and checks it ran no engine.
func dryRun(t *testing.T, env *Env, r *fakeRouter, o Options) *Route {
	t.Helper()
	dry := *env
	dry.Store = readOnly{env.Store.(*store), t}
	before := len(r.phases())
	rt, err := Plan(context.Background(), &dry, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.phases()); n != before {
		t.Fatalf("the dry run updated the router: %v", r.phases()[before:])
	}
	return rt
}

// The dry run is the route the run takes: the router updates it plans,
// in order, are the ones the run then makes — a new canary, a first
// deploy, --discard, and a canary killed while its smoke phase baked.
func TestDryRunPlansTheUpdatesTheRunMakes(t *testing.T) {
	cases := []struct {
		name   string
		router func() *fakeRouter
		o      Options
		start  string
		prep   func(t *testing.T, env *Env) *Env // a killed run first; the env of the run after it
	}{
		{name: "fresh", router: deployedRouter, start: StartFresh},
		{name: "first deploy", router: func() *fakeRouter { return &fakeRouter{newest: v1} }, start: StartFirstDeploy},
		{name: "discard", router: func() *fakeRouter { return &fakeRouter{deployed: true, newest: v2, primary: v1, staging: v2} }, o: Options{Discard: true}, start: StartDiscard},
		{name: "nothing to discard", router: deployedRouter, o: Options{Discard: true}, start: StartNothingToDiscard},
		{name: "resumed bake", router: deployedRouter, start: StartBake, prep: func(t *testing.T, env *Env) *Env {
			st := env.Store.(*store)
			killAt(st, bakingWithAPoll(executor.CanaryHeader))
			if _, err := Run(context.Background(), env, Options{}); err == nil {
				t.Fatal("the killed run did not fail")
			}
			return rerun(env)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.router()
			env := newEnv(r, &edge{requests: 5000, rate5xx: 0.1})
			if tc.prep != nil {
				env = tc.prep(t, env)
			}
			rt := dryRun(t, env, r, tc.o)
			if rt.Start != tc.start {
				t.Fatalf("starts %s, want %s", rt.Start, tc.start)
			}
			before := len(r.phases())
			if _, err := Run(context.Background(), env, tc.o); err != nil {
				t.Fatal(err)
			}
			if got, want := r.phases()[before:], ups(rt); !slices.Equal(got, want) {
				t.Errorf("the dry run planned %v, the run made %v", want, got)
			}
		})
	}
}

// A new canary's dry run: smoke, weighted, promotion, each phase's bake
// and minimum as the options say.
func TestDryRunOfANewCanary(t *testing.T) {
	r := deployedRouter()
	env := newEnv(r, &edge{})
	rt := dryRun(t, env, r, Options{})
	var got []string
	for _, p := range rt.Phases {
		got = append(got, p.Phase)
	}
	if !slices.Equal(got, []string{executor.CanaryHeader, executor.CanaryWeight, executor.CanaryPromoting}) || rt.Primary != v1 || rt.Record != "" {
		t.Fatalf("route %+v", rt)
	}
	if rt.Phases[0].Bake != DefaultHeaderBake || rt.Phases[1].Bake != DefaultWeightBake || rt.Phases[1].MinRequests != DefaultWeightMinRequests {
		t.Errorf("phases %+v", rt.Phases)
	}
	if recs := env.Store.(*store).canaries(t); len(recs) != 0 {
		t.Errorf("the dry run left %d records", len(recs))
	}
}

// A dry run whose updates touch a setting CloudFront locks on the linked
// primary says that each update runs the unlink sequence (the engine's
// word, from the router's state); a route with no update does not ask,
// and an unreadable state stops the dry run.
func TestDryRunSaysALinkedChangeRunsTheUnlinkSequence(t *testing.T) {
	const note = "the change touches priceClass …: up applies it with the unlink sequence"
	r := deployedRouter()
	env := newEnv(r, &edge{})
	asked := 0
	env.LinkedChange = func(context.Context) (string, error) { asked++; return note, nil }
	rt := dryRun(t, env, r, Options{})
	if !strings.Contains(rt.Note, note) || asked != 1 {
		t.Errorf("note %q (asked %d times), want the unlink sequence's", rt.Note, asked)
	}
	asked = 0
	if rt := dryRun(t, env, r, Options{Discard: true}); rt.Start != StartNothingToDiscard || asked != 0 || strings.Contains(rt.Note, "unlink") {
		t.Errorf("nothing to discard: %+v, asked %d", rt, asked)
	}
	env.LinkedChange = func(context.Context) (string, error) { return "", errors.New("state unreadable") }
	dry := *env
	dry.Store = readOnly{env.Store.(*store), t}
	if _, err := Plan(context.Background(), &dry, Options{}); err == nil || !strings.Contains(err.Error(), "state unreadable") {
		t.Errorf("an unreadable state: err %v", err)
	}
}
