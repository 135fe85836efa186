package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router"
)

// fakeEngine stands in for the pulumi-backed engine. An up of the router
// "deploys" the routing table on disk at that moment — what the real
// program bakes into the edge function — and Outputs reports its version,
// so the tests see exactly what a publish would have served.
type fakeEngine struct {
	mu       sync.Mutex
	dir      string
	deployed int64 // 0: never deployed
	calls    []string
	fail     map[string]error // "op stack" → error
	// gone: cell stacks that are not deployed.
	gone map[string]bool
}

var _ Engine = (*fakeEngine)(nil)

func (f *fakeEngine) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	key := string(req.Op) + " " + req.Stack
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "run "+key)
	if err := f.fail[key]; err != nil {
		return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: err}
	}
	if req.Stack == fleet.RouterStack && req.Op == stackrun.OpUp {
		t, err := router.Load(filepath.Join(f.dir, "stacks", fleet.RoutingFile))
		if err != nil {
			return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed, Err: err}
		}
		f.deployed = t.Version()
	}
	return &stackrun.Result{Name: req.Stack, Result: stackrun.Succeeded}
}

func (f *fakeEngine) PreparePlugins(context.Context) error { return nil }

func (f *fakeEngine) EnsureOriginVerifySecret(_ context.Context, stacks []string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "secret "+strings.Join(stacks, ","))
	return nil, nil
}

func (f *fakeEngine) Protected(context.Context, string) ([]string, error) { return nil, nil }

func (f *fakeEngine) DeployedOutputs(_ context.Context, stack string) (map[string]any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "outputs "+stack)
	if err := f.fail["outputs "+stack]; err != nil {
		return nil, err
	}
	if stack != fleet.RouterStack {
		if f.gone[stack] {
			return nil, stackrun.ErrNotDeployed
		}
		return map[string]any{"albDnsName": stack + "-alb.example"}, nil
	}
	if f.deployed == 0 {
		return nil, stackrun.ErrNotDeployed
	}
	return map[string]any{"tableVersion": float64(f.deployed)}, nil
}

func (f *fakeEngine) runs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "run ") {
			out = append(out, strings.TrimPrefix(c, "run "))
		}
	}
	return out
}

// demo copies the demo fleet into a temporary directory.
func demo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyFile(t, "../../Pulumi.yaml", filepath.Join(dir, "Pulumi.yaml"))
	entries, err := os.ReadDir("../../stacks")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".json") {
			copyFile(t, filepath.Join("../../stacks", e.Name()), filepath.Join(dir, "stacks", e.Name()))
		}
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

type harness struct {
	dir    string
	eng    *fakeEngine
	env    *Env
	log    *bytes.Buffer
	sleeps []time.Duration
}

func newHarness(t *testing.T, deployed int64) *harness {
	h := &harness{dir: demo(t), log: &bytes.Buffer{}}
	h.eng = &fakeEngine{dir: h.dir, deployed: deployed, fail: map[string]error{}}
	h.env = &Env{
		Load:     func() (*fleet.Fleet, error) { return fleet.Load(h.dir) },
		LoadWith: func(files map[string][]byte) (*fleet.Fleet, error) { return fleet.LoadWith(h.dir, files) },
		Engine:   func(*fleet.Fleet) (Engine, error) { return h.eng, nil },
		Parallel: 2,
		Log:      h.log,
		Sleep: func(_ context.Context, d time.Duration) error {
			h.sleeps = append(h.sleeps, d)
			return nil
		},
	}
	return h
}

