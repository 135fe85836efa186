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

type records []*executor.Record

func (r records) Load(_ context.Context, id string) (*executor.Record, error) {
	for _, x := range r {
		if x.ID == id {
			return x, nil
		}
	}
	return nil, executor.ErrNoRecord
}
func (r records) List(context.Context) ([]*executor.Record, error) { return r, nil }

func halted() *executor.Record {
	return &executor.Record{ID: "r-00000000000b", State: executor.HaltedState, Started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Halt: &executor.Breach{Cell: "cell-a", Signal: "error_rate_5xx", Reading: "3%", Threshold: "< 0.5%"},
		Waves: []executor.WaveRecord{
			{Name: "canary", State: executor.WaveRolledBack, Cells: []executor.CellRecord{{Cell: "cell-a", State: executor.CellStateRolled,
				Before: &executor.CellConfig{Image: "app:1"}, After: executor.CellConfig{Image: "app:2"}}}},
			{Name: "wave-1", State: executor.WavePending, Cells: []executor.CellRecord{{Cell: "cell-b", State: executor.CellPending}}},
		}}
}

func store(recs ...*executor.Record) Store {
	return func(context.Context) (Records, func(), error) { return records(recs), func() {}, nil }
}

func statusOpts(t *testing.T, format, id string, recs ...*executor.Record) (*StatusOptions, *bytes.Buffer) {
	io, _, stdout, _ := iostreams.Test()
	v, err := render.Pick(format, statusFormats...)
	if err != nil {
		t.Fatal(err)
	}
	return &StatusOptions{IO: io, ID: id, View: v, Store: store(recs...)}, stdout
}

func listOpts(t *testing.T, format string, recs ...*executor.Record) (*ListOptions, *bytes.Buffer) {
	io, _, stdout, _ := iostreams.Test()
	v, err := render.Pick(format, listFormats...)
	if err != nil {
		t.Fatal(err)
	}
	return &ListOptions{IO: io, View: v, Store: store(recs...)}, stdout
}

func TestStatusShowsTheHaltAndTheTable(t *testing.T) {
	o, out := statusOpts(t, cmdutil.FormatTable, "r-00000000000b", halted())
	// A script reads whether the change shipped from the exit code.
	if err := statusRun(context.Background(), o); exitcode.Of(err) != exitcode.Halted {
		t.Fatalf("status of a halted rollout: %v (exit %d), want exit %d", err, exitcode.Of(err), exitcode.Halted)
	}
	for _, want := range []string{"rollout r-00000000000b: halted", "cell-a", "error_rate_5xx", "rolled back", "untouched"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
	o, _ = statusOpts(t, cmdutil.FormatTable, "r-0000000000ff", halted())
	if err := statusRun(context.Background(), o); err == nil {
		t.Error("status of an unknown rollout succeeded")
	}
}

func TestListJSON(t *testing.T) {
	o, out := listOpts(t, cmdutil.FormatJSON, halted())
	if err := listRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var got []executor.Record
	if err := json.Unmarshal([]byte(out.String()), &got); err != nil || len(got) != 1 || got[0].State != executor.HaltedState {
		t.Errorf("list -o json: %v %s", err, out.String())
	}
	// Nothing recorded: an empty list, not null.
	o, out = listOpts(t, cmdutil.FormatJSON)
	if err := listRun(context.Background(), o); err != nil || out.String() != "[]\n" {
		t.Errorf("an empty list -o json: %v %q", err, out.String())
	}
}

// rollout list and status show canary and rotation records too: their
// kind, where they stand, their phases and steps.
func TestCanaryAndRotationRecordsAreShown(t *testing.T) {
	since := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	canaryRec := &executor.Record{ID: "c-00000000000c", Kind: executor.KindCanary, State: executor.Interrupted, Started: since,
		Canary: &executor.CanaryRecord{Phase: executor.CanaryWeight, PhaseSince: since, Weight: 0.05, Primary: "fn:1", Candidate: "fn:2", PrimaryTable: 4, CandidateTable: 5,
			Phases: []executor.StepRecord{{Name: "header", Kind: "header", State: executor.WaveDone, Decision: "pass"}, {Name: "weight", Kind: "weight", State: executor.WaveBaking}}}}
	rotation := &executor.Record{ID: "s-00000000000d", Kind: executor.KindRotation, State: executor.Paused, Started: since.Add(time.Minute),
		Steps: []executor.StepRecord{{Name: "accept/canary", Kind: "accept", State: executor.WaveDone}, {Name: "switch/router", Kind: "switch", State: executor.WavePending}}}
	o, stdout := listOpts(t, cmdutil.FormatTable, halted(), canaryRec, rotation)
	if err := listRun(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"router canary", "router canary: weight", "rotation", "switch/router", "s-00000000000d"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, stdout.String())
		}
	}
	so, stdout := statusOpts(t, cmdutil.FormatTable, canaryRec.ID, halted(), canaryRec, rotation)
	if err := statusRun(context.Background(), so); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"router canary c-00000000000c: interrupted", "unfinished, weight phase since 2026-12-01T11:00:00Z", "table 4", "table 5", "weight 5%", "weight", "baking"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, stdout.String())
		}
	}
}

// A rollout whose canary migration failed shows, per cell, the task, how
// it ended and its last log line; a passed one its schema version; and
// the schema check the gate ran after the rollback.
func TestStatusShowsEachCellsMigration(t *testing.T) {
	zero, one := 0, 1
	r := halted()
	r.Halt = &executor.Breach{Cell: "cell-a", Signal: executor.SignalMigration, Reading: "migration task abc exited 1"}
	r.Waves[0].Cells[0].Migration = &executor.Migration{Image: "app:2", Command: []string{"./migrate", "up"}, Task: "arn:aws:ecs:us-east-1:1:task/c/abc",
		ExitCode: &one, LastLines: []string{"applying 0002", `ERROR: relation "orders" already exists`}}
	r.Waves[0].Cells[0].RollbackMigration = &executor.Migration{Image: "app:1", Command: []string{"./migrate", "down"}, Task: "arn:aws:ecs:us-east-1:1:task/c/def",
		ExitCode: &zero, LastLines: []string{"schema_version=0001"}, SchemaVersion: "0001"}
	r.Waves[0].SchemaCheck = &executor.StepRecord{Name: "canary/schema", Kind: "schema-check", State: executor.WaveDone, Decision: "pass",
		Polls: []executor.Poll{{Verdicts: []executor.Verdict{{Cell: "cell-a", Decision: "pass"}}}}}
	o, out := statusOpts(t, cmdutil.FormatTable, "r-00000000000b", r)
	if err := statusRun(context.Background(), o); exitcode.Of(err) != exitcode.Halted {
		t.Fatalf("status of a halted rollout: %v", err)
	}
	for _, want := range []string{
		"    migration (app:2, ./migrate up): migration task abc exited 1; last log line: ERROR: relation \"orders\" already exists\n",
		"    rollback migration: task def (app:1, ./migrate down): exited 0, schema version 0001\n      last log line: schema_version=0001\n",
		"canary/schema      passed, 1 poll(s), pass",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "migration: task abc") {
		t.Errorf("the failed task is named twice on its line:\n%s", out.String())
	}
}
