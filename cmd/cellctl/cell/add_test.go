package cell

import (
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/iostreams"
)

func TestAddFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir, f.Global.Output, f.Global.Parallel = "../../..", "json", 2
	var got *AddOptions
	cmd := NewCmdAdd(f, func(o *AddOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"cell-x", "--index", "0", "--wave", "canary", "--take", "64", "--dry-run"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.ID != "cell-x" || got.Index != 0 || got.Wave != "canary" || got.Take != "64" || !got.DryRun || got.Parallel != 2 {
		t.Fatalf("options = %+v", got)
	}
	cmd = NewCmdAdd(f, func(o *AddOptions) error { got = o; return nil })
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil || got.ID != "" || got.Index != -1 || got.Take != "auto" {
		t.Fatalf("defaults: %v %+v", err, got)
	}
}
