package apply

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
)

// The quota check sees exactly the cells that were never deployed, and
// its refusal stops the up before any stack runs.
func TestUpChecksQuotaOfNewCellsBeforeAnyRun(t *testing.T) {
	d := &deployedEngine{outputs: map[string]map[string]any{"cell-a": {"cellId": "a"}, "cell-b": {"cellId": "b"}, "router": {"distributionId": "E123"}}}
	env := deployedEnv(t, d)
	var asked []string
	refusal := &outcome.FindingsError{Count: 1, Err: errors.New("refusing to create cell-c")}
	env.QuotaCheck = func(_ context.Context, cells []string) error { asked = cells; return refusal }
	_, err := Up(context.Background(), env, Options{})
	if !errors.Is(err, refusal) {
		t.Fatalf("up returned %v, want the quota refusal", err)
	}
	if want := []string{"cell-c", "cell-d"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("quota check asked about %v, want the never-deployed cells %v", asked, want)
	}
	if len(d.runs) != 0 || d.prepared != 0 {
		t.Errorf("after a quota refusal the engine ran %v (prepared %d), want nothing", d.runs, d.prepared)
	}
}

func TestUpOfDeployedCellsSkipsTheQuotaCheck(t *testing.T) {
	d := &deployedEngine{outputs: map[string]map[string]any{"cell-a": {"cellId": "a"}}}
	env := deployedEnv(t, d)
	env.QuotaCheck = func(context.Context, []string) error { t.Error("quota check called for a deployed cell"); return nil }
	if _, err := Up(context.Background(), env, Options{Cells: []string{"cell-a"}}); err != nil {
		t.Fatal(err)
	}
	if len(d.runs) != 1 {
		t.Errorf("runs = %v, want cell-a's up", d.runs)
	}
}

func TestQuotaCheckFailsClosedWhenExistenceIsUnknown(t *testing.T) {
	d := &deployedEngine{readErr: errors.New("backend unreachable")}
	env := deployedEnv(t, d)
	env.QuotaCheck = func(context.Context, []string) error { return nil }
	// immutable() reports the read error first: either way nothing runs.
	if _, err := Up(context.Background(), env, Options{Cells: []string{"cell-a"}}); err == nil {
		t.Fatal("up with an unreadable backend passed")
	}
	if len(d.runs) != 0 {
		t.Errorf("runs = %v, want none", d.runs)
	}
}

// A cell whose first up failed part way has a stack with no outputs: it is
// still new to the quota check, every later up checks it again (it was
// skipped as "deployed" once its stack existed).
func TestHalfCreatedCellIsQuotaCheckedAgain(t *testing.T) {
	d := &deployedEngine{outputs: map[string]map[string]any{"cell-a": {}}}
	env := deployedEnv(t, d)
	var asked []string
	refusal := &outcome.FindingsError{Count: 1, Err: errors.New("refusing to create cell-a")}
	env.QuotaCheck = func(_ context.Context, cells []string) error { asked = cells; return refusal }
	if _, err := Up(context.Background(), env, Options{Cells: []string{"cell-a"}}); !errors.Is(err, refusal) {
		t.Fatalf("up returned %v, want the quota refusal", err)
	}
	if !reflect.DeepEqual(asked, []string{"cell-a"}) || len(d.runs) != 0 {
		t.Errorf("asked %v, runs %v: the half-created cell must be checked before it runs again", asked, d.runs)
	}
}

// accessEngine is a deployedEngine that refuses the accounts of some
// stacks, as cloud.Bundle.CheckAccess does for a role it cannot assume.
type accessEngine struct {
	*deployedEngine
	refuse string
	asked  []string
}

func (a *accessEngine) CheckAccess(_ context.Context, _ *fleet.Fleet, stacks []string) error {
	a.asked = stacks
	if slices.Contains(stacks, a.refuse) {
		return errors.New(a.refuse + ": IAM Role (arn:aws:iam::222233334444:role/deploy) cannot be assumed")
	}
	return nil
}

// One cell whose role cannot be assumed refuses the whole up before any
// stack runs: no other cell is touched, nothing is created.
func TestUpRefusesAnUnreachableAccountBeforeAnyRun(t *testing.T) {
	d := &deployedEngine{outputs: map[string]map[string]any{"cell-a": {"cellId": "a"}}}
	a := &accessEngine{deployedEngine: d, refuse: "cell-c"}
	env := deployedEnv(t, d)
	env.Engine = func() (Engine, error) { return a, nil }
	env.QuotaCheck = func(context.Context, []string) error {
		t.Error("the quota check ran after an access refusal")
		return nil
	}
	_, err := Up(context.Background(), env, Options{})
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "role/deploy") {
		t.Fatalf("up returned %v, want a refusal naming the role", err)
	}
	if !slices.Contains(a.asked, "cell-c") || !slices.Contains(a.asked, "router") {
		t.Errorf("access checked for %v, want every stack of the run", a.asked)
	}
	if len(d.runs) != 0 || d.prepared != 0 {
		t.Errorf("after an access refusal the engine ran %v (prepared %d), want nothing", d.runs, d.prepared)
	}
}
