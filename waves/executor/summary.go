package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Where a cell stands at the end of a run, as the final table shows it.
const (
	// StateNew: the cell runs the rollout's configuration.
	StateNew = "new"
	// StateRolledBack: the cell runs its recorded configuration again.
	StateRolledBack = "rolled back"
	// StateUntouched: the rollout has not reached the cell.
	StateUntouched = "untouched"
	// StateUnchanged: the cell already ran the desired configuration.
	StateUnchanged = "unchanged"
	// StateNotRolledBack: the cell runs the new configuration in a wave
	// that halted without a rollback (on_breach: halt, or inconclusive).
	StateNotRolledBack = "new, halted"
	// StateBaking: updated, its wave did not finish (interrupted while
	// updating its other cells or baking).
	StateBaking = "new, wave unfinished"
	// StateHalfUpdated: the cell's update started and did not finish.
	StateHalfUpdated = "update unfinished"
	// StateUpdateFailed / StateRollbackFailed: the last operation failed;
	// what the cell runs is unknown until it is redeployed.
	StateUpdateFailed   = "update failed"
	StateRollbackFailed = "rollback failed"
)

// Row is one line of the final table: cell → wave → image → state.
type Row struct {
	Cell  string `json:"cell"`
	Wave  string `json:"wave"`
	Image string `json:"image"`
	State string `json:"state"`
}

// Summarize is the final table of a rollout record: every cell of every
// wave, the image it runs and its state. Untouched cells have no recorded
// configuration; current supplies theirs when known (else the image is "").
func Summarize(rec *Record, current map[string]CellConfig) []Row {
	var rows []Row
	for _, wr := range rec.Waves {
		for _, c := range wr.Cells {
			row := Row{Cell: c.Cell, Wave: wr.Name}
			before := ""
			if c.Before != nil {
				before = c.Before.Image
			} else if cur, ok := current[c.Cell]; ok {
				before = cur.Image
			}
			switch c.State {
			case CellStateUnchanged:
				row.Image, row.State = c.After.Image, StateUnchanged
			case CellStateRolled:
				row.Image, row.State = before, StateRolledBack
			case CellStateUpdated:
				row.Image = c.After.Image
				switch wr.State {
				case WaveDone:
					row.State = StateNew
				case WaveHalted:
					row.State = StateNotRolledBack
				default:
					row.State = StateBaking
				}
			case CellStateUpdating:
				row.Image, row.State = "", StateHalfUpdated
			case CellStateFailed:
				row.Image, row.State = "", StateUpdateFailed
			case CellRollingBack, CellRollbackFailed:
				row.Image, row.State = "", StateRollbackFailed
			default:
				row.Image, row.State = before, StateUntouched
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// outcome builds the run's outcome, reading the untouched cells' current
// images best-effort (the table is a report: an unreadable cell shows no
// image rather than failing the run).
func (r *run) outcome(ctx context.Context) *Outcome {
	r.j.mu.Lock()
	var untouched []string
	for _, wr := range r.j.rec.Waves {
		for _, c := range wr.Cells {
			if c.Before == nil && c.State == CellPending {
				untouched = append(untouched, c.Cell)
			}
		}
	}
	r.j.mu.Unlock()
	current := map[string]CellConfig{}
	if ctx.Err() == nil {
		// A read is a stack read through the engine: in parallel, bounded.
		var (
			g  errgroup.Group
			mu sync.Mutex
		)
		g.SetLimit(8)
		for _, c := range untouched {
			g.Go(func() error {
				if cfg, err := r.ex.Updater.Current(ctx, c); err == nil {
					mu.Lock()
					current[c] = cfg
					mu.Unlock()
				}
				return nil
			})
		}
		_ = g.Wait()
	}
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	rec := cloneRecord(r.j.rec)
	return &Outcome{Record: rec, Summary: Summarize(rec, current)}
}

// Abandon breaks the fleet lock of holder id for a holder that is dead (the
// operator's `deploy --abandon ID`: a rollout, another verb's run, or
// "unreadable" for a lock that cannot be parsed) and marks a rollout's
// record abandoned; rerunning the same deploy continues it. It refuses
// when another id holds the lock, and reports when nothing does.
func Abandon(ctx context.Context, store Store, id string, probe Holder) (*Holder, error) {
	// The store has no read of the lock: a lock attempt either answers with
	// the holder or takes the (free) lock, which is then given back.
	probe.ID = "abandon-" + id
	err := store.Lock(ctx, probe)
	var le *LockedError
	switch {
	case err == nil:
		_ = store.Unlock(ctx, probe)
		return nil, &RefusedError{Reason: fmt.Sprintf("nothing holds the fleet lock: nothing to abandon (%s is not running)", id)}
	case !errors.As(err, &le):
		return nil, fmt.Errorf("reading the rollout lock: %w", err)
	case le.Holder.ID != id:
		return nil, &RefusedError{Reason: fmt.Sprintf("the fleet lock is held by %s, not %s", le.Holder, id)}
	}
	held := le.Holder
	if err := store.BreakLock(ctx, held); err != nil {
		return nil, fmt.Errorf("breaking the lock of %s: %w", held, err)
	}
	rec, err := store.Load(ctx, id)
	if err != nil {
		if errors.Is(err, ErrNoRecord) {
			return &held, nil
		}
		return &held, fmt.Errorf("lock broken, but reading the record of rollout %s failed: %w", id, err)
	}
	if rec.State == Running || rec.State == Paused || rec.State == Interrupted {
		rec.State = Abandoned
		if err := store.Save(ctx, rec); err != nil {
			return &held, fmt.Errorf("lock broken, but saving the record of rollout %s failed: %w", id, err)
		}
	}
	return &held, nil
}
