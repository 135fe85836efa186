package driftview

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/drift"
	"github.com/cellctl/cellctl/internal/render"
)

// report is an audit of four cells, worst first: cell-b with a skewed key
// and a cloud change, cell-c behind the repository, two clean cells.
func report() *drift.Report {
	desired := drift.Finding{Kind: drift.KindCloud, Cell: "cell-b", Status: drift.StatusChanged, Type: "aws:ecs/service:Service",
		Resource: "cell-b-service", Property: "desiredCount", Old: "2", New: "7", Next: "cellctl up cell-b --refresh"}
	skew := drift.Finding{Kind: drift.KindSkew, Cell: "cell-b", Status: drift.StatusOutlier, Key: "taskCpu", Class: drift.MustEqual,
		Old: "512", New: "1024", Next: "set cells:taskCpu to 512 in stacks/Pulumi.cell-b.yaml"}
	behind := drift.Finding{Kind: drift.KindBehind, Cell: "cell-c", Status: drift.StatusChanged, Key: "image",
		Old: "registry.example.com/app:1.9.0", New: "registry.example.com/app:2.0.0", Next: "cellctl up cell-c"}
	return &drift.Report{
		Checks: []drift.Kind{drift.KindSkew, drift.KindBehind, drift.KindCloud},
		FailOn: []drift.Kind{drift.KindSkew, drift.KindBehind, drift.KindCloud},
		Cells: []drift.CellSummary{
			{Cell: "cell-b", Skew: 1, Cloud: 1, Deployed: "registry.example.com/app:2.0.0", Repo: "registry.example.com/app:2.0.0"},
			{Cell: "cell-c", Behind: 1, Deployed: "registry.example.com/app:1.9.0", Repo: "registry.example.com/app:2.0.0"},
			{Cell: "cell-a", Deployed: "registry.example.com/app:2.0.0", Repo: "registry.example.com/app:2.0.0"},
			{Cell: "cell-d", Deployed: "registry.example.com/app:2.0.0", Repo: "registry.example.com/app:2.0.0"},
		},
		Findings: []drift.Finding{skew, desired, behind},
		Skew: []drift.SkewRow{{Key: "taskCpu", Class: drift.MustEqual, Baseline: "512",
			Values: map[string]string{"cell-b": "1024"}, State: map[string]string{"cell-b": drift.StatusOutlier}}},
	}
}

func TestMarkdown(t *testing.T) {
	var md bytes.Buffer
	if err := Markdown(&md, report()); err != nil {
		t.Fatal(err)
	}
	// Each column bar read with one space either side, whatever the
	// padding (the table pads columns to their widest cell).
	out := regexp.MustCompile(` *\| *`).ReplaceAllString(md.String(), " | ")
	for _, want := range []string{
		"### ⚠️ cellctl drift: 2 of 4 cells need attention: 3 findings (skew, behind, cloud)",
		"#### cell-b: 2 findings",
		"| cloud | changed | `aws:ecs/service:Service cell-b-service desiredCount` | `2` → `7` |",
		"#### cell-c: 1 finding (runs `registry.example.com/app:1.9.0`, the repo has `registry.example.com/app:2.0.0`)",
		"- **Next** (`aws:ecs/service:Service cell-b-service desiredCount`): cellctl up cell-b --refresh",
		"| `taskCpu` | must_equal | `512` |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, "#### cell-b"), strings.Index(out, "#### cell-c"); i < 0 || j < i {
		t.Error("worst cell first in the markdown")
	}
	if strings.Contains(out, "#### cell-a") {
		t.Error("a clean cell has no findings section")
	}
}

func TestTable(t *testing.T) {
	var tbl bytes.Buffer
	if err := Table(&tbl, render.NewStyles(&tbl, false), report()); err != nil {
		t.Fatal(err)
	}
	out := tbl.String()
	for _, want := range []string{
		"cellctl drift: 2 of 4 cells need attention: 3 findings (skew, behind, cloud)",
		"cell-b  cloud   changed  aws:ecs/service:Service cell-b-service desiredCount  2 → 7",
		"cell-c  behind  changed  image",
		"What to do next",
		"cell-b cloud aws:ecs/service:Service cell-b-service desiredCount: cellctl up cell-b --refresh",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestHeadlineOfACleanAudit(t *testing.T) {
	r := &drift.Report{Checks: []drift.Kind{drift.KindSkew}, Cells: []drift.CellSummary{{Cell: "cell-a"}}}
	if got := Headline(r); got != "no drift in 1 cell (skew)" {
		t.Errorf("Headline = %q", got)
	}
}
