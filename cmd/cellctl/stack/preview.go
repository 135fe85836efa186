package stack

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
)

// PreviewOptions are the inputs of `cellctl preview`.
type PreviewOptions struct {
	IO       *iostreams.IOStreams
	Fleet    func() (*fleet.Fleet, error)
	Engine   EngineFunc
	View     render.View[*apply.Report]
	Parallel int

	Cells  []string
	Router bool
	// DetailedExitCode: exit 2 when changes are pending, 0 when none, 1
	// on an error (terraform plan's -detailed-exitcode), for CI.
	DetailedExitCode bool
}

// NewCmdPreview builds `cellctl preview`.
func NewCmdPreview(f *cmdutil.Factory, runF func(*PreviewOptions) error) *cobra.Command {
	opts := &PreviewOptions{IO: f.IO, Fleet: f.DesiredFleet, Engine: f.ApplyEngine}
	cmd := &cobra.Command{
		Use:               "preview [cell...]",
		ValidArgsFunction: f.CompleteCells,
		Short:             "Show what up would change, per stack",
		Long: `Ask the Pulumi engine what an up would change in each stack, without
changing anything. -o markdown prints one summary ready to paste as a pull
request comment.`,
		Example: `  cellctl preview
  cellctl preview cell-a -o json
  cellctl preview -o markdown > preview.md
  # in CI: exit 2 when an up would change something, 0 when not, 1 on an error
  cellctl preview --detailed-exitcode`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cells = args
			opts.Parallel = f.Global.Parallel
			var err error
			if opts.View, err = render.Pick(f.Global.Output, previewTableView, jsonView, markdownView); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return previewRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Router, "router", false, "preview the router stack (alone, unless cells are named too)")
	cmd.Flags().BoolVar(&opts.DetailedExitCode, "detailed-exitcode", false, "exit 2 when changes are pending, 0 when there are none, 1 on an error")
	return cmd
}

func previewRun(ctx context.Context, opts *PreviewOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	env, done := applyEnv(ctx, opts.IO, fl, opts.Engine, opts.Parallel)
	rep, err := apply.Preview(ctx, env, apply.Options{Cells: opts.Cells, Router: opts.Router})
	done()
	err = show(opts.IO, opts.View, rep, err)
	if opts.DetailedExitCode {
		return pending(rep, err)
	}
	return err
}

// pending is --detailed-exitcode's verdict: an error stays an error (exit
// 1); changes pending in any stack exit 2 — silently, the preview said
// what they are; none exit 0.
func pending(rep *apply.Report, err error) error {
	if err != nil || rep == nil || rep.Result == nil {
		return err
	}
	n := 0
	for _, r := range rep.Result.Stacks {
		n += r.Changes.Total()
	}
	if n == 0 {
		return nil
	}
	return &outcome.FindingsError{Count: n, Err: outcome.ErrSilent}
}
