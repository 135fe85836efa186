// Package plan holds `cellctl plan`: the offline render of the fleet's
// stacks and the isolation audit, no engine involved.
package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	offline "github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/render"
)

// PlanOptions are the inputs of `cellctl plan`.
type PlanOptions struct {
	IO       *iostreams.IOStreams
	Fleet    func() (*fleet.Fleet, error)
	View     render.View[*Rendered]
	Parallel int

	Stacks    []string
	Resources bool
	// Strict also runs every AWS rule of internal/awsmodel over every
	// resource (quotas, rules AWS enforces late, unmodelled types).
	Strict bool
}

// Rendered is what `cellctl plan` shows: the offline render of the
// fleet's stacks.
type Rendered struct {
	Fleet  *fleet.Fleet
	Report *offline.Report
	// Resources lists every resource of each stack in the table.
	Resources bool
	// Strict: every AWS rule ran over every resource; Violations is what
	// they found.
	Strict     bool
	Violations []awsmodel.Violation
	// QuotaIncreases are the adjustable quotas the rendered stacks need
	// above AWS's defaults, summed per region and account (strict only):
	// requests to make before the first up, not violations.
	QuotaIncreases []offline.QuotaIncrease
}

var (
	planJSON = render.JSONFormat(func(r *Rendered) any {
		if !r.Strict {
			return r.Report
		}
		return struct {
			*offline.Report
			Rules          []awsmodel.Violation    `json:"rules"`
			QuotaIncreases []offline.QuotaIncrease `json:"quotaIncreases"`
		}{r.Report, append([]awsmodel.Violation{}, r.Violations...), append([]offline.QuotaIncrease{}, r.QuotaIncreases...)}
	})
	planTable = render.Format[*Rendered]{Name: render.FormatTable, Render: printPlan}
)

// NewCmdPlan builds `cellctl plan`.
func NewCmdPlan(f *cmdutil.Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{IO: f.IO, Fleet: f.Fleet}
	cmd := &cobra.Command{
		Use:   "plan [stack...]",
		Short: "Render the fleet's stacks offline and audit cell isolation",
		Long: `Render every stack of the fleet (or the named ones) by running the real
Pulumi program under mocks: no pulumi CLI, no cloud, no credentials. Reports
each stack's resources and checks that no cell references another cell and
that no two cells share address space.

With --strict, also runs every AWS rule cellctl knows (name and charset
limits, tags, quotas such as security group rules, engine versions,
Lambda@Edge limits, certificates for HTTPS origins and aliases) over every
resource, each finding citing its AWS document.

Exits 2 when the isolation audit (or, with --strict, an AWS rule) finds a
violation.`,
		Example: `  cellctl plan
  cellctl plan cell-a -o json
  cellctl plan --resources cell-b
  cellctl plan --strict`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Stacks = args
			opts.Parallel = f.Global.Parallel
			var err error
			if opts.View, err = render.Pick(f.Global.Output, planTable, planJSON); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return planRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Resources, "resources", false, "list every resource of each stack")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "also check every resource against every AWS rule cellctl knows")
	return cmd
}

func planRun(ctx context.Context, opts *PlanOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	report, err := offline.Render(ctx, fl, offline.Options{Stacks: opts.Stacks, Parallel: opts.Parallel})
	if err != nil {
		return err
	}
	shown := &Rendered{Fleet: fl, Report: report, Resources: opts.Resources, Strict: opts.Strict}
	if opts.Strict {
		shown.Violations = report.Rules()
		shown.QuotaIncreases = report.JudgeQuotas().Increases
	}
	if err := opts.View.Render(opts.IO, shown); err != nil {
		return err
	}
	if !report.Isolation.OK {
		return outcome.Findings(fmt.Errorf("isolation audit: %d violation(s)", len(report.Isolation.Violations)))
	}
	if len(shown.Violations) > 0 {
		return outcome.Findings(fmt.Errorf("AWS rules: %d violation(s)", len(shown.Violations)))
	}
	return nil
}