func (h *harness) table(t *testing.T) *router.Table {
	t.Helper()
	tb, err := router.Load(filepath.Join(h.dir, "stacks", fleet.RoutingFile))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func (h *harness) tableBytes(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(h.dir, "stacks", fleet.RoutingFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func owned(tb *router.Table, cell string) int {
	n := 0
	for _, c := range tb.Assignment() {
		if c == cell {
			n++
		}
	}
	return n
}

// TestDrainPublishesTwiceInOrder: the cell's buckets move and the router
// is published with that table before the cell is marked drained and the
// router published again; only the router stack is run.
func TestDrainPublishesTwiceInOrder(t *testing.T) {
	h := newHarness(t, 1)
	rep, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d"})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	if got := strings.Join(h.eng.runs(), ";"); got != "up router;up router" {
		t.Fatalf("runs = %q, want the router alone, twice", got)
	}
	if len(rep.Published) != 2 || rep.Published[0] != 2 || rep.Published[1] != 3 {
		t.Fatalf("published %v, want [2 3]", rep.Published)
	}
	if len(rep.Transitions) != 2 || rep.Transitions[0].Action != router.ActionDrain || rep.Transitions[1].Action != router.ActionMarkDrained {
		t.Fatalf("transitions %+v", rep.Transitions)
	}
	if len(h.sleeps) != 1 || h.sleeps[0] != DefaultGrace {
		t.Fatalf("a planned drain waits the grace once between the publishes, got %v", h.sleeps)
	}
	tb := h.table(t)
	if cs, _ := tb.Cell("cell-d"); cs.State != router.CellDrained || tb.Version() != 3 || owned(tb, "cell-d") != 0 {
		t.Fatalf("cell-d is %s with %d buckets at version %d", cs.State, owned(tb, "cell-d"), tb.Version())
	}
	prev, err := router.Load(filepath.Join(h.dir, router.PreviousFile))
	if err != nil || prev.Version() != 2 {
		t.Fatalf("the previous table must be version 2 (draining): %v", err)
	}
	if cs, _ := prev.Cell("cell-d"); cs.State != router.CellDraining {
		t.Fatalf("previous table: cell-d is %s", cs.State)
	}
	log := h.log.String()
	for _, want := range []string{
		"the deployed router serves routing table version 1; stacks/routing.json is version 1",
		"saved stacks/routing.json: version 1 → 2 (drain cell-d)",
		"publishing the router with routing table version 2 (cellctl up router)",
		"the router serves routing table version 2",
		"waiting 30s for requests already forwarded to cell-d to finish",
		"saved stacks/routing.json: version 2 → 3 (mark-drained cell-d)",
		"the router serves routing table version 3",
		"cell-d is drained: it serves no tenant; `cellctl destroy cell-d` retires it",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if i, j := strings.Index(log, "version 2 (cellctl up router)"), strings.Index(log, "version 2 → 3"); i < 0 || j < i {
		t.Errorf("the cell must be marked drained only after the draining table was published:\n%s", log)
	}
}

// TestDrainNowTouchesOnlyTheRouter: evacuation does not wait and never
// runs the cell's stack, so a cell whose stack fails every operation is
// still evacuated.
func TestDrainNowTouchesOnlyTheRouter(t *testing.T) {
	h := newHarness(t, 1)
	broken := errors.New("cell-d's stack is unreadable")
	for _, k := range []string{"up cell-d", "refresh cell-d", "preview cell-d", "destroy cell-d", "outputs cell-d"} {
		h.eng.fail[k] = broken
	}
	if _, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d", Now: true}); err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	for _, c := range h.eng.calls {
		if strings.Contains(c, "cell-d") {
			t.Errorf("--now touched the drained cell's stack: %s", c)
		}
	}
	if len(h.sleeps) != 0 {
		t.Errorf("--now must not wait, slept %v", h.sleeps)
	}
	if cs, _ := h.table(t).Cell("cell-d"); cs.State != router.CellDrained {
		t.Fatalf("cell-d is %s", cs.State)
	}
}

// TestDrainRefusals: every refusal leaves the table as it was and runs
// nothing; the messages are exact.
func TestDrainRefusals(t *testing.T) {
	cases := []struct {
		name     string
		deployed int64
		setup    func(t *testing.T, h *harness)
		opts     DrainOptions
		want     string
	}{
		{name: "pinned tenants", deployed: 1, opts: DrainOptions{Cell: "cell-b"},
			want: `cannot drain "cell-b": tenant "acme" is pinned to it; move the pins with the drain (--move-pinned) or migrate the tenants first`},
		{name: "a migration from it", deployed: 1, opts: DrainOptions{Cell: "cell-a"},
			want: `cannot drain "cell-a": tenant "globex" is migrating from it to "cell-c"; finish or abort that migration first`},
		{name: "unknown cell", deployed: 1, opts: DrainOptions{Cell: "cell-z"},
			want: `cannot drain "cell-z": no such cell in the routing table (cells: "cell-a", "cell-b", "cell-c" or "cell-d")`},
		{name: "newer deployed table", deployed: 7, opts: DrainOptions{Cell: "cell-d"},
			want: "the deployed router serves routing table version 7, newer than version 1 here: someone else published a change meanwhile; update this checkout (git pull) and run the command again"},
		{name: "router version unreadable", deployed: 1, opts: DrainOptions{Cell: "cell-d"},
			setup: func(t *testing.T, h *harness) { h.eng.fail["outputs router"] = errors.New("backend unreachable") },
			want:  "cannot read the deployed router's outputs to learn which table it serves: backend unreachable"},
		{name: "last active cell", deployed: 1, opts: DrainOptions{Cell: "cell-d"},
			setup: func(t *testing.T, h *harness) {
				writeTable(t, h, `{"version": 4, "buckets": 4, "cells": {
  "cell-a": {"state": "drained", "weight": 1, "buckets": []},
  "cell-b": {"state": "drained", "weight": 1, "buckets": []},
  "cell-c": {"state": "drained", "weight": 1, "buckets": []},
  "cell-d": {"state": "active", "weight": 1, "buckets": ["0-3"]}}}`)
			},
			want: `cannot drain "cell-d": it is the last active cell; add a cell (cellctl cell add) or undrain one first`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.deployed)
			if tc.setup != nil {
				tc.setup(t, h)
			}
			before := h.tableBytes(t)
			_, err := Drain(context.Background(), h.env, tc.opts)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error:\n got %v\nwant %s", err, tc.want)
			}
			if h.tableBytes(t) != before {
				t.Error("a refused drain changed stacks/routing.json")
			}
			if runs := h.eng.runs(); len(runs) != 0 {
				t.Errorf("a refused drain ran %v", runs)
			}
		})
	}
}

