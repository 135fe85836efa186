package executor

import (
	"context"
	"fmt"
)

// Bootstrapper puts a cell database's users and grants in place, inside
// the cell's update, where a change needs them: a migration task logs in
// as a database user that only the bootstrap creates, and `up` — which
// bootstraps after every cell's up — is not the only way a configuration
// that runs migrations reaches a cell. As with the Migrator, the executor
// never interprets a configuration: the Bootstrapper says from the change
// whether, when and why. It is optional on the Executor (nil: no cell
// bootstraps).
type Bootstrapper interface {
	// Plan says when and why the change bootstraps the cell's database
	// users (a zero plan: it does not). It reads nothing from the cloud:
	// the dry run lists it.
	Plan(req MigrationRequest) BootstrapPlan
	// Bootstrap puts in place the users and grants of the cell's stack
	// as deployed now (idempotent: every run may repeat it) and says what
	// it did, for the operator.
	Bootstrap(ctx context.Context, cell string) (string, error)
}

// BootstrapPlan is when a change bootstraps a cell's database users.
type BootstrapPlan struct {
	// Why says what needs them ("": nothing; the plan is zero).
	Why string `json:"why,omitempty"`
	// AfterUpdate: the update itself changes the users the stack's
	// bootstrap creates (it turns migrations on), so the bootstrap runs
	// once the update succeeded — before any later migration. Otherwise
	// it runs before the change's migration, and only when one runs.
	AfterUpdate bool `json:"afterUpdate,omitempty"`
}

// None reports whether the plan bootstraps nothing.
func (p BootstrapPlan) None() bool { return p.Why == "" }

func (p BootstrapPlan) String() string {
	if p.AfterUpdate {
		return "after the update: " + p.Why
	}
	return "before the migration: " + p.Why
}

// bootstrapPlan is the cell's bootstrap plan for the moment after ("" when
// nothing runs then): before its migration (after false) only when a
// migration is planned.
func (r *run) bootstrapPlan(wr *WaveRecord, cell string, after bool) (BootstrapPlan, bool) {
	if r.ex.Bootstrapper == nil {
		return BootstrapPlan{}, false
	}
	r.j.mu.Lock()
	cr := wr.cell(cell)
	req := MigrationRequest{Cell: cell, To: cr.After.Clone()}
	if cr.Before != nil {
		req.From = cr.Before.Clone()
	}
	r.j.mu.Unlock()
	p := r.ex.Bootstrapper.Plan(req)
	if p.None() || p.AfterUpdate != after {
		return p, false
	}
	if !after && (r.ex.Migrator == nil || r.ex.Migrator.Plan(req).None()) {
		// Nothing logs in as the migrator in this change.
		return p, false
	}
	return p, true
}

// bootstrap runs the cell's planned bootstrap at its moment: before its
// migration (after false) or after its update succeeded (after true). It
// reports false when the bootstrap failed — the cell's update failed,
// recorded, and the wave's breach path rolls it back — and when ctx ended
// while it ran (the cell stays updating: a rerun applies and bootstraps
// it again).
func (r *run) bootstrap(ctx context.Context, w Wave, wr *WaveRecord, cell string, after bool) bool {
	p, run := r.bootstrapPlan(wr, cell, after)
	if !run {
		return true
	}
	note, err := r.ex.Bootstrapper.Bootstrap(ctx, cell)
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		err = fmt.Errorf("bootstrapping its database users (%s): %w", p, err)
		r.setCell(wr, cell, CellStateFailed, err.Error())
		r.emit(Event{Kind: CellFailed, Wave: w.Name, Cell: cell, Err: err})
		_ = r.save(ctx)
		return false
	}
	if note == "" {
		note = "database users and grants in place"
	}
	r.emit(Event{Kind: Note, Wave: w.Name, Cell: cell, Message: fmt.Sprintf("cell %s: %s (%s)", cell, note, p)})
	return true
}
