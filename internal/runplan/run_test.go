package runplan

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-multierror"

	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// fakeRunner records what ran, how many ran at once, and fails the stacks
// it is told to.
type fakeRunner struct {
	mu      sync.Mutex
	started []string
	running int
	peak    int
	fail    map[string]error
	// hold, when set, is waited on by every stack before it finishes.
	hold chan struct{}
	// onStart runs as a stack starts (after it is recorded).
	onStart func(stack string)
}

func (f *fakeRunner) RunStack(ctx context.Context, req stackrun.Request) *stackrun.Result {
	f.mu.Lock()
	f.started = append(f.started, string(req.Op)+" "+req.Stack)
	f.running++
	f.peak = max(f.peak, f.running)
	f.mu.Unlock()
	if f.onStart != nil {
		f.onStart(req.Stack)
	}
	if f.hold != nil {
		<-f.hold
	} else {
		time.Sleep(time.Millisecond) // let siblings overlap
	}
	f.mu.Lock()
	f.running--
	f.mu.Unlock()
	if err := f.fail[req.Stack]; err != nil {
		return &stackrun.Result{Result: stackrun.Failed, Err: err}
	}
	return &stackrun.Result{Result: stackrun.Succeeded, Changes: stackrun.Changes{Create: 1}}
}

func (f *fakeRunner) order() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.started...)
}

var fleet5 = []string{"cell-a", "cell-b", "router", "cell-c", "cell-d"}

