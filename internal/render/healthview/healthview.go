// Package healthview draws `cellctl health`: the table (worst cell first,
// beside the fleet average), the one-line update of a piped --watch, and
// the --watch redraw.
package healthview

import (
	"fmt"
	"github.com/cellctl/cellctl/internal/fleet"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/health"
	"github.com/cellctl/cellctl/internal/render"
)

func num(v *float64, format string) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf(format, *v)
}

func pct(v *float64) string {
	if v == nil {
		return "—"
	}
	d := 3
	if math.Abs(*v) >= 10 {
		d = 1
	}
	r := math.Round(*v*math.Pow10(d)) / math.Pow10(d)
	return strconv.FormatFloat(r, 'f', -1, 64) + "%"
}

func tasks(healthy *float64, desired int) string {
	return num(healthy, "%.0f") + "/" + fmt.Sprint(desired)
}

func nowWindow(now, window string) string {
	if now == window {
		return now
	}
	return now + " (" + window + ")"
}

// Table renders the report: one row per cell, worst first, each value now
// and (in parentheses) over the window, then the worst cell beside the
// fleet average and what the average hides.
func Table(s *render.Styles, r health.Report) string {
	var b strings.Builder
	headers := []string{"CELL", "STATE", "REQ/S", "5XX", "P99", "TASKS", "LOAD", "ALARMS", "FINDINGS"}
	// A fleet with cells in other accounts says where each cell lives (a
	// one-account fleet's table stays as it was).
	accounts := false
	for _, c := range r.Cells {
		accounts = accounts || c.Account != ""
	}
	if accounts {
		headers = append([]string{headers[0], "ACCOUNT"}, headers[1:]...)
	}
	rows := make([][]string, 0, len(r.Cells))
	for _, c := range r.Cells {
		state := c.State
		if state == "" {
			state = "—"
		}
		findings := "ok"
		if c.Bad() {
			findings = s.Bad(strings.Join(c.Findings, "; "))
		}
		rows = append(rows, []string{
			c.Cell, state,
			nowWindow(num(c.Now.RequestsPerSecond, "%.1f"), num(c.Window.RequestsPerSecond, "%.1f")),
			nowWindow(pct(c.Now.ErrorRatePercent), pct(c.Window.ErrorRatePercent)),
			nowWindow(num(c.Now.P99Ms, "%.0fms"), num(c.Window.P99Ms, "%.0fms")),
			nowWindow(tasks(c.Now.HealthyTasks, c.DesiredTasks), "min "+num(c.Window.HealthyTasks, "%.0f")),
			nowWindow(pct(c.Now.LoadPercent), pct(c.Window.LoadPercent)),
			alarmSummary(s, c.Alarms),
			findings,
		})
		if accounts {
			row := rows[len(rows)-1]
			rows[len(rows)-1] = append([]string{row[0], fleet.Access{Account: c.Account}.AccountLabel()}, row[1:]...)
		}
	}
	fmt.Fprintf(&b, "cell health at %s, window %s (now, and over the window in parentheses)\n", r.At.Format(time.RFC3339), r.Since)
	b.WriteString(s.Table(headers, rows))
	if len(r.Cells) == 0 {
		return b.String()
	}
	w := r.Cells[0]
	fmt.Fprintf(&b, "worst cell     %-8s 5xx %-8s p99 %-7s tasks %-6s load %s\n", w.Cell,
		pct(w.Now.ErrorRatePercent), num(w.Now.P99Ms, "%.0fms"), tasks(w.Now.HealthyTasks, w.DesiredTasks), pct(w.Now.LoadPercent))
	f := r.Fleet
	fmt.Fprintf(&b, "fleet average  %-8s 5xx %-8s p99 %-7s tasks %-6s load %s\n", fmt.Sprintf("%d cells", f.Cells),
		pct(f.ErrorRatePercent), num(f.P99Ms, "%.0fms"), tasks(f.HealthyTasks, f.DesiredTasks), pct(f.LoadPercent))
	for _, h := range r.Hidden {
		fmt.Fprintf(&b, "%s %s\n", s.Warn("the fleet average hides the worst cell —"), h)
	}
	if r.Canary != nil {
		fmt.Fprintf(&b, "%s %s\n", s.Bad("router:"), r.Canary.Finding)
	}
	if r.Findings > 0 {
		fmt.Fprintf(&b, "%s\n", s.Bad(fmt.Sprintf("%d of %d cells have findings (exit 2)", r.Findings, len(r.Cells))))
	} else if r.Canary != nil {
		fmt.Fprintf(&b, "%s\n", s.Bad(fmt.Sprintf("all %d cells healthy, the router has a finding (exit 2)", len(r.Cells))))
	} else {
		fmt.Fprintf(&b, "%s\n", s.Good(fmt.Sprintf("all %d cells healthy", len(r.Cells))))
	}
	return b.String()
}

func alarmSummary(s *render.Styles, as []health.Alarm) string {
	var bad []string
	for _, a := range as {
		if a.State != "OK" {
			bad = append(bad, a.Key+" "+a.State)
		}
	}
	if len(bad) == 0 {
		if len(as) == 0 {
			return "—"
		}
		return fmt.Sprintf("%d OK", len(as))
	}
	return s.Bad(strings.Join(bad, ", "))
}

// Line is one update of `--watch` when stdout is not a terminal: the time,
// the worst cell and the fleet average on one line.
func Line(r health.Report) string {
	if len(r.Cells) == 0 {
		return fmt.Sprintf("%s no cells\n", r.At.Format(time.RFC3339))
	}
	w := r.Cells[0]
	status := "ok"
	if w.Bad() {
		status = strings.Join(w.Findings, "; ")
	}
	line := fmt.Sprintf("%s worst %s 5xx %s p99 %s tasks %s load %s [%s] | fleet average 5xx %s p99 %s | %d/%d cells with findings",
		r.At.Format(time.RFC3339), w.Cell, pct(w.Now.ErrorRatePercent), num(w.Now.P99Ms, "%.0fms"),
		tasks(w.Now.HealthyTasks, w.DesiredTasks), pct(w.Now.LoadPercent), status,
		pct(r.Fleet.ErrorRatePercent), num(r.Fleet.P99Ms, "%.0fms"), r.Findings, len(r.Cells))
	if len(r.Hidden) > 0 {
		line += " | average hides: " + strings.Join(r.Hidden, "; ")
	}
	if r.Canary != nil {
		line += " | router: " + r.Canary.Finding
	}
	return line + "\n"
}

// ClearScreen moves the cursor home and clears the terminal, so a redraw
// replaces the previous table in place.
const ClearScreen = "\x1b[H\x1b[2J"

// Watch is the draw of `health --watch`: on a terminal each report
// replaces the previous table, otherwise one Line per update.
func Watch(w io.Writer, tty bool, styles *render.Styles, interval time.Duration) func(health.Report) {
	return func(r health.Report) {
		if tty {
			fmt.Fprint(w, ClearScreen+Table(styles, r)+fmt.Sprintf("refreshing every %s — Ctrl-C to stop\n", interval))
			return
		}
		fmt.Fprint(w, Line(r))
	}
}
