package lifecycle

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/render"
)

// UndrainOptions are the inputs of `cellctl undrain`.
type UndrainOptions struct {
	Deps
	View render.View[*lifecycle.Report]

	Cell   string
	DryRun bool
}

// NewCmdUndrain builds `cellctl undrain`.
func NewCmdUndrain(f *cmdutil.Factory, runF func(*UndrainOptions) error) *cobra.Command {
	opts := &UndrainOptions{Deps: depsOf(f)}
	cmd := &cobra.Command{
		Use:               "undrain CELL",
		ValidArgsFunction: f.CompleteOneCell,
		Short:             "Make a draining or drained cell active again and publish the router",
		Long: `Make a draining or drained cell active again: it takes back only as many
buckets as balance needs (the fewest possible, from the most loaded cells),
stacks/routing.json is saved and the router published. Same safety checks
as drain: refused when the deployed router serves a newer table.`,
		Example: `  cellctl undrain cell-d --dry-run
  cellctl undrain cell-d`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Yes = f.Global.Yes
			opts.Cell = args[0]
			opts.Parallel = f.Global.Parallel
			var err error
			if opts.View, err = render.Pick(f.Global.Output, Formats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return undrainRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the transition and write or publish nothing")
	return cmd
}

func undrainRun(ctx context.Context, opts *UndrainOptions) error {
	env, done := opts.env(ctx, "undrain")
	rep, err := lifecycle.Undrain(ctx, env, lifecycle.UndrainOptions{Cell: opts.Cell, DryRun: opts.DryRun})
	done()
	return show(opts.IO, opts.View, rep, err)
}