func printPlan(io *iostreams.IOStreams, r *Rendered) error {
	fl, report := r.Fleet, r.Report
	s := render.Out(io)
	out := io.Out
	var rows [][]string
	total := 0
	for _, st := range report.Stacks {
		index, cidr := "-", "-"
		if st.Index != nil {
			index = fmt.Sprint(*st.Index)
			cidr = st.CIDR
		}
		total += len(st.Resources)
		rows = append(rows, []string{st.Name, st.Kind, index, cidr, st.Region, fmt.Sprint(len(st.Resources)), shape(fl, st)})
	}
	fmt.Fprint(out, s.Table([]string{"STACK", "KIND", "INDEX", "CIDR", "REGION", "RESOURCES", "SHAPE"}, rows))
	if r.Resources {
		for _, st := range report.Stacks {
			fmt.Fprintf(out, "\n%s\n", s.Bold(st.Name))
			var rr [][]string
			for _, r := range st.Resources {
				rr = append(rr, []string{r.Type, r.Name, r.Parent})
			}
			fmt.Fprint(out, s.Table([]string{"TYPE", "NAME", "PARENT"}, rr))
		}
	}
	fmt.Fprintf(out, "\n%d stacks, %d resources\n", len(report.Stacks), total)
	if report.Isolation.OK {
		fmt.Fprintf(out, "isolation: %s (no cell references another cell; no overlapping CIDRs)\n", s.Good("ok"))
	} else {
		fmt.Fprintf(out, "isolation: %s\n", s.Bad(fmt.Sprintf("%d violation(s)", len(report.Isolation.Violations))))
		for _, v := range report.Isolation.Violations {
			fmt.Fprintf(out, "  - [%s] %s\n", v.Rule, v.String())
		}
	}
	if r.Strict {
		printRules(io, r.Violations)
		printIncreases(io, r.QuotaIncreases)
	}
	return nil
}

// shape summarises what a stack runs, so sizing differences between cells
// stand out in the table.
func shape(fl *fleet.Fleet, st *offline.Stack) string {
	if c := fl.Cell(st.Name); c != nil {
		return fmt.Sprintf("nat=%s db=%d×%s cache=%d×%s tasks=%d×%d/%d",
			c.NATMode, c.AuroraInstances, strings.TrimPrefix(c.AuroraInstanceClass, "db."),
			c.CacheNodes, strings.TrimPrefix(c.CacheNodeType, "cache."), c.DesiredCount, c.TaskCPU, c.TaskMemory)
	}
	if st.Name == fleet.RouterStack && fl.Routing != nil {
		return fmt.Sprintf("table v%d, %d buckets, %d overrides", fl.Routing.Version(), fl.Routing.Buckets(), len(fl.Routing.Overrides()))
	}
	return fmt.Sprintf("%d types", len(st.Counts()))
}

func printRules(io *iostreams.IOStreams, violations []awsmodel.Violation) {
	s, out := render.Out(io), io.Out
	if len(violations) == 0 {
		fmt.Fprintf(out, "aws rules: %s (%d rules over every resource)\n", s.Good("ok"), len(awsmodel.Rules()))
		return
	}
	fmt.Fprintf(out, "aws rules: %s\n", s.Bad(fmt.Sprintf("%d violation(s)", len(violations))))
	for _, v := range violations {
		fmt.Fprintf(out, "  - %s\n", v.String())
	}
}

// printIncreases lists the adjustable quotas the fleet needs raised: AWS's
// defaults are what an account starts with, so these are requests to make
// before the first up (which reads the applied values and refuses when
// one is still short).
func printIncreases(io *iostreams.IOStreams, incs []offline.QuotaIncrease) {
	if len(incs) == 0 {
		return
	}
	out := io.Out
	fmt.Fprintf(out, "quota increases needed (above AWS's defaults, summed per region; `up` checks the applied values): %d\n", len(incs))
	for _, q := range incs {
		fmt.Fprintf(out, "  - %s\n", q.String())
	}
}
