// Package lifecycle holds the operator's levers on the routing of the
// fleet: `cellctl drain`, `undrain` and `migrate`. Each binds flags to the
// options of one internal/lifecycle use case and renders its report; the
// steps are logged on stderr as they happen.
package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/lifecycle"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/progress"
	"github.com/cellctl/cellctl/internal/render/routing"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router"
)

// EngineFunc connects to the engine for a fleet as loaded
// (cmdutil.Factory.RoutingEngine).
type EngineFunc func(fl *fleet.Fleet, events func(stackrun.Event)) (lifecycle.Engine, error)

// Deps are the dependencies every lifecycle command takes.
type Deps struct {
	IO       *iostreams.IOStreams
	Load     func() (*fleet.Fleet, error)
	Engine   EngineFunc
	Parallel int
	// Yes skips the confirmation asked at a terminal (--yes).
	Yes bool
}

func depsOf(f *cmdutil.Factory) Deps {
	return Deps{IO: f.IO, Load: f.TableLoader(), Engine: f.RoutingEngine}
}

// env builds verb's environment: progress on stderr, the first interrupt
// as the stop signal, the operator's confirmation at a terminal before the
// first write. done stops the progress display.
func (d Deps) env(ctx context.Context, verb string) (*lifecycle.Env, func()) {
	display := progress.New(d.IO)
	env := &lifecycle.Env{
		Load: d.Load,
		Engine: func(fl *fleet.Fleet) (lifecycle.Engine, error) {
			return d.Engine(fl, display.Handle)
		},
		Parallel: d.Parallel,
		Log:      d.IO.ErrLines(),
		Events:   display.Handle,
		Stop:     cmdutil.Graceful(ctx, cmdutil.StacksInFlight).Done(),
		Confirm:  cmdutil.Confirmation{IO: d.IO, Yes: d.Yes, Verb: verb}.Proposal,
	}
	return env, display.Close
}

// Formats are the views of a lifecycle report: each transition's moves
// and per-cell load before → after, or the report as JSON.
var Formats = []render.Format[*lifecycle.Report]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, rep *lifecycle.Report) error {
		s := render.Out(io)
		for i, tr := range rep.Transitions {
			if i > 0 {
				fmt.Fprintln(io.Out)
			}
			routing.Transition(s, io.Out, tr)
			if tr.Action == router.ActionMigrate && tr.Tenant != "" {
				r := tr.To.Route(tr.Tenant)
				fmt.Fprintf(io.Out, "\n%s: reads served by %s; writes answered 503 with Retry-After until `cellctl migrate %s --finish` (or --abort) is published\n",
					tr.Tenant, r.Cell, tr.Tenant)
			}
		}
		switch {
		case rep.DryRun:
			fmt.Fprintln(io.Out, "\ndry run: nothing was written or published")
		case len(rep.Published) > 0:
			vs := make([]string, len(rep.Published))
			for i, v := range rep.Published {
				vs[i] = fmt.Sprint(v)
			}
			fmt.Fprintf(io.Out, "\npublished: the router serves routing table version %s\n", strings.Join(vs, ", then "))
		}
		return nil
	}},
	render.JSONFormat(func(rep *lifecycle.Report) any { return rep }),
}

// show renders what was done, even when a later step failed.
func show(io *iostreams.IOStreams, view render.View[*lifecycle.Report], rep *lifecycle.Report, err error) error {
	if rep == nil || len(rep.Transitions) == 0 {
		return err
	}
	if verr := view.Render(io, rep); verr != nil && err == nil {
		err = verr
	}
	return err
}
