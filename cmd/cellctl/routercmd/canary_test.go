package routercmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/adapters/backend/backendtest"
	"github.com/cellctl/cellctl/internal/deploy"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/gated"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/routercanary"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
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
		if err := canaryRun(context.Background(), &o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

type untouchedRouter struct{ t *testing.T }

func (u untouchedRouter) RunStack(_ context.Context, req stackrun.Request) *stackrun.Result {
	u.t.Errorf("the dry run ran %s %s", req.Op, req.Stack)
	return &stackrun.Result{Name: req.Stack, Result: stackrun.Failed}
}

// `router canary --dry-run` runs the apply path's gates, prints the route
// — a new canary: smoke, weighted, promotion — and changes nothing: no
// engine run, no record, no lock.
func TestCanaryDryRunChangesNothing(t *testing.T) {
	for _, format := range []string{cmdutil.FormatTable, cmdutil.FormatJSON} {
		io, _, out, _ := iostreams.Test()
		st := backendtest.New()
		fl := &fleet.Fleet{Router: &fleet.Router{}}
		prepared := false
		v, err := render.Pick(format, canaryFormats...)
		if err != nil {
			t.Fatal(err)
		}
		o := &CanaryOptions{IO: io, View: v, DryRun: true, Cloud: cmdutil.CloudAWS, Max5xx: "<= 1%", MaxErrors: "<= 0",
			Fleet: func() (*fleet.Fleet, error) { return fl, nil },
			Env: func(context.Context, *fleet.Fleet, func(stackrun.Event)) (*deploy.Env, func(), error) {
				return &deploy.Env{Env: gated.Env{Runner: untouchedRouter{t}, Store: st,
					Outputs: func(context.Context, string) (map[string]any, error) {
						return map[string]any{"primaryFunctionArn": "fn:1", "stagingFunctionArn": "fn:1", "canaryPhase": "stable"}, nil
					}},
					Prepare: func(context.Context, []stackrun.Request) error { prepared = true; return nil },
				}, func() {}, nil
			}}
		if err := canaryRun(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if !prepared {
			t.Error("the dry run skipped the apply path's gates")
		}
		if h := st.Held(t); h != nil {
			t.Errorf("the dry run left the fleet lock held: %+v", h)
		}
		if recs := st.Records(t, executor.KindCanary); len(recs) != 0 {
			t.Errorf("the dry run saved %d records", len(recs))
		}
		if format == cmdutil.FormatJSON {
			var rt routercanary.Route
			if err := json.Unmarshal(out.Bytes(), &rt); err != nil || rt.Start != routercanary.StartFresh || len(rt.Phases) != 3 {
				t.Errorf("-o json: %v\n%s", err, out.String())
			}
			continue
		}
		for _, want := range []string{
			"router canary (dry run: nothing changes): a new canary of the router's current program\nprimary: fn:1\n",
			"  header     up router: the staging distribution runs the candidate for requests with",
			"; bake 5m0s, at least 50 requests\n",
			"  weight     up router: 5% of viewers go to the staging distribution",
			"  promoting  up router: the primary distribution takes exactly the canaried version\n",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("dry run lacks %q:\n%s", want, out.String())
			}
		}
	}
}

func TestCanaryDryRunFlag(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(io)
	f.Global.Output = cmdutil.FormatJSON
	var got *CanaryOptions
	cmd := NewCmdRouter(f, func(o *CanaryOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"canary", "--dry-run"})
	if err := cmd.Execute(); err != nil || !got.DryRun || got.View == nil {
		t.Fatalf("%v %+v", err, got)
	}
}
