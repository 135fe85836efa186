package plan

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/netpath"
	"github.com/cellctl/cellctl/internal/outcome"
	offline "github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/render"
)

// `plan` on the demo fleet prints the network paths on one line after the
// access paths, and -o json carries them under networkPaths: the counts,
// the findings and the required paths (the denied forbidden ones only
// counted).
func TestPlanPrintsTheNetworkPaths(t *testing.T) {
	fl := loadDemo(t)
	out, err := run(t, fl, render.FormatTable, demoRender)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	const line = "network paths: ok (required: 48/48 allowed; forbidden: 44/44 denied)\n"
	i, j := strings.Index(out, "\npaths: "), strings.Index(out, line)
	if i < 0 || j < 0 || strings.Count(out[i+1:j], "\n") != 1 {
		t.Fatalf("want %q on the line after the paths line:\n%s", line, out)
	}

	js, err := run(t, fl, render.FormatJSON, demoRender)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		NetworkPaths *struct {
			OK        bool `json:"ok"`
			Required  struct{ Total, Met int }
			Forbidden struct{ Total, Met int }
			Findings  []netpath.Result `json:"findings"`
			Paths     []netpath.Result `json:"requiredPaths"`
			Forbids   json.RawMessage  `json:"forbiddenPaths"`
		} `json:"networkPaths"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.NetworkPaths == nil {
		t.Fatalf("plan -o json has no networkPaths: %v", err)
	}
	n := doc.NetworkPaths
	if !n.OK || n.Required.Total != 48 || n.Required.Met != 48 || n.Forbidden.Total != 44 || n.Forbidden.Met != 44 ||
		len(n.Findings) != 0 || len(n.Paths) != 48 || n.Forbids != nil {
		t.Fatalf("networkPaths: %+v", n)
	}
}

// A render whose service no longer admits its ALB prints the finding
// under the network paths line, names it in -o json and exits 2.
func TestPlanNetworkFindingExits2(t *testing.T) {
	broken := func(ctx context.Context, f *fleet.Fleet, opts offline.Options) (*offline.Report, error) {
		rep, err := offline.Render(ctx, f, opts)
		if err != nil {
			return nil, err
		}
		for _, s := range rep.Stacks {
			for _, r := range s.Recorded() {
				if r.Name == "cell-b-service-in-alb" {
					r.Inputs["referencedSecurityGroupId"] = resource.NewStringProperty("sg-0123456789abcdef0")
				}
			}
		}
		return rep, nil
	}
	fl := loadDemo(t)
	out, err := run(t, fl, render.FormatTable, broken)
	var findings *outcome.FindingsError
	if !errors.As(err, &findings) || !strings.Contains(err.Error(), "network paths: 1 finding(s)") {
		t.Fatalf("err = %v\n%s", err, out)
	}
	for _, want := range []string{
		"network paths: 1 finding(s) (required: 47/48 allowed; forbidden: 44/44 denied)\n",
		"  - [required] cell-b: ALB → task:8080: not allowed\n      no ingress rule of cell-b-service-sg admits the ALB (cell-b-alb-sg",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}
	js, _ := run(t, fl, render.FormatJSON, broken)
	var doc struct {
		NetworkPaths struct {
			OK       bool             `json:"ok"`
			Findings []netpath.Result `json:"findings"`
		} `json:"networkPaths"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.NetworkPaths.OK || len(doc.NetworkPaths.Findings) != 1 ||
		doc.NetworkPaths.Findings[0].Path != "cell-b: ALB → task:8080" {
		t.Fatalf("json: %v %+v", err, doc.NetworkPaths)
	}
}
