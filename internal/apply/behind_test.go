package apply

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// Issue 38 item 2: a router up whose routing table is older than the
// deployed router's — a lower version, or the same version with other
// content — is refused as a checkout behind the fleet (exit 4, git pull).
func TestAnOlderRoutingTableIsRefusedAsBehind(t *testing.T) {
	fl := demoFleet(t)
	v, sum := fl.Routing.Version(), fl.Routing.Checksum()
	for _, tc := range []struct {
		name     string
		deployed int64
		checksum string
		want     string // "" : allowed
	}{
		{"the same table", v, sum, ""},
		{"a router that predates checksums", v, "", ""},
		{"this checkout publishes a newer table", v - 1, "sha256:older", ""},
		{"the router serves a newer version", v + 1, "sha256:newer", "serves routing table version 2, newer than stacks/routing.json here (version 1)"},
		{"another checkout's version of the same number", v, "sha256:theirs", "another version 1"},
	} {
		err := compareTable(fl, tc.deployed, tc.checksum)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			continue
		}
		var b *outcome.BehindError
		if !errors.As(err, &b) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "git pull") {
			t.Errorf("%s: want a BehindError saying %q and git pull, got %v", tc.name, tc.want, err)
		}
	}
}

func TestUpOfTheRouterComparesTheDeployedTable(t *testing.T) {
	d := &deployedEngine{}
	env := deployedEnv(t, d)
	d.outputs = map[string]map[string]any{fleet.RouterStack: {"tableVersion": float64(env.Fleet.Routing.Version() + 1), "tableChecksum": "sha256:newer"}}
	_, err := Up(context.Background(), env, Options{Router: true})
	var b *outcome.BehindError
	if !errors.As(err, &b) {
		t.Fatalf("an up of the router over a newer deployed table: %v", err)
	}
	if len(d.calls) != 0 {
		t.Fatalf("the engine ran: %v", d.calls)
	}
	// A preview ships nothing: it shows what the up would change.
	if _, err := Preview(context.Background(), env, Options{Router: true}); err != nil {
		t.Fatalf("preview: %v", err)
	}
	d.outputs[fleet.RouterStack]["tableVersion"] = "x"
	if _, err := Up(context.Background(), env, Options{Router: true}); err == nil || !strings.Contains(err.Error(), "not a version number") {
		t.Fatalf("an unreadable tableVersion must stop the up: %v", err)
	}
}

// digestEngine is a deployedEngine whose stack files hold origin-verify
// digests (stack → key → digest) and whose backend holds records.
type digestEngine struct {
	deployedEngine
	digests map[string]map[string]string
	// onEnsure runs when the origin secret is ensured (the engine writes
	// a stack file's value).
	onEnsure func()
}

func (d *digestEngine) EnsureOriginVerifySecret(ctx context.Context, stacks []string) ([]string, error) {
	if d.onEnsure != nil {
		d.onEnsure()
	}
	return d.fakeEngine.EnsureOriginVerifySecret(ctx, stacks)
}

func (d *digestEngine) SecretDigest(_ context.Context, stack, key string) (string, bool, error) {
	v, ok := d.digests[stack][key]
	return v, ok, nil
}

// rotation is a rotation record from digest from to digest to, complete
// or with the named steps done.
func rotation(from, to string, complete bool, done ...string) *executor.Record {
	rec := &executor.Record{ID: "s-0123456789ab", Kind: executor.KindRotation, State: executor.Running, Started: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC),
		Origin: &executor.OriginDigests{From: from, To: to}}
	if complete {
		rec.State, rec.Finished = executor.Complete, rec.Started.Add(time.Hour)
	}
	for _, s := range []executor.StepRecord{
		{Name: "accept/canary", Kind: executor.RotationAccept, Cells: []string{"cell-a"}},
		{Name: "accept/wave-1", Kind: executor.RotationAccept, Cells: []string{"cell-b"}},
		{Name: "switch/router", Kind: executor.RotationSwitch},
		{Name: "drop/canary", Kind: executor.RotationDrop, Cells: []string{"cell-a"}},
		{Name: "drop/wave-1", Kind: executor.RotationDrop, Cells: []string{"cell-b"}},
	} {
		s.State = executor.WavePending
		for _, n := range done {
			if n == s.Name || complete {
				s.State = executor.WaveDone
			}
		}
		rec.Steps = append(rec.Steps, s)
	}
	return rec
}