func writeTable(t *testing.T, h *harness, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, "stacks", fleet.RoutingFile), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDrainMovePinned: with --move-pinned the pinned tenant goes with the
// buckets and the cell ends drained.
func TestDrainMovePinned(t *testing.T) {
	h := newHarness(t, 1)
	rep, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-b", MovePinned: true, Now: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	if tm := rep.Transitions[0].TenantsMoved; len(tm) != 1 || tm[0].Tenant != "acme" || tm[0].From != "cell-b" {
		t.Fatalf("tenants moved %+v", tm)
	}
	if got := h.table(t).Route("acme").Cell; got == "cell-b" {
		t.Fatal("acme is still routed to cell-b")
	}
}

// TestDrainDryRunWritesNothing: both transitions are reported, nothing is
// written, the engine is never connected.
func TestDrainDryRunWritesNothing(t *testing.T) {
	h := newHarness(t, 1)
	h.env.Engine = func(*fleet.Fleet) (Engine, error) { return nil, errors.New("a dry run must not connect to the engine") }
	before := h.tableBytes(t)
	rep, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Transitions) != 2 || rep.Transitions[0].ToVersion != 2 || rep.Transitions[1].ToVersion != 3 {
		t.Fatalf("transitions %+v", rep.Transitions)
	}
	if h.tableBytes(t) != before {
		t.Fatal("a dry run changed stacks/routing.json")
	}
	if _, err := os.Stat(filepath.Join(h.dir, router.PreviousFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dry run wrote %s: %v", router.PreviousFile, err)
	}
}

