package plan

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	offline "github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/router/edge"
)

func TestPlanFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Output, f.Global.Parallel = "json", 2
	var got *PlanOptions
	cmd := NewCmdPlan(f, func(o *PlanOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"cell-a", "cell-b", "--resources"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || strings.Join(got.Stacks, ",") != "cell-a,cell-b" || !got.Resources || got.Parallel != 2 || got.View == nil {
		t.Fatalf("options = %+v", got)
	}
}

// An isolation violation is a finding: the report is printed, and the
// typed error makes main exit 2.
func TestPlanIsolationViolationIsAFinding(t *testing.T) {
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	fl.Cell("cell-b").Index = fl.Cell("cell-a").Index
	io, _, out, _ := iostreams.Test()
	view, _ := render.Pick(render.FormatTable, planTable, planJSON)
	err = planRun(context.Background(), &PlanOptions{IO: io, View: view, Parallel: 2,
		Fleet: func() (*fleet.Fleet, error) { return fl, nil }, Stacks: []string{"cell-a", "cell-b"}})
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || !strings.Contains(out.String(), "isolation: ") || !strings.Contains(out.String(), "violation(s)\n  - [") {
		t.Fatalf("err %v, stdout:\n%s", err, out.String())
	}
}

// TestPlanPrintsRuntimeWarnings: 90 days before the edge runtime's
// deprecation the plan warns (exit 0) in the table and in JSON.
func TestPlanPrintsRuntimeWarnings(t *testing.T) {
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	rt, _ := awsmodel.LookupLambdaRuntime(edge.Runtime)
	soon := func() time.Time { return rt.Deprecated.Add(-offline.RuntimeNoticeWindow) }
	for _, format := range []string{render.FormatTable, render.FormatJSON} {
		io, _, out, _ := iostreams.Test()
		view, _ := render.Pick(format, planTable, planJSON)
		err = planRun(context.Background(), &PlanOptions{IO: io, View: view, Parallel: 2, Now: soon,
			Fleet: func() (*fleet.Fleet, error) { return fl, nil }, Stacks: []string{fleet.RouterStack}})
		if err != nil {
			t.Fatalf("%s: a warning failed the plan: %v", format, err)
		}
		want := "warning: router: aws:lambda/function:Function \"router-edge\": Lambda runtime " + edge.Runtime
		if format == render.FormatJSON {
			want = `"warnings": [`
		}
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "deprecated from "+rt.Deprecated.Format("2006-01-02")) {
			t.Fatalf("%s: no runtime warning in:\n%s", format, out.String())
		}
	}
}

// TestPlanSaysALinkedRouterChangeTakesTheUnlinkSequence: the router's
// deployed state says the change touches a setting CloudFront locks on
// the linked primary; the plan says how up applies it (table and JSON),
// without failing. A plan of the cells alone does not ask.
func TestPlanSaysALinkedRouterChangeTakesTheUnlinkSequence(t *testing.T) {
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	const note = "the change touches priceClass of the primary CloudFront distribution E1, which CloudFront refuses while the continuous deployment policy cdp-1 links it: up applies it with the unlink sequence"
	asked := 0
	linked := func(context.Context, *fleet.Fleet) (string, error) { asked++; return note, nil }
	for _, format := range []string{render.FormatTable, render.FormatJSON} {
		io, _, out, _ := iostreams.Test()
		view, _ := render.Pick(format, planTable, planJSON)
		err = planRun(context.Background(), &PlanOptions{IO: io, View: view, Parallel: 2, LinkedChange: linked,
			Fleet: func() (*fleet.Fleet, error) { return fl, nil }, Stacks: []string{fleet.RouterStack}})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		want := "note: router: " + note
		if format == render.FormatJSON {
			want = `"notes": [`
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s: no unlink note in:\n%s", format, out.String())
		}
	}
	asked = 0
	io, _, _, _ := iostreams.Test()
	view, _ := render.Pick(render.FormatTable, planTable, planJSON)
	if err := planRun(context.Background(), &PlanOptions{IO: io, View: view, Parallel: 2, LinkedChange: linked,
		Fleet: func() (*fleet.Fleet, error) { return fl, nil }, Stacks: []string{"cell-a"}}); err != nil || asked != 0 {
		t.Errorf("a plan of cell-a: err %v, asked the router's state %d times", err, asked)
	}
}
