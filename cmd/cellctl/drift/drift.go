// Package drift holds `cellctl drift`: skew between cells, cells behind
// the repository and cloud drift, in one report (internal/drift).
package drift

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/desired"
	audit "github.com/cellctl/cellctl/internal/drift"
	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/driftview"
)

// Readers is what the audit reads through the engine: secret digests,
// deployed outputs and refresh previews. *engine.Engine implements it.
type Readers interface {
	audit.SecretReader
	audit.DeployedReader
	RefreshDrift(ctx context.Context, stack string) ([]engine.RefreshedResource, error)
}

// DriftOptions are the inputs of `cellctl drift`.
type DriftOptions struct {
	IO *iostreams.IOStreams
	// Desired is the fleet's desired state (the repository plus what
	// rollouts shipped and kept, schema versions included): what skew and
	// behind compare the cells with.
	Desired func() (*desired.State, error)
	Readers func(fl *fleet.Fleet) (Readers, error)
	View    render.View[*audit.Report]

	Cells    []string
	Checks   []audit.Kind
	FailOn   []audit.Kind
	Parallel int
}

var (
	driftJSON  = render.JSONFormat(func(r *audit.Report) any { return r })
	driftTable = render.Format[*audit.Report]{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r *audit.Report) error {
		return driftview.Table(io.Out, render.Out(io), r)
	}}
	driftMarkdown = render.Format[*audit.Report]{Name: render.FormatMarkdown, Render: func(io *iostreams.IOStreams, r *audit.Report) error { return driftview.Markdown(io.Out, r) }}
)

// NewCmdDrift builds `cellctl drift`.
func NewCmdDrift(f *cmdutil.Factory, runF func(*DriftOptions) error) *cobra.Command {
	opts := &DriftOptions{IO: f.IO, Desired: f.Desired, Readers: func(fl *fleet.Fleet) (Readers, error) { return f.Engine(fl, nil) }}
	var skew, behind bool
	cloud := &cloudFlag{cloud: &f.Global.Cloud}
	var failOn string
	cmd := &cobra.Command{
		Use:               "drift [cell...]",
		ValidArgsFunction: f.CompleteCells,
		Short:             "Audit drift: skew between cells, cells behind the repo, and cloud changes behind Pulumi's back",
		Long: `Audit the fleet's cells three ways (all three unless one is picked):

  --skew    every cells: key against the fleet baseline (Pulumi.yaml),
            by its class (must_equal, must_unique, may_vary; docs/DRIFT.md);
            deliberate differences are exceptions, with a reason, in
            stacks/drift.yaml. Secrets are compared by digest, never shown.
            The image is the desired state's: what a rollout shipped and
            kept, for the cells and for the baseline, read from the rollout
            records.
  --behind  what each cell last deployed (its deployedSpec stack output)
            against the desired state (the repository plus what rollouts
            shipped and kept): which cells run which version, key by key,
            old → new; and each cell's database schema against what its
            release migrated it to (a rolled-back release's schema, left in
            place by design, is a note — an ahead finding when the old image
            is not proven on it — never a target).
  --cloud   a refresh preview of each cell (never writes state): every
            resource whose live properties differ from Pulumi's state, old →
            new; resources that could not be read are not_checked. Properties
            something else owns are ignored through cloud.ignore in
            stacks/drift.yaml.

Exits 0 when clean, 2 when a check named by --fail-on (default: the checks
run) found something, 1 on error. -o markdown prints one report for an
issue or pull request comment, worst cells first.`,
		Example: `  cellctl drift
  cellctl drift --skew
  cellctl drift --cloud cell-b -o json
  cellctl drift -o markdown --fail-on cloud,behind`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := cloud.settle(args)
			if err != nil {
				return err
			}
			opts.Cells = args
			opts.Parallel = f.Global.Parallel
			opts.Checks = nil
			for k, on := range map[audit.Kind]bool{audit.KindSkew: skew, audit.KindBehind: behind, audit.KindCloud: cloud.checks > 0} {
				if on {
					opts.Checks = append(opts.Checks, k)
				}
			}
			if len(opts.Checks) == 0 {
				opts.Checks = audit.Kinds
			}
			opts.FailOn = nil
			if cmd.Flags().Changed("fail-on") {
				ks, err := audit.ParseKinds(failOn)
				if err != nil {
					return fmt.Errorf("--fail-on: %w", err)
				}
				opts.FailOn = ks
			}
			if opts.View, err = render.Pick(f.Global.Output, driftTable, driftJSON, driftMarkdown); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return driftRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&skew, "skew", false, "compare the cells' configuration with the fleet baseline (offline)")
	cmd.Flags().BoolVar(&behind, "behind", false, "compare what each cell last deployed with the desired state (the repository plus what rollouts shipped)")
	// --cloud is also the global flag that picks the cloud (aws, sim): on
	// this command one flag does both (cloudFlag).
	fl := cmd.Flags().VarPF(cloud, "cloud", "", "alone: refresh-preview each cell and report changes made behind Pulumi's back; --cloud aws|sim: the cloud to act on, as on every command")
	fl.NoOptDefVal = "true"
	cmd.Flags().StringVar(&failOn, "fail-on", "", "checks whose findings exit 2 (skew,behind,cloud; default: the checks run)")
	return cmd
}

