package stack

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

type fakeStatus []*engine.StackStatus

func (f fakeStatus) Status(context.Context, []string) ([]*engine.StackStatus, error) { return f, nil }

// A stack whose state cannot be read is shown on one table line and the
// command fails with the whole message (exit 1), never "fine".
func TestStatusFailsOnAnUnreadableStack(t *testing.T) {
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	io, _, out, _ := iostreams.Test()
	view, err := render.Pick(render.FormatTable, statusTable)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := "the state of stack cell-b is corrupt: x.json: truncated; nothing was run.\nRestore the last good checkpoint"
	opts := &StatusOptions{IO: io, Fleet: func() (*fleet.Fleet, error) { return fl, nil }, View: view, Cells: []string{"cell-a", "cell-b"},
		Engine: func(*fleet.Fleet) (StatusReader, error) {
			return fakeStatus{{Name: "cell-a", Deployed: true, LastKind: "update", LastResult: "succeeded"}, {Name: "cell-b", Error: corrupt}}, nil
		}}
	err = statusRun(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "cell-b: "+corrupt) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(out.String(), "error: the state of stack cell-b is corrupt") || strings.Contains(out.String(), "Restore the last") {
		t.Fatalf("table:\n%s", out.String())
	}
	opts.Cells = []string{"cell-a"}
	opts.Engine = func(*fleet.Fleet) (StatusReader, error) { return fakeStatus{{Name: "cell-a"}}, nil }
	if err := statusRun(context.Background(), opts); err != nil {
		t.Fatalf("a readable fleet: %v", err)
	}
}

// With the KMS key disabled (the CLI's stderr, cleaned, as the engine
// hands it over) and in an S3 outage, the table says which AWS call failed
// and its error code — not the SDK's log line, not the whole message — and
// the whole message is printed once, on stderr (the returned error); the
// unreadable records are said apart, not counted as a stack.
func TestStatusShowsTheAWSErrorOnceAndItsCodeInTheTable(t *testing.T) {
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	kms := "error: decrypting secrets: secrets (code=PermissionDenied): operation error KMS: Decrypt, https response error StatusCode: 400, RequestID: , " +
		"DisabledException: arn:aws:kms:us-east-1:123456789012:key/ae6ad1ed is disabled."
	outage := `stack cell-b: error: read ".pulumi/meta.yaml": blob (key ".pulumi/meta.yaml") (code=Unknown): operation error S3: GetObject, exceeded maximum number of attempts, 3, ` +
		`https response error StatusCode: 503, RequestID: R1, HostID: , api error ServiceUnavailable: Service is unable to handle request.`
	records := errors.New("listing rollouts: blob (code=Unknown): operation error S3: ListObjectsV2, https response error StatusCode: 503, RequestID: R1, HostID: , api error ServiceUnavailable: Service is unable to handle request.")
	io, _, out, _ := iostreams.Test()
	view, err := render.Pick(render.FormatTable, statusTable)
	if err != nil {
		t.Fatal(err)
	}
	opts := &StatusOptions{IO: io, Fleet: func() (*fleet.Fleet, error) { return fl, nil }, View: view, Cells: []string{"cell-a", "cell-b"},
		Engine: func(*fleet.Fleet) (StatusReader, error) {
			return fakeStatus{{Name: "cell-a", Error: kms}, {Name: "cell-b", Error: outage}}, nil
		},
		Records: func() ([]*executor.Record, error) { return nil, records }}
	err = statusRun(context.Background(), opts)
	table := out.String()
	for _, want := range []string{"error: KMS Decrypt: DisabledException", "error: S3 GetObject: ServiceUnavailable"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "Service is unable") || strings.Contains(table, "is disabled") {
		t.Errorf("the table repeats the whole message:\n%s", table)
	}
	want := "2 stack(s) could not be read:\ncell-a: " + kms + "\ncell-b: " + outage +
		"\nthe rollout records in the backend could not be read: " + records.Error()
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
}

