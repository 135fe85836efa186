package apply

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router"
)

// fakeEngine stands in for the pulumi-backed engine: it records every
// call and fails the runs it is told to ("op stack" → error).
type fakeEngine struct {
	mu        sync.Mutex
	runs      []string
	requests  []stackrun.Request
	fail      map[string]error
	protected []string
	// protectedErr is what Protected returns.
	protectedErr error
	prepared     int
	secretFor    []string
	secretWrote  []string
	calls        []string
}

func (f *fakeEngine) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	key := string(req.Op) + " " + req.Stack
	f.mu.Lock()
	f.runs = append(f.runs, key)
	f.requests = append(f.requests, req)
	f.calls = append(f.calls, "run "+key)
	f.mu.Unlock()
	if err := f.fail[key]; err != nil {
		return &stackrun.Result{Result: stackrun.Failed, Err: err}
	}
	return &stackrun.Result{Result: stackrun.Succeeded, Changes: stackrun.Changes{Same: 3}}
}

func (f *fakeEngine) PreparePlugins(context.Context) error {
	f.prepared++
	f.calls = append(f.calls, "plugins")
	return nil
}

func (f *fakeEngine) EnsureOriginVerifySecret(_ context.Context, stacks []string) ([]string, error) {
	f.secretFor = append(f.secretFor, stacks...)
	f.calls = append(f.calls, "secret")
	return f.secretWrote, nil
}

func (f *fakeEngine) DeployedOutputs(_ context.Context, stack string) (map[string]any, error) {
	return map[string]any{"cellId": stack}, nil
}

func (f *fakeEngine) Protected(_ context.Context, stack string) ([]string, error) {
	f.calls = append(f.calls, "protected "+stack)
	return f.protected, f.protectedErr
}

func demoFleet(t *testing.T) *fleet.Fleet {
	t.Helper()
	fl, err := fleet.Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

func envFor(fl *fleet.Fleet, eng *fakeEngine) (*Env, *bytes.Buffer) {
	var log bytes.Buffer
	return &Env{Fleet: fl, Engine: func() (Engine, error) { return eng, nil }, Parallel: 2, Log: &log}, &log
}

func names(rs []*stackrun.Result) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name+"="+r.Result)
	}
	return strings.Join(out, " ")
}