func driftRun(ctx context.Context, opts *DriftOptions) error {
	st, err := opts.Desired()
	if err != nil {
		return err
	}
	fl := st.Fleet
	pol, err := audit.LoadPolicy(fl)
	if err != nil {
		return fmt.Errorf("invalid drift policy:\n%w", err)
	}
	readers, err := opts.Readers(fl)
	if err != nil {
		return err
	}
	rep, err := audit.Run(ctx, audit.Options{
		Desired: st, Policy: pol, Cells: opts.Cells, Checks: opts.Checks, FailOn: opts.FailOn, Parallel: opts.Parallel,
		Secrets: readers, Deployed: readers, Cloud: cloudReader{readers},
	})
	if err != nil {
		return err
	}
	if err := opts.View.Render(opts.IO, rep); err != nil {
		return err
	}
	if n := rep.Failing(); n > 0 {
		cells := 0
		for _, c := range rep.Cells {
			if c.Total() > 0 {
				cells++
			}
		}
		return &outcome.FindingsError{Count: n, Err: fmt.Errorf("drift: %d %s in %d of %d cells; each says what to do next", n, plural(n), cells, len(rep.Cells))}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return "finding"
	}
	return "findings"
}

// cloudFlag is drift's --cloud. The issue's `drift --cloud` (the cloud
// drift check) shares its name with the global --cloud aws|sim, and a
// command cannot have two flags of one name, so this one flag does both:
// alone (or =true) it selects the check; =aws or =sim picks the cloud. A
// value after a space (`--cloud sim`, how the global flag is usually
// written) is a separate argument to pflag; aws and sim can never be cell
// ids (cells are cell-…), so settle takes them back as the cloud.
type cloudFlag struct {
	cloud  *string
	checks int // occurrences that asked for the check
}

func (c *cloudFlag) String() string { return "" }
func (c *cloudFlag) Type() string   { return "aws|sim" }
func (c *cloudFlag) Set(v string) error {
	switch v {
	case "true":
		c.checks++
	case "false":
	case cmdutil.CloudAWS, cmdutil.CloudSim:
		*c.cloud = v
	default:
		return fmt.Errorf("allowed: aws or sim (the cloud), or --cloud alone (the cloud drift check)")
	}
	return nil
}

// settle takes a bare aws or sim that followed --cloud back from the
// positional arguments.
func (c *cloudFlag) settle(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if a == cmdutil.CloudAWS || a == cmdutil.CloudSim {
			if c.checks == 0 {
				return nil, fmt.Errorf("%q is not a cell: to pick the cloud write --cloud %s", a, a)
			}
			c.checks--
			*c.cloud = a
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// cloudReader adapts the engine's refresh preview to the audit's reader.
type cloudReader struct{ r Readers }

func (c cloudReader) CloudDrift(ctx context.Context, stack string) (*audit.CellCloud, error) {
	res, err := c.r.RefreshDrift(ctx, stack)
	if err != nil {
		return nil, err
	}
	out := &audit.CellCloud{}
	for _, r := range res {
		cr := audit.CloudResource{URN: r.URN, Type: r.Type, Name: r.Name, State: r.State, Reason: r.Reason}
		for _, ch := range r.Changes {
			cr.Changes = append(cr.Changes, audit.PropertyChange{Path: ch.Path, Old: ch.Old, New: ch.New})
		}
		out.Resources = append(out.Resources, cr)
	}
	return out, nil
}
