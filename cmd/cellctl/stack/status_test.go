package stack

import (
	"context"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/engine"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
)

type fakeStatus []*engine.StackStatus

func (f fakeStatus) Status(context.Context, []string) ([]*engine.StackStatus, error) { return f, nil }

// A stack whose state cannot be read is shown on one table line and the
// command fails with the whole message (exit 1), never "fine".
func TestStatusFailsOnAnUnreadableStack(t *testing.T) {
	fl, err := fleet.Load("../../..")
	if err != nil {
		t.Fatal(err)
	}
	io, _, out, _ := iostreams.Test()
	view, err := render.Pick(render.FormatTable, statusTable)
	if err != nil {
		t.Fatal(err)
	}
	corrupt := "the state of stack cell-b is corrupt: x.json: truncated; nothing was run.\nRestore the last good checkpoint"
	opts := &StatusOptions{IO: io, Fleet: func() (*fleet.Fleet, error) { return fl, nil }, View: view, Cells: []string{"cell-a", "cell-b"},
		Engine: func(*fleet.Fleet) (StatusReader, error) {
			return fakeStatus{{Name: "cell-a", Deployed: true, LastKind: "update", LastResult: "succeeded"}, {Name: "cell-b", Error: corrupt}}, nil
		}}
	err = statusRun(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "cell-b: "+corrupt) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(out.String(), "error: the state of stack cell-b is corrupt") || strings.Contains(out.String(), "Restore the last") {
		t.Fatalf("table:\n%s", out.String())
	}
	opts.Cells = []string{"cell-a"}
	opts.Engine = func(*fleet.Fleet) (StatusReader, error) { return fakeStatus{{Name: "cell-a"}}, nil }
	if err := statusRun(context.Background(), opts); err != nil {
		t.Fatalf("a readable fleet: %v", err)
	}
}
