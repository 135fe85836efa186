package apply

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/cellctl/cellctl/router"
)

// DestroyOptions select what destroy does.
type DestroyOptions struct {
	Cell string
	// ReleaseProtected first lifts the protection of the cell's stateful
	// resources with an up (its inputs say so; the fleet model is not
	// changed), then destroys.
	ReleaseProtected bool
	DryRun           bool
	// Confirm asks the operator before anything is destroyed; an error
	// stops the destroy. nil: no confirmation (the caller decided).
	Confirm func(c *fleet.Cell) error
}

// Destroy tears down one cell: refused while the routing table still
// sends it tenants, and stopped at protected resources unless released.
func Destroy(ctx context.Context, env *Env, o DestroyOptions) (*Report, error) {
	fl := env.Fleet
	c := fl.Cell(o.Cell)
	if c == nil {
		return nil, fmt.Errorf("unknown cell %q (cells of this fleet: %v); the router stack is not destroyed by cellctl", o.Cell, fl.CellIDs())
	}
	if why := RoutedTo(fl, c.ID); why != "" {
		return nil, fmt.Errorf("refusing to destroy %s: tenants are still routed to it — %s; a cell is destroyed only once it is drained with no tenant pinned to it: run `cellctl drain %s` first", c.ID, why, c.ID)
	}
	eng, err := env.Engine()
	if err != nil {
		return nil, err
	}
	protected, err := eng.Protected(ctx, c.ID)
	if errors.Is(err, stackrun.ErrNotDeployed) {
		return nil, &NotDeployedError{Cell: c.ID}
	}
	if err != nil {
		return nil, err
	}
	if len(protected) > 0 && !o.ReleaseProtected {
		return nil, fmt.Errorf("refusing to destroy %s: its stateful resources are protected:\n  %s\n"+
			"to delete them (and their data; Aurora writes a final snapshot %s-final-<UTC time>), rerun with --release-protected",
			c.ID, strings.Join(protected, "\n  "), c.ID)
	}
	var expected map[string]int
	if len(protected) > 0 {
		// Lifting the protection is an up: it passes the apply path's
		// gates like any other (a renumbered cell is not redeployed on
		// the way to its destroy).
		release := []stackrun.Request{{Stack: c.ID, Op: stackrun.OpUp, Inputs: stackrun.Inputs{ReleaseProtection: true}}}
		if expected, err = Check(ctx, env, eng, release, true); err != nil {
			return nil, err
		}
	}
	p := DestroyPlan(c.ID, len(protected) > 0, expected)
	rep := &Report{Plan: p, DryRun: o.DryRun}
	if o.DryRun {
		return rep, nil
	}
	if o.Confirm != nil {
		if err := o.Confirm(c); err != nil {
			return nil, err
		}
	}
	if len(protected) > 0 {
		fmt.Fprintf(env.log(), "%s: lifting protection of %d resource(s)\n", c.ID, len(protected))
	}
	res, err := execute(ctx, env, eng, p)
	if res == nil {
		return nil, err
	}
	// Report the destroy; if lifting the protection failed, that is all
	// that ran, and nothing was destroyed.
	var release, destroy []*stackrun.Result
	for i, s := range p.Stacks() {
		if s.Op == stackrun.OpDestroy {
			destroy = append(destroy, res.Stacks[i])
		} else {
			release = append(release, res.Stacks[i])
		}
	}
	for _, r := range release {
		if r.Result != stackrun.Succeeded {
			rep.Result = &runplan.Result{Operation: stackrun.OpUp, Stacks: release}
			return rep, fmt.Errorf("lifting protection failed, nothing was destroyed: %w", rep.Result.Err())
		}
	}
	rep.Result = &runplan.Result{Operation: stackrun.OpDestroy, Stacks: destroy}
	return rep, rep.Result.Err()
}

// NotDeployedError says a destroy found nothing deployed for the cell.
type NotDeployedError struct{ Cell string }

func (e *NotDeployedError) Error() string { return e.Cell + " is not deployed (nothing to destroy)" }

// ReleaseBlocked is why a destroy does not start when lifting the
// protection failed (and, in a plan, when it runs).
const ReleaseBlocked = "destroyed only once its protection is lifted"

// DestroyPlan is the plan of destroying one cell: lift the protection of
// its stateful resources first when asked, then destroy it.
func DestroyPlan(cell string, release bool, expected map[string]int) *runplan.Plan {
	destroy := &runplan.Stack{Request: stackrun.Request{Stack: cell, Op: stackrun.OpDestroy}}
	if !release {
		return &runplan.Plan{Operation: stackrun.OpDestroy, Root: destroy}
	}
	destroy.BlockedBy = ReleaseBlocked
	return &runplan.Plan{Operation: stackrun.OpDestroy, Root: &runplan.Seq{Steps: []runplan.Step{
		&runplan.Stack{
			Request:  stackrun.Request{Stack: cell, Op: stackrun.OpUp, Inputs: stackrun.Inputs{ReleaseProtection: true}},
			Expected: expected[cell],
		},
		destroy,
	}}}
}

// RoutedTo explains why the routing table still needs the cell, or "".
func RoutedTo(fl *fleet.Fleet, cell string) string {
	t := fl.Routing
	if t == nil {
		return ""
	}
	cs, ok := t.Cell(cell)
	if !ok {
		return ""
	}
	buckets := 0
	for _, c := range t.Assignment() {
		if c == cell {
			buckets++
		}
	}
	var pinned []string
	for _, o := range t.Overrides() {
		if o.Cell == cell || o.Target == cell {
			pinned = append(pinned, o.Tenant)
		}
	}
	if cs.State == router.CellDrained && buckets == 0 && len(pinned) == 0 {
		return ""
	}
	why := fmt.Sprintf("%s is %s in %s with %d of %d buckets", cell, cs.State, filepath.Join(fl.StackDir, fleet.RoutingFile), buckets, t.Buckets())
	if len(pinned) > 0 {
		why += fmt.Sprintf(" and %d tenant override(s) (%s)", len(pinned), strings.Join(pinned, ", "))
	}
	return why
}
