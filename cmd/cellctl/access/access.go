// Package access holds `cellctl access`: questions about who may do what
// in the rendered fleet, answered by the same evaluator `plan` proves the
// fleet's paths with (internal/access).
package access

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	evaluator "github.com/cellctl/cellctl/internal/access"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	offline "github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/internal/render"
)

// CheckOptions are the inputs of `cellctl access check`.
type CheckOptions struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	View  render.View[*Answer]

	Principal, Action, Resource string
	Context                     []string // key=value[,value…]
	// Want is the decision the caller expects: "allowed" or "denied".
	Want string
}

// Answer is what `access check` shows.
type Answer struct {
	Principal string             `json:"principal"`
	Action    string             `json:"action"`
	Resource  string             `json:"resource"`
	Verdict   evaluator.Verdict  `json:"verdict"`
	Want      evaluator.Decision `json:"want"`
}

var formats = []render.Format[*Answer]{
	{Name: render.FormatTable, Render: printAnswer},
	render.JSONFormat(func(a *Answer) any { return a }),
}

// NewCmdAccess builds `cellctl access`.
func NewCmdAccess(f *cmdutil.Factory, runF func(*CheckOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "access",
		Short: "Ask whether a principal of the fleet may make a request",
	}
	cmd.AddCommand(newCmdCheck(f, runF))
	return cmd
}

func newCmdCheck(f *cmdutil.Factory, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: f.IO, Fleet: f.Fleet}
	cmd := &cobra.Command{
		Use:   "check PRINCIPAL ACTION RESOURCE",
		Short: "Decide one request from the fleet's own policies",
		Long: `Render the fleet offline (as 'cellctl plan' does) and decide one request
the way AWS evaluates it: the caller's identity policies, the resource's
bucket, queue, key or trust policy, their conditions, and the calls the
service makes on the caller's behalf (the bucket key under S3, a queue's
key under SQS). Prints Allowed, ImplicitlyDenied, ExplicitlyDenied or
Undecidable, with the statements that decided and the policies they are in.

PRINCIPAL is a role by label (cell-a/task-role, router/edge-role; the
"-role" may be left out), by ARN, or a service (ecs-tasks.amazonaws.com).
RESOURCE is a resource by label (cell-a/queue, router/bucket-key), a label
followed by a path (router/bucket/cells/cell-a/x is an object of the
bucket), or an ARN. 'cellctl plan -o json' lists the labels in its paths.

Exits 0 when the decision is the one --want names (allowed by default;
denied accepts either kind of deny), 2 when it is not.`,
		Example: `  cellctl access check cell-a/task s3:PutObject router/bucket/cells/cell-a/x
  cellctl access check cell-a/task s3:GetObject router/bucket/cells/cell-b/x --want denied
  cellctl access check cell-b/task s3:ListBucket router/bucket --context s3:prefix=cells/cell-b/
  cellctl access check ecs-tasks.amazonaws.com sts:AssumeRole cell-a/task-role --context aws:SourceAccount=123456789012 -o json`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Principal, opts.Action, opts.Resource = args[0], args[1], args[2]
			var err error
			if opts.View, err = render.Pick(f.Global.Output, formats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Context, "context", nil, "a condition key of the request, `key=value[,value…]` (repeatable)")
	cmd.Flags().StringVar(&opts.Want, "want", "allowed", "the decision expected: allowed or denied")
	return cmd
}

func checkRun(ctx context.Context, opts *CheckOptions) error {
	want := evaluator.Allowed
	switch opts.Want {
	case "allowed":
	case "denied":
		want = evaluator.ImplicitDeny
	default:
		return fmt.Errorf("--want %q: allowed or denied", opts.Want)
	}
	reqCtx := map[string][]string{}
	for _, kv := range opts.Context {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("--context %q: want key=value[,value…]", kv)
		}
		reqCtx[k] = append(reqCtx[k], strings.Split(v, ",")...)
	}
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	report, err := offline.Render(ctx, fl, offline.Options{})
	if err != nil {
		return err
	}
	m, err := report.AccessModel(fl)
	if err != nil {
		return err
	}
	principal, err := resolvePrincipal(m, opts.Principal)
	if err != nil {
		return err
	}
	arn, err := resolveResource(m, opts.Resource)
	if err != nil {
		return err
	}
	v := m.Evaluate(evaluator.Request{Principal: principal.ARN, Action: opts.Action, Resource: arn, Context: reqCtx})
	a := &Answer{Principal: principal.Label, Action: opts.Action, Resource: arn, Verdict: v, Want: want}
	if err := opts.View.Render(opts.IO, a); err != nil {
		return err
	}
	if (want == evaluator.Allowed) != (v.Decision == evaluator.Allowed) || (want != evaluator.Allowed && !v.Decision.Denied()) {
		return outcome.Findings(fmt.Errorf("%s %s %s is %s, not %s", principal.Label, opts.Action, arn, v.Decision.Words(), opts.Want))
	}
	return nil
}

// resolvePrincipal finds a principal by ARN, label, or label without its
// "-role".
func resolvePrincipal(m *evaluator.Model, ref string) (*evaluator.Principal, error) {
	for _, r := range []string{ref, ref + "-role"} {
		if p := m.Principal(r); p != nil {
			return p, nil
		}
	}
	var labels []string
	for _, p := range m.Principals() {
		labels = append(labels, p.Label)
	}
	return nil, fmt.Errorf("no principal %q in the fleet (principals: %s)", ref, strings.Join(labels, ", "))
}

// resolveResource turns a label, a label with a path, or an ARN into the
// request's ARN.
func resolveResource(m *evaluator.Model, ref string) (string, error) {
	if strings.HasPrefix(ref, "arn:") {
		return ref, nil
	}
	if r := m.ResourceByLabel(ref); r != nil {
		return r.ARN, nil
	}
	// The longest label the reference starts with, then its path.
	var best *evaluator.Resource
	for _, r := range m.Resources() {
		if strings.HasPrefix(ref, r.Label+"/") && (best == nil || len(r.Label) > len(best.Label)) {
			best = r
		}
	}
	if best != nil {
		return best.ARN + strings.TrimPrefix(ref, best.Label), nil
	}
	var labels []string
	for _, r := range m.Resources() {
		labels = append(labels, r.Label)
	}
	sort.Strings(labels)
	return "", errors.New("no resource " + fmt.Sprintf("%q", ref) + " in the fleet (resources: " + strings.Join(labels, ", ") + "; or give an ARN)")
}

func printAnswer(io *iostreams.IOStreams, a *Answer) error {
	s, out := render.Out(io), io.Out
	word := s.Bad(string(a.Verdict.Decision))
	if a.Verdict.Decision == evaluator.Allowed {
		word = s.Good(string(a.Verdict.Decision))
	}
	fmt.Fprintf(out, "%s: %s %s %s\n", word, a.Principal, a.Action, a.Resource)
	fmt.Fprintf(out, "  %s\n", a.Verdict.Reason)
	printDeciding(io, a.Verdict, "  ")
	return nil
}

func printDeciding(io *iostreams.IOStreams, v evaluator.Verdict, indent string) {
	out := io.Out
	for _, r := range v.Deciding {
		fmt.Fprintf(out, "%s%s statement %s in %s\n", indent, r.Effect, r.Sid, r.Policy)
	}
	for _, iv := range v.Implied {
		fmt.Fprintf(out, "%sand on the caller's behalf: %s %s: %s\n", indent, iv.Request.Action, iv.Request.Resource, iv.Decision)
		printDeciding(io, iv, indent+"  ")
	}
}
