package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router"
)

// DefaultGrace is how long a planned drain waits, once the router no
// longer routes to the cell, before it marks the cell drained: requests the
// previous function version forwarded may still be in flight, and
// CloudFront waits up to the origin's response timeout for them (30 s by
// default, "Response timeout" in the CloudFront Developer Guide's origin
// settings).
const DefaultGrace = 30 * time.Second

// DrainOptions select what a drain does.
type DrainOptions struct {
	Cell string
	// MovePinned re-pins the tenants pinned to the cell to the cells that
	// take its buckets; without it a drain with pinned tenants is refused.
	MovePinned bool
	// Now evacuates: no grace wait for in-flight requests. The router is
	// the only stack either form touches, so both work while the cell's
	// own stack cannot be read or updated.
	Now bool
	// Grace is the wait between the two publishes (DefaultGrace when
	// zero and not Now; negative: none).
	Grace time.Duration
	// DryRun computes and reports both transitions and writes nothing.
	DryRun bool
}

// Drain takes every bucket of a cell away in two published steps: the cell
// becomes draining and its buckets move to the other active cells (the
// router stops sending it new requests), then, after the grace wait, it is
// marked drained (the router drops its origin). A drain whose first step
// was saved but not completed — the cell is draining and owns nothing — is
// resumed from where it stopped.
func Drain(ctx context.Context, env *Env, o DrainOptions) (*Report, error) {
	fl, t, err := loadTable(env)
	if err != nil {
		return nil, err
	}
	rep := &Report{DryRun: o.DryRun}
	pinned := router.RefusePinned
	if o.MovePinned {
		pinned = router.MovePinned
	}

	var first *router.Transition
	if cs, ok := t.Cell(o.Cell); ok && cs.State == router.CellDraining && cs.Buckets.Count() == 0 {
		env.logf("%s is already draining and owns no buckets: continuing the drain", o.Cell)
	} else if first, err = router.DrainCell(t, o.Cell, router.DrainOptions{Pinned: pinned}); err != nil {
		return nil, err
	}
	after := t
	if first != nil {
		after = first.To
	}
	second, markErr := router.MarkDrained(after, o.Cell)
	if markErr != nil && first == nil {
		return nil, markErr
	}
	// The second step is shown when it follows from the first; if it
	// does not (a tenant still served), the real run stops there too.
	var planned []*router.Transition
	for _, tr := range []*router.Transition{first, second} {
		if tr != nil {
			planned = append(planned, tr)
		}
	}
	if o.DryRun {
		rep.Transitions = planned
		return rep, nil
	}
	if err := env.confirm(ctx, Proposal{Transitions: planned}); err != nil {
		return nil, err
	}

	eng, err := env.Engine(fl)
	if err != nil {
		return nil, err
	}
	if err := base(ctx, env, eng, t, rep); err != nil {
		return nil, err
	}
	undo := fmt.Sprintf("to continue, run `cellctl drain %s` again; to undo, `cellctl undrain %s`", o.Cell, o.Cell)
	if first != nil {
		if err := change(ctx, env, fl, first, undo, rep); err != nil {
			return rep, err
		}
	} else if rep.DeployedVersion < t.Version() {
		// Resumed: the saved table has not been published yet.
		if err := publish(ctx, env, t, t.Version()-1, undo, rep); err != nil {
			return rep, err
		}
	}
	if second == nil {
		// MarkDrained refused on the table just published: say why the
		// cell stays draining (KeepPinned is never used here, so this is
		// a migration or a served tenant).
		return rep, fmt.Errorf("%s is draining and the router sends it no bucket, but it cannot be marked drained yet: %w", o.Cell, markErr)
	}

	grace := o.Grace
	if o.Now {
		grace = 0
	} else if grace == 0 {
		grace = DefaultGrace
	}
	if grace > 0 {
		env.logf("waiting %s for requests already forwarded to %s to finish (--grace; --now skips the wait)", grace, o.Cell)
		if err := env.sleep(ctx, grace); err != nil {
			return rep, fmt.Errorf("interrupted while waiting: %s stays draining (the router sends it nothing); %s: %w", o.Cell, undo, err)
		}
	}
	// Reload: the table on disk is the one just saved (SaveTable refuses
	// if it is not).
	fl, err = env.Load()
	if err != nil {
		return rep, err
	}
	if err := change(ctx, env, fl, second, undo, rep); err != nil {
		return rep, err
	}
	env.logf("%s is drained: it serves no tenant; `cellctl destroy %s` retires it", o.Cell, o.Cell)
	return rep, nil
}

// UndrainOptions select what an undrain does.
type UndrainOptions struct {
	Cell   string
	DryRun bool
}

// Undrain makes a draining or drained cell active again, taking back only
// the buckets balance needs, and publishes the router.
func Undrain(ctx context.Context, env *Env, o UndrainOptions) (*Report, error) {
	fl, t, err := loadTable(env)
	if err != nil {
		return nil, err
	}
	tr, err := router.Undrain(t, o.Cell, router.UndrainOptions{})
	if err != nil {
		return nil, err
	}
	if !o.DryRun {
		// The router gives an active cell an origin from its stack's ALB:
		// a cell whose stack is gone (or never came up) would fail the
		// publish after the table was saved.
		eng, err := env.Engine(fl)
		if err != nil {
			return nil, err
		}
		if err := deployedCell(ctx, eng, o.Cell); err != nil {
			return nil, err
		}
	}
	return single(ctx, env, fl, tr, o.DryRun,
		fmt.Sprintf("to continue, run `cellctl up router`; to undo, `cellctl drain %s`", o.Cell))
}

// deployedCell refuses a cell whose stack has no ALB to route to.
func deployedCell(ctx context.Context, eng Engine, cell string) error {
	outs, err := eng.DeployedOutputs(ctx, cell)
	if errors.Is(err, stackrun.ErrNotDeployed) {
		return fmt.Errorf("cannot undrain %q: its stack is not deployed, so there is no ALB to route to; run `cellctl up %s` first", cell, cell)
	}
	if err != nil {
		return fmt.Errorf("cannot undrain %q: cannot read its stack outputs: %w", cell, err)
	}
	if dns, _ := outs["albDnsName"].(string); dns == "" {
		return fmt.Errorf("cannot undrain %q: its stack has no albDnsName output (its last up may have failed); run `cellctl up %s` first", cell, cell)
	}
	return nil
}

// single saves and publishes one transition (or only reports it).
func single(ctx context.Context, env *Env, fl *fleet.Fleet, tr *router.Transition, dryRun bool, next string) (*Report, error) {
	rep := &Report{DryRun: dryRun}
	if dryRun {
		rep.Transitions = append(rep.Transitions, tr)
		return rep, nil
	}
	if err := env.confirm(ctx, Proposal{Transitions: []*router.Transition{tr}}); err != nil {
		return nil, err
	}
	eng, err := env.Engine(fl)
	if err != nil {
		return nil, err
	}
	if err := base(ctx, env, eng, tr.From, rep); err != nil {
		return nil, err
	}
	return rep, change(ctx, env, fl, tr, next, rep)
}
