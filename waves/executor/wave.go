package executor

import (
	"context"
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/waves"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"
	"golang.org/x/sync/errgroup"
)

// wave drives one wave from wherever its record says it is.
func (r *run) wave(ctx context.Context, i int) error {
	w := r.plan.Waves[i]
	r.j.mu.Lock()
	wr := &r.j.rec.Waves[i]
	state := wr.State
	r.j.mu.Unlock()

	switch state {
	case WaveUnchanged:
		r.emit(Event{Kind: WaveSkipped, Wave: w.Name, Message: fmt.Sprintf("wave %s: every cell already runs the desired configuration", w.Name)})
		return nil
	case WaveDone:
		if !r.opts.Rebake {
			r.emit(Event{Kind: WaveSkipped, Wave: w.Name, Message: fmt.Sprintf("wave %s passed earlier: not baked again (--rebake bakes it again)", w.Name)})
			return nil
		}
		r.emit(Event{Kind: WaveStarted, Wave: w.Name, Message: fmt.Sprintf("wave %s: baking again (--rebake)", w.Name)})
		r.j.mu.Lock()
		wr.State, wr.BakeStart, wr.Finished = WaveBaking, r.clock.Now().UTC(), time.Time{}
		r.j.mu.Unlock()
		if err := r.save(ctx); err != nil {
			return err
		}
		return r.bake(ctx, w, wr)
	case WavePending, WaveWaiting:
		if w.Approve {
			if err := r.await(ctx, w, wr); err != nil {
				return err
			}
		}
		if err := r.begin(ctx, w, wr); err != nil {
			return err
		}
		r.j.mu.Lock()
		unchanged := wr.State == WaveUnchanged
		r.j.mu.Unlock()
		if unchanged {
			r.emit(Event{Kind: WavePassed, Wave: w.Name, Message: fmt.Sprintf("wave %s: every cell already runs the desired configuration; nothing to bake", w.Name)})
			return nil
		}
		if w.Delay > 0 {
			// The hold is recorded before it starts, so a run that is
			// stopped during it waits only what is left.
			r.j.mu.Lock()
			wr.DelayUntil = r.clock.Now().UTC().Add(w.Delay)
			r.j.mu.Unlock()
			if err := r.save(ctx); err != nil {
				return err
			}
		}
		return r.update(ctx, w, wr)
	case WaveUpdating:
		if r.retried != w.Name {
			r.emit(Event{Kind: Note, Wave: w.Name, Message: fmt.Sprintf("wave %s was mid-update when the last run stopped: applying its cells again (%s)", w.Name, strings.Join(r.pendingCells(wr), ", "))})
		}
		return r.update(ctx, w, wr)
	case WaveBaking:
		r.j.mu.Lock()
		left := w.Bake - r.clock.Now().Sub(wr.BakeStart)
		r.j.mu.Unlock()
		r.emit(Event{Kind: Note, Wave: w.Name, Left: max(left, 0), Message: fmt.Sprintf("wave %s was baking when the last run stopped: continuing its bake (%s left)", w.Name, max(left, 0).Round(time.Second))})
		return r.bake(ctx, w, wr)
	case WaveRollingBack:
		r.emit(Event{Kind: Note, Wave: w.Name, Message: fmt.Sprintf("wave %s was rolling back when the last run stopped: finishing the rollback", w.Name)})
		return r.rollback(ctx, w, wr)
	}
	return fmt.Errorf("wave %s is %s in the record of rollout %s: cannot continue it", w.Name, state, r.j.rec.ID)
}

// hold waits out the wave's delay (the pipeline shape's `delay`: a wait
// before the stage starts) until the time its record says; a run resumed
// after the hold is over does not wait again.
func (r *run) hold(ctx context.Context, w Wave, wr *WaveRecord) error {
	r.j.mu.Lock()
	until := wr.DelayUntil
	r.j.mu.Unlock()
	left := until.Sub(r.clock.Now())
	if until.IsZero() || left <= 0 {
		return nil
	}
	r.emit(Event{Kind: Note, Wave: w.Name, Left: left, Message: fmt.Sprintf("wave %s: holding %s before it starts (its delay)", w.Name, left.Round(time.Second))})
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-r.clock.After(left):
		return nil
	}
}

