// Package observability exports the fleet's health model for teams on
// Prometheus and Grafana (`cellctl observability export --prometheus DIR`):
// a rules file of recording rules (per cell, and the worst cell) and
// alerting rules whose thresholds are the fleet's gate thresholds — the
// same ones the cells' CloudWatch alarms and the wave gate use — and a
// Grafana dashboard with one panel per signal, a `cell` variable and a
// worst-cell stat.
//
// The rules read the application's own HTTP metrics, which carry the cell
// as a label (the task exports CELL_ID and OTEL_RESOURCE_ATTRIBUTES=
// cell.id=<id>; docs/OBSERVABILITY.md says how the label gets onto the
// series). Metric and label names are options, so a team's own naming
// fits without editing the output.
package observability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cellctl/cellctl/internal/safefile"
	"github.com/cellctl/cellctl/waves/signal"
)

// Cell is what the export needs of one cell.
type Cell struct {
	ID         string
	Thresholds signal.Thresholds
	// AlarmMinutes is how long a threshold must fail before the alert
	// fires (cells:alarmEvalPeriods, one-minute periods, as the alarms).
	AlarmMinutes int
	// CapacityRPS is the published capacity (0: none, no capacity alert);
	// the warning fires above CapacityWarningPercent for
	// CapacityWarningMinutes.
	CapacityRPS            int
	CapacityWarningPercent int
	CapacityWarningMinutes int
}

// Options name the series the rules read.
type Options struct {
	// RequestsMetric is a counter of HTTP requests with a status-code
	// label (default http_server_requests_total).
	RequestsMetric string
	// CodeLabel is the status-code label (default code); 5xx is
	// CodeLabel=~"5..".
	CodeLabel string
	// DurationMetric is a histogram of request durations in seconds, the
	// name of its _bucket series without the suffix (default
	// http_server_request_duration_seconds).
	DurationMetric string
	// CellLabel is the label carrying the cell id (default cell).
	CellLabel string
	// Fleet names the fleet in titles and the dashboard uid.
	Fleet string
}

func (o Options) withDefaults() Options {
	if o.RequestsMetric == "" {
		o.RequestsMetric = "http_server_requests_total"
	}
	if o.CodeLabel == "" {
		o.CodeLabel = "code"
	}
	if o.DurationMetric == "" {
		o.DurationMetric = "http_server_request_duration_seconds"
	}
	if o.CellLabel == "" {
		o.CellLabel = "cell"
	}
	if o.Fleet == "" {
		o.Fleet = "cells"
	}
	return o
}

// The recorded series (the seeds' names).
const (
	RequestRate       = "cell:request_rate:5m"
	ErrorRate         = "cell:error_rate:5m"
	LatencyP99        = "cell:latency_p99:5m"
	CapacityRPS       = "cell:capacity_rps"
	CapacityLoad      = "cell:capacity_load:5m"
	WorstErrorRate    = "fleet:worst_cell_error_rate:5m"
	WorstLatencyP99   = "fleet:worst_cell_latency_p99:5m"
	WorstCapacityLoad = "fleet:worst_cell_capacity_load:5m"
	FleetErrorRate    = "fleet:error_rate:5m"
)

