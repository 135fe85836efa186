package e2e

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// dashboardLines is the cells drawn in the fleet dashboard's 5xx graphs
// (one per region, each with its own worst-cell line), as the simulated
// CloudWatch holds it after the router's up; worst is each graph's
// worst-cell expression, sorted.
func dashboardLines(t *testing.T, dir string) (cells []string, worst []string) {
	t.Helper()
	cloud, err := sim.Open(filepath.Join(dir, ".cellctl", "sim"))
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := cloud.Resources(sim.Filter{Stack: "router", Type: "cloudwatch/dashboard"})
	if len(ds) != 1 {
		t.Fatalf("%d dashboards in the router stack, want 1", len(ds))
	}
	var doc struct {
		Widgets []struct {
			Type       string `json:"type"`
			Properties struct {
				Title   string  `json:"title"`
				Metrics [][]any `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(ds[0].Inputs["dashboardBody"].(string)), &doc); err != nil {
		t.Fatal(err)
	}
	for _, w := range doc.Widgets {
		if w.Type != "metric" || w.Properties.Title[:3] != "5xx" {
			continue
		}
		for _, row := range w.Properties.Metrics {
			opts, _ := row[len(row)-1].(map[string]any)
			switch {
			case opts["id"] == "worst":
				e, _ := opts["expression"].(string)
				worst = append(worst, e)
			case opts["expression"] != nil:
				cells = append(cells, opts["label"].(string))
			}
		}
	}
	sort.Strings(cells)
	sort.Strings(worst)
	return cells, worst
}

// The fleet dashboard is created by the router's up on the simulated
// cloud (which checks its body as PutDashboard does) and rebuilt when a
// cell is drained: the drained cell's line leaves the graphs.
func TestHealthDashboardFollowsTheFleet(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	cells, worst := dashboardLines(t, dir)
	// The demo's cells a-c run in us-east-1, cell-d in us-west-2: a graph
	// (and a worst line) per region, since metric math reads one region.
	if !reflect.DeepEqual(cells, []string{"cell-a", "cell-b", "cell-c", "cell-d"}) || !reflect.DeepEqual(worst, []string{"MAX([c0, c1, c2])", "MAX([c0])"}) {
		t.Fatalf("after up: lines %v, worst %q", cells, worst)
	}
	mustRun(t, dir, "drain", "cell-d", "--now")
	cells, worst = dashboardLines(t, dir)
	if !reflect.DeepEqual(cells, []string{"cell-a", "cell-b", "cell-c"}) || !reflect.DeepEqual(worst, []string{"MAX([c0, c1, c2])"}) {
		t.Fatalf("after drain cell-d: lines %v, worst %q", cells, worst)
	}
}