// begin records what every cell of the wave runs now — read from the cell,
// not the repository — and which cells change. Nothing is changed until
// that record is saved.
func (r *run) begin(ctx context.Context, w Wave, wr *WaveRecord) error {
	r.emit(Event{Kind: WaveStarted, Wave: w.Name, Message: fmt.Sprintf("wave %s: %s", w.Name, strings.Join(w.Cells, ", "))})
	current := make([]CellConfig, len(w.Cells))
	unsettled := make([]string, len(w.Cells))
	settler, _ := r.ex.Updater.(Settler)
	var g errgroup.Group
	for j, c := range w.Cells {
		g.Go(func() error {
			cfg, err := r.ex.Updater.Current(ctx, c)
			if err != nil {
				return fmt.Errorf("reading what cell %s runs now (its configuration before wave %s): %w; nothing in the wave was changed", c, w.Name, err)
			}
			current[j] = cfg
			if settler != nil && cfg.Equal(r.plan.Desired[c]) {
				// Only a cell that would be skipped is asked: skipping is
				// safe only when its last update completed.
				ok, why, err := settler.Settled(ctx, c)
				if err != nil {
					return fmt.Errorf("reading whether cell %s's last update completed: %w; nothing in the wave was changed", c, err)
				}
				if !ok {
					unsettled[j] = why
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var notes []string
	r.j.mu.Lock()
	wr.Started = r.clock.Now().UTC()
	changed := 0
	for j := range wr.Cells {
		cr := &wr.Cells[j]
		before := current[j].Clone()
		target, note := r.rollbackTarget(cr.Cell, before)
		if note != "" {
			notes = append(notes, note)
		}
		cr.Before = &target
		cr.After = r.plan.Desired[cr.Cell].Clone()
		if why := unsettled[j]; why != "" {
			notes = append(notes, fmt.Sprintf("cell %s's recorded configuration is the desired one, but %s: updating it anyway", cr.Cell, why))
		}
		if before.Equal(cr.After) && unsettled[j] == "" {
			cr.State = CellStateUnchanged
		} else {
			cr.State = CellPending
			changed++
		}
	}
	if changed == 0 {
		wr.State, wr.Finished = WaveUnchanged, wr.Started
	} else {
		wr.State = WaveUpdating
	}
	r.j.mu.Unlock()
	for _, n := range notes {
		r.emit(Event{Kind: Note, Wave: w.Name, Message: n})
	}
	for _, cr := range wr.Cells {
		if cr.State == CellStateUnchanged {
			r.emit(Event{Kind: CellUnchanged, Wave: w.Name, Cell: cr.Cell})
		}
	}
	return r.save(ctx)
}

// pendingCells are the wave's cells an update (still) has to apply.
func (r *run) pendingCells(wr *WaveRecord) []string {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	var out []string
	for _, c := range wr.Cells {
		switch c.State {
		case CellPending, CellStateUpdating, CellStateFailed:
			out = append(out, c.Cell)
		}
	}
	return out
}

// update applies the new configuration to the wave's changed cells, at
// most MaxParallel at once. A failed cell does not stop its siblings (a
// half-started wave is rolled back as a whole anyway); it breaches.
func (r *run) update(ctx context.Context, w Wave, wr *WaveRecord) error {
	if err := r.hold(ctx, w, wr); err != nil {
		return err
	}
	cells := r.pendingCells(wr)
	var (
		g          errgroup.Group
		nmu        sync.Mutex
		notApplied *multierror.Error
	)
	first := len(cells)
	if w.Parallel > 0 {
		g.SetLimit(w.Parallel)
		first = min(first, w.Parallel)
	}
	// The cells that start at once are marked updating in one save, so
	// they start together instead of one save apart.
	for _, c := range cells[:first] {
		r.setCell(wr, c, CellStateUpdating, "")
	}
	if err := r.save(ctx); err != nil {
		return err
	}
	for k, c := range cells {
		g.Go(func() error {
			if ctx.Err() != nil || r.stopped() {
				// Interrupted before this cell started: it stays as it is
				// (pending, or marked updating and never applied — a rerun
				// applies it either way).
				return nil
			}
			if k >= first {
				r.setCell(wr, c, CellStateUpdating, "")
				if err := r.save(ctx); err != nil {
					return nil // saved() stops the wave below
				}
			}
			// The schema first: the new image's migration runs before the
			// service moves to it, and a failed one fails the cell's update
			// — after the database users it logs in as are in place.
			if !r.bootstrap(ctx, w, wr, c, false) || !r.migrate(ctx, w, wr, c) {
				return nil
			}
			r.j.mu.Lock()
			cfg := wr.cell(c).After.Clone()
			r.j.mu.Unlock()
			r.emit(Event{Kind: CellUpdating, Wave: w.Name, Cell: c})
			if _, err := r.ex.Updater.Apply(ctx, c, cfg); errors.Is(err, ErrNotApplied) {
				// Nothing changed (the stack was locked by someone else):
				// not a breach, the wave stops and a rerun applies it.
				r.setCell(wr, c, CellPending, err.Error())
				nmu.Lock()
				notApplied = multierror.Append(notApplied, fmt.Errorf("%s: %w", c, err))
				nmu.Unlock()
			} else if err != nil {
				r.setCell(wr, c, CellStateFailed, err.Error())
				r.emit(Event{Kind: CellFailed, Wave: w.Name, Cell: c, Err: err})
			} else if r.bootstrap(ctx, w, wr, c, true) {
				// An update that turns migrations on is done once the
				// migrator's user exists: the next migration needs it.
				r.setCell(wr, c, CellStateUpdated, "")
				r.emit(Event{Kind: CellUpdated, Wave: w.Name, Cell: c})
			}
			_ = r.save(ctx)
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("wave %s interrupted while updating (cells not finished: %s); rerun the same deploy to continue: %w",
			w.Name, strings.Join(r.pendingCells(wr), ", "), err)
	}
	if err := r.saved(); err != nil {
		return err
	}
	// An update failure is a breach of that cell; the first in wave order
	// names the halt. It is handled even when a stop was asked: a failed
	// cell must not be left for a human to notice.
	r.j.mu.Lock()
	var breach *Breach
	for _, cr := range wr.Cells {
		if cr.State == CellStateFailed {
			breach = &Breach{Cell: cr.Cell, Signal: SignalUpdate, Reading: "update failed: " + cr.Error}
			if cr.Migration != nil && !cr.Migration.OK() {
				breach.Signal, breach.Reading = SignalMigration, cr.Migration.Failure()
			}
			break
		}
	}
	r.j.mu.Unlock()
	if breach != nil {
		return r.breach(ctx, w, wr, *breach, nil)
	}
	if err := notApplied.ErrorOrNil(); err != nil {
		return fmt.Errorf("wave %s is half-updated: some cells could not start their update; rerun the same deploy to continue it: %w", w.Name, err)
	}
	if r.stopped() {
		if left := r.pendingCells(wr); len(left) > 0 {
			return fmt.Errorf("wave %s stopped while updating (cells not updated: %s): %w", w.Name, strings.Join(left, ", "), ErrStopped)
		}
	}
	r.j.mu.Lock()
	wr.State, wr.BakeStart = WaveBaking, r.clock.Now().UTC()
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return err
	}
	return r.bake(ctx, w, wr)
}

func (r *run) setCell(wr *WaveRecord, cell string, s CellState, errText string) {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	c := wr.cell(cell)
	c.State, c.Error, c.Updated = s, errText, r.clock.Now().UTC()
}

// bakedCells are the cells a bake judges: those the wave changed.
func (r *run) bakedCells(wr *WaveRecord) []string {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	var out []string
	for _, c := range wr.Cells {
		if c.State == CellStateUpdated {
			out = append(out, c.Cell)
		}
	}
	return out
}

// bake runs the wave's bake (Baker, the one bake loop) from its recorded
// start: every poll goes into the wave's record before it is acted on. A
// breach applies on_breach; at the end, an inconclusive cell halts unless
// the wave promotes on inconclusive.
func (r *run) bake(ctx context.Context, w Wave, wr *WaveRecord) error {
	cells := r.bakedCells(wr)
	r.j.mu.Lock()
	start := wr.BakeStart
	r.j.mu.Unlock()
	b := Baker{Gate: r.ex.Gate, Clock: r.clock, Stop: r.opts.Stop, Steer: r.steerStop(),
		Waiting: func(left time.Duration, last []Verdict) {
			r.emit(Event{Kind: Baking, Wave: w.Name, Left: left, Verdicts: last})
		},
		Record: func(p Poll) error {
			r.j.mu.Lock()
			wr.Polls = append(wr.Polls, p)
			r.j.mu.Unlock()
			return r.save(ctx)
		}}
	res, err := b.Bake(ctx, BakeSpec{Step: w.Name, Cells: cells, Start: start, Duration: w.Bake, Poll: w.Gate.Poll})
	if err != nil {
		if errors.Is(err, ErrStopped) || ctx.Err() != nil {
			return fmt.Errorf("wave %w; rerun the same deploy to continue the bake", err)
		}
		return err
	}
	switch {
	case res.Decision == waves.Breached:
		return r.breach(ctx, w, wr, *res.Breach, res.Verdicts)
	case res.Decision == waves.Inconclusive && w.Gate.OnInconclusive != waves.InconclusivePromote:
		r.j.mu.Lock()
		wr.State, wr.Reason, wr.Finished = WaveHalted, res.Reason, r.clock.Now().UTC()
		r.j.mu.Unlock()
		if err := r.save(ctx); err != nil {
			return err
		}
		r.emit(Event{Kind: WaveBreached, Wave: w.Name, Verdicts: res.Verdicts, Message: "inconclusive: " + res.Reason})
		return &HaltedError{RolloutID: r.j.rec.ID, Wave: w.Name, Reason: "inconclusive: " + res.Reason,
			Next: fmt.Sprintf("the wave's cells keep the new configuration; check their traffic, then rerun with --retry (or set on_inconclusive: promote); `cellctl rollout status %s`", r.j.rec.ID)}
	}
	r.j.mu.Lock()
	wr.State, wr.Finished = WaveDone, r.clock.Now().UTC()
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return err
	}
	r.emit(Event{Kind: WavePassed, Wave: w.Name, Verdicts: res.Verdicts})
	return nil
}

// breach applies the wave's on_breach policy.
func (r *run) breach(ctx context.Context, w Wave, wr *WaveRecord, b Breach, verdicts []Verdict) error {
	r.j.mu.Lock()
	wr.Breach = &b
	if w.Gate.OnBreach == waves.Halt {
		wr.State, wr.Finished = WaveHalted, r.clock.Now().UTC()
	} else {
		wr.State = WaveRollingBack
	}
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return err
	}
	r.emit(Event{Kind: WaveBreached, Wave: w.Name, Cell: b.Cell, Breach: &b, Verdicts: verdicts})
	if w.Gate.OnBreach == waves.Halt {
		return &HaltedError{RolloutID: r.j.rec.ID, Wave: w.Name, Breach: &b,
			Next: fmt.Sprintf("on_breach is halt: inspect the cells (`cellctl rollout status %s`), then rerun with --retry or ship a fix", r.j.rec.ID)}
	}
	return r.rollback(ctx, w, wr)
}

// restoreCell returns one cell of a wave to the configuration it ran
// before the wave: its rollback migration first (after any migration task
// of its still running has ended), then its recorded configuration, which
// is applied even when the rollback migration failed — the old image is
// what must run again. ErrStopped: the operator's stop left a migration
// task running, and nothing was applied (a rerun finishes the cell).
func (r *run) restoreCell(ctx context.Context, wave string, wr *WaveRecord, cell string, save func(context.Context) error) error {
	r.j.mu.Lock()
	before := wr.cell(cell).Before
	r.j.mu.Unlock()
	if before == nil {
		return fmt.Errorf("no configuration was recorded before the wave")
	}
	failed, err := r.rollbackMigration(ctx, wave, wr, cell, save)
	if err != nil {
		return err
	}
	if _, err := r.ex.Updater.Apply(ctx, cell, before.Clone()); err != nil {
		return err
	}
	if failed != "" {
		return fmt.Errorf("%s; the service runs its previous configuration again", failed)
	}
	return nil
}

// rollback redeploys every cell the wave touched with the configuration it
// ran before the wave, all at once: restoring a known-good configuration
// is urgent, and max_parallel bounds the risk of a new one.
func (r *run) rollback(ctx context.Context, w Wave, wr *WaveRecord) error {
	r.j.mu.Lock()
	var cells []string
	for _, c := range wr.Cells {
		switch c.State {
		case CellStateUpdating, CellStateUpdated, CellStateFailed, CellRollingBack, CellRollbackFailed:
			cells = append(cells, c.Cell)
		}
	}
	b := wr.Breach
	r.j.mu.Unlock()
	r.emit(Event{Kind: RollingBack, Wave: w.Name, Breach: b, Message: fmt.Sprintf("rolling back wave %s: %s", w.Name, strings.Join(cells, ", "))})

	var (
		g    errgroup.Group
		errs *multierror.Error
		emu  sync.Mutex
	)
	var left []string
	for _, c := range cells {
		g.Go(func() error {
			r.setCell(wr, c, CellRollingBack, "")
			_ = r.save(ctx)
			err := r.restoreCell(ctx, w.Name, wr, c, r.save)
			switch {
			case errors.Is(err, ErrStopped):
				// Its migration task runs on: the cell stays rolling back
				// for the rerun, which follows the task.
				emu.Lock()
				left = append(left, c)
				emu.Unlock()
				return nil
			case err != nil:
				r.setCell(wr, c, CellRollbackFailed, err.Error())
				emu.Lock()
				errs = multierror.Append(errs, fmt.Errorf("%s: %w", c, err))
				emu.Unlock()
			default:
				r.setCell(wr, c, CellStateRolled, "")
				r.emit(Event{Kind: CellRolledBack, Wave: w.Name, Cell: c})
			}
			_ = r.save(ctx)
			return nil
		})
	}
	_ = g.Wait()
	if err := r.saved(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		// The wave stays rolling-back in the record: a rerun finishes it.
		return fmt.Errorf("wave %s interrupted while rolling back; rerun the same deploy to finish the rollback: %w", w.Name, err)
	}
	if len(left) > 0 {
		slices.Sort(left)
		return fmt.Errorf("wave %s stopped while rolling back (cells left at their migration, which runs on or was not started: %s; the rerun follows or runs it, then finishes their rollback): %w",
			w.Name, strings.Join(left, ", "), ErrStopped)
	}
	if err := errs.ErrorOrNil(); err != nil {
		// The wave stays rolling-back in the record: a rerun finishes it.
		return &HaltedError{RolloutID: r.j.rec.ID, Wave: w.Name, Breach: b, RollbackErr: err,
			Next: "rerun the same deploy to retry the rollback"}
	}
	schema, err := r.schemaCheck(ctx, w, wr)
	if err != nil {
		return err
	}
	r.j.mu.Lock()
	wr.State, wr.Finished = WaveRolledBack, r.clock.Now().UTC()
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return err
	}
	r.emit(Event{Kind: RolledBack, Wave: w.Name})
	cell := ""
	if b != nil {
		cell = b.Cell
	}
	untouched := false
	if schema != nil {
		r.j.mu.Lock()
		untouched = schemaUntouched(wr, schema.Cell)
		r.j.mu.Unlock()
	}
	return &HaltedError{RolloutID: r.j.rec.ID, Wave: w.Name, Breach: b, RolledBack: true, SchemaBreach: schema, SchemaUntouched: untouched,
		Next: fmt.Sprintf("cell %s breached; see the readings with `cellctl rollout status %s`, ship a fix as a new rollout", cell, r.j.rec.ID)}
}
