package healthview

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/health"
	"github.com/cellctl/cellctl/internal/render"
)

func f(v float64) *float64 { return &v }

// A fleet whose average passes while its worst cell fails: cell-c at 1.2 %
// 5xx, the three others at 0.1 %, averaging 0.375 %.
func report() health.Report {
	at := time.Date(2026, 12, 1, 12, 30, 20, 0, time.UTC)
	cell := func(id string, rate float64, findings ...string) health.Cell {
		return health.Cell{Cell: id, Region: "us-east-1", DesiredTasks: 2,
			Now:    health.Signals{RequestsPerSecond: f(10), ErrorRatePercent: f(rate), P99Ms: f(120), HealthyTasks: f(2)},
			Window: health.Signals{RequestsPerSecond: f(10), ErrorRatePercent: f(rate), P99Ms: f(120), HealthyTasks: f(2)},
			Alarms: []health.Alarm{{Key: "5xx", State: "OK"}}, Findings: findings}
	}
	return health.Report{At: at, Since: "15m0s", Worst: "cell-c", Findings: 1,
		Cells:  []health.Cell{cell("cell-c", 1.2, "error_rate_5xx 1.2% fails < 0.5%"), cell("cell-a", 0.1), cell("cell-b", 0.1), cell("cell-d", 0.1)},
		Fleet:  health.Fleet{Cells: 4, ErrorRatePercent: f(0.375), P99Ms: f(120), HealthyTasks: f(8), DesiredTasks: 8},
		Hidden: []string{"error_rate_5xx: the fleet average 0.375% passes < 0.5%, but cell-c is at 1.2%"}}
}

func TestTableShowsTheWorstCellBesideTheAverage(t *testing.T) {
	out := Table(render.NewStyles(&bytes.Buffer{}, false), report())
	for _, want := range []string{"worst cell     cell-c", "fleet average  4 cells  5xx 0.375%", "the fleet average hides the worst cell — error_rate_5xx", "1 of 4 cells have findings (exit 2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "cell-c") > strings.Index(out, "cell-a") {
		t.Errorf("cell-c is not the first row:\n%s", out)
	}
}

// --watch off a terminal: one plain line per update, the worst cell and
// the fleet average on it; on a terminal each update clears the screen and
// redraws the table.
func TestWatchDrawsALineOrTheTableInPlace(t *testing.T) {
	var out bytes.Buffer
	draw := Watch(&out, false, render.NewStyles(&out, false), time.Second)
	draw(report())
	draw(report())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "2026-12-01T12:30:20Z worst cell-c") || !strings.Contains(l, "fleet average 5xx 0.375%") || strings.Contains(l, "\x1b") {
			t.Errorf("line %q", l)
		}
	}
	out.Reset()
	draw = Watch(&out, true, render.NewStyles(&out, false), time.Second)
	draw(report())
	draw(report())
	if c := strings.Count(out.String(), ClearScreen); c != 2 || strings.Count(out.String(), "worst cell     cell-c") != 2 || !strings.Contains(out.String(), "refreshing every 1s") {
		t.Errorf("%d redraws:\n%q", c, out.String())
	}
}

// A fleet with a cell in another account shows each cell's account; a
// one-account fleet has no ACCOUNT column.
func TestTableShowsAccountsWhenACellHasOne(t *testing.T) {
	st := render.NewStyles(&bytes.Buffer{}, false)
	if out := Table(st, report()); strings.Contains(out, "ACCOUNT") {
		t.Errorf("one-account fleet shows an ACCOUNT column:\n%s", out)
	}
	r := report()
	r.Cells[0].Account = "222233334444"
	out := Table(st, r)
	var c, a string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case c == "" && strings.HasPrefix(line, "cell-c"):
			c = line
		case a == "" && strings.HasPrefix(line, "cell-a"):
			a = line
		}
	}
	if !strings.Contains(out, "ACCOUNT") || !strings.Contains(c, "222233334444") || !strings.Contains(a, "default") {
		t.Errorf("accounts not shown per cell (cell-c %q, cell-a %q):\n%s", c, a, out)
	}
}
