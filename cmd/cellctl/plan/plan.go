// Package plan holds `cellctl plan`: the offline render of the fleet's
// stacks and the isolation audit, no engine involved.
package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/isolation"
	"github.com/cellctl/cellctl/internal/netpath"
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

	// Backend is the Pulumi backend URL of the fleet at dir (the state
	// backend part of the shared-parts ledger; nothing is opened).
	Backend func(dir string) string
	// Render renders the fleet offline (internal/plan's Render; tests wrap
	// it to add resources to the render).
	Render func(ctx context.Context, f *fleet.Fleet, opts offline.Options) (*offline.Report, error)

	// LinkedChange says how up applies a router change that touches a
	// setting CloudFront locks on the deployed, linked primary
	// (engine.RouterLinkedChange; "": none); nil: not asked.
	LinkedChange func(ctx context.Context, f *fleet.Fleet) (string, error)

	Stacks    []string
	Resources bool
	// Strict also runs every AWS rule of internal/awsmodel over every
	// resource (quotas, rules AWS enforces late, unmodelled types).
	Strict bool
	// Now is the clock AWS's dated rules judge at (a Lambda runtime's
	// deprecation dates); nil: time.Now.
	Now func() time.Time
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
	// Ledger is the shared-parts ledger (a render of the whole fleet only;
	// nil otherwise).
	Ledger *isolation.Ledger
	// Paths are the access paths: every required path allowed, every
	// forbidden one denied (a render of the whole fleet only).
	Paths *access.Report
	// NetworkPaths are the network paths: every required path open, every
	// forbidden one closed (a render of the whole fleet only).
	NetworkPaths *netpath.Report
	// Notes say how the rendered change will be applied where that is not
	// one update: a router change CloudFront refuses on the linked primary
	// goes through the unlink sequence.
	Notes []string
}

// planDoc is `plan -o json`: the report, and the ledger when the whole
// fleet was rendered.
type planDoc struct {
	*offline.Report
	Ledger       *isolation.Ledger `json:"ledger,omitempty"`
	Paths        *pathsDoc         `json:"paths,omitempty"`
	NetworkPaths *networkPathsDoc  `json:"networkPaths,omitempty"`
	Notes        []string          `json:"notes,omitempty"`
}

// networkPathsDoc is the network paths section of `plan -o json`: the
// counts, the findings first, then every required path with what decides
// it. The forbidden paths are counted, and listed only when they are
// findings (open): they grow with the square of the cells (about 67,000
// at 256), and a denied one carries nothing to act on — as the access
// paths' section does.
type networkPathsDoc struct {
	OK            bool             `json:"ok"`
	Required      countDoc         `json:"required"`
	Forbidden     countDoc         `json:"forbidden"`
	Findings      []netpath.Result `json:"findings"`
	RequiredPaths []netpath.Result `json:"requiredPaths"`
}

func newNetworkPathsDoc(r *netpath.Report) *networkPathsDoc {
	if r == nil {
		return nil
	}
	allowed, required, denied, forbidden := r.Counts()
	return &networkPathsDoc{OK: r.OK(), Required: countDoc{required, allowed}, Forbidden: countDoc{forbidden, denied},
		Findings: append([]netpath.Result{}, r.Findings()...), RequiredPaths: append([]netpath.Result{}, r.Required...)}
}

// pathsDoc is the paths section of `plan -o json`: the counts, the
// findings first, every required path, and the forbidden paths that some
// Allow statement could reach (the rest are denied with nothing allowing
// them; `cellctl access check` asks about any one).
type pathsDoc struct {
	OK        bool            `json:"ok"`
	Required  countDoc        `json:"required"`
	Forbidden countDoc        `json:"forbidden"`
	Findings  []access.Result `json:"findings"`
	Keys      []string        `json:"keys"`
	Actions   []string        `json:"actions"`
	Redrives  []string        `json:"redrives"`
	Edge      []string        `json:"edge"`
	Paths     []access.Result `json:"requiredPaths"`
	// Evaluated counts the forbidden paths some Allow statement could
	// reach, each evaluated in full; nothing allows the rest.
	Evaluated int `json:"forbiddenEvaluated"`
	// CrossAccount counts the forbidden paths of the cross-account
	// family: data of a resource tried from another account (what
	// stacks/shared.yaml declares is left out).
	CrossAccount int `json:"forbiddenCrossAccount"`
}