// Rule is one Prometheus rule (recording or alerting).
type Rule struct {
	Record      string            `yaml:"record,omitempty"`
	Alert       string            `yaml:"alert,omitempty"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

// Group is a rule group.
type Group struct {
	Name     string `yaml:"name"`
	Interval string `yaml:"interval,omitempty"`
	Rules    []Rule `yaml:"rules"`
}

// RuleFile is a Prometheus rules file.
type RuleFile struct {
	Groups []Group `yaml:"groups"`
}

// failOp is the PromQL comparison that holds exactly when a reading fails
// the threshold (the same mapping as the CloudWatch alarms').
func failOp(t signal.Threshold) string {
	switch t.Op {
	case signal.Below:
		return ">="
	case signal.AtMost:
		return ">"
	case signal.Above:
		return "<="
	case signal.AtLeast:
		return "<"
	}
	return ""
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// cellSelector matches the cells of one group by their label.
func cellSelector(label string, ids []string) string {
	sort.Strings(ids)
	return fmt.Sprintf(`{%s=~"%s"}`, label, strings.Join(ids, "|"))
}

// groupBy groups cells by a key, in key order, ids sorted.
func groupBy(cells []Cell, key func(Cell) (string, bool)) (keys []string, ids map[string][]string, first map[string]Cell) {
	ids, first = map[string][]string{}, map[string]Cell{}
	for _, c := range cells {
		k, ok := key(c)
		if !ok {
			continue
		}
		if _, seen := ids[k]; !seen {
			keys = append(keys, k)
			first[k] = c
		}
		ids[k] = append(ids[k], c.ID)
	}
	sort.Strings(keys)
	return keys, ids, first
}

// Rules builds the rules file.
func Rules(cells []Cell, o Options) RuleFile {
	o = o.withDefaults()
	cl := o.CellLabel
	rec := Group{Name: "cellctl-" + o.Fleet + "-cells", Interval: "1m", Rules: []Rule{
		{Record: RequestRate, Expr: fmt.Sprintf(`sum by (%s) (rate(%s[5m]))`, cl, o.RequestsMetric)},
		// A cell without traffic has no error rate (0/0 is no sample), as
		// the gate and `cellctl health` have none.
		{Record: ErrorRate, Expr: fmt.Sprintf(`sum by (%s) (rate(%s{%s=~"5.."}[5m])) / sum by (%s) (rate(%s[5m]))`, cl, o.RequestsMetric, o.CodeLabel, cl, o.RequestsMetric)},
		{Record: LatencyP99, Expr: fmt.Sprintf(`histogram_quantile(0.99, sum by (%s, le) (rate(%s_bucket[5m])))`, cl, o.DurationMetric)},
	}}
	// Published capacities, as series, so load is a per-cell ratio.
	for _, c := range cells {
		if c.CapacityRPS > 0 {
			rec.Rules = append(rec.Rules, Rule{Record: CapacityRPS, Expr: fmt.Sprintf("vector(%d)", c.CapacityRPS), Labels: map[string]string{cl: c.ID}})
		}
	}
	rec.Rules = append(rec.Rules, Rule{Record: CapacityLoad, Expr: fmt.Sprintf(`%s / on (%s) %s`, RequestRate, cl, CapacityRPS)})

	// The worst cell keeps its label (topk, not max): the headline names it.
	worst := Group{Name: "cellctl-" + o.Fleet + "-worst-cell", Interval: "1m", Rules: []Rule{
		{Record: WorstErrorRate, Expr: fmt.Sprintf("topk(1, %s)", ErrorRate)},
		{Record: WorstLatencyP99, Expr: fmt.Sprintf("topk(1, %s)", LatencyP99)},
		{Record: WorstCapacityLoad, Expr: fmt.Sprintf("topk(1, %s)", CapacityLoad)},
		// The fleet average, kept only to be shown next to the worst cell.
		{Record: FleetErrorRate, Expr: fmt.Sprintf(`sum(rate(%s{%s=~"5.."}[5m])) / sum(rate(%s[5m]))`, o.RequestsMetric, o.CodeLabel, o.RequestsMetric)},
	}}

	alerts := Group{Name: "cellctl-" + o.Fleet + "-alerts", Rules: nil}
	// CellHighErrorRate, one rule per distinct gate threshold: cells of
	// different waves may be held to different thresholds.
	s5 := signal.MustLookup(signal.ErrorRate5xx)
	keys, byKey, first := groupBy(cells, func(c Cell) (string, bool) {
		th := c.Thresholds.Get(signal.ErrorRate5xx)
		return fmt.Sprintf("%s %g %d", th.Op, th.Value, c.AlarmMinutes), th.IsSet()
	})
	for _, k := range keys {
		c := first[k]
		th := c.Thresholds.Get(signal.ErrorRate5xx)
		alerts.Rules = append(alerts.Rules, Rule{
			Alert: "CellHighErrorRate",
			Expr:  fmt.Sprintf("%s%s %s %s", ErrorRate, cellSelector(cl, byKey[k]), failOp(th), num(th.Value/100)),
			For:   fmt.Sprintf("%dm", max(c.AlarmMinutes, 1)),
			// The threshold as a label: cells held to different gates are
			// different rules, and the alert says which gate failed.
			Labels: map[string]string{"severity": "page", "source": "cellctl", "gate": s5.Format(th)},
			Annotations: map[string]string{
				"summary":     fmt.Sprintf("cell {{ $labels.%s }}: 5xx rate {{ $value | humanizePercentage }} fails the gate's %s", cl, s5.Format(th)),
				"description": "The wave gate (waves.yaml promote_if) would halt a rollout on this cell. Run `cellctl health {{ $labels." + cl + " }}`.",
			},
		})
	}
	sp := signal.MustLookup(signal.P99LatencyMs)
	keys, byKey, first = groupBy(cells, func(c Cell) (string, bool) {
		th := c.Thresholds.Get(signal.P99LatencyMs)
		return fmt.Sprintf("%s %g %d", th.Op, th.Value, c.AlarmMinutes), th.IsSet()
	})
	for _, k := range keys {
		c := first[k]
		th := c.Thresholds.Get(signal.P99LatencyMs)
		alerts.Rules = append(alerts.Rules, Rule{
			Alert:  "CellHighLatencyP99",
			Expr:   fmt.Sprintf("%s%s %s %s", LatencyP99, cellSelector(cl, byKey[k]), failOp(th), num(th.Value/1000)),
			For:    fmt.Sprintf("%dm", max(c.AlarmMinutes, 1)),
			Labels: map[string]string{"severity": "page", "source": "cellctl", "gate": sp.Format(th)},
			Annotations: map[string]string{
				"summary": fmt.Sprintf("cell {{ $labels.%s }}: p99 {{ $value | humanizeDuration }} fails the gate's %s", cl, sp.Format(th)),
			},
		})
	}
	keys, byKey, first = groupBy(cells, func(c Cell) (string, bool) {
		return fmt.Sprintf("%d %d", c.CapacityWarningPercent, c.CapacityWarningMinutes), c.CapacityRPS > 0
	})
	for _, k := range keys {
		c := first[k]
		alerts.Rules = append(alerts.Rules, Rule{
			Alert: "CellCapacityWarning",
			Expr:  fmt.Sprintf("%s%s > %s", CapacityLoad, cellSelector(cl, byKey[k]), num(float64(c.CapacityWarningPercent)/100)),
			For:   fmt.Sprintf("%dm", max(c.CapacityWarningMinutes, 1)),
			// Load is not a regression of a release: a ticket, not a page,
			// and the wave gate ignores it.
			Labels: map[string]string{"severity": "ticket", "source": "cellctl", "warning": fmt.Sprintf("> %d%% for %dm", c.CapacityWarningPercent, c.CapacityWarningMinutes)},
			Annotations: map[string]string{
				"summary":     fmt.Sprintf("cell {{ $labels.%s }} serves {{ $value | humanizePercentage }} of its published capacity (warning above %d%%)", cl, c.CapacityWarningPercent),
				"description": "Add a cell (`cellctl cell add`) or move tenants (`cellctl migrate`); `cellctl capacity` shows the table's view.",
			},
		})
	}
	// The worst-cell rule: whichever cell is worst, page on it even when
	// the fleet average looks fine — and say that the average hides it.
	if len(cells) > 0 {
		th := fleetThreshold(cells)
		alerts.Rules = append(alerts.Rules, Rule{
			Alert:  "FleetWorstCellErrorRate",
			Expr:   fmt.Sprintf("%s %s %s", WorstErrorRate, failOp(th), num(th.Value/100)),
			For:    "5m",
			Labels: map[string]string{"severity": "page", "source": "cellctl", "gate": s5.Format(th)},
			Annotations: map[string]string{
				"summary":     fmt.Sprintf("worst cell {{ $labels.%s }} at {{ $value | humanizePercentage }} 5xx (gate %s)", cl, s5.Format(th)),
				"description": fmt.Sprintf(`The fleet average is {{ with query "%s" }}{{ . | first | value | humanizePercentage }}{{ end }}: an average hides one bad cell.`, FleetErrorRate),
			},
		})
	}
	return RuleFile{Groups: []Group{rec, worst, alerts}}
}

// fleetThreshold is the strictest 5xx threshold in the fleet: the worst
// cell is judged by the bar no cell may fail.
func fleetThreshold(cells []Cell) signal.Threshold {
	var best signal.Threshold
	for _, c := range cells {
		th := c.Thresholds.Get(signal.ErrorRate5xx)
		if !th.IsSet() {
			continue
		}
		if !best.IsSet() || th.Value < best.Value || (th.Value == best.Value && th.Op == signal.Below) {
			best = th
		}
	}
	if !best.IsSet() {
		best = signal.MustLookup(signal.ErrorRate5xx).Default
	}
	return best
}

// YAML renders the rules file.
func (f RuleFile) YAML() ([]byte, error) {
	var b strings.Builder
	b.WriteString("# Generated by `cellctl observability export --prometheus`: do not edit;\n")
	b.WriteString("# re-run it after changing waves.yaml or a cell's capacity.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// Files written by Export.
const (
	RulesFile     = "cellctl-rules.yml"
	DashboardFile = "cellctl-grafana-dashboard.json"
)

// Export writes the rules file and the Grafana dashboard into dir
// (created if missing), each atomically (a temporary file renamed), and
// returns their paths.
func Export(dir string, cells []Cell, o Options) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rules, err := Rules(cells, o).YAML()
	if err != nil {
		return nil, err
	}
	dash, err := json.MarshalIndent(Dashboard(cells, o), "", "  ")
	if err != nil {
		return nil, err
	}
	var paths []string
	for name, data := range map[string][]byte{RulesFile: rules, DashboardFile: append(dash, '\n')} {
		p := filepath.Join(dir, name)
		if err := safefile.Write(p, data, 0o644); err != nil {
			return nil, fmt.Errorf("writing %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths, nil
}
