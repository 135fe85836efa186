package component_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router/component"
)

const typeDashboard = "aws:cloudwatch/dashboard:Dashboard"

type dashboardDoc struct {
	Widgets []struct {
		Type       string         `json:"type"`
		Width      int            `json:"width"`
		Properties map[string]any `json:"properties"`
	} `json:"widgets"`
}

// series is what one metric widget draws: visible line labels (in order),
// and the worst-cell expression.
func series(t *testing.T, props map[string]any) (labels []string, exprs map[string]string, worst string) {
	t.Helper()
	exprs = map[string]string{}
	for _, m := range props["metrics"].([]any) {
		row := m.([]any)
		opts, _ := row[len(row)-1].(map[string]any)
		if opts["visible"] == false {
			continue
		}
		if opts["id"] == "worst" {
			worst = opts["expression"].(string)
			continue
		}
		label := opts["label"].(string)
		labels = append(labels, label)
		if e, ok := opts["expression"].(string); ok {
			exprs[label] = e
		}
	}
	return labels, exprs, worst
}

func dashboardOf(t *testing.T, r *routerRun) dashboardDoc {
	t.Helper()
	d := r.one(t, typeDashboard)
	body := str(in(d, "dashboardBody"))
	if errs := awsmodel.ValidateDashboardBody(body); len(errs) != 0 {
		t.Fatalf("PutDashboard would refuse the body: %v", errs)
	}
	var doc dashboardDoc
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("dashboard body is not JSON: %v", err)
	}
	if got := str(in(d, "dashboardName")); got != "cellctl-cells-fleet" {
		t.Errorf("dashboard name %q", got)
	}
	return doc
}

// Under mocks, through the real fleet program: one line per routed cell
// in every signal's graph, a worst-cell line over exactly those lines, and
// every cell's alarms in the status widget; a drained cell has none.
func TestFleetDashboardOneSeriesPerRoutedCell(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fleet func(*testing.T) *fleet.Fleet
		cells []string
	}{
		{"demo table", demoFleet, []string{"cell-a", "cell-b", "cell-c", "cell-d"}},
		// Drained: no traffic, no line. Draining: still serving, so drawn.
		{"cell-d drained, cell-c draining", drainedFleet, []string{"cell-a", "cell-b", "cell-c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fleet(t)
			doc := dashboardOf(t, mustRunRouter(t, f))
			// A graph per signal and region: metric math combines only
			// series of one region, so each region has its own worst line.
			graphs := map[string][]map[string]any{}
			var alarms []string
			for _, w := range doc.Widgets {
				switch w.Type {
				case "metric":
					k := strings.SplitN(w.Properties["title"].(string), " ", 2)[0]
					graphs[k] = append(graphs[k], w.Properties)
				case "alarm":
					for _, a := range w.Properties["alarms"].([]any) {
						alarms = append(alarms, a.(string))
					}
				}
			}
			for title, fn := range map[string]string{"5xx": "MAX", "p99": "MAX", "healthy": "MIN", "requests": "MAX"} {
				if len(graphs[title]) == 0 {
					t.Fatalf("no %s graph; graphs %v", title, graphs)
				}
				var all []string
				for _, props := range graphs[title] {
					labels, exprs, worst := series(t, props)
					all = append(all, labels...)
					ids := make([]string, len(labels))
					for i := range ids {
						ids[i] = fmt.Sprintf("c%d", i)
					}
					if want := fn + "([" + strings.Join(ids, ", ") + "])"; worst != want {
						t.Errorf("%s worst line %q, want %q", title, worst, want)
					}
					if title == "5xx" && exprs[labels[0]] != "100 * (FILL(t0, 0) + FILL(e0, 0)) / r0" {
						t.Errorf("%s 5xx line %q", labels[0], exprs[labels[0]])
					}
				}
				sort.Strings(all)
				if !reflect.DeepEqual(all, tc.cells) {
					t.Errorf("%s lines %v, want one per routed cell %v", title, all, tc.cells)
				}
			}
			// The 5xx graphs read each cell by its own load balancer.
			lbs := map[string]bool{}
			for _, props := range graphs["5xx"] {
				for _, m := range props["metrics"].([]any) {
					row := m.([]any)
					if len(row) > 2 && row[1] == "RequestCount" {
						lbs[row[3].(string)] = true
					}
				}
			}
			for _, c := range tc.cells {
				if !lbs["app/"+c+"-alb/0123456789abcdef"] {
					t.Errorf("5xx graphs read %v, want each cell's albArnSuffix", lbs)
				}
			}
			var want []string
			for _, c := range tc.cells {
				for _, s := range []string{"5xx-rate", "p99-latency", "unhealthy-tasks"} {
					// In the cell's own region (cell-d is in us-west-2).
					want = append(want, "arn:aws:cloudwatch:"+f.Cell(c).Region+":123456789012:alarm:cellctl-cells-"+c+"-"+s) // the demo project "cells" prefixes every alarm
				}
			}
			sort.Strings(want)
			sort.Strings(alarms)
			if !reflect.DeepEqual(alarms, want) {
				t.Errorf("alarm widget %v, want %v", alarms, want)
			}
		})
	}
}

