package lifecycle

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	lc "github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/stackrun"
)

func testFactory(output string) *cmdutil.Factory {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir, f.Global.Output, f.Global.Parallel, f.Global.Cloud = "../../..", output, 3, cmdutil.CloudSim
	return f
}

func TestDrainFlags(t *testing.T) {
	var got *DrainOptions
	cmd := NewCmdDrain(testFactory("json"), func(o *DrainOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"cell-d", "--now", "--move-pinned", "--dry-run", "--grace", "5s"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Cell != "cell-d" || !got.Now || !got.MovePinned || !got.DryRun || got.Grace != 5*time.Second || got.Parallel != 3 || got.View == nil {
		t.Fatalf("options = %+v", got)
	}
	cmd = NewCmdDrain(testFactory("table"), func(o *DrainOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"cell-d"})
	if err := cmd.Execute(); err != nil || got.Grace != lc.DefaultGrace || got.Now {
		t.Fatalf("defaults: %v %+v", err, got)
	}
}

func TestMigrateFlags(t *testing.T) {
	var got *MigrateOptions
	cmd := NewCmdMigrate(testFactory("table"), func(o *MigrateOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"acme", "--to", "cell-c"})
	if err := cmd.Execute(); err != nil || got.Tenant != "acme" || got.To != "cell-c" || got.Finish || got.Abort {
		t.Fatalf("%v %+v", err, got)
	}
	for _, args := range [][]string{{"acme"}, {"acme", "--finish", "--abort"}} {
		cmd = NewCmdMigrate(testFactory("table"), func(o *MigrateOptions) error { t.Fatal("ran"); return nil })
		cmd.SetArgs(args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v must be refused", args)
		}
	}
}

// TestDrainDryRunPrintsBothSteps runs the command's run function over the
// demo fleet: the report shows both transitions and nothing connects to
// the engine.
func TestDrainDryRunPrintsBothSteps(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	view, err := render.Pick("table", Formats...)
	if err != nil {
		t.Fatal(err)
	}
	opts := &DrainOptions{
		Deps: Deps{IO: io, Load: func() (*fleet.Fleet, error) { return fleet.Load("../../..") },
			Engine: func(*fleet.Fleet, func(stackrun.Event)) (lc.Engine, error) {
				return nil, errors.New("a dry run must not connect")
			}},
		View: view, Cell: "cell-d", DryRun: true,
	}
	if err := drainRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"drain cell-d: routing table version 1 → 2",
		"moved: 256 of 1024 buckets (25.0% of tenants routed by hash), 256 load units",
		"mark-drained cell-d: routing table version 2 → 3",
		"dry run: nothing was written or published",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
