// Package routing renders the routing table's reports for a terminal: a
// table transition (drain, undrain, cell add, migrate, retire) and a
// cell's share of its capacity. Commands of several nouns show them.
package routing

import (
	"fmt"
	"io"
	"strconv"

	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/router"
)

// Transition renders the report of a lifecycle change of the routing
// table (drain, undrain, cell add, migrate): what moves to which cell, and
// each cell's load before → after. The -o json form is the Transition
// itself.
func Transition(s *render.Styles, w io.Writer, tr *router.Transition) {
	what := string(tr.Action) + " " + tr.Cell
	if tr.Tenant != "" {
		what = string(tr.Action) + " " + tr.Tenant + " (" + tr.Cell + ")"
	}
	fmt.Fprintf(w, "%s: routing table version %d → %d (load: %s)\n", s.Bold(what), tr.FromVersion, tr.ToVersion, tr.LoadSource)
	moved := fmt.Sprintf("%d of %d buckets (%s of tenants routed by hash), %d load units",
		tr.MovedBuckets, tr.To.Buckets(), Pct(tr.MovedShare), tr.MovedLoad)
	if tr.Action == router.ActionUndrain || tr.Action == router.ActionAdd {
		moved += fmt.Sprintf("; the fewest possible: %d", tr.LowerBound)
	}
	fmt.Fprintf(w, "moved: %s\n", moved)
	if len(tr.Moves) > 0 {
		rows := make([][]string, 0, len(tr.Moves))
		for _, m := range tr.Moves {
			rows = append(rows, []string{m.From, m.To, strconv.Itoa(m.Buckets), Pct(m.Share), strconv.FormatInt(m.Load, 10)})
		}
		fmt.Fprintf(w, "\n%s\n", s.Bold("Moves"))
		fmt.Fprint(w, s.Table([]string{"FROM", "TO", "BUCKETS", "TENANTS", "LOAD"}, rows))
	}
	if len(tr.TenantsMoved) > 0 {
		rows := make([][]string, 0, len(tr.TenantsMoved))
		for _, m := range tr.TenantsMoved {
			rows = append(rows, []string{m.Tenant, m.From, m.To})
		}
		fmt.Fprintf(w, "\n%s\n", s.Bold("Overridden tenants that move"))
		fmt.Fprint(w, s.Table([]string{"TENANT", "FROM", "TO"}, rows))
	}
	rows := make([][]string, 0, len(tr.Cells))
	for _, c := range tr.Cells {
		rows = append(rows, []string{
			c.Cell, arrow(string(c.FromState), string(c.ToState)),
			arrow(strconv.Itoa(c.FromBuckets), strconv.Itoa(c.ToBuckets)),
			arrow(strconv.FormatInt(c.FromLoad, 10), strconv.FormatInt(c.ToLoad, 10)),
			CapacityText(c.Capacity, c.CapacityDefault),
			arrowStyled(UsedText(s, c.FromUsed), UsedText(s, c.ToUsed), c.FromUsed == c.ToUsed),
		})
	}
	fmt.Fprintf(w, "\n%s\n", s.Bold("Cells"))
	fmt.Fprint(w, s.Table([]string{"CELL", "STATE", "BUCKETS", "LOAD", "CAPACITY", "USED"}, rows))
}

// arrow is "a → b", or a when nothing changed ("-" for a cell that did
// not exist before).
func arrow(a, b string) string {
	if a == "" {
		a = "-"
	}
	if a == b {
		return a
	}
	return a + " → " + b
}

func arrowStyled(a, b string, same bool) string {
	if same {
		return a
	}
	return a + " → " + b
}

// UsedText is a share of capacity, styled: red above capacity, yellow
// from 80 %.
func UsedText(s *render.Styles, used float64) string {
	text := strconv.FormatFloat(used*100, 'f', 1, 64) + "%"
	switch {
	case used > 1:
		return s.Bad(text)
	case used >= 0.8:
		return s.Warn(text)
	}
	return text
}

// Pct is a share in percent: two decimals below 1 %, else one.
func Pct(share float64) string {
	if share > 0 && share < 0.01 {
		return strconv.FormatFloat(share*100, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(share*100, 'f', 1, 64) + "%"
}

// CapacityText is a cell's capacity; derived (not set in the table) is
// marked with a star.
func CapacityText(c int64, derived bool) string {
	if derived {
		return strconv.FormatInt(c, 10) + "*"
	}
	return strconv.FormatInt(c, 10)
}