// The pure generator: a cell in another region names it on its metrics; a
// capacity alarm is listed; more than 100 alarms take several widgets; a
// cell without dimensions is refused with the next command.
func TestDashboardBodyGenerator(t *testing.T) {
	var cells []component.DashboardCell
	for i := 0; i < 30; i++ {
		id := fmt.Sprintf("cell-%02d", i)
		cells = append(cells, component.DashboardCell{Cell: id, Region: "us-east-1", LoadBalancer: "app/" + id + "/1", TargetGroup: "targetgroup/" + id + "/2",
			AlarmNames: []string{"cellctl-" + id + "-5xx-rate", "cellctl-" + id + "-p99-latency", "cellctl-" + id + "-unhealthy-tasks", "cellctl-" + id + "-capacity-warning"}})
	}
	cells[3].Region = "eu-west-1"
	cells[4].Account = "222233334444"
	body, err := component.DashboardBody(component.DashboardSpec{Region: "us-east-1", Account: "123456789012", Cells: cells})
	if err != nil {
		t.Fatal(err)
	}
	if errs := awsmodel.ValidateDashboardBody(body); len(errs) != 0 {
		t.Fatalf("invalid body: %v", errs)
	}
	var doc dashboardDoc
	_ = json.Unmarshal([]byte(body), &doc)
	alarmWidgets, alarms := 0, 0
	for _, w := range doc.Widgets {
		if w.Type == "alarm" {
			alarmWidgets++
			alarms += len(w.Properties["alarms"].([]any))
		}
	}
	if alarmWidgets != 2 || alarms != 120 {
		t.Errorf("%d alarm widgets with %d alarms, want 2 with 120", alarmWidgets, alarms)
	}
	if !strings.Contains(body, `"arn:aws:cloudwatch:eu-west-1:123456789012:alarm:cellctl-cell-03-5xx-rate"`) ||
		!strings.Contains(body, `"id":"c0","label":"cell-03","region":"eu-west-1"`) || !strings.Contains(body, `"label":"worst cell in eu-west-1","region":"eu-west-1"`) {
		t.Errorf("the eu-west-1 cell is not read in its region")
	}
	// A cell in another account: its alarms live there, the others' in
	// the router's account.
	if !strings.Contains(body, `"arn:aws:cloudwatch:us-east-1:222233334444:alarm:cellctl-cell-04-5xx-rate"`) ||
		strings.Contains(body, `"arn:aws:cloudwatch:us-east-1:123456789012:alarm:cellctl-cell-04-`) ||
		!strings.Contains(body, `"arn:aws:cloudwatch:us-east-1:123456789012:alarm:cellctl-cell-05-5xx-rate"`) {
		t.Errorf("cell-04's alarms are not named in its own account 222233334444 (or cell-05's not in the router's)")
	}

	cells[5].LoadBalancer = ""
	if _, err := component.DashboardBody(component.DashboardSpec{Region: "us-east-1", Account: "1", Cells: cells}); err == nil || !strings.Contains(err.Error(), "run `cellctl up cell-05` first") {
		t.Errorf("missing dimensions: %v", err)
	}
	// No routed cell at all: a valid dashboard with the header only.
	body, err = component.DashboardBody(component.DashboardSpec{Region: "us-east-1", Account: "123456789012"})
	if err != nil || len(awsmodel.ValidateDashboardBody(body)) != 0 || strings.Contains(body, `"metric"`) {
		t.Errorf("empty fleet: %v %s", err, body)
	}
}

