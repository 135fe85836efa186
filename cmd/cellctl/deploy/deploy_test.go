package deploy

import (
	"context"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
)

func TestFlagsReachOptions(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Output = cmdutil.FormatTable
	var got *Options
	cmd := NewCmdDeploy(f, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--image", "app:v2", "--through", "canary", "--rebake", "--bake-scale", "0.01"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Image != "app:v2" || got.Through != "canary" || !got.Rebake || got.BakeScale != 0.01 {
		t.Errorf("options %+v", got)
	}
}

func TestBakeScaleIsRefusedOnAWS(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	called := false
	o := &Options{IO: io, Cloud: cmdutil.CloudAWS, BakeScale: 0.01,
		Fleet: func() (*fleet.Fleet, error) { called = true; return nil, nil }}
	err := Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "--bake-scale is for rehearsals on the simulated cloud") || called {
		t.Errorf("--bake-scale on aws: %v (fleet loaded: %v)", err, called)
	}
	o.Cloud, o.BakeScale = cmdutil.CloudSim, 2
	if err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "at most 1") {
		t.Errorf("--bake-scale 2: %v", err)
	}
}

func TestThroughAndWaveTogetherAreRefused(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	o := &Options{IO: io, Cloud: cmdutil.CloudSim, Through: "canary", Wave: "wave-1",
		Fleet: func() (*fleet.Fleet, error) { t.Fatal("fleet loaded"); return nil, nil }}
	if err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "cannot be combined") {
		t.Errorf("--through with --wave: %v", err)
	}
}
