package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-multierror"
)

// Lister lists every rollout record. A Store that implements it (the
// backend store does) lets a rollout see what earlier rollouts left: a
// wave abandoned mid-rollback, and the configurations that breached.
type Lister interface {
	List(ctx context.Context) ([]*Record, error)
}

// poisoned is a configuration a breached wave shipped to a cell, and what
// the cell ran before it (the last configuration that passed there).
type poisoned struct {
	cfg     CellConfig
	before  *CellConfig
	rollout string
}

// touched reports whether a wave's update reached the cell.
func touched(s CellState) bool {
	switch s {
	case CellStateUpdating, CellStateUpdated, CellStateFailed, CellRollingBack, CellStateRolled, CellRollbackFailed:
		return true
	}
	return false
}

// breachedConfigs are, by cell, the configurations a breached wave of any
// record shipped — unless a wave that passed shipped the same one since
// (a --retry that passed clears it).
func breachedConfigs(recs []*Record) map[string][]poisoned {
	out := map[string][]poisoned{}
	for _, rec := range recs {
		if !rec.IsRollout() {
			continue
		}
		for _, wr := range rec.Waves {
			if wr.Breach == nil {
				continue
			}
			for _, c := range wr.Cells {
				if touched(c.State) {
					p := poisoned{cfg: c.After.Clone(), rollout: rec.ID}
					if c.Before != nil {
						b := c.Before.Clone()
						p.before = &b
					}
					out[c.Cell] = append(out[c.Cell], p)
				}
			}
		}
	}
	for _, rec := range recs {
		if !rec.IsRollout() {
			continue
		}
		for _, wr := range rec.Waves {
			if wr.State != WaveDone {
				continue
			}
			for _, c := range wr.Cells {
				if c.State != CellStateUpdated {
					continue
				}
				ps := out[c.Cell][:0]
				for _, p := range out[c.Cell] {
					if !p.cfg.Equal(c.After) {
						ps = append(ps, p)
					}
				}
				out[c.Cell] = ps
			}
		}
	}
	return out
}

// rollbackTarget is what a cell that runs cfg goes back to on a breach: cfg
// itself, unless cfg breached in an earlier rollout — a breached
// configuration is never a rollback target; the cell goes back to what it
// ran before that breach (followed back until one did not breach).
func (r *run) rollbackTarget(cell string, cfg CellConfig) (CellConfig, string) {
	seen := 0
	note := ""
	for seen < 16 {
		var hit *poisoned
		for i, p := range r.breached[cell] {
			if p.cfg.Equal(cfg) {
				hit = &r.breached[cell][i]
				break
			}
		}
		if hit == nil || hit.before == nil {
			return cfg, note
		}
		note = fmt.Sprintf("cell %s runs %s, which breached in rollout %s: its rollback target is what it ran before that (%s)", cell, describeCfg(cfg), hit.rollout, describeCfg(*hit.before))
		cfg = hit.before.Clone()
		seen++
	}
	return cfg, note
}

func describeCfg(c CellConfig) string {
	if c.Image != "" {
		return "image " + c.Image
	}
	return "its configuration"
}

