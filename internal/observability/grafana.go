package observability

import (
	"fmt"
	"strings"
)

// The Grafana dashboard, in Grafana's Classic dashboard JSON model (the
// format of dashboard import and grafana.com/dashboards; Grafana's
// "Dashboard JSON model" reference): one time-series panel per signal
// drawn per cell over the recorded series, a `cell` variable (multi-value,
// All by default) to pick cells, and worst-cell stats that name the cell.

// GrafanaSchemaVersion is the dashboard schema version written.
const GrafanaSchemaVersion = 39

// Dashboard builds the Grafana dashboard.
func Dashboard(cells []Cell, o Options) map[string]any {
	o = o.withDefaults()
	cl := o.CellLabel
	sel := fmt.Sprintf(`{%s=~"$cell"}`, cl)
	ds := map[string]any{"type": "prometheus", "uid": "${datasource}"}
	th := fleetThreshold(cells)
	target := func(expr, legend string) []map[string]any {
		return []map[string]any{{"refId": "A", "datasource": ds, "expr": expr, "legendFormat": legend}}
	}
	thresholdSteps := func(red float64) map[string]any {
		return map[string]any{"mode": "absolute", "steps": []map[string]any{
			{"color": "green", "value": nil}, {"color": "red", "value": red},
		}}
	}
	panel := func(id int, typ, title, desc, unit string, x, y, w, h int, targets []map[string]any, thresholds map[string]any) map[string]any {
		defaults := map[string]any{"unit": unit}
		if thresholds != nil {
			defaults["thresholds"] = thresholds
		}
		p := map[string]any{
			"id": id, "type": typ, "title": title, "description": desc, "datasource": ds,
			"gridPos":     map[string]any{"x": x, "y": y, "w": w, "h": h},
			"targets":     targets,
			"fieldConfig": map[string]any{"defaults": defaults, "overrides": []any{}},
			"options":     map[string]any{},
		}
		if typ == "timeseries" {
			p["options"] = map[string]any{"legend": map[string]any{"displayMode": "table", "placement": "right", "calcs": []string{"max", "lastNotNull"}}}
			defaults["custom"] = map[string]any{"thresholdsStyle": map[string]any{"mode": "dashed"}}
		}
		if typ == "stat" {
			p["options"] = map[string]any{"reduceOptions": map[string]any{"calcs": []string{"lastNotNull"}, "fields": "", "values": false}, "textMode": "value_and_name", "colorMode": "background"}
		}
		return p
	}
	legend := "{{" + cl + "}}"
	panels := []map[string]any{
		panel(1, "stat", "Worst cell: 5xx rate", "The cell with the highest 5xx rate right now (topk(1)): a fleet average would hide it.", "percentunit", 0, 0, 8, 4,
			target(WorstErrorRate, legend), thresholdSteps(th.Value/100)),
		panel(2, "stat", "Worst cell: p99 latency", "The cell with the slowest p99 right now.", "s", 8, 0, 8, 4,
			target(WorstLatencyP99, legend), nil),
		panel(3, "stat", "Fleet average 5xx (what hides the worst cell)", "Shown only next to the worst cell: compare.", "percentunit", 16, 0, 8, 4,
			target(FleetErrorRate, "fleet"), thresholdSteps(th.Value/100)),
		panel(4, "timeseries", "Requests per second by cell", "", "reqps", 0, 4, 12, 8,
			target(RequestRate+sel, legend), nil),
		panel(5, "timeseries", "5xx rate by cell", "Thresholds: the gate's error_rate_5xx (waves.yaml promote_if).", "percentunit", 12, 4, 12, 8,
			target(ErrorRate+sel, legend), thresholdSteps(th.Value/100)),
		panel(6, "timeseries", "p99 latency by cell", "", "s", 0, 12, 12, 8,
			target(LatencyP99+sel, legend), nil),
		panel(7, "timeseries", "Load vs published capacity by cell", "CellCapacityWarning fires above the warning share for its minutes.", "percentunit", 12, 12, 12, 8,
			target(CapacityLoad+sel, legend), thresholdSteps(capacityWarning(cells))),
	}
	ids := make([]string, 0, len(cells))
	for _, c := range cells {
		ids = append(ids, c.ID)
	}
	return map[string]any{
		"id":            nil,
		"uid":           "cellctl-" + o.Fleet,
		"title":         "cellctl fleet " + o.Fleet + ": worst cell first",
		"description":   "Per-cell health from the rules cellctl exports (" + strings.Join(ids, ", ") + ").",
		"tags":          []string{"cellctl", "cells"},
		"timezone":      "utc",
		"editable":      true,
		"graphTooltip":  1,
		"schemaVersion": GrafanaSchemaVersion,
		"version":       1,
		"refresh":       "1m",
		"time":          map[string]any{"from": "now-3h", "to": "now"},
		"timepicker":    map[string]any{},
		"links":         []any{},
		"annotations":   map[string]any{"list": []any{}},
		"panels":        panels,
		"templating": map[string]any{"list": []map[string]any{
			{"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus", "current": map[string]any{}, "hide": 0},
			{
				"name": "cell", "label": "cell", "type": "query", "datasource": ds,
				"query":      map[string]any{"query": fmt.Sprintf("label_values(%s, %s)", RequestRate, cl), "refId": "cells"},
				"definition": fmt.Sprintf("label_values(%s, %s)", RequestRate, cl),
				"refresh":    2, "multi": true, "includeAll": true, "sort": 1,
				"current": map[string]any{"selected": true, "text": []string{"All"}, "value": []string{"$__all"}},
			},
		}},
	}
}

func capacityWarning(cells []Cell) float64 {
	pct := 80
	for _, c := range cells {
		if c.CapacityRPS > 0 && c.CapacityWarningPercent > 0 {
			pct = min(pct, c.CapacityWarningPercent)
		}
	}
	return float64(pct) / 100
}
