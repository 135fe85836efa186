package stack

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
)

// up hands the quota check the cells it may create (this fake engine
// cannot tell which exist, so every selected cell counts as new) and a
// refusal stops it before any stack runs.
func TestUpRefusedByTheQuotaCheckRunsNothing(t *testing.T) {
	eng := &fakeEngine{}
	opts, _, _ := upOptions(t, eng, false)
	opts.Cells = []string{"cell-a"}
	var asked []string
	opts.QuotaCheck = func(_ context.Context, _ *fleet.Fleet, cells []string) error {
		asked = cells
		return &outcome.FindingsError{Count: 1, Err: errors.New("refusing to create cell-a")}
	}
	err := upRun(context.Background(), opts)
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) {
		t.Fatalf("up = %v, want the quota refusal (exit 2)", err)
	}
	if len(asked) != 1 || asked[0] != "cell-a" || len(eng.runs) != 0 {
		t.Errorf("asked %v, ran %v; want cell-a checked and nothing run", asked, eng.runs)
	}
}

func TestSkipQuotaCheckSaysSoLoudly(t *testing.T) {
	eng := &fakeEngine{}
	opts, _, errOut := upOptions(t, eng, false)
	opts.Cells = []string{"cell-a"}
	opts.SkipQuotaCheck = true
	opts.QuotaCheck = func(context.Context, *fleet.Fleet, []string) error {
		t.Error("the quota check ran despite --skip-quota-check")
		return nil
	}
	if err := upRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut.String(), "WARNING: --skip-quota-check") || len(eng.runs) != 1 {
		t.Errorf("stderr %q, runs %v", errOut.String(), eng.runs)
	}
}