func TestUpRendersThenRunsCellsThenRouter(t *testing.T) {
	eng := &fakeEngine{secretWrote: []string{"stacks/Pulumi.cell-a.yaml"}}
	env, log := envFor(demoFleet(t), eng)
	var started []stackrun.Event
	var mu sync.Mutex
	env.Events = func(ev stackrun.Event) {
		if ev.Kind == stackrun.StackStarted {
			mu.Lock()
			started = append(started, ev)
			mu.Unlock()
		}
	}
	rep, err := Up(context.Background(), env, Options{Refresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(rep.Result.Stacks); got != "cell-a=succeeded cell-b=succeeded cell-c=succeeded cell-d=succeeded router=succeeded" {
		t.Fatalf("results: %s", got)
	}
	if eng.runs[len(eng.runs)-1] != "up router" {
		t.Fatalf("the router runs after every cell: %v", eng.runs)
	}
	for _, r := range eng.requests {
		if !r.Refresh {
			t.Fatalf("--refresh reaches every stack: %+v", r)
		}
	}
	if strings.Join(eng.calls[:2], ",") != "plugins,secret" || strings.Join(eng.secretFor, ",") != "cell-a,cell-b,cell-c,cell-d,router" {
		t.Fatalf("plugins and the origin secret come before any stack: %v (secret for %v)", eng.calls, eng.secretFor)
	}
	if !strings.Contains(log.String(), "stored the fleet's origin-verify secret (encrypted) in stacks/Pulumi.cell-a.yaml — commit these files") {
		t.Fatalf("log: %q", log.String())
	}
	// Progress knows each stack's size from the offline render: its cloud
	// resources (not its component or providers), as status counts them.
	for _, ev := range started {
		if ev.Expected == 0 {
			t.Fatalf("%s started without an expected count", ev.Stack)
		}
	}
	if n := rep.Plan.Stacks()[0].Expected; n != 81 {
		t.Fatalf("cell-a renders 81 cloud resources with a single NAT (74, and the migration task's 7), got %d", n)
	}
}

func TestUpDryRunNeverConnects(t *testing.T) {
	fl := demoFleet(t)
	env := &Env{Fleet: fl, Parallel: 4, Engine: func() (Engine, error) {
		t.Fatal("a dry run must not connect to the engine")
		return nil, nil
	}}
	rep, err := Up(context.Background(), env, Options{Cells: []string{"cell-c", "router"}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.DryRun || rep.Result != nil || len(rep.Plan.Stacks()) != 2 {
		t.Fatalf("report = %+v", rep)
	}
	var b strings.Builder
	rep.Plan.Describe(&b)
	if !strings.Contains(b.String(), "up cell-c (81 resources)") {
		t.Fatalf("plan:\n%s", b.String())
	}
}

func TestIsolationViolationStopsBeforeTheEngine(t *testing.T) {
	fl := demoFleet(t)
	fl.Cell("cell-b").Index = fl.Cell("cell-a").Index // two cells in one 10.N.0.0/16
	env := &Env{Fleet: fl, Parallel: 4, Engine: func() (Engine, error) {
		t.Fatal("an isolation violation must stop the run before the engine")
		return nil, nil
	}}
	_, err := Up(context.Background(), env, Options{Cells: []string{"cell-a", "cell-b"}})
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || findings.Count == 0 || exitcode.Of(err) != exitcode.Findings {
		t.Fatalf("an isolation violation is a finding (exit 2): %v", err)
	}
	if !strings.Contains(err.Error(), "the isolation audit failed, nothing was changed") {
		t.Fatalf("err = %v", err)
	}
}

// The gate reads stacks/shared.yaml (the cross-account forbidden paths
// exempt what it declares): one that does not parse stops the run with
// its file:line error before the engine (bad input, exit 1).
func TestMalformedSharedFileStopsBeforeTheEngine(t *testing.T) {
	dir := fleettest.Demo(t, fleettest.TwoAccounts)
	fleettest.Edit(t, dir, "stacks/shared.yaml", func(s string) string { return s + "  - kind: bucket\n    idd: example-cells-fleet\n" })
	env := &Env{Fleet: fleettest.Load(t, dir), Parallel: 4, Engine: func() (Engine, error) {
		t.Fatal("a malformed shared.yaml must stop the run before the engine")
		return nil, nil
	}}
	_, err := Up(context.Background(), env, Options{})
	if err == nil || exitcode.Of(err) != exitcode.Error || !strings.Contains(err.Error(), "nothing was changed") ||
		!strings.Contains(err.Error(), "stacks/shared.yaml:") || !strings.Contains(err.Error(), "idd") {
		t.Fatalf("err = %v", err)
	}
}

func TestFailuresAndLocksAreTyped(t *testing.T) {
	eng := &fakeEngine{fail: map[string]error{"up cell-b": errors.New("InjectedFault")}}
	env, _ := envFor(demoFleet(t), eng)
	rep, err := Up(context.Background(), env, Options{})
	if got := names(rep.Result.Stacks); got != "cell-a=succeeded cell-b=failed cell-c=succeeded cell-d=succeeded router=skipped" {
		t.Fatalf("a failing cell does not stop the others, and holds the router back: %s", got)
	}
	if exitcode.Of(err) != exitcode.Error || !strings.Contains(err.Error(), "cell-b: InjectedFault") {
		t.Fatalf("a failed cell exits 1: %v", err)
	}

	eng = &fakeEngine{fail: map[string]error{
		"up cell-a": errors.New("boom"),
		"up cell-c": outcome.Locked("cell-c", errors.New("another operation holds the stack's lock")),
	}}
	env, _ = envFor(demoFleet(t), eng)
	_, err = Up(context.Background(), env, Options{})
	if exitcode.Of(err) != exitcode.Locked {
		t.Fatalf("a lock conflict among failures exits 4: %v", err)
	}
}

func TestInterruptStopsNewStacks(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	eng := &fakeEngine{}
	env, _ := envFor(demoFleet(t), eng)
	env.Stop = stop
	rep, err := Up(context.Background(), env, Options{})
	if len(eng.runs) != 0 || err == nil || !strings.Contains(err.Error(), "rerun to finish them") {
		t.Fatalf("ran %v, err %v", eng.runs, err)
	}
	if rep.Result.Stacks[0].Result != stackrun.Skipped {
		t.Fatalf("%s", names(rep.Result.Stacks))
	}
}

func TestPreviewReportsEveryStack(t *testing.T) {
	eng := &fakeEngine{fail: map[string]error{"preview cell-a": errors.New("boom")}}
	env, _ := envFor(demoFleet(t), eng)
	rep, _ := Preview(context.Background(), env, Options{Refresh: true})
	if got := rep.Result.Stack("router"); got == nil || got.Result != stackrun.Succeeded {
		t.Fatalf("preview runs the router even after a cell failed: %s", names(rep.Result.Stacks))
	}
	for _, r := range eng.requests {
		if r.Op != stackrun.OpPreview || r.Refresh {
			t.Fatalf("preview requests: %+v", r)
		}
	}
}

// drainedD is the demo fleet with cell-d drained out of the routing table,
// so it may be destroyed.
func drainedD(t *testing.T) *fleet.Fleet {
	t.Helper()
	fl := demoFleet(t)
	drained, err := router.Drain(fl.Routing, "cell-d")
	if err != nil {
		t.Fatal(err)
	}
	fl.Routing = drained
	return fl
}

func TestDestroyRefusesARoutedCell(t *testing.T) {
	eng := &fakeEngine{}
	env, _ := envFor(demoFleet(t), eng)
	_, err := Destroy(context.Background(), env, DestroyOptions{Cell: "cell-a"})
	if err == nil || !strings.Contains(err.Error(), "refusing to destroy cell-a: tenants are still routed to it — cell-a is active in stacks/routing.json with 256 of 1024 buckets and 1 tenant override(s) (globex)") {
		t.Fatalf("err = %v", err)
	}
	if len(eng.calls) != 0 {
		t.Fatalf("the engine was used: %v", eng.calls)
	}
	if _, err := Destroy(context.Background(), env, DestroyOptions{Cell: "router"}); err == nil || !strings.Contains(err.Error(), "the router stack is not destroyed by cellctl") {
		t.Fatalf("router: %v", err)
	}
}

func TestDestroyStopsAtProtectedResources(t *testing.T) {
	eng := &fakeEngine{protected: []string{"aws:rds/cluster:Cluster cell-d-db"}}
	env, _ := envFor(drainedD(t), eng)
	_, err := Destroy(context.Background(), env, DestroyOptions{Cell: "cell-d"})
	if err == nil || !strings.Contains(err.Error(), "aws:rds/cluster:Cluster cell-d-db") || !strings.Contains(err.Error(), "--release-protected") {
		t.Fatalf("err = %v", err)
	}
	if len(eng.runs) != 0 {
		t.Fatalf("nothing may run: %v", eng.runs)
	}
	eng = &fakeEngine{protectedErr: stackrun.ErrNotDeployed}
	env, _ = envFor(drainedD(t), eng)
	if _, err := Destroy(context.Background(), env, DestroyOptions{Cell: "cell-d"}); err == nil || err.Error() != "cell-d is not deployed (nothing to destroy)" {
		t.Fatalf("not deployed: %v", err)
	}
}

func TestDestroyReleasesProtectionAsData(t *testing.T) {
	fl := drainedD(t)
	eng := &fakeEngine{protected: []string{"aws:rds/cluster:Cluster cell-d-db", "aws:sqs/queue:Queue cell-d-queue"}}
	env, log := envFor(fl, eng)
	confirmed := ""
	rep, err := Destroy(context.Background(), env, DestroyOptions{Cell: "cell-d", ReleaseProtected: true,
		Confirm: func(c *fleet.Cell) error { confirmed = c.ID; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(eng.runs, ",") != "up cell-d,destroy cell-d" || !eng.requests[0].Inputs.ReleaseProtection || eng.requests[1].Inputs.ReleaseProtection {
		t.Fatalf("lift the protection (as the up's input), then destroy: %v %+v", eng.runs, eng.requests)
	}
	if fl.Cell("cell-d").Releasing {
		t.Fatal("the loaded fleet model must not be changed to release protection")
	}
	if confirmed != "cell-d" || !strings.Contains(log.String(), "cell-d: lifting protection of 2 resource(s)") {
		t.Fatalf("confirmed %q, log %q", confirmed, log.String())
	}
	if rep.Result.Operation != stackrun.OpDestroy || names(rep.Result.Stacks) != "cell-d=succeeded" {
		t.Fatalf("the report is the destroy's: %s %s", rep.Result.Operation, names(rep.Result.Stacks))
	}
	if strings.Join(eng.secretFor, ",") != "cell-d" {
		t.Fatalf("the lifting up needs the origin secret: %v", eng.secretFor)
	}
}

func TestDestroyWhenLiftingFails(t *testing.T) {
	eng := &fakeEngine{protected: []string{"aws:rds/cluster:Cluster cell-d-db"}, fail: map[string]error{"up cell-d": errors.New("InjectedFault")}}
	env, _ := envFor(drainedD(t), eng)
	rep, err := Destroy(context.Background(), env, DestroyOptions{Cell: "cell-d", ReleaseProtected: true})
	if err == nil || err.Error() != "lifting protection failed, nothing was destroyed: 1 of 1 stacks failed:\n  cell-d: InjectedFault" {
		t.Fatalf("err = %v", err)
	}
	if strings.Join(eng.runs, ",") != "up cell-d" || rep.Result.Operation != stackrun.OpUp {
		t.Fatalf("the destroy must not start: %v, report %s", eng.runs, rep.Result.Operation)
	}
}

func TestDestroyNotConfirmed(t *testing.T) {
	eng := &fakeEngine{}
	env, _ := envFor(drainedD(t), eng)
	_, err := Destroy(context.Background(), env, DestroyOptions{Cell: "cell-d",
		Confirm: func(*fleet.Cell) error { return errors.New("not confirmed; nothing was destroyed") }})
	if err == nil || len(eng.runs) != 0 {
		t.Fatalf("err %v, runs %v", err, eng.runs)
	}
}

func TestDestroyDryRun(t *testing.T) {
	eng := &fakeEngine{protected: []string{"aws:rds/cluster:Cluster cell-d-db"}}
	env, _ := envFor(drainedD(t), eng)
	rep, err := Destroy(context.Background(), env, DestroyOptions{Cell: "cell-d", ReleaseProtected: true, DryRun: true,
		Confirm: func(*fleet.Cell) error { t.Fatal("a dry run asks nothing"); return nil }})
	if err != nil || len(eng.runs) != 0 || !rep.DryRun {
		t.Fatalf("err %v, runs %v", err, eng.runs)
	}
	var b strings.Builder
	rep.Plan.Describe(&b)
	want := "plan: destroy 1 stack in 2 steps\n  in order (stop at the first failure):\n" +
		"    up cell-d (releasing the protection of its stateful resources; 85 resources)\n" +
		"    destroy cell-d (destroyed only once its protection is lifted)\n"
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestSelectStacks(t *testing.T) {
	fl := demoFleet(t)
	for _, tc := range []struct {
		cells  []string
		router bool
		want   string
	}{
		{nil, false, "cell-a,cell-b,cell-c,cell-d,router"},
		{[]string{"cell-b"}, false, "cell-b"},
		{[]string{"cell-b", "cell-b"}, true, "cell-b,router"},
		{[]string{"router", "cell-c"}, false, "cell-c,router"},
		{nil, true, "router"},
		{[]string{"router"}, false, "router"},
	} {
		got, err := SelectStacks(fl, tc.cells, tc.router)
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("SelectStacks(%v, %v) = %v, %v; want %s", tc.cells, tc.router, got, err, tc.want)
		}
	}
	if _, err := SelectStacks(fl, []string{"cell-z"}, false); err == nil || !strings.Contains(err.Error(), `unknown cell "cell-z"`) {
		t.Fatalf("err = %v", err)
	}
	fl.Router = nil
	if _, err := SelectStacks(fl, nil, true); err == nil || !strings.Contains(err.Error(), "no router stack") {
		t.Fatalf("err = %v", err)
	}
}

func TestRoutedTo(t *testing.T) {
	if why := RoutedTo(drainedD(t), "cell-d"); why != "" {
		t.Fatalf("a drained cell with no buckets or overrides must be destroyable: %q", why)
	}
	if why := RoutedTo(demoFleet(t), "cell-b"); !strings.HasPrefix(why, "cell-b is active in stacks/routing.json with ") {
		t.Fatalf("why = %q", why)
	}
}

// The database bootstrap runs after each cell's up succeeded — not for
// the router, not after a cell that failed — and the router waits for it;
// a bootstrap that fails fails the run, naming the cell.
func TestUpBootstrapsEachCellsDatabaseAfterItsUp(t *testing.T) {
	eng := &fakeEngine{fail: map[string]error{"up cell-b": errors.New("boom")}}
	env, _ := envFor(demoFleet(t), eng)
	var mu sync.Mutex
	var boot []string
	env.Bootstrap = func(_ context.Context, c *fleet.Cell, outs map[string]any) error {
		cell := c.ID
		if outs["cellId"] != cell {
			t.Errorf("bootstrap of %s got the outputs %v", cell, outs)
		}
		mu.Lock()
		defer mu.Unlock()
		// The cell's own up ran before its bootstrap.
		if !strings.Contains(strings.Join(eng.runs, ","), "up "+cell) {
			t.Errorf("bootstrap of %s before its up", cell)
		}
		boot = append(boot, cell)
		if cell == "cell-c" {
			return errors.New("RDS Data API ExecuteStatement: HttpEndpoint is not enabled")
		}
		return nil
	}
	rep, err := Up(context.Background(), env, Options{})
	if err == nil || !strings.Contains(err.Error(), "bootstrap the database users of cell-c") || !strings.Contains(err.Error(), "HttpEndpoint is not enabled") {
		t.Fatalf("err = %v", err)
	}
	slices.Sort(boot)
	if strings.Join(boot, ",") != "cell-a,cell-c,cell-d" {
		t.Errorf("bootstrapped %v: every cell whose up succeeded, no other", boot)
	}
	if r := rep.Result.Stack("router"); r == nil || r.Result != stackrun.Skipped {
		t.Errorf("router %+v: it waits for the cells and their bootstrap", r)
	}
	var b strings.Builder
	_ = rep.Plan.Describe(&b)
	if !strings.Contains(b.String(), "bootstrap the database users of cell-a") {
		t.Errorf("the plan does not list the bootstrap:\n%s", b.String())
	}
}
