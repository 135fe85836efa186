// Package health is `cellctl health`: the per-cell health view, worst cell
// first, with the fleet average beside it (internal/health does the work).
package health

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/health"
	"github.com/cellctl/cellctl/internal/iostreams"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/render"
	"github.com/cellctl/cellctl/internal/render/healthview"
	"github.com/cellctl/cellctl/internal/routercanary"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/waves/executor"
)

// Options are the inputs of `cellctl health`.
type Options struct {
	IO    *iostreams.IOStreams
	Fleet func() (*fleet.Fleet, error)
	// Outputs reads the cell stacks' outputs, once per command (a nil map:
	// not deployed; Err: unreadable).
	Outputs func(ctx context.Context, stacks []string) (map[string]Deployed, error)
	// Reader builds the CloudWatch reader of an account and region.
	Reader func(ctx context.Context, a fleet.Access) (health.Reader, error)
	// Records reads the records in the backend (nil: none): a router
	// canary nobody finished is a finding.
	Records func() ([]*executor.Record, error)
	Now     func() time.Time
	View    render.View[health.Report]

	Cells    []string
	Since    time.Duration
	Watch    bool
	Interval time.Duration
	Parallel int
}

var formats = []render.Format[health.Report]{
	{Name: render.FormatTable, Render: func(io *iostreams.IOStreams, r health.Report) error {
		_, err := fmt.Fprint(io.Out, healthview.Table(render.Out(io), r))
		return err
	}},
	render.JSONFormat(func(r health.Report) any { return r }),
}

