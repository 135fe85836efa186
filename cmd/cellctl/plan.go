package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/exitcode"
	"github.com/cellctl/cellctl/internal/plan"
)

// PlanOptions are the inputs of `cellctl plan`.
type PlanOptions struct {
	*Factory
	Stacks    []string
	Resources bool
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

Exits 2 when the isolation audit finds a violation.`,
		Example: `  cellctl plan
  cellctl plan cell-a -o json
  cellctl plan --resources cell-b`,
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
	if opts.Global.Output == FormatJSON {
		if err := renderJSON(opts.IO.Out, report); err != nil {
			return err
		}
	} else {
		printPlan(opts, report)
	}
	if !report.Isolation.OK {
		return exitcode.With(exitcode.Findings, fmt.Errorf("isolation audit: %d violation(s)", len(report.Isolation.Violations)))
	}
	return nil
}

func printPlan(opts *PlanOptions, report *plan.Report) {
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
		rows = append(rows, []string{st.Name, st.Kind, index, cidr, st.Region, fmt.Sprint(len(st.Resources)), kindsSummary(st)})
	}
	fmt.Fprint(out, s.Table([]string{"STACK", "KIND", "INDEX", "CIDR", "REGION", "RESOURCES", "TYPES"}, rows))
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

// kindsSummary lists the stack's resource types briefly: "vpc×1 subnet×9 …".
func kindsSummary(st *plan.Stack) string {
	counts := st.Counts()
	names := make([]string, 0, len(counts))
	for t := range counts {
		names = append(names, t)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, t := range names {
		short := t
		if i := strings.LastIndex(t, ":"); i >= 0 {
			short = t[i+1:]
		}
		parts = append(parts, fmt.Sprintf("%s×%d", short, counts[t]))
	}
	s := strings.Join(parts, " ")
	if len(s) > 60 {
		s = fmt.Sprintf("%d types", len(names))
	}
	return s
}
