package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/engine"
)

// PreviewOptions are the inputs of `cellctl preview`.
type PreviewOptions struct {
	*Factory
	Cells  []string
	Router bool
}

// NewCmdPreview builds `cellctl preview`.
func NewCmdPreview(f *Factory, runF func(*PreviewOptions) error) *cobra.Command {
	opts := &PreviewOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "preview [cell...]",
		Short: "Show what up would change, per stack",
		Long: `Ask the Pulumi engine what an up would change in each stack, without
changing anything. -o markdown prints one summary ready to paste as a pull
request comment.`,
		Example: `  cellctl preview
  cellctl preview cell-a -o json
  cellctl preview -o markdown > preview.md`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cells = args
			if err := f.CheckOutput(FormatTable, FormatJSON, FormatMarkdown); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return previewRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Router, "router", false, "preview the router stack (alone, unless cells are named too)")
	return cmd
}

func previewRun(ctx context.Context, opts *PreviewOptions) error {
	fl, err := opts.Fleet()
	if err != nil {
		return err
	}
	names, err := selectStacks(fl, opts.Cells, opts.Router)
	if err != nil {
		return err
	}
	res, err := runOperation(ctx, opts.Factory, fl, engine.OpPreview, names, engine.RunOptions{})
	if res == nil {
		return err
	}
	var perr error
	switch opts.Global.Output {
	case FormatJSON:
		perr = renderJSON(opts.IO.Out, res)
	case FormatMarkdown:
		writeMarkdown(opts.IO.Out, res)
	default:
		perr = printResult(opts.Factory, res)
		printPlanned(opts, res)
	}
	if err == nil {
		err = perr
	}
	return err
}

func printPlanned(opts *PreviewOptions, res *engine.Result) {
	s := opts.Styles()
	for _, r := range res.Stacks {
		if len(r.Planned) == 0 {
			continue
		}
		fmt.Fprintf(opts.IO.Out, "\n%s\n", s.Bold(r.Name))
		var rows [][]string
		for _, c := range r.Planned {
			rows = append(rows, []string{c.Op, c.Type, c.Name, strings.Join(c.Diffs, ", ")})
		}
		fmt.Fprint(opts.IO.Out, s.Table([]string{"OP", "TYPE", "NAME", "CHANGED"}, rows))
	}
}

// writeMarkdown renders one PR-comment-ready summary of every stack.
func writeMarkdown(w io.Writer, res *engine.Result) {
	total := 0
	for _, r := range res.Stacks {
		total += r.Changes.Total()
	}
	fmt.Fprintf(w, "### cellctl preview: %d change(s) across %d stack(s)\n\n", total, len(res.Stacks))
	fmt.Fprintln(w, "| Stack | Result | Create | Update | Replace | Delete | Unchanged |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	for _, r := range res.Stacks {
		c := r.Changes
		result := r.Result
		switch {
		case r.Result == engine.Failed:
			result = "❌ failed"
		case r.Result == engine.Skipped:
			result = "⏭ skipped"
		case c.Total() == 0:
			result = "✅ no changes"
		default:
			result = "📝 changes"
		}
		fmt.Fprintf(w, "| `%s` | %s | %d | %d | %d | %d | %d |\n", r.Name, result, c.Create, c.Update, c.Replace, c.Delete, c.Same)
	}
	for _, r := range res.Stacks {
		if r.Result == engine.Failed {
			fmt.Fprintf(w, "\n**`%s` failed:** %s\n", r.Name, mdEscape(r.Error))
			continue
		}
		if len(r.Planned) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n<details><summary><code>%s</code>: %d change(s)</summary>\n\n", r.Name, len(r.Planned))
		fmt.Fprintln(w, "| Op | Type | Name | Changed properties |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, c := range r.Planned {
			diffs := strings.Join(c.Diffs, ", ")
			if len(c.Replace) > 0 {
				diffs += " (replace: " + strings.Join(c.Replace, ", ") + ")"
			}
			fmt.Fprintf(w, "| %s | `%s` | `%s` | %s |\n", c.Op, c.Type, c.Name, mdEscape(diffs))
		}
		fmt.Fprintln(w, "\n</details>")
	}
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}
