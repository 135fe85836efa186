package cell

import (
	"strings"
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

func TestAddRefusesAnIndexOutOfRange(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Dir = "../../.."
	for _, idx := range []string{"-1", "-256", "256", "99999999999999999999", "1.5", "NaN"} {
		ran := false
		cmd := NewCmdAdd(f, func(o *AddOptions) error { ran = true; return nil })
		cmd.SetArgs([]string{"cell-x", "--index", idx})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.Execute()
		if err == nil || ran {
			t.Errorf("--index %s: ran=%v err=%v, want refused before anything runs", idx, ran, err)
			continue
		}
		if n := idx; (n == "-1" || n == "256") && !strings.Contains(err.Error(), "from 0 to 255") {
			t.Errorf("--index %s: %v, want the allowed range", idx, err)
		}
	}
}