// TestAChangeIsConfirmedBeforeItsFirstWrite: drain, undrain and migrate
// ask env.Confirm with the transitions their dry run reports, after the
// table was checked and before anything is written or published; a no
// leaves the table and the router as they were.
func TestAChangeIsConfirmedBeforeItsFirstWrite(t *testing.T) {
	no := errors.New("not confirmed")
	for name, change := range map[string]func(env *Env) error{
		"drain": func(env *Env) error {
			_, err := Drain(context.Background(), env, DrainOptions{Cell: "cell-d", Now: true})
			return err
		},
		"migrate": func(env *Env) error {
			_, err := Migrate(context.Background(), env, MigrateOptions{Tenant: "acme", To: "cell-c"})
			return err
		},
	} {
		h := newHarness(t, 1)
		before := h.tableBytes(t)
		var asked []*router.Transition
		h.env.Confirm = func(_ context.Context, p Proposal) error {
			asked = p.Transitions
			return no
		}
		if err := change(h.env); !errors.Is(err, no) {
			t.Fatalf("%s: a no is the error: %v", name, err)
		}
		if len(asked) == 0 || (name == "drain" && len(asked) != 2) {
			t.Fatalf("%s: asked with %d transitions", name, len(asked))
		}
		if h.tableBytes(t) != before {
			t.Fatalf("%s: a no changed stacks/routing.json", name)
		}
		for _, c := range h.eng.runs() {
			if strings.HasPrefix(c, "run ") {
				t.Fatalf("%s: a no ran the engine: %v", name, h.eng.runs())
			}
		}
		// A yes goes ahead.
		h.env.Confirm = func(context.Context, Proposal) error { return nil }
		if err := change(h.env); err != nil {
			t.Fatalf("%s after a yes: %v", name, err)
		}
		if h.tableBytes(t) == before {
			t.Fatalf("%s: a yes changed nothing", name)
		}
	}
}

// TestDrainPublishFailureResumes: when the first publish fails the table
// is saved draining, the error says how to continue or undo, and running
// the drain again publishes it and finishes.
func TestDrainPublishFailureResumes(t *testing.T) {
	h := newHarness(t, 1)
	h.eng.fail["up router"] = errors.New("CloudFront said no")
	_, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d", Now: true})
	var pe *PublishError
	if !errors.As(err, &pe) || pe.Saved != 2 {
		t.Fatalf("want a PublishError at version 2, got %v", err)
	}
	if !strings.Contains(err.Error(), "to continue, run `cellctl drain cell-d` again; to undo, `cellctl undrain cell-d`") {
		t.Errorf("the error must say how to continue or undo: %v", err)
	}
	if cs, _ := h.table(t).Cell("cell-d"); cs.State != router.CellDraining {
		t.Fatalf("after a failed publish cell-d is %s, want draining (saved, not yet served)", cs.State)
	}
	delete(h.eng.fail, "up router")
	rep, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d", Now: true})
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, h.log)
	}
	if len(rep.Published) != 2 || rep.Published[0] != 2 || rep.Published[1] != 3 {
		t.Fatalf("the resumed drain published %v, want [2 3]", rep.Published)
	}
	if !strings.Contains(h.log.String(), "cell-d is already draining and owns no buckets: continuing the drain") {
		t.Errorf("log:\n%s", h.log)
	}
}

// TestPublishRace: another operator publishes between this command's
// start and its publish; the publish is refused and the router keeps the
// other operator's table.
func TestPublishRace(t *testing.T) {
	h := newHarness(t, 1)
	calls := 0
	inner := h.eng
	h.env.Engine = func(*fleet.Fleet) (Engine, error) {
		calls++
		if calls == 2 {
			// The publish's own connection: someone else has just
			// published version 5.
			inner.mu.Lock()
			inner.deployed = 5
			inner.mu.Unlock()
		}
		return inner, nil
	}
	_, err := Undrain(context.Background(), h.env, UndrainOptions{Cell: "cell-d"})
	if err == nil || !strings.Contains(err.Error(), "cell \"cell-d\" is already active") {
		t.Fatalf("undrain of an active cell: %v", err)
	}
	_, err = Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d", Now: true})
	want := "the deployed router now serves routing table version 5, which this command did not publish: someone else published a change meanwhile. " +
		"stacks/routing.json holds this command's unpublished version 2 (the table it replaced is in .cellctl/routing.previous.json); " +
		"update this checkout to the published table (git pull) and run the command again"
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n got %v\nwant %s", err, want)
	}
	if runs := h.eng.runs(); len(runs) != 0 {
		t.Fatalf("the refused publish ran %v", runs)
	}
}

