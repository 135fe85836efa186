package routercmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/waves/signal"
)

func TestCanaryFlagsReachOptions(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Output = cmdutil.FormatTable
	var got *CanaryOptions
	cmd := NewCmdRouter(f, func(o *CanaryOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"canary", "--weight", "0.1", "--weight-bake", "30m", "--max-5xx", "<= 0.5%", "--discard"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Canary.Weight != 0.1 || got.Canary.WeightBake != 30*time.Minute || !got.Canary.Discard || got.Max5xx != "<= 0.5%" {
		t.Errorf("options %+v", got)
	}
	if err := got.thresholds(); err != nil || got.Canary.Thresholds.Get(signal.EdgeErrorRate5xx).Value != 0.5 {
		t.Errorf("--max-5xx: %v %+v", err, got.Canary.Thresholds)
	}
}

// Bad flags are refused before the fleet is loaded or anything runs.
func TestCanaryRefusesBadFlagsBeforeRunning(t *testing.T) {
	for _, c := range []struct {
		o    CanaryOptions
		want string
	}{
		{CanaryOptions{Cloud: cmdutil.CloudAWS, BakeScale: 0.01}, "--bake-scale is for rehearsals"},
		{CanaryOptions{Cloud: cmdutil.CloudSim, BakeScale: 2}, "at most 1"},
		{CanaryOptions{Cloud: cmdutil.CloudAWS, Max5xx: "<= 1"}, "--max-5xx"},
		{CanaryOptions{Cloud: cmdutil.CloudAWS, MaxErrors: ">= 1"}, "--max-function-errors"},
		{CanaryOptions{Cloud: cmdutil.CloudAWS}, "at most 0.15"},
	} {
		io, _, _, _ := iostreams.Test()
		o := c.o
		o.IO = io
		if c.want == "at most 0.15" {
			o.Canary.Weight = 0.2
		}
		o.Fleet = func() (*fleet.Fleet, error) { t.Fatalf("%s: fleet loaded", c.want); return nil, nil }
		if err := CanaryRun(context.Background(), &o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}
