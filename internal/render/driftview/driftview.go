// Package driftview renders the drift audit's report (internal/drift) for
// a terminal (Table) and as one issue or pull-request comment (Markdown).
package driftview

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/drift"
	"github.com/cellctl/cellctl/internal/render"
)

// Headline says in one line how the audit went.
func Headline(r *drift.Report) string {
	bad := 0
	for _, c := range r.Cells {
		if c.Total() > 0 {
			bad++
		}
	}
	if len(r.Findings) == 0 {
		return fmt.Sprintf("no drift in %d %s (%s)", len(r.Cells), plural(len(r.Cells), "cell", "cells"), kinds(r.Checks))
	}
	return fmt.Sprintf("%d of %d %s need attention: %d %s (%s)", bad, len(r.Cells), plural(len(r.Cells), "cell", "cells"),
		len(r.Findings), plural(len(r.Findings), "finding", "findings"), kinds(r.Checks))
}

func kinds(ks []drift.Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// arrow renders old → new for a finding.
func arrow(f drift.Finding) string {
	switch {
	case f.Old == "" && f.New == "":
		return ""
	case f.Old == "":
		return f.New
	case f.New == "":
		return f.Old + " → (none)"
	}
	return f.Old + " → " + f.New
}

func subject(f drift.Finding) string {
	switch f.Kind {
	case drift.KindCloud:
		s := f.Type + " " + f.Resource
		if f.Property != "" {
			s += " " + f.Property
		}
		if f.Resource == "" {
			s = "(whole stack)"
		}
		return s
	default:
		if f.Key == "" {
			return "(cell)"
		}
		return f.Key
	}
}

// Table renders the report for a terminal or a log: the per-cell
// summary, every finding with what to do next, and the skew view.
func Table(w io.Writer, s *render.Styles, r *drift.Report) error {
	fmt.Fprintln(w, s.Bold("cellctl drift: "+Headline(r)))
	fmt.Fprintln(w)
	head := []string{"CELL", "SKEW", "BEHIND", "CLOUD", "NOT CHECKED", "EXCEPTED", "IGNORED"}
	if r.Has(drift.KindBehind) {
		// The desired image: the repository's, or the one a rollout
		// shipped and the cell kept (internal/desired).
		head = append(head, "DEPLOYED IMAGE", "DESIRED IMAGE")
	}
	var rows [][]string
	for _, c := range r.Cells {
		cell := c.Cell
		if c.Total() > 0 {
			cell = s.Bad(cell)
		} else {
			cell = s.Good(cell)
		}
		row := []string{cell, count(r, drift.KindSkew, c.Skew), count(r, drift.KindBehind, c.Behind), count(r, drift.KindCloud, c.Cloud),
			count(r, drift.KindCloud, c.NotChecked), fmt.Sprint(c.Excepted), fmt.Sprint(c.Ignored)}
		if r.Has(drift.KindBehind) {
			row = append(row, orWhat(c.Deployed, "-"), c.Repo)
		}
		rows = append(rows, row)
	}
	fmt.Fprint(w, s.Table(head, rows))
	if len(r.Findings) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, s.Bold("Findings (worst cells first)"))
		var fr [][]string
		for _, f := range r.Findings {
			fr = append(fr, []string{f.Cell, string(f.Kind), f.Status, subject(f), arrow(f)})
		}
		fmt.Fprint(w, s.Table([]string{"CELL", "CHECK", "STATUS", "WHAT", "OLD → NEW"}, fr))
		fmt.Fprintln(w)
		fmt.Fprintln(w, s.Bold("What to do next"))
		for _, g := range nextSteps(r) {
			what := subject(g.first)
			if g.n > 1 {
				what = fmt.Sprintf("%d findings", g.n)
			}
			fmt.Fprintf(w, "  %s %s %s: %s\n", g.first.Cell, g.first.Kind, what, g.text)
		}
	}
	if len(r.Excepted) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, s.Bold("Excepted by the policy (not findings)"))
		for _, f := range r.Excepted {
			fmt.Fprintf(w, "  %s %s: %s (%s)\n", f.Cell, f.Key, arrow(f), f.Detail)
		}
	}
	if len(r.Skew) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, s.Bold("Skew between cells (keys where a cell differs from the baseline)"))
		cells := cellIDs(r)
		head := append([]string{"KEY", "CLASS", "BASELINE"}, cells...)
		var sr [][]string
		for _, row := range r.Skew {
			line := []string{row.Key, string(row.Class), orWhat(row.Baseline, "-")}
			for _, c := range cells {
				line = append(line, skewCell(row, c))
			}
			sr = append(sr, line)
		}
		fmt.Fprint(w, s.Table(head, sr))
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, s.Dim("note: "+n))
	}
	return nil
}

func count(r *drift.Report, k drift.Kind, n int) string {
	if !r.Has(k) {
		return "-"
	}
	return fmt.Sprint(n)
}

// cellIDs lists the audited cells in id order (the skew view's columns).
func cellIDs(r *drift.Report) []string {
	var ids []string
	for _, c := range r.Cells {
		ids = append(ids, c.Cell)
	}
	slices.Sort(ids)
	return ids
}