type countDoc struct {
	Total int `json:"total"`
	Met   int `json:"met"`
}

func newPathsDoc(r *access.Report) *pathsDoc {
	if r == nil {
		return nil
	}
	allowed, required, denied, forbidden := r.Counts()
	return &pathsDoc{OK: r.OK(), Keys: r.Keys, Actions: r.Actions, Redrives: r.Redrives, Edge: append([]string{}, r.Edge...), Required: countDoc{required, allowed}, Forbidden: countDoc{forbidden, denied},
		Findings: append([]access.Result{}, r.Findings()...), Paths: r.Required, Evaluated: r.Forbidden.Evaluated,
		CrossAccount: r.Forbidden.CrossAccount}
}

var (
	planJSON = render.JSONFormat(func(r *Rendered) any {
		doc := planDoc{r.Report, r.Ledger, newPathsDoc(r.Paths), newNetworkPathsDoc(r.NetworkPaths), r.Notes}
		if !r.Strict {
			return doc
		}
		return struct {
			planDoc
			Rules          []awsmodel.Violation    `json:"rules"`
			QuotaIncreases []offline.QuotaIncrease `json:"quotaIncreases"`
		}{doc, append([]awsmodel.Violation{}, r.Violations...), append([]offline.QuotaIncrease{}, r.QuotaIncreases...)}
	})
	planTable    = render.Format[*Rendered]{Name: render.FormatTable, Render: printPlan}
	planMarkdown = render.Format[*Rendered]{Name: render.FormatMarkdown, Render: markdownPlan}
)

// NewCmdPlan builds `cellctl plan`.
func NewCmdPlan(f *cmdutil.Factory, runF func(*PlanOptions) error) *cobra.Command {
	opts := &PlanOptions{IO: f.IO, Fleet: f.Fleet, Render: offline.Render,
		Backend: func(dir string) string { return engine.BackendURL(f.Global.Backend, dir) },
		LinkedChange: func(ctx context.Context, fl *fleet.Fleet) (string, error) {
			eng, err := f.Engine(fl, nil)
			if err != nil {
				return "", err
			}
			return eng.RouterLinkedChange(ctx)
		}}
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

Rendering the whole fleet (no stack names) also prints the shared-parts
ledger: every part more than one cell depends on — the router's
distributions and edge function, the fleet bucket, the DNS zones, the
origin-verify secret, the region, the account, the state backend… —
whether its failure fails requests (request-path) or only blocks changes
(control-plane), and the share of tenants it reaches. The fleet declares
its deliberate shared parts in stacks/shared.yaml; a shared part it does
not declare is a finding.

It also proves the fleet's access paths from its own policies (identity,
bucket, queue, key and trust policies, evaluated the way AWS documents):
every path a cell and the router need (declared by the cell template and
the router component) must be Allowed, and every path from one cell's
roles to another cell's data, queues, keys, roles, database and cache
users, or to the router's key and bucket administration, must be denied,
and so must every role's reach of the data of a resource in another
account than its own, except the parts stacks/shared.yaml declares.
An undecidable path is a finding too. 'cellctl access check' asks about
one request.

And it decides the network paths from the rendered security groups,
route tables, NAT and internet gateways, VPC endpoints, network ACLs and
managed prefix lists: each cell's CloudFront → ALB:443, ALB → task port,
task → database, cache and (HTTPS) SQS, ECR, CloudWatch Logs and S3 through
its gateway endpoint, migrator → database must be open; any path between
two cells' VPCs (peering, transit gateway, routes, rules naming the other
cell), the internet straight to a task, database or cache, and a database
or cache in a subnet routed to an internet gateway must be closed.

