package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/plan"
)

// PlanOptions are the inputs of `cellctl plan`.
type PlanOptions struct {
	*Factory
	Stacks    []string
	Resources bool
	// Strict also runs every AWS rule of internal/awsmodel over every
	// resource (quotas, rules AWS enforces late, unmodelled types).
	Strict bool
}

// NewCmdPlan builds `cellctl plan`.
func NewCmdPlan(f *Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{Factory: f}
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
			if err := f.CheckOutput(FormatTable, FormatJSON); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return planRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Resources, "resources", false, "list every resource of each stack")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "also check every resource against every AWS rule cellctl knows")
	return cmd
}

func planRun(cmd *cobra.Command, opts *PlanOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	report, err := plan.Render(cmd.Context(), fl, plan.Options{Stacks: opts.Stacks, Parallel: opts.Global.Parallel})
	if err != nil {
		return err
	}
	var violations []awsmodel.Violation
	if opts.Strict {
		violations = report.Rules()
	}
	if opts.Global.Output == FormatJSON {
		doc := any(report)
		if opts.Strict {
			doc = struct {
				*plan.Report
				Rules []awsmodel.Violation `json:"rules"`
			}{report, append([]awsmodel.Violation{}, violations...)}
		}
		if err := renderJSON(opts.IO.Out, doc); err != nil {
			return err
		}
	} else {
		printPlan(opts, fl, report)
		if opts.Strict {
			printRules(opts, violations)
		}
	}
	if !report.Isolation.OK {
		return exitcode.With(exitcode.Findings, fmt.Errorf("isolation audit: %d violation(s)", len(report.Isolation.Violations)))
	}
	if len(violations) > 0 {
		return exitcode.With(exitcode.Findings, fmt.Errorf("AWS rules: %d violation(s)", len(violations)))
	}
	return nil
}

func printPlan(opts *PlanOptions, fl *fleet.Fleet, report *plan.Report) {
	s := opts.Styles()
	out := opts.IO.Out
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
	if opts.Resources {
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
		return
	}
	fmt.Fprintf(out, "isolation: %s\n", s.Bad(fmt.Sprintf("%d violation(s)", len(report.Isolation.Violations))))
	for _, v := range report.Isolation.Violations {
		fmt.Fprintf(out, "  - [%s] %s\n", v.Rule, v.String())
	}
}

// shape summarises what a stack runs, so sizing differences between cells
// stand out in the table.
func shape(fl *fleet.Fleet, st *plan.Stack) string {
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

func printRules(opts *PlanOptions, violations []awsmodel.Violation) {
	s, out := opts.Styles(), opts.IO.Out
	if len(violations) == 0 {
		fmt.Fprintf(out, "aws rules: %s (%d rules over every resource)\n", s.Good("ok"), len(awsmodel.Rules()))
		return
	}
	fmt.Fprintf(out, "aws rules: %s\n", s.Bad(fmt.Sprintf("%d violation(s)", len(violations))))
	for _, v := range violations {
		fmt.Fprintf(out, "  - %s\n", v.String())
	}
}
