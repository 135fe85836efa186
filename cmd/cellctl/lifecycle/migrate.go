package lifecycle

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/render"
)

// MigrateOptions are the inputs of `cellctl migrate`.
type MigrateOptions struct {
	Deps
	View render.View[*lifecycle.Report]

	Tenant string
	To     string
	Finish bool
	Abort  bool
	DryRun bool
}

// NewCmdMigrate builds `cellctl migrate`.
func NewCmdMigrate(f *cmdutil.Factory, runF func(*MigrateOptions) error) *cobra.Command {
	opts := &MigrateOptions{Deps: depsOf(f)}
	cmd := &cobra.Command{
		Use:   "migrate TENANT (--to CELL | --finish | --abort)",
		Short: "Move one tenant to another cell: stop its writes, then switch it",
		Long: `Migrate one tenant between cells in published steps:

  --to CELL   pin the tenant "migrating" to CELL with write_mode
              reject_with_503: once the router is published, every edge
              answers the tenant's writes with 503 and Retry-After and its
              reads are still served by the source cell. Copy the data now
              (docs/LIFECYCLE.md, "Data-copy hook points").
  --finish    serve the tenant from the target.
  --abort     instead of --finish: serve it from the source again (after
              --finish there is nothing to abort: migrate it back with --to).

Each step saves stacks/routing.json and publishes the router, refused when
the deployed router serves a newer table.`,
		Example: `  # start: acme's writes answer 503 while its data is copied to cell-c
  cellctl migrate acme --to cell-c
  # once copied: serve acme from cell-c
  cellctl migrate acme --finish
  # or, instead of --finish, serve it from its source again
  cellctl migrate acme --abort`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Yes = f.Global.Yes
			opts.Tenant = args[0]
			opts.Parallel = f.Global.Parallel
			var err error
			if opts.View, err = render.Pick(f.Global.Output, Formats...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return migrateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "start: the active cell to move the tenant to")
	cmd.Flags().BoolVar(&opts.Finish, "finish", false, "finish the tenant's migration: serve it from the target")
	cmd.Flags().BoolVar(&opts.Abort, "abort", false, "abort the tenant's migration: serve it from the source")
	_ = cmd.RegisterFlagCompletionFunc("to", f.CompleteCells)
	cmd.MarkFlagsMutuallyExclusive("to", "finish", "abort")
	cmd.MarkFlagsOneRequired("to", "finish", "abort")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the transition and write or publish nothing")
	return cmd
}

func migrateRun(ctx context.Context, opts *MigrateOptions) error {
	env, done := opts.env(ctx, "migrate")
	rep, err := lifecycle.Migrate(ctx, env, lifecycle.MigrateOptions{
		Tenant: opts.Tenant, To: opts.To, Finish: opts.Finish, Abort: opts.Abort, DryRun: opts.DryRun,
	})
	done()
	return show(opts.IO, opts.View, rep, err)
}
