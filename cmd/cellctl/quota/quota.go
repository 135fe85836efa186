// Package quota is `cellctl quota`: the fleet's AWS quota headroom,
// counted in cells.
package quota

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/awsfacts"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/quota"
	"github.com/cellctl/cellctl/internal/render"
)

// Options are the inputs of `cellctl quota`.
type Options struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	// Targets reaches the cloud once and returns the AWS readers' target
	// of an account and region.
	Targets  func(ctx context.Context) (func(fleet.Access) awsapi.Target, error)
	View     render.View[*quota.Report]
	Parallel int

	AddCells int
}

// NewCmdQuota builds `cellctl quota`.
func NewCmdQuota(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Fleet: f.Fleet, Targets: targetsFunc(f)}
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Show AWS quota headroom per region, counted in cells",
		Long: `Audit every AWS quota the fleet consumes (docs/QUOTA.md), per region and for
the account: the limit (the applied value from Service Quotas, else AWS's
default), what the account uses (AWS/Usage metrics where AWS publishes
them, else the describe and list calls), what one cell costs (counted from
the cells' rendered plans: a per-AZ NAT cell takes 3 Elastic IPs, a single
NAT cell 1), the share in use and how many more cells fit.

A quota is critical at 90 % or when adding --add-cells N cells (each
costing what the region's costliest cell costs) would pass its limit, a
warning at 80 %. A limit or usage that cannot be read is reported unknown
with the reason, never as 0. Exit 2 on a critical quota or on an unknown
one that cells consume; every finding says what to do next.`,
		Example: `  cellctl quota
  cellctl quota --add-cells 2
  cellctl quota --cloud sim -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Parallel = f.Global.Parallel
			var err error
			if opts.View, err = render.Pick(f.Global.Output, tableView, jsonView); err != nil {
				return err
			}
			if opts.AddCells < 0 {
				return fmt.Errorf("--add-cells must be 0 or more, got %d", opts.AddCells)
			}
			if runF != nil {
				return runF(opts)
			}
			return quotaRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.AddCells, "add-cells", 0, "check that N more cells fit in every region")
	return cmd
}

// targetsFunc builds the audit's targets from the factory's cloud bundle:
// AWS's endpoints with the default credential chain, or the simulator's
// endpoint, each signed as the account's access (the role a cell's stack
// assumes).
func targetsFunc(f *cmdutil.Factory) func(ctx context.Context) (func(fleet.Access) awsapi.Target, error) {
	return func(ctx context.Context) (func(fleet.Access) awsapi.Target, error) {
		b, err := f.Cloud()
		if err != nil {
			return nil, err
		}
		probe, err := b.Target(ctx, quota.AccountRegion)
		if err != nil {
			return nil, err
		}
		return func(a fleet.Access) awsapi.Target { return b.AsAccess(probe, a) }, nil
	}
}

func quotaRun(ctx context.Context, opts *Options) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	target, err := opts.Targets(ctx)
	if err != nil {
		return err
	}
	rep, err := quota.Check(ctx, quota.Options{Fleet: fl, Target: target, AddCells: opts.AddCells, Parallel: opts.Parallel})
	if err != nil {
		return err
	}
	if err := opts.View.Render(opts.IO, rep); err != nil {
		return err
	}
	return rep.Err()
}

var jsonView = render.JSONFormat(func(r *quota.Report) any { return r })

var tableView = render.Format[*quota.Report]{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r *quota.Report) error {
	st := render.Out(io)
	// A fleet with cells in other accounts groups its rows by account:
	// each account has its own quotas.
	accounts := len(r.Accounts) > 0
	var rows [][]string
	for _, row := range r.Rows {
		cols := []string{row.Region, row.Code, row.Name + where(row), limitText(row), used(row), perCell(row),
			pct(row.PercentUsed), headroom(row), statusText(st, row.Status)}
		if accounts {
			cols = append([]string{fleet.Access{Account: row.Account}.AccountLabel()}, cols...)
		}
		rows = append(rows, cols)
	}
	headers := []string{"REGION", "QUOTA", "NAME", "LIMIT", "USED", "PER CELL", "% USED", "HEADROOM (CELLS)", "STATUS"}
	if accounts {
		headers = append([]string{"ACCOUNT"}, headers...)
	}
	fmt.Fprintln(io.Out, st.Table(headers, rows))
	if r.AddCells > 0 {
		fmt.Fprintf(io.Out, "checked adding %d cell(s) per region, each costing what the region's costliest cell costs\n", r.AddCells)
	}
	fmt.Fprintf(io.Out, "%d critical, %d warning, %d unknown\n", r.Critical, r.Warn, r.Unknown)
	for _, row := range r.Rows {
		if row.Status == quota.StatusOK || row.Status == quota.StatusNoLimit {
			continue
		}
		at := row.Region
		if row.Account != "" {
			at = "account " + row.Account + " " + row.Region
		}
		fmt.Fprintf(io.Out, "%s %s %s: %s\n", statusText(st, row.Status), at, row.Code, row.Reason)
		if row.Next != "" {
			fmt.Fprintf(io.Out, "  next: %s\n", row.Next)
		}
	}
	return nil
}}

func where(r quota.Row) string {
	if r.Where != "" {
		return " [" + r.Where + "]"
	}
	return ""
}

// perCell is what a cell costs, or — for a quota the router's edge
// function consumes — "router", with what its next publish adds.
func perCell(r quota.Row) string {
	if r.Consumer != "router" {
		return fmtF(r.PerCell)
	}
	if r.Adding > 0 && r.Code == awsfacts.LambdaCodeStorage.Code {
		// The next version, in MiB: a GiB figure would read 4.2e-05.
		return "router +" + strconv.FormatFloat(r.Adding*1024, 'f', 2, 64) + " MiB"
	}
	return "router"
}

func limitText(r quota.Row) string {
	switch {
	case r.LimitSource == "none":
		return "none"
	case r.Limit == nil:
		return "unknown"
	case r.LimitSource == "default":
		return fmtF(*r.Limit) + " (default)"
	case strings.HasPrefix(r.LimitSource, "10 × "):
		return fmtF(*r.Limit) + " (" + r.LimitSource + ")"
	}
	return fmtF(*r.Limit)
}

// used is the row's usage; code storage in GiB to three significant
// digits (a few MiB of code is 0.00013 GiB, not 0.000130572915077209).
func used(r quota.Row) string {
	if r.Used != nil && r.Code == awsfacts.LambdaCodeStorage.Code && *r.Used != 0 {
		return strconv.FormatFloat(*r.Used, 'g', 3, 64)
	}
	return num(r.Used)
}

func num(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return fmtF(*v)
}

func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', 1, 64) + "%"
}

func headroom(r quota.Row) string {
	if r.Headroom == nil {
		return "-"
	}
	return strconv.Itoa(*r.Headroom)
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func statusText(st *render.Styles, s quota.Status) string {
	switch s {
	case quota.StatusCritical, quota.StatusUnknown:
		return st.Bad(string(s))
	case quota.StatusWarn:
		return st.Warn(string(s))
	}
	return st.Good(string(s))
}