// Issue 38 item 1: what a stack is about to ship is judged against the
// newest rotation record, by digest.
func TestOriginVerdictAgainstTheRotationRecord(t *testing.T) {
	const old, cur = "d-old", "d-new"
	done := rotation(old, cur, true)
	for _, tc := range []struct {
		name    string
		rec     *executor.Record
		stack   string
		value   string
		next    string // "" : none
		refused string // "" : allowed
	}{
		{"complete: the new value", done, "cell-b", cur, "", ""},
		{"complete: the replaced value", done, "cell-b", old, "", "the value the rotation replaced"},
		{"complete: the router with the replaced value", done, "router", old, "", "the value the rotation replaced"},
		{"complete: a second value left from the rotation", done, "cell-b", cur, old, "dropped"},
		{"complete: a value never shipped", done, "cell-b", "d-other", "", "never shipped"},
		{"under way, before its wave's accept", rotation(old, cur, false), "cell-b", old, "", ""},
		{"under way, accept done, both values", rotation(old, cur, false, "accept/wave-1"), "cell-b", old, cur, ""},
		{"under way, accept done, the old value alone", rotation(old, cur, false, "accept/wave-1"), "cell-b", old, "", "accept step added"},
		{"under way, the router before the switch", rotation(old, cur, false, "accept/canary", "accept/wave-1"), "router", old, "", ""},
		{"under way, the router after the switch", rotation(old, cur, false, "accept/canary", "accept/wave-1", "switch/router"), "router", old, "", "switch replaced"},
		{"under way, drop done, the new value", rotation(old, cur, false, "accept/canary", "switch/router", "drop/canary"), "cell-a", cur, "", ""},
		{"under way, drop done, both values", rotation(old, cur, false, "accept/canary", "switch/router", "drop/canary"), "cell-a", old, cur, "drop step removed"},
		{"under way, an unknown value", rotation(old, cur, false), "cell-b", "d-other", "", "does not rotate between"},
	} {
		why := originVerdict(tc.rec, tc.stack, tc.stack != "router", tc.value, tc.next, tc.next != "")
		if tc.refused == "" && why != "" || tc.refused != "" && !strings.Contains(why, tc.refused) {
			t.Errorf("%s: verdict %q, want %q", tc.name, why, tc.refused)
		}
	}
}

func TestUpOfAStackFileOlderThanTheRotationIsRefusedAsBehind(t *testing.T) {
	d := &digestEngine{}
	env := deployedEnv(t, &d.deployedEngine)
	env.Engine = func() (Engine, error) { return d, nil }
	const key = "cells:originVerifySecret"
	d.digests = map[string]map[string]string{"cell-a": {key: "d-new"}, "cell-b": {key: "d-old"}, fleet.RouterStack: {key: "d-new"}}
	var recs []*executor.Record
	env.Records = func(context.Context) ([]*executor.Record, error) { return recs, nil }

	// No rotation recorded what it shipped: nothing to compare with.
	if _, err := Up(context.Background(), env, Options{Cells: []string{"cell-b"}}); err != nil {
		t.Fatalf("no rotation record: %v", err)
	}
	older := rotation("d-older", "d-old", true)
	older.ID, older.Started = "s-000000000001", older.Started.Add(-48*time.Hour)
	recs = []*executor.Record{older, rotation("d-old", "d-new", true)}
	d.calls = nil
	_, err := Up(context.Background(), env, Options{})
	var b *outcome.BehindError
	if !errors.As(err, &b) {
		t.Fatalf("a stack file older than the completed rotation: %v", err)
	}
	for _, want := range []string{"refused, nothing was run", "origin-verify secret is older than", "s-0123456789ab", "cell-b: its stack file holds the value the rotation replaced", "git pull"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "cell-a:") {
		t.Errorf("cell-a holds the new value and is not named:\n%v", err)
	}
	for _, c := range d.calls {
		if strings.HasPrefix(c, "run ") {
			t.Fatalf("a stack ran despite the refusal: %v", d.calls)
		}
	}

	// Through the Runner (deploy, rotation, canary): Prepare refuses
	// before the first step.
	r := &Runner{Env: env, Engine: d}
	if err := r.Prepare(context.Background(), []stackrun.Request{{Stack: "cell-b", Op: stackrun.OpUp}}); !errors.As(err, &b) {
		t.Fatalf("Runner.Prepare: %v", err)
	}
	// A stack file without the value is given what the stack runs; the
	// comparison runs again once it holds it.
	delete(d.digests["cell-b"], key)
	if res := r.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp}); res.Err != nil {
		t.Fatalf("a stack file without the value: %v", res.Err)
	}
	r = &Runner{Env: env, Engine: d}
	d.digests["cell-b"][key] = "d-old"
	if res := r.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp}); !errors.As(res.Err, &b) || res.Result != stackrun.Skipped {
		t.Fatalf("Runner.RunStack of an older stack file: %+v", res)
	}
	// The value the engine gives a stack file that lacks it is compared
	// too: refused before the stack runs.
	r = &Runner{Env: env, Engine: d}
	delete(d.digests["cell-b"], key)
	d.fakeEngine.secretWrote = []string{"stacks/Pulumi.cell-b.yaml"}
	d.onEnsure = func() { d.digests["cell-b"][key] = "d-old" }
	d.calls = nil
	if res := r.RunStack(context.Background(), stackrun.Request{Stack: "cell-b", Op: stackrun.OpUp}); !errors.As(res.Err, &b) || res.Result != stackrun.Skipped {
		t.Fatalf("Runner.RunStack refused after the secret was ensured: %+v", res)
	}
	for _, c := range d.calls {
		if strings.HasPrefix(c, "run ") {
			t.Fatalf("a stack ran despite the refusal: %v", d.calls)
		}
	}

	// Unreadable records fail closed.
	env.Records = func(context.Context) ([]*executor.Record, error) { return nil, errors.New("bucket unreachable") }
	if _, err := Up(context.Background(), env, Options{Cells: []string{"cell-a"}}); err == nil || !strings.Contains(err.Error(), "bucket unreachable") {
		t.Fatalf("unreadable records: %v", err)
	}
}