func skewCell(row drift.SkewRow, cell string) string {
	v, ok := row.Values[cell]
	if !ok {
		return ""
	}
	switch st := row.State[cell]; st {
	case drift.StatusOutlier, drift.StatusDuplicate:
		return v + " (" + st + ")"
	case "":
		return v
	default:
		return v + " (" + st + ")"
	}
}

// step is one piece of advice and the findings it answers.
type step struct {
	first drift.Finding
	n     int
	text  string
}

// nextSteps groups the findings of one cell and check that share the
// same advice (a refresh that stopped leaves every resource with one
// reason), in report order.
func nextSteps(r *drift.Report) []step {
	var out []step
	idx := map[string]int{}
	for _, f := range r.Findings {
		text := f.Next
		if f.Detail != "" {
			text = f.Detail + "; " + text
		}
		k := f.Cell + "\x00" + string(f.Kind) + "\x00" + text
		if i, ok := idx[k]; ok {
			out[i].n++
			continue
		}
		idx[k] = len(out)
		out = append(out, step{first: f, n: 1, text: text})
	}
	return out
}

// Markdown renders the report as one comment for an issue or a pull
// request: a headline, the per-cell summary, each cell's findings (worst
// first) with what to do next, and the skew view folded away.
func Markdown(w io.Writer, r *drift.Report) error {
	icon := "✅"
	if len(r.Findings) > 0 {
		icon = "⚠️"
	}
	fmt.Fprintf(w, "### %s cellctl drift: %s\n\n", icon, Headline(r))
	failOn := kinds(r.FailOn)
	if failOn == "" {
		failOn = "nothing"
	}
	fmt.Fprintf(w, "Checks: %s · fails on: %s\n\n", kinds(r.Checks), failOn)
	var rows [][]string
	for _, c := range r.Cells {
		rows = append(rows, []string{c.Cell, count(r, drift.KindSkew, c.Skew), count(r, drift.KindBehind, c.Behind),
			count(r, drift.KindCloud, c.Cloud), count(r, drift.KindCloud, c.NotChecked), fmt.Sprint(c.Excepted), fmt.Sprint(c.Ignored)})
	}
	fmt.Fprint(w, render.MarkdownTable([]string{"cell", "skew", "behind", "cloud", "not checked", "excepted", "ignored"}, rows))
	for _, c := range r.Cells {
		if c.Total() == 0 {
			continue
		}
		fmt.Fprintf(w, "\n#### %s: %d %s", c.Cell, c.Total(), plural(c.Total(), "finding", "findings"))
		if r.Has(drift.KindBehind) && c.Deployed != "" && c.Deployed != c.Repo {
			fmt.Fprintf(w, " (runs %s, the repo has %s)", code(c.Deployed), code(c.Repo))
		}
		var rows [][]string
		for _, f := range r.Findings {
			if f.Cell == c.Cell {
				rows = append(rows, []string{string(f.Kind), string(f.Status), code(subject(f)), mdArrow(f)})
			}
		}
		fmt.Fprint(w, "\n\n"+render.MarkdownTable([]string{"check", "status", "what", "old → new"}, rows))
		fmt.Fprintln(w)
		for _, g := range nextSteps(r) {
			if g.first.Cell != c.Cell {
				continue
			}
			what := code(subject(g.first))
			if g.n > 1 {
				what = fmt.Sprintf("%d %s findings", g.n, g.first.Kind)
			}
			fmt.Fprintf(w, "- **Next** (%s): %s\n", what, render.MarkdownEscape(g.text))
		}
	}
	if len(r.Excepted) > 0 {
		fmt.Fprint(w, "\n<details><summary>Excepted by stacks/drift.yaml (not findings)</summary>\n\n")
		for _, f := range r.Excepted {
			fmt.Fprintf(w, "- %s %s: %s — %s\n", f.Cell, code(f.Key), mdArrow(f), render.MarkdownEscape(f.Detail))
		}
		fmt.Fprint(w, "\n</details>\n")
	}
	if len(r.Skew) > 0 {
		cells := cellIDs(r)
		fmt.Fprint(w, "\n<details><summary>Skew between cells (cells × keys)</summary>\n\n")
		var rows [][]string
		for _, row := range r.Skew {
			cols := []string{code(row.Key), string(row.Class), code(row.Baseline)}
			for _, c := range cells {
				cols = append(cols, skewCell(row, c))
			}
			rows = append(rows, cols)
		}
		fmt.Fprint(w, render.MarkdownTable(append([]string{"key", "class", "baseline"}, cells...), rows))
		fmt.Fprint(w, "\n</details>\n")
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range r.Notes {
			fmt.Fprintf(w, "> %s\n", render.MarkdownEscape(n))
		}
	}
	return nil
}

func mdArrow(f drift.Finding) string {
	switch {
	case f.Old == "" && f.New == "":
		return ""
	case f.Old == "":
		return code(f.New)
	}
	return code(f.Old) + " → " + code(orWhat(f.New, "(none)"))
}

// code is a value as inline code (render.MarkdownCode).
var code = render.MarkdownCode

func orWhat(s, what string) string {
	if s == "" {
		return what
	}
	return s
}
