// Package observability is `cellctl observability export`: the fleet's
// health rules and dashboard for Prometheus and Grafana
// (internal/observability does the work).
package observability

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	obs "github.com/cellctl/cellctl/internal/observability"
	"github.com/cellctl/cellctl/internal/render"
)

// ExportOptions are the inputs of `cellctl observability export`.
type ExportOptions struct {
	IO     *iostreams.IOStreams
	Fleet  func() (*fleet.Fleet, error)
	View   render.View[ExportDoc]
	Dir    string
	Series obs.Options
}

// ExportDoc is what was written (-o json).
type ExportDoc struct {
	Files []string `json:"files"`
	Cells []string `json:"cells"`
}

var exportFormats = []render.Format[ExportDoc]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, d ExportDoc) error {
		for _, f := range d.Files {
			if _, err := fmt.Fprintf(io.Out, "wrote %s\n", f); err != nil {
				return err
			}
		}
		_, err := fmt.Fprintf(io.Out, "check with: promtool check rules %s\n", d.Files[len(d.Files)-1])
		return err
	}},
	render.JSONFormat(func(d ExportDoc) any { return d }),
}

// NewCmdObservability builds `cellctl observability` and its export verb.
func NewCmdObservability(f *cmdutil.Factory, runF func(*ExportOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "observability", Short: "Export the fleet's health model to other monitoring systems"}
	opts := &ExportOptions{IO: f.IO, Fleet: f.Fleet}
	export := &cobra.Command{
		Use:   "export --prometheus DIR",
		Short: "Write Prometheus recording/alerting rules and a Grafana dashboard for the fleet",
		Long: `Write into DIR, for teams on Prometheus and Grafana:

  cellctl-rules.yml               recording rules cell:request_rate:5m,
                                  cell:error_rate:5m, cell:latency_p99:5m,
                                  cell:capacity_load:5m and the worst cell
                                  (fleet:worst_cell_*:5m, topk so it keeps
                                  the cell label); alerts CellHighErrorRate,
                                  CellHighLatencyP99, CellCapacityWarning and
                                  FleetWorstCellErrorRate
  cellctl-grafana-dashboard.json  one panel per signal by cell, a cell
                                  variable, worst-cell stats

Thresholds are the fleet's gate thresholds (waves.yaml promote_if, the same
as the cells' CloudWatch alarms) and each cell's capacity warning
(cells:capacityRequestsPerSecond, capacityWarningPercent/Minutes). The rules
read the application's own HTTP metrics labelled with the cell; name them
with the flags below. Re-run after changing waves.yaml or a capacity.`,
		Example: `  cellctl observability export --prometheus deploy/prometheus
  cellctl observability export --prometheus out --requests-metric http_requests_total --cell-label cell_id`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Dir == "" {
				return errors.New("--prometheus DIR is required: the directory to write the rules and dashboard into")
			}
			var err error
			if opts.View, err = render.Pick(f.Global.Output, exportFormats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return exportRun(opts)
		},
	}
	fl := export.Flags()
	fl.StringVar(&opts.Dir, "prometheus", "", "directory to write the Prometheus rules and the Grafana dashboard into")
	fl.StringVar(&opts.Series.RequestsMetric, "requests-metric", "http_server_requests_total", "counter of HTTP requests, with a status code label")
	fl.StringVar(&opts.Series.CodeLabel, "code-label", "code", "the status code label of --requests-metric")
	fl.StringVar(&opts.Series.DurationMetric, "duration-metric", "http_server_request_duration_seconds", "histogram of request durations in seconds (without _bucket)")
	fl.StringVar(&opts.Series.CellLabel, "cell-label", "cell", "the label that carries the cell id")
	cmd.AddCommand(export)
	return cmd
}

// cells is the export's view of the fleet.
func cells(fl *fleet.Fleet) []obs.Cell {
	out := make([]obs.Cell, 0, len(fl.Cells))
	for _, c := range fl.Cells {
		out = append(out, obs.Cell{ID: c.ID, Thresholds: c.Thresholds(), AlarmMinutes: c.AlarmEvalPeriods,
			CapacityRPS: c.CapacityRPS, CapacityWarningPercent: c.CapacityWarningPercent, CapacityWarningMinutes: c.CapacityWarningMinutes})
	}
	return out
}

// exportRun writes the files.
func exportRun(o *ExportOptions) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	series := o.Series
	series.Fleet = fl.Project
	paths, err := obs.Export(o.Dir, cells(fl), series)
	if err != nil {
		return err
	}
	return o.View.Render(o.IO, ExportDoc{Files: paths, Cells: fl.CellIDs()})
}