// settle runs before a rollout changes anything: it reads every record
// (when the store can list them) for the configurations that breached,
// follows to its end any migration task another rollout left running (its
// run was killed and its lock abandoned), and finishes any other rollout's
// wave left mid-rollback — its rollback migrations included — so no cell
// is left on a breached configuration, no new rollout records one as the
// configuration to go back to, and no migration of this rollout runs on a
// database while an earlier one's task still does. If that cannot be
// done, the new rollout is refused saying so.
func (r *run) settle(ctx context.Context) error {
	l, ok := r.ex.Store.(Lister)
	if !ok {
		return nil
	}
	recs, err := l.List(ctx)
	if err != nil {
		return fmt.Errorf("reading the fleet's rollout records (a rollout left mid-rollback must be finished before another starts): %w", err)
	}
	r.breached = breachedConfigs(recs)
	for _, o := range recs {
		if o.ID == r.j.rec.ID || !o.IsRollout() {
			continue
		}
		for i := range o.Waves {
			if o.Waves[i].State == WaveRollingBack {
				if err := r.finishRollback(ctx, o, i); err != nil {
					return err
				}
			} else if err := r.settleTasks(ctx, o, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// saver saves another rollout's record (settle writes it under this run's
// lock: that rollout's run is gone).
func (r *run) saver(o *Record) func(context.Context) error {
	return func(ctx context.Context) error {
		o.Updated = r.clock.Now().UTC()
		if err := r.ex.Store.Save(context.WithoutCancel(ctx), o); err != nil {
			return fmt.Errorf("saving the record of rollout %s: %w", o.ID, err)
		}
		return nil
	}
}

// settleTasks follows to its end every migration task another rollout's
// wave left unfinished (not one mid-rollback: finishRollback follows
// those), and keeps its outcome in that rollout's record.
func (r *run) settleTasks(ctx context.Context, o *Record, i int) error {
	wr := &o.Waves[i]
	followed := false
	for j := range wr.Cells {
		c := &wr.Cells[j]
		for _, back := range []bool{false, true} {
			m := c.Migration
			req := MigrationRequest{Cell: c.Cell, To: c.After.Clone()}
			if c.Before != nil {
				req.From = c.Before.Clone()
			}
			if back {
				m = c.RollbackMigration
				req = MigrationRequest{Cell: c.Cell, From: c.After.Clone(), Rollback: true}
				if c.Before != nil {
					req.To = c.Before.Clone()
				}
			}
			if !m.Unfinished() {
				continue
			}
			if r.ex.Migrator == nil {
				return &RefusedError{Reason: fmt.Sprintf("rollout %s left migration task %s of cell %s unfinished, and this deploy runs no migrations to follow it: "+
					"check that it has stopped (aws ecs describe-tasks), then run the deploy with the fleet's migrations", o.ID, m.TaskID(), c.Cell)}
			}
			r.emit(Event{Kind: Note, Wave: wr.Name, Cell: c.Cell, Message: fmt.Sprintf(
				"rollout %s left migration task %s of cell %s unfinished (its run is gone): following it to its end before rollout %s starts", o.ID, m.TaskID(), c.Cell, r.j.rec.ID)})
			keep := func(got *Migration) {
				if back {
					c.RollbackMigration = got
				} else {
					c.Migration = got
				}
			}
			followed = true
			_, _, err := r.follow(ctx, wr.Name, req, m, keep, r.saver(o))
			if err != nil {
				if errors.Is(err, ErrStopped) {
					return fmt.Errorf("before rollout %s: %w", r.j.rec.ID, err)
				}
				return &RefusedError{Reason: fmt.Sprintf("rollout %s left migration task %s of cell %s unfinished and it could not be followed to its end (%v): "+
					"no rollout starts while it may run; check it, then rerun `cellctl deploy`", o.ID, m.TaskID(), c.Cell, err)}
			}
		}
	}
	if !followed {
		return nil
	}
	return r.saver(o)(ctx)
}

// finishRollback returns each cell of another rollout's wave to the
// configuration it ran before that wave — its rollback migration first,
// as the wave's own rollback runs it (restoreCell) — and records the wave
// rolled back.
func (r *run) finishRollback(ctx context.Context, o *Record, i int) error {
	wr := &o.Waves[i]
	r.emit(Event{Kind: Note, Wave: wr.Name, Message: fmt.Sprintf(
		"rollout %s stopped while rolling back its wave %s (its run is gone): finishing that rollback before rollout %s starts — its cells go back to the configuration they ran before it",
		o.ID, wr.Name, r.j.rec.ID)})
	var errs *multierror.Error
	var left []string
	save := r.saver(o)
	for j := range wr.Cells {
		c := &wr.Cells[j]
		if !touched(c.State) || c.State == CellStateRolled {
			continue
		}
		if r.ex.Migrator == nil && (c.Migration != nil && c.Migration.Task != "") && !c.RollbackMigration.OK() {
			// Said, not hidden: the rollback command cannot run here.
			r.emit(Event{Kind: Note, Wave: wr.Name, Cell: c.Cell, Message: fmt.Sprintf(
				"cell %s: rollout %s migrated its database (task %s), and this deploy runs no migrations: its rollback command, if any, is not run; the schema stays as that migration left it",
				c.Cell, o.ID, c.Migration.TaskID())})
		}
		err := r.restoreCell(ctx, wr.Name, wr, c.Cell, save)
		if errors.Is(err, ErrStopped) {
			if serr := save(ctx); serr != nil {
				return serr
			}
			return fmt.Errorf("while finishing rollout %s's rollback of wave %s (cell %s's migration task runs on; the rerun follows it): %w", o.ID, wr.Name, c.Cell, err)
		}
		c.Updated = r.clock.Now().UTC()
		if err != nil {
			c.State, c.Error = CellRollbackFailed, err.Error()
			errs = multierror.Append(errs, fmt.Errorf("%s: %w", c.Cell, err))
			left = append(left, c.Cell)
			continue
		}
		c.State, c.Error = CellStateRolled, ""
		r.emit(Event{Kind: CellRolledBack, Wave: wr.Name, Cell: c.Cell})
	}
	if err := errs.ErrorOrNil(); err == nil {
		wr.State, wr.Finished = WaveRolledBack, r.clock.Now().UTC()
		o.State = HaltedState
		if o.Halt == nil {
			o.Halt = wr.Breach
		}
	}
	if serr := save(ctx); serr != nil {
		return fmt.Errorf("after finishing its rollback: %w", serr)
	}
	if err := errs.ErrorOrNil(); err != nil {
		return &RefusedError{Reason: fmt.Sprintf(
			"rollout %s was left rolling back wave %s and finishing that rollback failed (%v): %s may still run the configuration that breached; "+
				"no rollout starts until they are rolled back — fix the cause and rerun `cellctl deploy` (it finishes the rollback first)",
			o.ID, wr.Name, err, strings.Join(left, ", "))}
	}
	r.emit(Event{Kind: RolledBack, Wave: wr.Name, Message: fmt.Sprintf("rollout %s's wave %s is rolled back", o.ID, wr.Name)})
	return nil
}
