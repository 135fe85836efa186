package plan

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
)

// testNow is the plan tests' clock (the day this test was written): a
// plan's verdict on dated AWS rules must not depend on the day it runs.
func testNow() time.Time { return time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC) }

func at(s string) func() time.Time {
	return func() time.Time {
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			panic(err)
		}
		return t
	}
}

// TestEdgeRuntimeIsOneLambdaAccepts: the router's edge function renders
// today with no warning; Node.js 20, which it ran before, has been
// refused for new functions since 2026-08-31 and for updates since
// 2026-09-30, so every routing-table change would fail.
func TestEdgeRuntimeIsOneLambdaAccepts(t *testing.T) {
	report, err := Render(context.Background(), demoFleet(t), Options{Now: testNow, Stacks: []string{fleet.RouterStack}})
	if err != nil {
		t.Fatalf("the router does not render on %s: %v", testNow().Format("2006-01-02"), err)
	}
	if len(report.Warnings) != 0 {
		t.Fatalf("warnings on %s: %v", testNow().Format("2006-01-02"), report.Warnings)
	}
}

// TestPlanWarnsOfARuntimeNearItsDates and refuses it once Lambda blocks
// it: the edge function's runtime 90 days before its deprecation warns
// (the plan still passes), after its block-create date the render fails
// with Lambda's own error.
func TestPlanWarnsOfARuntimeNearItsDates(t *testing.T) {
	f := demoFleet(t)
	var edge awsmodel.LambdaRuntime
	report, err := Render(context.Background(), f, Options{Now: testNow, Stacks: []string{fleet.RouterStack}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range report.Stacks[0].recorded {
		if r.Type == awsmodel.FunctionType {
			edge, _ = awsmodel.LookupLambdaRuntime(r.Inputs["runtime"].StringValue())
		}
	}
	if edge.ID == "" {
		t.Fatal("no edge function in the router render")
	}
	early := edge.Deprecated.Add(-RuntimeNoticeWindow - 24*time.Hour)
	if report, err = Render(context.Background(), f, Options{Now: func() time.Time { return early }, Stacks: []string{fleet.RouterStack}}); err != nil || len(report.Warnings) != 0 {
		t.Fatalf("91 days before %s's deprecation: err %v, warnings %v; want neither", edge.ID, err, report.Warnings)
	}
	soon := edge.Deprecated.Add(-RuntimeNoticeWindow)
	report, err = Render(context.Background(), f, Options{Now: func() time.Time { return soon }, Stacks: []string{fleet.RouterStack}})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Warnings) != 1 || report.Warnings[0].Stack != fleet.RouterStack || !strings.Contains(report.Warnings[0].Message, edge.ID) ||
		!strings.Contains(report.Warnings[0].Message, "updates blocked from "+edge.BlockUpdate.Format("2006-01-02")) {
		t.Fatalf("90 days before %s's deprecation: warnings %v, want one for the router's edge function naming its dates", edge.ID, report.Warnings)
	}
	for _, v := range report.Rules() {
		t.Errorf("a warning is no violation: %s", v)
	}
	_, err = Render(context.Background(), f, Options{Now: func() time.Time { return edge.BlockCreate }, Stacks: []string{fleet.RouterStack}})
	if err == nil || !strings.Contains(err.Error(), "InvalidParameterValueException") || !strings.Contains(err.Error(), "runtime parameter of "+edge.ID) {
		t.Fatalf("on %s's block-create date: got %v, want Lambda's InvalidParameterValueException", edge.ID, err)
	}
}
