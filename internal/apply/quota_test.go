package apply

import (
	"context"
	"errors"
	"reflect"
	"testing"

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