// BenchmarkDashboardBody100Cells: the body of a 100-cell fleet (the router
// program generates it on every preview and up).
func BenchmarkDashboardBody100Cells(b *testing.B) {
	var cells []component.DashboardCell
	for i := 0; i < 100; i++ {
		id := fmt.Sprintf("cell-%03d", i)
		cells = append(cells, component.DashboardCell{Cell: id, Region: "us-east-1", LoadBalancer: "app/" + id + "/1", TargetGroup: "targetgroup/" + id + "/2",
			AlarmNames: []string{"cellctl-" + id + "-5xx-rate", "cellctl-" + id + "-p99-latency", "cellctl-" + id + "-unhealthy-tasks"}})
	}
	spec := component.DashboardSpec{Region: "us-east-1", Account: "123456789012", Cells: cells}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := component.DashboardBody(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// A 256-cell fleet over three regions: every graph stays within
// CloudWatch's 500 metrics and expressions (hidden ones count; the 5xx
// panel needs four per cell), every cell is drawn once per signal, and
// each worst-cell line combines only series of its own region.
func TestFleetDashboardAt256CellsOverThreeRegions(t *testing.T) {
	regions := []string{"us-east-1", "eu-west-1", "ap-southeast-2"}
	var cells []component.DashboardCell
	for i := 0; i < 256; i++ {
		id := fmt.Sprintf("cell-%03d", i)
		cells = append(cells, component.DashboardCell{Cell: id, Region: regions[i%3],
			LoadBalancer: "app/" + id + "/0123", TargetGroup: "targetgroup/" + id + "/4567", AlarmNames: []string{id + "-5xx"}})
	}
	body, err := component.DashboardBody(component.DashboardSpec{Region: "us-east-1", Account: "123456789012", Cells: cells})
	if err != nil {
		t.Fatal(err)
	}
	if errs := awsmodel.ValidateDashboardBody(body); len(errs) != 0 {
		t.Fatalf("PutDashboard would refuse the 256-cell body: %v", errs)
	}
	var doc struct {
		Widgets []struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	drawn := map[string]map[string]int{} // signal → cell → lines
	for _, w := range doc.Widgets {
		if w.Type != "metric" {
			continue
		}
		title := w.Properties["title"].(string)
		metrics := w.Properties["metrics"].([]any)
		if len(metrics) > awsmodel.MaxGraphMetrics {
			t.Errorf("%s: %d metrics and expressions, CloudWatch allows %d", title, len(metrics), awsmodel.MaxGraphMetrics)
		}
		signal := strings.SplitN(title, " ", 2)[0]
		if drawn[signal] == nil {
			drawn[signal] = map[string]int{}
		}
		seen := map[string]bool{}
		for _, m := range metrics {
			row := m.([]any)
			opts := row[len(row)-1].(map[string]any)
			r, _ := opts["region"].(string)
			if r == "" {
				r = "us-east-1"
			}
			seen[r] = true
			if v, ok := opts["visible"].(bool); (!ok || v) && opts["id"] != "worst" {
				drawn[signal][opts["label"].(string)]++
			}
		}
		if len(seen) != 1 {
			t.Errorf("%s mixes regions %v in one metric math graph", title, seen)
		}
	}
	for _, s := range []string{"5xx", "p99", "healthy", "requests"} {
		if len(drawn[s]) != 256 {
			t.Errorf("%s: %d cells drawn, want 256", s, len(drawn[s]))
		}
		for c, n := range drawn[s] {
			if n != 1 {
				t.Errorf("%s: %s drawn %d times", s, c, n)
			}
		}
	}
}
