package observability

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/waves/signal"
)

func testCells() []Cell {
	gate := signal.Defaults()
	gate.ErrorRate5xx = signal.Threshold{Op: signal.Below, Value: 0.5}
	gate.P99LatencyMs = signal.Threshold{Op: signal.Below, Value: 400}
	var cells []Cell
	for _, id := range []string{"cell-a", "cell-b", "cell-c", "cell-d"} {
		cells = append(cells, Cell{ID: id, Thresholds: gate, AlarmMinutes: 3, CapacityRPS: 50, CapacityWarningPercent: 80, CapacityWarningMinutes: 10})
	}
	// A wave with a looser gate gets its own alert rule.
	cells[3].Thresholds.ErrorRate5xx = signal.Threshold{Op: signal.AtMost, Value: 1}
	return cells
}

// promtool finds the real promtool. It is skipped only off CI: in CI
// (.ci/run installs Debian's prometheus package) a missing promtool fails.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("promtool is required in CI (.ci/run installs Debian's prometheus package): %v", err)
		}
		t.Skip("promtool not installed (apt-get install prometheus); CI runs this test")
	}
	return p
}

func export(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	paths, err := Export(dir, testCells(), Options{Fleet: "cells"})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || filepath.Base(paths[0]) != DashboardFile || filepath.Base(paths[1]) != RulesFile {
		t.Fatalf("paths %v", paths)
	}
	return dir
}

// The real promtool accepts the rules file.
func TestPromtoolChecksTheRules(t *testing.T) {
	bin := promtool(t)
	dir := export(t)
	out, err := exec.Command(bin, "check", "rules", filepath.Join(dir, RulesFile)).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	// promtool exits 0 on lint findings: read its verdict too.
	if !strings.Contains(string(out), "SUCCESS") || strings.Contains(string(out), "FAILED") || strings.Contains(string(out), "lint") {
		t.Errorf("promtool output:\n%s", out)
	}
	// And refuses a broken one: the check is real.
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(bad, []byte("groups:\n- name: x\n  rules:\n  - record: cell:error_rate:5m\n    expr: sum by (cell) (rate(x[5m])\n"), 0o644)
	if out, err := exec.Command(bin, "check", "rules", bad).CombinedOutput(); err == nil {
		t.Fatalf("promtool accepted a broken rule:\n%s", out)
	}
}

// The rules do what they say, under promtool's own rule unit tests: four
// cells, cell-b at 1 % 5xx, the rest clean. The fleet's rate (0.25 %)
// passes the gate's "< 0.5%"; CellHighErrorRate and the worst-cell alert
// fire on cell-b anyway, the worst-cell series names it, and a cell at
// 90 % of its capacity gets CellCapacityWarning after 10 minutes.
func TestPromtoolUnitTestsTheRules(t *testing.T) {
	bin := promtool(t)
	dir := export(t)
	series := func(cell, code string, perMin int) map[string]string {
		return map[string]string{"series": fmt.Sprintf(`http_server_requests_total{cell=%q,code=%q}`, cell, code), "values": fmt.Sprintf("0+%dx40", perMin)}
	}
	input := []map[string]string{
		series("cell-a", "200", 600), series("cell-b", "200", 594), series("cell-b", "500", 6),
		series("cell-c", "200", 2700), series("cell-d", "200", 600),
	}
	// cell-c's 2700/min = 45 req/s: 90 % of 50.
	page := map[string]string{"severity": "page", "source": "cellctl"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			out[a] = b
		}
		return out
	}
	test := map[string]any{
		"rule_files":          []string{RulesFile},
		"evaluation_interval": "1m",
		"tests": []map[string]any{{
			"interval":     "1m",
			"input_series": input,
			"alert_rule_test": []map[string]any{
				{"eval_time": "20m", "alertname": "CellHighErrorRate", "exp_alerts": []map[string]any{{
					"exp_labels": with(with(page, "gate", "< 0.5%"), "cell", "cell-b"),
					"exp_annotations": map[string]string{
						"summary":     "cell cell-b: 5xx rate 1% fails the gate's < 0.5%",
						"description": "The wave gate (waves.yaml promote_if) would halt a rollout on this cell. Run `cellctl health cell-b`.",
					},
				}}},
				{"eval_time": "20m", "alertname": "FleetWorstCellErrorRate", "exp_alerts": []map[string]any{{
					"exp_labels": with(with(page, "gate", "< 0.5%"), "cell", "cell-b"),
					"exp_annotations": map[string]string{
						"summary":     "worst cell cell-b at 1% 5xx (gate < 0.5%)",
						"description": "The fleet average is 0.1333%: an average hides one bad cell.",
					},
				}}},
				{"eval_time": "8m", "alertname": "CellCapacityWarning", "exp_alerts": []any{}},
				{"eval_time": "20m", "alertname": "CellCapacityWarning", "exp_alerts": []map[string]any{{
					"exp_labels": map[string]string{"severity": "ticket", "source": "cellctl", "cell": "cell-c", "warning": "> 80% for 10m"},
					"exp_annotations": map[string]string{
						"summary":     "cell cell-c serves 90% of its published capacity (warning above 80%)",
						"description": "Add a cell (`cellctl cell add`) or move tenants (`cellctl migrate`); `cellctl capacity` shows the table's view.",
					},
				}}},
			},
			"promql_exp_test": nil,
			"promql_expr_test": []map[string]any{
				{"expr": WorstErrorRate, "eval_time": "20m", "exp_samples": []map[string]any{{"labels": WorstErrorRate + `{cell="cell-b"}`, "value": 0.01}}},
				{"expr": RequestRate + `{cell="cell-c"}`, "eval_time": "20m", "exp_samples": []map[string]any{{"labels": RequestRate + `{cell="cell-c"}`, "value": 45}}},
			},
		}},
	}
	delete(test["tests"].([]map[string]any)[0], "promql_exp_test")
	data, _ := yaml.Marshal(test)
	p := filepath.Join(dir, "test.yml")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "test", "rules", p).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s\n--- rules\n%s", err, out, mustRead(t, filepath.Join(dir, RulesFile)))
	}
}