// TestPublishRaceSameVersion: another checkout published its own
// "version 2" meanwhile; equal numbers are not the same table, so this
// command's version 2 is not published over it.
func TestPublishRaceSameVersion(t *testing.T) {
	h := newHarness(t, 1)
	calls := 0
	inner := h.eng
	h.env.Engine = func(*fleet.Fleet) (Engine, error) {
		if calls++; calls == 2 {
			inner.deployed = 2
		}
		return inner, nil
	}
	_, err := Migrate(context.Background(), h.env, MigrateOptions{Tenant: "initech", To: "cell-d"})
	if err == nil || !strings.HasPrefix(err.Error(), "the deployed router now serves routing table version 2, which this command did not publish") {
		t.Fatalf("error: %v", err)
	}
	if runs := h.eng.runs(); len(runs) != 0 {
		t.Fatalf("the refused publish ran %v", runs)
	}
}

// TestNeverDeployedRouter: the local table is the base, and the log says so.
func TestNeverDeployedRouter(t *testing.T) {
	h := newHarness(t, 0)
	if _, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d", Now: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.log.String(), "the router stack was never deployed: the local table (version 1) is the base") {
		t.Fatalf("log:\n%s", h.log)
	}
}

// TestUndrainAfterDrain brings the cell back with the fewest buckets.
func TestUndrainAfterDrain(t *testing.T) {
	h := newHarness(t, 1)
	if _, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d", Now: true}); err != nil {
		t.Fatal(err)
	}
	rep, err := Undrain(context.Background(), h.env, UndrainOptions{Cell: "cell-d"})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	tr := rep.Transitions[0]
	if tr.MovedBuckets != tr.LowerBound || owned(h.table(t), "cell-d") != 256 {
		t.Fatalf("undrain moved %d (lower bound %d), cell-d owns %d", tr.MovedBuckets, tr.LowerBound, owned(h.table(t), "cell-d"))
	}
	if h.eng.deployed != 4 {
		t.Fatalf("the router serves version %d, want 4", h.eng.deployed)
	}
}

// TestUndrainRefusesACellWithoutStack: the router needs the cell's ALB.
func TestUndrainRefusesACellWithoutStack(t *testing.T) {
	h := newHarness(t, 1)
	if _, err := Drain(context.Background(), h.env, DrainOptions{Cell: "cell-d", Now: true}); err != nil {
		t.Fatal(err)
	}
	h.eng.gone = map[string]bool{"cell-d": true}
	before, runs := h.tableBytes(t), len(h.eng.runs())
	_, err := Undrain(context.Background(), h.env, UndrainOptions{Cell: "cell-d"})
	want := "cannot undrain \"cell-d\": its stack is not deployed, so there is no ALB to route to; run `cellctl up cell-d` first"
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n got %v\nwant %s", err, want)
	}
	if h.tableBytes(t) != before || len(h.eng.runs()) != runs {
		t.Fatal("a refused undrain changed the table or ran a stack")
	}
}

// TestMigrateStartFinish: each step is one saved and published version.
func TestMigrateStartFinish(t *testing.T) {
	h := newHarness(t, 1)
	ctx := context.Background()
	if _, err := Migrate(ctx, h.env, MigrateOptions{Tenant: "initech", To: "cell-d"}); err != nil {
		t.Fatalf("%v\n%s", err, h.log)
	}
	o, ok := h.table(t).Override("initech")
	if !ok || o.State != router.OverrideMigrating || o.Target != "cell-d" || o.WriteMode != router.WriteRejectWith503 {
		t.Fatalf("override after start: %+v %v", o, ok)
	}
	if _, err := Migrate(ctx, h.env, MigrateOptions{Tenant: "initech", Finish: true}); err != nil {
		t.Fatal(err)
	}
	if got := h.table(t).Route("initech").Cell; got != "cell-d" || h.eng.deployed != 3 {
		t.Fatalf("after finish initech → %s, router at %d", got, h.eng.deployed)
	}
	_, err := Migrate(ctx, h.env, MigrateOptions{Tenant: "initech", Abort: true})
	want := `cannot abort the migration of "initech": the tenant is not migrating, it is served by "cell-d" (a finished migration is undone by another: cellctl migrate initech --to CELL)`
	if err == nil || err.Error() != want {
		t.Fatalf("abort after finish:\n got %v\nwant %s", err, want)
	}
	_, err = Migrate(ctx, h.env, MigrateOptions{Tenant: "initech", To: "cell-a", Finish: true})
	if err == nil || err.Error() != "migrate needs exactly one of --to CELL (start), --finish or --abort" {
		t.Fatalf("two steps at once: %v", err)
	}
}