func results(r *Result) string {
	var parts []string
	for _, s := range r.Stacks {
		p := s.Name + "=" + s.Result
		if s.Err != nil {
			p += "(" + s.Error() + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

func TestUpRunsCellsThenRouter(t *testing.T) {
	f := &fakeRunner{}
	p := ForStacks(stackrun.OpUp, fleet5, BuildOptions{Parallel: 2})
	res, err := p.Run(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := f.order()
	if len(got) != 5 || got[4] != "up router" {
		t.Fatalf("the router must run last, after every cell: %v", got)
	}
	if want := "cell-a=succeeded cell-b=succeeded cell-c=succeeded cell-d=succeeded router=succeeded"; results(res) != want {
		t.Fatalf("results in plan order:\n got %s\nwant %s", results(res), want)
	}
	if res.Operation != stackrun.OpUp {
		t.Fatalf("operation = %s", res.Operation)
	}
}

func TestDestroyRunsRouterFirst(t *testing.T) {
	f := &fakeRunner{}
	_, err := ForStacks(stackrun.OpDestroy, fleet5, BuildOptions{Parallel: 4}).Run(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.order(); got[0] != "destroy router" {
		t.Fatalf("destroy tears the router down before its cells: %v", got)
	}
}

func TestParallelLimit(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		f := &fakeRunner{}
		cells := []string{"cell-a", "cell-b", "cell-c", "cell-d", "cell-e", "cell-f"}
		if _, err := ForStacks(stackrun.OpUp, cells, BuildOptions{Parallel: limit}).Run(context.Background(), f, Options{}); err != nil {
			t.Fatal(err)
		}
		if f.peak > limit {
			t.Errorf("limit %d: %d stacks ran at once", limit, f.peak)
		}
		if limit > 1 && f.peak < 2 {
			t.Errorf("limit %d: the cells never overlapped (peak %d)", limit, f.peak)
		}
	}
}

func TestFailingCellDoesNotStopTheOthers(t *testing.T) {
	f := &fakeRunner{fail: map[string]error{"cell-b": errors.New("aws:rds/cluster:Cluster cell-b-db: InjectedFault")}}
	res, err := ForStacks(stackrun.OpUp, fleet5, BuildOptions{Parallel: 1}).Run(context.Background(), f, Options{})
	want := "cell-a=succeeded cell-b=failed(aws:rds/cluster:Cluster cell-b-db: InjectedFault) cell-c=succeeded cell-d=succeeded " +
		"router=skipped(not started: the router is updated only after all its cells succeed)"
	if results(res) != want {
		t.Fatalf("got  %s\nwant %s", results(res), want)
	}
	if err == nil || err.Error() != "1 of 5 stacks failed:\n  cell-b: aws:rds/cluster:Cluster cell-b-db: InjectedFault" {
		t.Fatalf("error = %v", err)
	}
	var blocked *stackrun.Blocked
	if !errors.As(res.Stack("router").Err, &blocked) {
		t.Fatalf("the router's error is typed: %#v", res.Stack("router").Err)
	}
	if len(res.Failed()) != 1 || res.Failed()[0].Name != "cell-b" {
		t.Fatalf("failed = %v", res.Failed())
	}
}

func TestPreviewReportsTheRouterEvenAfterACellFailed(t *testing.T) {
	f := &fakeRunner{fail: map[string]error{"cell-a": errors.New("boom")}}
	res, _ := ForStacks(stackrun.OpPreview, fleet5, BuildOptions{Parallel: 4}).Run(context.Background(), f, Options{})
	if r := res.Stack("router"); r.Result != stackrun.Succeeded {
		t.Fatalf("preview runs the router regardless: %s", results(res))
	}
}

func TestTypedErrorsSurviveTheMultierror(t *testing.T) {
	lock := outcome.Locked("cell-c", errors.New("another operation holds the stack's lock"))
	f := &fakeRunner{fail: map[string]error{"cell-a": errors.New("boom"), "cell-c": lock}}
	_, err := ForStacks(stackrun.OpUp, fleet5, BuildOptions{Parallel: 4}).Run(context.Background(), f, Options{})
	var le *outcome.LockedError
	if !errors.As(err, &le) || le.Stack != "cell-c" {
		t.Fatalf("the lock conflict of cell-c must be found in %v", err)
	}
	var me *multierror.Error
	if !errors.As(err, &me) || len(me.Errors) != 2 {
		t.Fatalf("both failures are kept: %v", err)
	}
	var se *StackError
	if !errors.As(me.Errors[1], &se) || se.Stack != "cell-c" {
		t.Fatalf("each failure names its stack: %v", me.Errors)
	}
}

func TestInterruptStopsNewStarts(t *testing.T) {
	stop := make(chan struct{})
	hold := make(chan struct{})
	f := &fakeRunner{hold: hold}
	var once sync.Once
	f.onStart = func(string) {
		// The first Ctrl-C arrives while the first two cells run.
		f.mu.Lock()
		n := len(f.started)
		f.mu.Unlock()
		if n == 2 {
			once.Do(func() { close(stop); close(hold) })
		}
	}
	res, err := ForStacks(stackrun.OpUp, fleet5, BuildOptions{Parallel: 2}).Run(context.Background(), f, Options{Stop: stop})
	if got := f.order(); len(got) != 2 {
		t.Fatalf("no stack may start after the interrupt: %v", got)
	}
	want := "cell-a=succeeded cell-b=succeeded cell-c=skipped(not started: interrupted) cell-d=skipped(not started: interrupted) router=skipped(not started: interrupted)"
	if results(res) != want {
		t.Fatalf("got  %s\nwant %s", results(res), want)
	}
	if err == nil || err.Error() != "interrupted: cell-c, cell-d, router not started; rerun to finish them" {
		t.Fatalf("an interrupted run is an error naming what to rerun: %v", err)
	}
	for _, r := range res.Stacks[2:] {
		if !errors.Is(r.Err, stackrun.ErrInterrupted) {
			t.Fatalf("%s: %v", r.Name, r.Err)
		}
	}
}

func TestCancelledContextStartsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fakeRunner{}
	res, err := ForStacks(stackrun.OpUp, fleet5, BuildOptions{Parallel: 2}).Run(ctx, f, Options{})
	if len(f.order()) != 0 || err == nil || res.Stacks[0].Result != stackrun.Skipped {
		t.Fatalf("started %v, err %v", f.order(), err)
	}
}

func TestEventsAndDurations(t *testing.T) {
	var mu sync.Mutex
	var evs []string
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	f := &fakeRunner{}
	p := ForStacks(stackrun.OpUp, []string{"cell-a"}, BuildOptions{Parallel: 1, Expected: map[string]int{"cell-a": 72}})
	res, err := p.Run(context.Background(), f, Options{Now: now, Events: func(ev stackrun.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Kind {
		case stackrun.StackStarted:
			evs = append(evs, "started "+ev.Stack+" "+ev.Op+" expecting "+itoa(ev.Expected))
		case stackrun.StackFinished:
			evs = append(evs, "finished "+ev.Stack+" "+ev.Result.Result)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(evs, "; ") != "started cell-a up expecting 72; finished cell-a succeeded" {
		t.Fatalf("events: %v", evs)
	}
	if res.Stacks[0].Duration != time.Second {
		t.Fatalf("duration from the injected clock: %v", res.Stacks[0].Duration)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestRefreshAndInputsReachTheRunner(t *testing.T) {
	var got []stackrun.Request
	var mu sync.Mutex
	r := runnerFunc(func(_ context.Context, req stackrun.Request) *stackrun.Result {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		return &stackrun.Result{Result: stackrun.Succeeded}
	})
	p := ForStacks(stackrun.OpUp, []string{"cell-a", "router"}, BuildOptions{Parallel: 1, Refresh: true,
		Inputs: map[string]stackrun.Inputs{"cell-a": {ReleaseProtection: true}}})
	if _, err := p.Run(context.Background(), r, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[0].Refresh || !got[0].Inputs.ReleaseProtection || got[1].Inputs.ReleaseProtection {
		t.Fatalf("requests = %+v", got)
	}
	if p := ForStacks(stackrun.OpPreview, []string{"cell-a"}, BuildOptions{Refresh: true}); p.Stacks()[0].Refresh {
		t.Fatal("refresh applies to up only")
	}
}

type runnerFunc func(context.Context, stackrun.Request) *stackrun.Result

func (f runnerFunc) RunStack(ctx context.Context, r stackrun.Request) *stackrun.Result {
	return f(ctx, r)
}

func TestTasksInASequence(t *testing.T) {
	var ran []string
	f := &fakeRunner{}
	p := &Plan{Operation: "rollout", Root: &Seq{Steps: []Step{
		&Stack{Request: stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp}},
		&Task{Name: "bake wave 1", Run: func(context.Context) error { ran = append(ran, "bake"); return errors.New("gate: 5xx rate 7% > 1%") }},
		&Stack{Request: stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp}},
		&Task{Name: "bake wave 2", Run: func(context.Context) error { ran = append(ran, "bake 2"); return nil }},
	}}}
	res, err := p.Run(context.Background(), f, Options{})
	if strings.Join(ran, ",") != "bake" || len(f.order()) != 1 {
		t.Fatalf("a failed task stops the sequence: ran %v, stacks %v", ran, f.order())
	}
	if err == nil || !strings.Contains(err.Error(), "bake wave 1: gate: 5xx rate 7% > 1%") {
		t.Fatalf("err = %v", err)
	}
	if res.Tasks[1].Result != stackrun.Skipped || res.Stacks[1].Result != stackrun.Skipped {
		t.Fatalf("later steps are skipped: %+v %s", res.Tasks[1], results(res))
	}
}

func TestRunnerReturningNilIsAFailure(t *testing.T) {
	r := runnerFunc(func(context.Context, stackrun.Request) *stackrun.Result { return nil })
	res, err := ForStacks(stackrun.OpUp, []string{"cell-a"}, BuildOptions{}).Run(context.Background(), r, Options{})
	if err == nil || res.Stacks[0].Result != stackrun.Failed || res.Stacks[0].Name != "cell-a" {
		t.Fatalf("%v %s", err, results(res))
	}
}