// NewCmdHealth builds `cellctl health`.
func NewCmdHealth(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Fleet: f.Fleet, Now: time.Now, Records: f.Records}
	cmd := &cobra.Command{
		Use:               "health [cells…]",
		ValidArgsFunction: f.CompleteCells,
		Short:             "Show each cell's health, worst first, beside the fleet average",
		Long: `Show, per cell, now (the latest minute CloudWatch has) and over the window
(--since): requests per second, 5xx rate, p99 latency, healthy/desired
tasks, the state of its alarms and its load against its published capacity
(cells:capacityRequestsPerSecond). The worst cell comes first, and the fleet
average is printed next to it: when the average passes a threshold the
worst cell fails, the report says the average hides that cell.

Cells are judged against their wave gate's thresholds (waves.yaml
promote_if, the same ones their alarms use) and the capacity warning
(cells:capacityWarningPercent). An alarm in ALARM, a reading past a
threshold, or anything that cannot be read (a missing alarm, no
datapoints, no stack outputs) is a finding: exit 2.

The same CloudWatch client reads AWS (--cloud aws) and the simulator's
AWS endpoint (--cloud sim).

--watch re-reads every --interval: on a terminal the table is redrawn in
place, otherwise one line per update. It stops on Ctrl-C and exits with
the last update's code.`,
		Example: `  cellctl health
  cellctl health cell-b cell-c --since 1h
  cellctl health --watch --interval 30s
  cellctl health -o json | jq '.cells[0]'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Cells, opts.Parallel = args, f.Global.Parallel
			if opts.Since < time.Minute {
				return fmt.Errorf("--since %s: must be at least 1m (CloudWatch's ALB metrics are per minute)", opts.Since)
			}
			if opts.Since > 24*time.Hour*14 {
				return fmt.Errorf("--since %s: at most 336h (CloudWatch keeps one-minute data for 15 days)", opts.Since)
			}
			if opts.Interval < time.Second {
				return fmt.Errorf("--interval %s: must be at least 1s", opts.Interval)
			}
			var err error
			if opts.View, err = render.Pick(f.Global.Output, formats...); err != nil {
				return err
			}
			if opts.Watch && f.Global.Output == render.FormatJSON {
				return errors.New("--watch draws a table or lines; use -o json without --watch for one document")
			}
			opts.Outputs, opts.Reader = outputs(f), readers(f)
			if runF != nil {
				return runF(opts)
			}
			return healthRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Since, "since", health.DefaultSince, "window to read, ending now")
	cmd.Flags().BoolVar(&opts.Watch, "watch", false, "re-read and redraw until interrupted")
	cmd.Flags().DurationVar(&opts.Interval, "interval", 30*time.Second, "how often --watch re-reads")
	return cmd
}

// Deployed is what a cell stack exports, or why it could not be read.
type Deployed struct {
	Outputs map[string]any
	Err     error
}

// outputs reads the stacks' outputs through the engine, in parallel.
func outputs(f *cmdutil.Factory) func(ctx context.Context, stacks []string) (map[string]Deployed, error) {
	return func(ctx context.Context, stacks []string) (map[string]Deployed, error) {
		fl, err := f.Fleet()
		if err != nil {
			return nil, err
		}
		eng, err := f.Engine(fl, nil)
		if err != nil {
			return nil, err
		}
		// The engine's one reader of deployed outputs, a few stacks at a
		// time; a stack never deployed has none (health says so).
		out := make([]Deployed, len(stacks))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(max(f.Global.Parallel, 4))
		for i, s := range stacks {
			g.Go(func() error {
				outs, err := eng.DeployedOutputs(gctx, s)
				if errors.Is(err, stackrun.ErrNotDeployed) {
					err = nil
				}
				out[i] = Deployed{Outputs: outs, Err: err}
				return nil
			})
		}
		_ = g.Wait()
		byStack := map[string]Deployed{}
		for i, s := range stacks {
			byStack[s] = out[i]
		}
		return byStack, nil
	}
}

// readers builds one CloudWatch reader per account and region from the
// cloud bundle: AWS's endpoints with the default credentials and the
// role a cell's stack assumes, or the simulator's endpoint.
func readers(f *cmdutil.Factory) func(ctx context.Context, a fleet.Access) (health.Reader, error) {
	return func(ctx context.Context, a fleet.Access) (health.Reader, error) {
		bundle, err := f.Cloud()
		if err != nil {
			return nil, err
		}
		t, err := bundle.TargetOf(ctx, a)
		if err != nil {
			return nil, err
		}
		return awsapi.NewCloudWatch(ctx, t)
	}
}

// targets picks the cells to read (all, or those named) with what the
// fleet says about them.
func targets(fl *fleet.Fleet, names []string) ([]health.Target, error) {
	var cells []*fleet.Cell
	if len(names) == 0 {
		cells = fl.Cells
	} else {
		var unknown []string
		for _, n := range names {
			id := n
			if !strings.HasPrefix(id, "cell-") {
				id = "cell-" + id
			}
			if c := fl.Cell(id); c != nil {
				cells = append(cells, c)
			} else {
				unknown = append(unknown, n)
			}
		}
		if len(unknown) > 0 {
			return nil, fmt.Errorf("not in the fleet: %s (cells: %s)", strings.Join(unknown, ", "), strings.Join(fl.CellIDs(), ", "))
		}
	}
	out := make([]health.Target, 0, len(cells))
	for _, c := range cells {
		t := health.Target{Cell: c.ID, Region: c.Region, Access: c.Access(), Names: c.Names(), Thresholds: c.Thresholds(), DesiredTasks: c.DesiredCount,
			CapacityRPS: c.CapacityRPS, CapacityWarningPercent: c.CapacityWarningPercent}
		if fl.Routing != nil {
			if rc, ok := fl.Routing.Cell(c.ID); ok {
				t.State = string(rc.State)
			}
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cell < out[j].Cell })
	return out, nil
}

// healthRun reads the fleet once (or until interrupted with --watch) and
// renders.
func healthRun(ctx context.Context, o *Options) error {
	fl, err := o.Fleet()
	if err != nil {
		return err
	}
	cells, err := targets(fl, o.Cells)
	if err != nil {
		return err
	}
	// The stacks' outputs (load balancer dimensions, alarm names) change
	// only with an up: read once, even under --watch.
	stacks := make([]string, len(cells))
	for i, t := range cells {
		stacks[i] = t.Cell
	}
	if fl.Router != nil {
		stacks = append(stacks, fleet.RouterStack)
	}
	deployed, err := o.Outputs(ctx, stacks)
	if err != nil {
		return err
	}
	for i := range cells {
		d := deployed[cells[i].Cell]
		cells[i].Outputs, cells[i].OutputsErr = d.Outputs, d.Err
	}
	var edge *health.Canary
	if fl.Router != nil {
		edge = unfinishedCanary(o.Records, deployed[fleet.RouterStack])
	}
	// On aws with no credentials every cell's reader fails the same way:
	// the first such failure is the command's one error (below), not a
	// finding per cell.
	var noCredentials atomic.Pointer[awsapi.CredentialsError]
	reader := func(ctx context.Context, a fleet.Access) (health.Reader, error) {
		r, err := o.Reader(ctx, a)
		if ce := awsapi.AsCredentialsError(err); ce != nil {
			noCredentials.CompareAndSwap(nil, ce)
		}
		return r, err
	}
	read := func(ctx context.Context) health.Report {
		rep := health.Read(ctx, cells, health.Options{Now: o.Now(), Since: o.Since, Parallel: o.Parallel, Reader: reader})
		rep.Canary = edge
		return rep
	}
	var rep health.Report
	if o.Watch {
		// The first Ctrl-C ends the watch (there is nothing in flight
		// worth finishing); the last complete update decides the exit.
		// A reading without credentials ends the watch before it is
		// drawn; the one error is returned below.
		wctx, stop := context.WithCancel(cmdutil.Graceful(ctx, "stopping the watch"))
		defer stop()
		watched := func(ctx context.Context) health.Report {
			r := read(ctx)
			if noCredentials.Load() != nil {
				stop()
			}
			return r
		}
		rep = health.Watch(wctx, o.Interval, watched, healthview.Watch(o.IO.Out, o.IO.IsStdoutTTY(), render.Out(o.IO), o.Interval), nil)
		if ce := noCredentials.Load(); ce != nil {
			return ce
		}
	} else {
		rep = read(ctx)
		if ce := noCredentials.Load(); ce != nil {
			return ce
		}
		if err := o.View.Render(o.IO, rep); err != nil {
			return err
		}
	}
	if err := rep.Err(); err != nil {
		return outcome.Findings(err)
	}
	return nil
}

// unfinishedCanary is the router canary nobody finished, as a finding
// (internal/routercanary decides from the records and the router's
// deployed outputs). Records or outputs that cannot be read fail closed:
// the unreadable one could be that canary's.
func unfinishedCanary(records func() ([]*executor.Record, error), router Deployed) *health.Canary {
	var recs []*executor.Record
	if records != nil {
		var err error
		if recs, err = records(); err != nil {
			return &health.Canary{Phase: "unknown", Finding: "whether a router canary is unfinished cannot be told: " + err.Error()}
		}
	}
	if router.Err != nil {
		return &health.Canary{Phase: "unknown", Finding: "whether a router canary is unfinished cannot be told: the router's outputs: " + router.Err.Error()}
	}
	p := routercanary.Unfinished(recs, router.Outputs)
	if p == nil {
		return nil
	}
	return &health.Canary{Record: p.Record, Phase: p.Phase, Weight: p.Weight, Since: p.Since, Finding: p.String()}
}
