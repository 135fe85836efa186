package deployview

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/waves/executor"
)

// Table is the final table of a run: cell → wave → image → state.
func Table(s *render.Styles, rows []executor.Row) string {
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, []string{r.Cell, r.Wave, r.Image, r.State})
	}
	return s.Table([]string{"CELL", "WAVE", "IMAGE", "STATE"}, out)
}

// Describe is the dry run as text: per wave its bake, gate and exposure,
// per cell what changes and what its preview plans.
func Describe(s *render.Styles, d *executor.Description) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rollout %s (dry run: nothing changes), expected %s\n", d.ID, d.Expected.Round(time.Second))
	for _, w := range d.Waves {
		fmt.Fprintf(&b, "\n%s  %sbake %s, poll %s, gate %s, on breach %s, expected %s\n", s.Bold(w.Name), delay(w.Delay), w.Bake, w.Poll, w.Gate, w.OnBreach, w.Expected.Round(time.Second))
		if w.Exposure != nil && w.Cumulative != nil {
			fmt.Fprintf(&b, "  exposure: %.1f%% of buckets, %.1f%% of pinned tenants (cumulative %.1f%%, %.1f%%)\n",
				100*w.Exposure.Buckets, 100*w.Exposure.Pinned, 100*w.Cumulative.Buckets, 100*w.Cumulative.Pinned)
		}
		for _, c := range w.Cells {
			switch {
			case c.Error != "":
				fmt.Fprintf(&b, "  %s: %s\n", c.Cell, s.Bad(c.Error))
			case c.Unchanged:
				fmt.Fprintf(&b, "  %s: unchanged\n", c.Cell)
			default:
				fmt.Fprintf(&b, "  %s:\n", c.Cell)
				if c.Bootstrap != nil && !c.Bootstrap.AfterUpdate {
					fmt.Fprintf(&b, "    bootstrap the database users first: %s\n", c.Bootstrap.Why)
				}
				if c.Migration != nil {
					fmt.Fprintf(&b, "    migrate first: %s\n", c.Migration)
				}
				if c.Bootstrap != nil && c.Bootstrap.AfterUpdate {
					fmt.Fprintf(&b, "    bootstrap the database users after the update: %s\n", c.Bootstrap.Why)
				}
				for _, ch := range c.Changes {
					fmt.Fprintf(&b, "    %s: %s → %s\n", ch.Key, ch.Old, ch.New)
				}
				if len(c.Resources) > 0 {
					fmt.Fprintf(&b, "    preview: %s\n", resourceCount(c.Resources))
					for _, r := range c.Resources {
						fmt.Fprintf(&b, "      %s\n", resourceLine(s, r))
					}
				}
			}
		}
	}
	return b.String()
}

// Markdown is the dry run as one PR comment.
func Markdown(d *executor.Description) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Rollout `%s` (dry run), expected %s\n\n", d.ID, d.Expected.Round(time.Second))
	var rows [][]string
	for _, w := range d.Waves {
		exposure := "-"
		if w.Exposure != nil && w.Cumulative != nil {
			exposure = fmt.Sprintf("%.1f%% buckets, %.1f%% pinned (%.1f%%, %.1f%%)", 100*w.Exposure.Buckets, 100*w.Exposure.Pinned, 100*w.Cumulative.Buckets, 100*w.Cumulative.Pinned)
		}
		for _, c := range w.Cells {
			var changes []string
			switch {
			case c.Error != "":
				changes = []string{"**cannot read:** " + c.Error}
			case c.Unchanged:
				changes = []string{"unchanged"}
			}
			if c.Bootstrap != nil {
				changes = append(changes, "bootstrap the database users "+c.Bootstrap.String())
			}
			if c.Migration != nil {
				changes = append(changes, "migrate first: "+render.MarkdownCode(c.Migration.String()))
			}
			for _, ch := range c.Changes {
				changes = append(changes, fmt.Sprintf("%s: %s → %s", render.MarkdownCode(ch.Key), ch.Old, ch.New))
			}
			if len(c.Resources) > 0 {
				changes = append(changes, "preview: "+resourceCount(c.Resources))
				for _, r := range c.Resources {
					changes = append(changes, render.MarkdownCode(resourceLine(render.NewStyles(io.Discard, false), r)))
				}
			}
			rows = append(rows, []string{w.Name, c.Cell, strings.Join(changes, "<br>"), delay(w.Delay) + w.Bake.String(), w.Gate, exposure})
		}
	}
	b.WriteString(render.MarkdownTable([]string{"wave", "cell", "changes", "bake", "gate", "exposure (cumulative)"}, rows))
	return b.String()
}

// resourceCount is a preview's changes by operation ("2 to update, 1 to
// replace").
func resourceCount(rs []executor.ResourceChange) string {
	n := map[string]int{}
	var ops []string
	for _, r := range rs {
		if n[r.Op] == 0 {
			ops = append(ops, r.Op)
		}
		n[r.Op]++
	}
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%d to %s", n[op], op)
	}
	return strings.Join(parts, ", ")
}

// resourceLine is one planned resource change: "update
// aws:ecs/service:Service cell-a-svc (taskDefinition)".
func resourceLine(s *render.Styles, r executor.ResourceChange) string {
	line := r.Op + " " + r.Type + " " + r.Name
	if len(r.Diffs) > 0 {
		line += " (" + strings.Join(r.Diffs, ", ") + ")"
	}
	if len(r.Replace) > 0 {
		line += " replaced for " + strings.Join(r.Replace, ", ")
	}
	if r.Warning != "" {
		line += ": " + s.Warn(r.Warning)
	}
	return line
}

// delay says a wave's hold before it starts (the pipeline shape's delay),
// or nothing.
func delay(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return "hold " + d.String() + " after the wave before, "
}
