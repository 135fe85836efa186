// Package stackview draws the reports of up, preview and destroy: each
// stack's result and planned changes as a table, as JSON, and (preview) as
// one pull-request comment.
package stackview

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cellctl/cellctl/internal/apply"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// The views of an apply report: up and destroy offer Table and JSON,
// preview adds the planned changes to its table (PreviewTable) and a
// markdown summary (Markdown).
var (
	Table = render.Format[*apply.Report]{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, rep *apply.Report) error {
		return reportTable(io, rep, false)
	}}
	PreviewTable = render.Format[*apply.Report]{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, rep *apply.Report) error {
		return reportTable(io, rep, true)
	}}
	JSON = render.Format[*apply.Report]{Name: render.FormatJSON, Render: func(io *iostreams.IOStreams, rep *apply.Report) error {
		switch {
		case rep.DryRun:
			return render.JSON(io.Out, dryRunDoc{DryRun: true, Plan: rep.Plan})
		case rep.Result != nil:
			return render.JSON(io.Out, rep.Result)
		}
		return nil
	}}
	Markdown = render.Format[*apply.Report]{Name: render.FormatMarkdown, Render: func(io *iostreams.IOStreams, rep *apply.Report) error {
		if rep.Result != nil {
			writeMarkdown(io.Out, rep.Result)
		}
		return nil
	}}
)

// dryRunDoc is the -o json document of --dry-run.
type dryRunDoc struct {
	DryRun bool          `json:"dryRun"`
	Plan   *runplan.Plan `json:"plan"`
}

func reportTable(io *iostreams.IOStreams, rep *apply.Report, planned bool) error {
	if rep.DryRun {
		if err := rep.Plan.Describe(io.Out); err != nil {
			return err
		}
		_, err := fmt.Fprintln(io.Out, "dry run: nothing was changed")
		return err
	}
	if rep.Result == nil {
		return nil
	}
	resultTable(io, rep.Result)
	if planned {
		plannedTables(io, rep.Result)
	}
	return nil
}

// resultTable writes one row per stack, then each stack's notes and
// failure.
func resultTable(io *iostreams.IOStreams, res *runplan.Result) {
	s := render.Out(io)
	var rows [][]string
	for _, r := range res.Stacks {
		result := r.Result
		switch r.Result {
		case stackrun.Succeeded:
			result = s.Good(result)
		case stackrun.Failed:
			result = s.Bad(result)
		default:
			result = s.Warn(result)
		}
		c := r.Changes
		rows = append(rows, []string{r.Name, result, fmt.Sprint(c.Create), fmt.Sprint(c.Update), fmt.Sprint(c.Replace),
			fmt.Sprint(c.Delete), fmt.Sprint(c.Same), fmt.Sprintf("%.1fs", r.Seconds())})
	}
	fmt.Fprint(io.Out, s.Table([]string{"STACK", "RESULT", "CREATE", "UPDATE", "REPLACE", "DELETE", "SAME", "TIME"}, rows))
	for _, r := range res.Stacks {
		for _, n := range r.Notes {
			fmt.Fprintf(io.Out, "%s: note: %s\n", r.Name, n)
		}
		if r.Result == stackrun.Failed {
			fmt.Fprintf(io.Out, "%s: %s\n", r.Name, r.Error())
			if len(r.FailedResources) > 0 {
				failed := append([]string(nil), r.FailedResources...)
				sort.Strings(failed)
				fmt.Fprintf(io.Out, "%s: failed resources: %s\n", r.Name, strings.Join(failed, ", "))
			}
		}
	}
}

func plannedTables(io *iostreams.IOStreams, res *runplan.Result) {
	s := render.Out(io)
	for _, r := range res.Stacks {
		changes := stackrun.ResourceChanges(r.Planned)
		if len(changes) == 0 {
			continue
		}
		fmt.Fprintf(io.Out, "\n%s\n", s.Bold(r.Name))
		var rows [][]string
		var warnings []string
		for _, c := range changes {
			op := c.Op
			if c.Warning != "" {
				op = s.Bad("!! " + c.Op)
				warnings = append(warnings, fmt.Sprintf("%s %s %s %s: %s", r.Name, c.Op, c.Type, c.Name, c.Warning))
			}
			rows = append(rows, []string{op, c.Type, c.Name, strings.Join(c.Diffs, ", ")})
		}
		fmt.Fprint(io.Out, s.Table([]string{"OP", "TYPE", "NAME", "CHANGED"}, rows))
		for _, w := range warnings {
			fmt.Fprintln(io.Out, s.Bad("WARNING: "+w))
		}
	}
}

// lossWarnings lists the planned replacements and deletes of protected or
// stateful resources, one line each.
func lossWarnings(res *runplan.Result) []string {
	var out []string
	for _, r := range res.Stacks {
		for _, c := range stackrun.ResourceChanges(r.Planned) {
			if c.Warning != "" {
				out = append(out, fmt.Sprintf("`%s`: %s `%s` `%s` — %s", r.Name, c.Op, c.Type, c.Name, c.Warning))
			}
		}
	}
	return out
}

// writeMarkdown renders one PR-comment-ready summary of every stack.
func writeMarkdown(w io.Writer, res *runplan.Result) {
	total := 0
	for _, r := range res.Stacks {
		total += r.Changes.Total()
	}
	fmt.Fprintf(w, "### cellctl preview: %d change(s) across %d stack(s)\n\n", total, len(res.Stacks))
	var rows [][]string
	for _, r := range res.Stacks {
		c := r.Changes
		var result string
		switch {
		case r.Result == stackrun.Failed:
			result = "❌ failed"
		case r.Result == stackrun.Skipped:
			result = "⏭ skipped"
		case c.Total() == 0:
			result = "✅ no changes"
		default:
			result = "📝 changes"
		}
		rows = append(rows, []string{render.MarkdownCode(r.Name), result, fmt.Sprint(c.Create), fmt.Sprint(c.Update), fmt.Sprint(c.Replace),
			fmt.Sprint(c.Delete), fmt.Sprint(c.Same)})
	}
	fmt.Fprint(w, render.MarkdownTable([]string{"Stack", "Result", "Create", "Update", "Replace", "Delete", "Unchanged"}, rows))
	if warns := lossWarnings(res); len(warns) > 0 {
		fmt.Fprintf(w, "\n> [!WARNING]\n> **%d replacement(s) or delete(s) of protected or stateful resources:**\n", len(warns))
		for _, x := range warns {
			fmt.Fprintf(w, "> - %s\n", render.MarkdownEscape(x))
		}
	}
	for _, r := range res.Stacks {
		if r.Result == stackrun.Failed {
			fmt.Fprintf(w, "\n**`%s` failed:** %s\n", r.Name, render.MarkdownEscape(r.Error()))
			continue
		}
		changes := stackrun.ResourceChanges(r.Planned)
		if len(changes) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n<details><summary><code>%s</code>: %d change(s)</summary>\n\n", r.Name, len(changes))
		var rows [][]string
		for _, c := range changes {
			diffs := strings.Join(c.Diffs, ", ")
			if len(c.Replace) > 0 {
				diffs += " (replace: " + strings.Join(c.Replace, ", ") + ")"
			}
			op := c.Op
			if c.Warning != "" {
				op = "⚠ **" + c.Op + "**"
			}
			rows = append(rows, []string{op, render.MarkdownCode(c.Type), render.MarkdownCode(c.Name), diffs})
		}
		fmt.Fprint(w, render.MarkdownTable([]string{"Op", "Type", "Name", "Changed properties"}, rows))
		fmt.Fprintln(w, "\n</details>")
	}
}