func mustRead(t *testing.T, p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// Thresholds come from the gate: one CellHighErrorRate rule per distinct
// threshold, each selecting its cells, with the comparison that fails it.
func TestAlertThresholdsFromTheGate(t *testing.T) {
	f := Rules(testCells(), Options{})
	var high []Rule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "CellHighErrorRate" {
				high = append(high, r)
			}
		}
	}
	sort.Slice(high, func(i, j int) bool { return high[i].Expr < high[j].Expr })
	want := []string{
		`cell:error_rate:5m{cell=~"cell-a|cell-b|cell-c"} >= 0.005`,
		`cell:error_rate:5m{cell=~"cell-d"} > 0.01`,
	}
	if len(high) != 2 || high[0].Expr != want[0] || high[1].Expr != want[1] || high[0].For != "3m" {
		t.Fatalf("CellHighErrorRate rules %+v, want %v", high, want)
	}
	// Other metric names and labels are options.
	f = Rules(testCells()[:1], Options{RequestsMetric: "app_requests_total", CodeLabel: "status", CellLabel: "cell_id", DurationMetric: "app_latency_seconds"})
	rec := f.Groups[0].Rules
	if rec[1].Expr != `sum by (cell_id) (rate(app_requests_total{status=~"5.."}[5m])) / sum by (cell_id) (rate(app_requests_total[5m]))` ||
		rec[2].Expr != `histogram_quantile(0.99, sum by (cell_id, le) (rate(app_latency_seconds_bucket[5m])))` {
		t.Errorf("renamed series: %+v", rec)
	}
}

// The Grafana dashboard against the Classic JSON model's keys: the
// dashboard's fields, each panel's, the variables'.
func TestGrafanaDashboardSchema(t *testing.T) {
	dir := export(t)
	var d map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(dir, DashboardFile))), &d); err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"id": true, "uid": true, "title": true, "description": true, "tags": true, "timezone": true, "editable": true,
		"graphTooltip": true, "panels": true, "time": true, "timepicker": true, "templating": true, "annotations": true, "refresh": true,
		"schemaVersion": true, "version": true, "links": true}
	for k := range d {
		if !allowed[k] {
			t.Errorf("dashboard key %q is not in Grafana's JSON model", k)
		}
	}
	for _, k := range []string{"uid", "title", "panels", "templating", "schemaVersion", "time"} {
		if _, ok := d[k]; !ok {
			t.Errorf("dashboard lacks %q", k)
		}
	}
	if d["schemaVersion"] != float64(GrafanaSchemaVersion) {
		t.Errorf("schemaVersion %v", d["schemaVersion"])
	}
	panelKeys := map[string]bool{"id": true, "type": true, "title": true, "description": true, "datasource": true, "gridPos": true,
		"targets": true, "fieldConfig": true, "options": true}
	types := map[string]int{}
	ids := map[float64]bool{}
	exprs := map[string]bool{}
	for _, p := range d["panels"].([]any) {
		p := p.(map[string]any)
		for k := range p {
			if !panelKeys[k] {
				t.Errorf("panel key %q", k)
			}
		}
		types[p["type"].(string)]++
		id := p["id"].(float64)
		if ids[id] {
			t.Errorf("duplicate panel id %v", id)
		}
		ids[id] = true
		g := p["gridPos"].(map[string]any)
		if g["w"].(float64) < 1 || g["x"].(float64)+g["w"].(float64) > 24 || g["h"].(float64) < 1 {
			t.Errorf("panel %v gridPos %v outside the 24-column grid", p["title"], g)
		}
		for _, tg := range p["targets"].([]any) {
			tg := tg.(map[string]any)
			if tg["refId"] == "" || tg["expr"] == "" {
				t.Errorf("target %v", tg)
			}
			exprs[tg["expr"].(string)] = true
		}
	}
	if types["timeseries"] != 4 || types["stat"] != 3 {
		t.Errorf("panel types %v: one time series per signal, worst-cell stats", types)
	}
	for _, e := range []string{`cell:request_rate:5m{cell=~"$cell"}`, `cell:error_rate:5m{cell=~"$cell"}`, `cell:latency_p99:5m{cell=~"$cell"}`, `cell:capacity_load:5m{cell=~"$cell"}`, WorstErrorRate} {
		if !exprs[e] {
			t.Errorf("no panel reads %s (have %v)", e, exprs)
		}
	}
	vars := d["templating"].(map[string]any)["list"].([]any)
	var cell map[string]any
	for _, v := range vars {
		v := v.(map[string]any)
		for _, k := range []string{"name", "type"} {
			if _, ok := v[k]; !ok {
				t.Errorf("variable lacks %s: %v", k, v)
			}
		}
		if v["name"] == "cell" {
			cell = v
		}
	}
	if cell == nil || cell["type"] != "query" || cell["multi"] != true || cell["includeAll"] != true ||
		cell["definition"] != "label_values(cell:request_rate:5m, cell)" {
		t.Errorf("cell variable %v", cell)
	}
}