// allDeployed reports every stack asked for as deployed.
type allDeployed struct{}

func (allDeployed) Status(_ context.Context, names []string) ([]*engine.StackStatus, error) {
	out := make([]*engine.StackStatus, len(names))
	for i, n := range names {
		out[i] = &engine.StackStatus{Name: n, Deployed: true, LastKind: "update", LastResult: "succeeded", Resources: 3}
	}
	return out, nil
}

// status shows each cell's routing from stacks/routing.json beside its
// deployment: state, buckets and tenant share, pinned tenants, load
// against capacity; the router has none.
func TestStatusShowsRouting(t *testing.T) {
	for _, format := range []string{cmdutil.FormatTable, cmdutil.FormatJSON} {
		io, _, stdout, _ := iostreams.Test()
		f := cmdutil.NewFactory(io)
		f.Global.Dir = "../../.."
		view, err := render.Pick(format, statusTable, statusJSON)
		if err != nil {
			t.Fatal(err)
		}
		opts := &StatusOptions{IO: io, Fleet: f.Fleet, View: view,
			Engine: func(*fleet.Fleet) (StatusReader, error) { return allDeployed{}, nil }}
		if err := statusRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		fl, _ := f.Fleet()
		if format == cmdutil.FormatTable {
			out := stdout.String()
			if !strings.Contains(out, "ROUTING") || !strings.Contains(out, "LOAD/CAPACITY") {
				t.Fatalf("no routing columns:\n%s", out)
			}
			for _, c := range fl.Routing.Cells() {
				line := ""
				for _, l := range strings.Split(out, "\n") {
					if strings.HasPrefix(l, c.ID+" ") {
						line = l
					}
				}
				if !strings.Contains(line, " "+string(c.State)+" ") {
					t.Errorf("%s: state %s missing from %q", c.ID, c.State, line)
				}
			}
			continue
		}
		var doc struct {
			Stacks []CellStatus `json:"stacks"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		pinned := map[string]int{}
		for _, o := range fl.Routing.Overrides() {
			pinned[o.Cell]++
		}
		for _, r := range doc.Stacks {
			if r.Name == fleet.RouterStack {
				if r.Routing != nil {
					t.Errorf("the router has no routing row: %+v", r.Routing)
				}
				continue
			}
			c, ok := fl.Routing.Cell(r.Name)
			if !ok || r.Routing == nil {
				t.Fatalf("%s: routing %+v", r.Name, r.Routing)
			}
			if r.Routing.State != c.State || r.Routing.Buckets != c.Buckets.Count() || r.Routing.Pinned != pinned[r.Name] || r.Routing.Capacity < 1 {
				t.Errorf("%s: routing %+v, table says %s with %d buckets, %d pinned", r.Name, r.Routing, c.State, c.Buckets.Count(), pinned[r.Name])
			}
		}
	}
}

// routerMidCanary reports the router deployed in a canary's weighted
// phase: its tableVersion output is the candidate's (9).
type routerMidCanary struct{}

func (routerMidCanary) Status(_ context.Context, names []string) ([]*engine.StackStatus, error) {
	out, _ := allDeployed{}.Status(context.Background(), names)
	for _, st := range out {
		if st.Name == fleet.RouterStack {
			st.Outputs = map[string]any{"canaryPhase": "weight", "tableVersion": 9.0, "primaryFunctionArn": "fn:1", "stagingFunctionArn": "fn:2"}
		}
	}
	return out, nil
}

// statusWithRecords runs status on the demo fleet in format, its stacks
// read from eng and the backend's records being recs.
func statusWithRecords(t *testing.T, format string, eng StatusReader, recs []*executor.Record) string {
	t.Helper()
	io, _, stdout, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir = "../../.."
	view, _ := render.Pick(format, statusTable, statusJSON)
	opts := &StatusOptions{IO: io, Fleet: f.Fleet, View: view,
		Engine:  func(*fleet.Fleet) (StatusReader, error) { return eng, nil },
		Records: func() ([]*executor.Record, error) { return recs, nil }}
	if err := statusRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	return stdout.String()
}

// A router canary left unfinished (kill -9) is never invisible: status
// shows its phase, weight and start, and the table version the primary
// serves — the one the canary recorded, not the router's tableVersion
// output, which is the candidate's.
func TestStatusShowsAnUnfinishedCanaryAndThePrimarysTable(t *testing.T) {
	since := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	recs := []*executor.Record{{ID: "c-0123456789ab", Kind: executor.KindCanary, State: executor.Running, Updated: since,
		Canary: &executor.CanaryRecord{Phase: executor.CanaryWeight, PhaseSince: since, Weight: 0.05, Primary: "fn:1", Candidate: "fn:2", PrimaryTable: 8, CandidateTable: 9}}}
	for _, format := range []string{cmdutil.FormatTable, cmdutil.FormatJSON} {
		out := statusWithRecords(t, format, routerMidCanary{}, recs)
		if format == cmdutil.FormatTable {
			for _, want := range []string{"serves routing table version 8", "c-0123456789ab is unfinished: weight phase since 2026-12-01T12:00:00Z, 5% of viewers", "cellctl router canary"} {
				if !strings.Contains(out, want) {
					t.Errorf("table lacks %q:\n%s", want, out)
				}
			}
			continue
		}
		var doc struct {
			Stacks []CellStatus `json:"stacks"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, r := range doc.Stacks {
			if r.Name != fleet.RouterStack {
				continue
			}
			if r.TableVersion == nil || *r.TableVersion != 8 || r.Canary == nil || r.Canary.Phase != "weight" || r.Canary.Weight != 0.05 || !r.Canary.Since.Equal(since) {
				t.Errorf("router row %+v canary %+v", r, r.Canary)
			}
		}
	}
}

// status says which table each router distribution serves and marks a
// stale one: an operator can tell an edge that did not get the table.
func TestStatusShowsWhichTableEachDistributionServes(t *testing.T) {
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	io, _, out, _ := iostreams.Test()
	view, _ := render.Pick(render.FormatTable, statusTable)
	router := &engine.StackStatus{Name: fleet.RouterStack, Deployed: true, LastKind: "update", LastResult: "succeeded", Outputs: map[string]any{
		"servedTables": map[string]any{
			"primary": map[string]any{"functionArn": "arn:aws:lambda:us-east-1:1:function:edge:4", "version": float64(fl.Routing.Version()), "checksum": fl.Routing.Checksum()},
			"staging": map[string]any{"functionArn": "arn:aws:lambda:us-east-1:1:function:edge:5", "version": float64(fl.Routing.Version() + 1), "checksum": "sha256:" + strings.Repeat("e", 64)},
		}}}
	opts := &StatusOptions{IO: io, Fleet: func() (*fleet.Fleet, error) { return fl, nil }, View: view, Cells: []string{fleet.RouterStack},
		Engine: func(*fleet.Fleet) (StatusReader, error) { return fakeStatus{router}, nil }}
	if err := statusRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"router: the primary distribution serves routing table version 1 " + fl.Routing.Checksum() + " (stacks/routing.json)",
		"router: the staging distribution serves routing table version 2 sha256:eeee",
		"(stale: not stacks/routing.json's table",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
}

// A rolled-back release's schema is shown as what it is — left in place
// by design, not a target, not in red — and so is a failed migration the
// rollout rolled back cleanly (the old image passed the gate on it).
func TestStatusShowsARolledBackReleasesSchemaAsWhatItIs(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	zero, one := 0, 1
	mig := func(v string, code *int, at time.Time) *executor.Migration {
		return &executor.Migration{Image: "app:" + v, Task: "arn:aws:ecs:us-east-1:1:task/c/" + v, ExitCode: code, SchemaVersion: v, Stopped: at}
	}
	var shipped []executor.CellRecord
	for _, c := range []string{"cell-a", "cell-b", "cell-c", "cell-d"} {
		shipped = append(shipped, executor.CellRecord{Cell: c, State: executor.CellStateUpdated, After: executor.CellConfig{Image: "app:1.5.0"}, Migration: mig("1.5.0", &zero, at)})
	}
	check := &executor.StepRecord{Cells: []string{"cell-a"}, State: executor.WaveDone, Decision: "pass"}
	recs := []*executor.Record{
		{ID: "r-000000000001", Kind: executor.KindRollout, State: executor.Complete, Started: at, Waves: []executor.WaveRecord{{Name: "all", State: executor.WaveDone, Cells: shipped}}},
		{ID: "r-000000000002", Kind: executor.KindRollout, State: executor.HaltedState, Started: at.Add(time.Hour), Waves: []executor.WaveRecord{{Name: "canary", State: executor.WaveRolledBack, SchemaCheck: check,
			Cells: []executor.CellRecord{{Cell: "cell-a", State: executor.CellStateRolled, Migration: mig("1.5.1-bad", &zero, at.Add(time.Hour))}}}}},
		{ID: "r-000000000003", Kind: executor.KindRollout, State: executor.HaltedState, Started: at.Add(2 * time.Hour), Waves: []executor.WaveRecord{{Name: "canary", State: executor.WaveRolledBack, SchemaCheck: check,
			Cells: []executor.CellRecord{{Cell: "cell-a", State: executor.CellStateRolled, Migration: mig("", &one, at.Add(2*time.Hour))}}}}},
	}
	out := statusWithRecords(t, cmdutil.FormatTable, allDeployed{}, recs)
	if !strings.Contains(out, "1.5.1-bad (left by rolled-back r-000000000002; migration failed in r-000000000003, rolled back)") || strings.Contains(out, "\x1b[") {
		t.Errorf("cell-a's schema must read as what it is, not as a fault:\n%s", out)
	}
	if strings.Count(out, " 1.5.0\n") != 3 {
		t.Errorf("cells b, c, d are on 1.5.0:\n%s", out)
	}
}

// status shows each cell's schema version from the rollout records, and a
// migration that failed after it.
func TestStatusShowsEachCellsSchemaVersion(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	zero, one := 0, 1
	recs := []*executor.Record{{ID: "r-0123456789ab", Kind: executor.KindRollout, State: executor.HaltedState, Waves: []executor.WaveRecord{
		{Name: "canary", Cells: []executor.CellRecord{{Cell: "cell-a", Migration: &executor.Migration{Image: "app:2", Task: "arn:aws:ecs:us-east-1:1:task/c/aaa", ExitCode: &zero, SchemaVersion: "0002", Stopped: at}}}},
		{Name: "rest", Cells: []executor.CellRecord{{Cell: "cell-b", Migration: &executor.Migration{Image: "app:2", Task: "arn:aws:ecs:us-east-1:1:task/c/bbb", ExitCode: &one, LastLines: []string{"ERROR: boom"}, Stopped: at.Add(time.Minute)}}}},
	}}}
	for _, format := range []string{cmdutil.FormatTable, cmdutil.FormatJSON} {
		out := statusWithRecords(t, format, allDeployed{}, recs)
		if format == cmdutil.FormatTable {
			if !strings.Contains(out, "SCHEMA") || !strings.Contains(out, "0002") || !strings.Contains(out, "unknown (migration failed in r-0123456789ab)") {
				t.Errorf("table lacks the schema column:\n%s", out)
			}
			continue
		}
		var doc struct {
			Stacks []CellStatus `json:"stacks"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		got := map[string]*desired.Schema{}
		for _, r := range doc.Stacks {
			got[r.Name] = r.Schema
		}
		if a, b := got["cell-a"], got["cell-b"]; a == nil || a.Version != "0002" || b == nil || !strings.Contains(b.Failed, "ERROR: boom") || got["cell-c"] != nil {
			t.Errorf("schema in JSON: a %+v b %+v c %+v", a, b, got["cell-c"])
		}
	}
}
