package plan

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	offline "github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/props"
	"github.com/cellctl/cellctl/internal/render"
)

// withLatest renders the fleet, then points the primary distribution's
// Lambda@Edge association at $LATEST.
func withLatest(ctx context.Context, f *fleet.Fleet, opts offline.Options) (*offline.Report, error) {
	r, err := offline.Render(ctx, f, opts)
	if err != nil {
		return nil, err
	}
	for _, s := range r.Stacks {
		for _, res := range s.Recorded() {
			if res.Name != "router-cdn" {
				continue
			}
			in := props.Plain(res.Inputs)
			a := in["defaultCacheBehavior"].(map[string]any)["lambdaFunctionAssociations"].([]any)[0].(map[string]any)
			arn := a["lambdaArn"].(string)
			a["lambdaArn"] = arn[:strings.LastIndex(arn, ":")] + ":$LATEST"
			res.Inputs = resource.NewPropertyMapFromMap(in)
		}
	}
	return r, nil
}

// An edge path CloudFront cannot take is a paths finding in plan's
// table ([edge]), its JSON ("edge") and its markdown.
func TestPlanShowsEdgeFindings(t *testing.T) {
	const want = "router: CloudFront (router/cdn) runs the edge function's published version and reaches the cells over HTTPS: router/cdn's origin-request association names "
	out, err := run(t, loadDemo(t), render.FormatTable, withLatest)
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || !strings.Contains(out, "  - [edge] "+want) {
		t.Fatalf("table: err %v\n%s", err, out)
	}
	out, _ = run(t, loadDemo(t), render.FormatJSON, withLatest)
	var doc struct {
		Paths struct {
			OK   bool     `json:"ok"`
			Edge []string `json:"edge"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Paths.OK || len(doc.Paths.Edge) != 1 || !strings.HasPrefix(doc.Paths.Edge[0], want) {
		t.Fatalf("json: %+v", doc.Paths)
	}
	io, _, stdout, _ := iostreams.Test()
	view, err := render.Pick(render.FormatMarkdown, planTable, planJSON, planMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	fl := loadDemo(t)
	_ = planRun(context.Background(), &PlanOptions{IO: io, View: view, Parallel: 2, Render: withLatest,
		Backend: func(string) string { return "s3://acme-cellctl-state" },
		Fleet:   func() (*fleet.Fleet, error) { return fl, nil }})
	if !strings.Contains(stdout.String(), "- "+want) {
		t.Fatalf("markdown:\n%s", stdout.String())
	}
}
