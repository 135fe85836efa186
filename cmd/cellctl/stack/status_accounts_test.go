package stack

import (
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/iostreams"
)

// A fleet with cells in another account shows where each stack lives; a
// one-account fleet's status has no ACCOUNT column.
func TestStatusShowsTheAccountOfEachStack(t *testing.T) {
	render := func(overlays ...string) string {
		fl := fleettest.Load(t, fleettest.Demo(t, overlays...))
		var rows []CellStatus
		for _, name := range append(fl.CellIDs(), "router") {
			rows = append(rows, cellStatus(fl, &engine.StackStatus{Name: name}))
		}
		io, _, out, _ := iostreams.Test()
		if err := statusTable.Render(io, rows); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if out := render(); strings.Contains(out, "ACCOUNT") {
		t.Errorf("one-account fleet:\n%s", out)
	}
	out := render(fleettest.TwoAccounts)
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	if !strings.Contains(lines["STACK"], "ACCOUNT") || !strings.Contains(lines["cell-c"], fleettest.SecondAccount) ||
		!strings.Contains(lines["cell-d"], fleettest.SecondAccount) || !strings.Contains(lines["cell-a"], "default") || !strings.Contains(lines["router"], "default") {
		t.Errorf("accounts per stack:\n%s", out)
	}
}
