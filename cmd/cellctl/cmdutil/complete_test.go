package cmdutil

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/cellctl/cellctl/internal/fleet/fleettest"
	"github.com/cellctl/cellctl/internal/iostreams"
)

// The shell completes the demo fleet's cells (less those already given),
// its waves, and nothing — without an error — where there is no fleet.
func TestCompletion(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := NewFactory(io)
	f.Global.Dir = fleettest.Demo(t)
	got, dir := f.CompleteCells(nil, []string{"cell-a"}, "cell-")
	if !slices.Equal(got, []string{"cell-b", "cell-c", "cell-d"}) || dir != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("cells after cell-a: %v (%v)", got, dir)
	}
	if got, _ := f.CompleteOneCell(nil, []string{"cell-a"}, ""); got != nil {
		t.Errorf("a second cell for a one-cell command: %v", got)
	}
	if got, _ := f.CompleteWaves(nil, nil, "wave-"); !slices.Equal(got, []string{"wave-1", "wave-2"}) {
		t.Errorf("waves: %v", got)
	}
	if got, _ := f.CompleteRecords(nil, nil, ""); len(got) != 0 {
		t.Errorf("records of a fleet never deployed: %v", got)
	}

	none := NewFactory(io)
	none.Global.Dir = t.TempDir()
	if got, dir := none.CompleteCells(nil, nil, ""); got != nil || dir != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("no fleet: %v (%v)", got, dir)
	}
}