-o markdown prints the plan as one pull-request comment.

Warns of a Lambda function whose runtime is within 90 days of its
deprecation or of the dates Lambda blocks creating and updating functions
on it; a runtime Lambda already blocks fails the render, as it fails the
create.

When the router is deployed and the change touches a setting CloudFront
refuses to change on a distribution linked by a continuous deployment
policy (price class, viewer domains and certificate, HTTP version), a note
says so, read from the router's deployed state: up applies such a change
with the unlink sequence (detach the policy from the primary distribution,
apply the change, attach the policy again).

Exits 2 when the isolation audit (or, with --strict, an AWS rule) finds a
violation, an access or network path is not as required, or a shared part
is not declared.`,
		Example: `  cellctl plan
  cellctl plan cell-a -o json
  cellctl plan --resources cell-b
  cellctl plan --strict
  cellctl plan -o markdown`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Stacks = args
			opts.Parallel = f.Global.Parallel
			var err error
			if opts.View, err = render.Pick(f.Global.Output, planTable, planJSON, planMarkdown); err != nil {
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
	renderFleet := opts.Render
	if renderFleet == nil {
		renderFleet = offline.Render
	}
	report, err := renderFleet(ctx, fl, offline.Options{Stacks: opts.Stacks, Parallel: opts.Parallel, Now: opts.Now})
	if err != nil {
		return err
	}
	shown := &Rendered{Fleet: fl, Report: report, Resources: opts.Resources, Strict: opts.Strict}
	if opts.LinkedChange != nil && fl.Router != nil && (len(opts.Stacks) == 0 || slices.Contains(opts.Stacks, fleet.RouterStack)) {
		// Read from the router's deployed state. Advisory: a state that
		// cannot be read leaves the plan as the offline render says it,
		// and the up itself decides its passes from the state.
		if note, err := opts.LinkedChange(ctx, fl); err == nil && note != "" {
			shown.Notes = append(shown.Notes, fleet.RouterStack+": "+note)
		}
	}
	if opts.Strict {
		shown.Violations = report.Rules()
		shown.QuotaIncreases = report.JudgeQuotas().Increases
	}
	if report.Whole(fl) {
		decl, err := offline.LoadShared(fl)
		if err != nil {
			return err
		}
		backend := ""
		if opts.Backend != nil {
			backend = opts.Backend(fl.Dir)
		}
		if shown.Ledger, err = report.Ledger(fl, decl, backend); err != nil {
			return err
		}
		paths, _, err := report.Paths(fl, decl)
		if err != nil {
			return err
		}
		shown.Paths = &paths
		network, err := report.NetworkPaths(fl)
		if err != nil {
			return err
		}
		shown.NetworkPaths = &network
	}
	if err := opts.View.Render(opts.IO, shown); err != nil {
		return err
	}
	var findings []error
	if !report.Isolation.OK {
		findings = append(findings, fmt.Errorf("isolation audit: %d violation(s)", len(report.Isolation.Violations)))
	}
	if len(shown.Violations) > 0 {
		findings = append(findings, fmt.Errorf("AWS rules: %d violation(s)", len(shown.Violations)))
	}
	if shown.Ledger != nil && !shown.Ledger.OK {
		findings = append(findings, shown.Ledger.Error())
	}
	if shown.Paths != nil {
		if n := len(shown.Paths.Findings()) + len(shown.Paths.Problems()); n > 0 {
			findings = append(findings, fmt.Errorf("access paths: %d finding(s)", n))
		}
	}
	if shown.NetworkPaths != nil {
		if n := len(shown.NetworkPaths.Findings()); n > 0 {
			findings = append(findings, fmt.Errorf("network paths: %d finding(s)", n))
		}
	}
	if len(findings) > 0 {
		return outcome.Findings(errors.Join(findings...))
	}
	return nil
}

func printPlan(io *iostreams.IOStreams, r *Rendered) error {
	fl, report := r.Fleet, r.Report
	s := render.Out(io)
	out := io.Out
	var rows [][]string
	total := 0
	// The ACCOUNT column appears once any stack names its account: a
	// single-account fleet reads as it always did.
	accounts := false
	for _, st := range report.Stacks {
		accounts = accounts || st.Account != ""
	}
	for _, st := range report.Stacks {
		index, cidr := "-", "-"
		if st.Index != nil {
			index = fmt.Sprint(*st.Index)
			cidr = st.CIDR
		}
		total += st.CloudResources()
		row := []string{st.Name, st.Kind, index, cidr}
		if accounts {
			row = append(row, fleet.Access{Account: st.Account}.AccountLabel())
		}
		rows = append(rows, append(row, st.Region, fmt.Sprint(st.CloudResources()), shape(fl, st)))
	}
	header := []string{"STACK", "KIND", "INDEX", "CIDR"}
	if accounts {
		header = append(header, "ACCOUNT")
	}
	fmt.Fprint(out, s.Table(append(header, "REGION", "RESOURCES", "SHAPE"), rows))
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
	// Warnings never fail the plan: AWS accepts the resource today.
	for _, w := range report.Warnings {
		fmt.Fprintf(out, "%s %s\n", s.Bad("warning:"), w.String())
	}
	for _, n := range r.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	if r.Strict {
		printRules(io, r.Violations)
		printIncreases(io, r.QuotaIncreases)
	}
	if r.Paths != nil {
		printPaths(io, r.Paths)
	} else {
		fmt.Fprintf(out, "paths: not evaluated (the access paths need the whole fleet: run %s without stack names)\n", "`cellctl plan`")
	}
	if r.NetworkPaths != nil {
		printNetworkPaths(io, r.NetworkPaths)
	} else {
		fmt.Fprintf(out, "network paths: not evaluated (the network paths need the whole fleet: run %s without stack names)\n", "`cellctl plan`")
	}
	if r.Ledger != nil {
		printLedger(io, r.Ledger)
	} else {
		fmt.Fprintf(out, "shared parts: not derived (the ledger needs the whole fleet: run %s without stack names)\n", "`cellctl plan`")
	}
	return nil
}

// printPaths prints the access paths: the findings first, then the
// counts.
func printPaths(io *iostreams.IOStreams, r *access.Report) {
	s, out := render.Out(io), io.Out
	allowed, required, denied, forbidden := r.Counts()
	counts := fmt.Sprintf("required: %d/%d allowed; forbidden: %d/%d denied%s", allowed, required, denied, forbidden, acrossAccounts(r))
	findings := r.Findings()
	if r.OK() {
		fmt.Fprintf(out, "paths: %s (%s)\n", s.Good("ok"), counts)
		return
	}
	fmt.Fprintf(out, "paths: %s (%s)\n", s.Bad(fmt.Sprintf("%d finding(s)", len(findings)+len(r.Problems()))), counts)
	for _, k := range r.Keys {
		fmt.Fprintf(out, "  - [key] %s\n", k)
	}
	for _, a := range r.Actions {
		fmt.Fprintf(out, "  - [action] %s\n", a)
	}
	for _, q := range r.Redrives {
		fmt.Fprintf(out, "  - [redrive] %s\n", q)
	}
	for _, e := range r.Edge {
		fmt.Fprintf(out, "  - [edge] %s\n", e)
	}
	for _, f := range findings {
		kind := "forbidden"
		if f.Path.DeclaredBy != "isolation" {
			kind = "required"
		}
		fmt.Fprintf(out, "  - [%s] %s\n      %s: %s\n      %s\n", kind, f.Path.Name, f.Describe(), f.Decision, f.Reason)
	}
	fmt.Fprintf(out, "  ask about one: cellctl access check PRINCIPAL ACTION RESOURCE\n")
}

// acrossAccounts says how many forbidden paths are the cross-account
// family's (none in a fleet of one account: nothing said).
func acrossAccounts(r *access.Report) string {
	if r.Forbidden.CrossAccount == 0 {
		return ""
	}
	return fmt.Sprintf(", %d of them across accounts", r.Forbidden.CrossAccount)
}

// printNetworkPaths prints the network paths: the counts on one line, or
// the findings under it (a required path not open, a forbidden one open),
// each with what decides it.
func printNetworkPaths(io *iostreams.IOStreams, r *netpath.Report) {
	s, out := render.Out(io), io.Out
	allowed, required, denied, forbidden := r.Counts()
	counts := fmt.Sprintf("required: %d/%d allowed; forbidden: %d/%d denied", allowed, required, denied, forbidden)
	findings := r.Findings()
	if len(findings) == 0 {
		fmt.Fprintf(out, "network paths: %s (%s)\n", s.Good("ok"), counts)
		return
	}
	fmt.Fprintf(out, "network paths: %s (%s)\n", s.Bad(fmt.Sprintf("%d finding(s)", len(findings))), counts)
	for _, f := range findings {
		kind, state := "required", "not allowed"
		if f.Allowed {
			kind, state = "forbidden", "open"
		}
		fmt.Fprintf(out, "  - [%s] %s: %s\n      %s\n", kind, f.Path, state, f.Reason)
	}
}

// markdownPlan is the plan as one pull-request comment: the stacks, the
// isolation audit, the access paths (findings first) and the shared parts.
func markdownPlan(io *iostreams.IOStreams, r *Rendered) error {
	w := io.Out
	var problems []string
	if !r.Report.Isolation.OK {
		problems = append(problems, fmt.Sprintf("%d isolation violation(s)", len(r.Report.Isolation.Violations)))
	}
	if r.Paths != nil && !r.Paths.OK() {
		problems = append(problems, fmt.Sprintf("%d access path finding(s)", len(r.Paths.Findings())+len(r.Paths.Problems())))
	}
	if r.NetworkPaths != nil && !r.NetworkPaths.OK() {
		problems = append(problems, fmt.Sprintf("%d network path finding(s)", len(r.NetworkPaths.Findings())))
	}
	if r.Ledger != nil && !r.Ledger.OK {
		problems = append(problems, fmt.Sprintf("%d undeclared shared part(s)", len(r.Ledger.Undeclared)))
	}
	if len(shownViolations(r)) > 0 {
		problems = append(problems, fmt.Sprintf("%d AWS rule violation(s)", len(shownViolations(r))))
	}
	total := 0
	var rows [][]string
	for _, st := range r.Report.Stacks {
		total += st.CloudResources()
		rows = append(rows, []string{st.Name, st.Kind, st.Region, fmt.Sprint(st.CloudResources())})
	}
	if len(problems) == 0 {
		fmt.Fprintf(w, "### ✅ cellctl plan: %d stacks, %d resources, no findings\n\n", len(r.Report.Stacks), total)
	} else {
		fmt.Fprintf(w, "### ⚠️ cellctl plan: %s\n\n", strings.Join(problems, ", "))
	}
	fmt.Fprint(w, render.MarkdownTable([]string{"stack", "kind", "region", "resources"}, rows))
	if r.Report.Isolation.OK {
		fmt.Fprint(w, "\n**isolation:** ok\n")
	} else {
		fmt.Fprint(w, "\n**isolation:**\n\n")
		for _, v := range r.Report.Isolation.Violations {
			fmt.Fprintf(w, "- `%s` %s\n", v.Rule, v.String())
		}
	}
	if r.Paths != nil {
		allowed, required, denied, forbidden := r.Paths.Counts()
		fmt.Fprintf(w, "\n**paths:** required %d/%d allowed · forbidden %d/%d denied%s\n", allowed, required, denied, forbidden, acrossAccounts(r.Paths))
		if fs := r.Paths.Findings(); len(fs) > 0 {
			var frows [][]string
			for _, f := range fs {
				frows = append(frows, []string{f.Path.Name, render.MarkdownCode(f.Describe()), string(f.Decision), f.Reason})
			}
			fmt.Fprint(w, "\n"+render.MarkdownTable([]string{"path", "request", "decision", "why"}, frows))
		}
		for _, k := range r.Paths.Problems() {
			fmt.Fprintf(w, "- %s\n", k)
		}
	}
	if r.NetworkPaths != nil {
		allowed, required, denied, forbidden := r.NetworkPaths.Counts()
		fmt.Fprintf(w, "\n**network paths:** required %d/%d allowed · forbidden %d/%d denied\n", allowed, required, denied, forbidden)
		if fs := r.NetworkPaths.Findings(); len(fs) > 0 {
			var frows [][]string
			for _, f := range fs {
				state := "not allowed"
				if f.Allowed {
					state = "open"
				}
				frows = append(frows, []string{f.Path, state, f.Reason})
			}
			fmt.Fprint(w, "\n"+render.MarkdownTable([]string{"path", "state", "why"}, frows))
		}
	}
	if r.Ledger != nil {
		state := "every shared part is declared"
		if !r.Ledger.OK {
			state = fmt.Sprintf("%d not declared in %s", len(r.Ledger.Undeclared), r.Ledger.File)
		}
		fmt.Fprintf(w, "\n**shared parts:** %d (%s)\n", len(r.Ledger.Parts), state)
	}
	for _, v := range shownViolations(r) {
		fmt.Fprintf(w, "- %s\n", v.String())
	}
	return nil
}

func shownViolations(r *Rendered) []awsmodel.Violation {
	if !r.Strict {
		return nil
	}
	return r.Violations
}

// printLedger prints the shared-parts ledger: the parts, the undeclared
// ones (findings) with the entries that would declare them, and the
// declarations nothing matches any more (notes).
func printLedger(io *iostreams.IOStreams, l *isolation.Ledger) {
	s, out := render.Out(io), io.Out
	where := "declared in " + l.File
	if l.Missing {
		where = "the fleet has no " + l.File + " to declare them"
	}
	fmt.Fprintf(out, "\nshared parts: %d (every part more than one cell depends on; %s)\n", len(l.Parts), where)
	var rows [][]string
	for _, p := range l.Parts {
		declared := s.Good("yes")
		if p.Declared == nil {
			declared = s.Bad("NO")
		}
		cells := fmt.Sprintf("%d/%d", len(p.Cells), l.Cells)
		tenants := isolation.Percent(p.TenantShare)
		if p.Pinned > 0 && len(p.Cells) < l.Cells {
			tenants += fmt.Sprintf(" +%d pinned", p.Pinned)
		}
		rows = append(rows, []string{p.Kind, p.ID, p.Owner, string(p.Plane), cells, tenants, declared})
	}
	fmt.Fprint(out, s.Table([]string{"KIND", "ID", "OWNER", "PLANE", "CELLS", "TENANTS", "DECLARED"}, rows))
	if l.OK {
		fmt.Fprintf(out, "shared parts: %s (every shared part is declared)\n", s.Good("ok"))
	} else {
		fmt.Fprintf(out, "shared parts: %s\n", s.Bad(fmt.Sprintf("%d not declared in %s", len(l.Undeclared), l.File)))
		for _, p := range l.Undeclared {
			where := ""
			if len(p.Uses) > 0 {
				where = ", first used by " + p.Uses[0].String()
			}
			fmt.Fprintf(out, "  - [undeclared] %s %s: %s depend on it (%s, %s of tenants%s)\n",
				p.Kind, p.ID, strings.Join(p.Cells, ", "), p.Plane, isolation.Percent(p.TenantShare), where)
		}
		fmt.Fprintf(out, "  make each one a decision: remove the dependency, or declare it in %s:\n", l.File)
		if len(l.Parts) == len(l.Undeclared) {
			fmt.Fprintln(out, "    shared:")
		}
		for _, p := range l.Undeclared {
			for _, line := range strings.Split(p.Entry(), "\n") {
				fmt.Fprintf(out, "  %s\n", line)
			}
		}
	}
	for _, d := range l.Stale {
		fmt.Fprintf(out, "note: %s\n", l.StaleNote(d))
	}
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
