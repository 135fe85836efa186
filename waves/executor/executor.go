// Package executor runs a rollout: the waves of a plan in order, each
// wave's cells updated in parallel (bounded by max_parallel), a bake that
// polls the health gate, and on a breach the wave redeployed with the exact
// configuration each cell ran before it. The rollout's record is saved after
// every state change, so a rerun after a crash, kill -9 or Ctrl-C continues
// where it stopped, and one lock keeps a second rollout off the fleet.
//
// The executor knows nothing of Pulumi, CloudWatch or the CLI: it drives
// four small interfaces (Updater, Gate, Store, Clock) and reports to a
// Progress sink, so tests run whole rollouts against one-struct fakes in
// milliseconds, and `cellctl deploy` adapts the engine seam, the gate
// evaluator and the blob record store to them.
package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/outcome"
)

// Executor runs rollouts. Updater, Gate and Store are required; Clock
// defaults to the wall clock, Progress to nothing.
type Executor struct {
	Updater Updater
	// Migrator runs each changed cell's schema migration before its
	// update, and its rollback command before its rollback (nil: none).
	Migrator Migrator
	Gate     Gate
	Store    Store
	Clock    Clock
	Progress Progress

	// Bootstrapper puts a cell's database users in place where its change
	// needs them: before its migration, or after an update that turns
	// migrations on (nil: none).
	Bootstrapper Bootstrapper
}

// Options are one run's choices (the deploy command's flags).
type Options struct {
	// ID overrides the rollout id (default: Plan.ID()).
	ID string
	// Through stops after this wave (exit 0); later waves stay for the
	// next run of the same rollout.
	Through string
	// Wave runs only this wave; refused unless every earlier wave of the
	// same rollout passed.
	Wave string
	// Rebake bakes again waves that already passed.
	Rebake bool
	// Retry tries again the wave a halted rollout stopped at. Without it,
	// rerunning a halted rollout is refused with the halt it recorded.
	Retry bool
	// Host and PID identify this run in the lock (the holder's host, pid).
	Host string
	PID  int
	// Verb names the operation in the fleet lock's holder (default
	// "deploy"), so a refused operator reads what holds the fleet.
	Verb string
	// Alive reports whether a lock holder's process still runs; it is only
	// asked about holders on this Host (the command passes the fleet lock's
	// one check, rollout.ProcessAlive). nil: every holder is presumed alive
	// (never steal a lock on a guess).
	Alive func(Holder) bool
	// Stop, when closed, asks the run to stop at the next safe point: cell
	// updates already running finish, no new cell starts, a bake stops
	// polling, a rollback in progress completes — except that no run
	// waits on a migration task after it (MigrationRequest.Detach: the
	// task runs on, the record names it, a rerun follows it) or starts
	// one, and a cell left at its migration waits for the rerun. The run then returns
	// ErrStopped with the record saved, and a rerun continues. It is the
	// first Ctrl-C; cancelling ctx is the second (it cancels the updates
	// themselves). nil: never.
	Stop <-chan struct{}
	// Router updates the router stack; it runs once, after the last wave,
	// with the rollout's journal: the router step (a router canary) keeps
	// its state in the rollout's record (Record.Canary), under the
	// rollout's holder, so a rerun after a kill resumes it. nil: there is
	// no router step.
	Router func(ctx context.Context, j *Journal) error
	// Resume says this run is `cellctl rollout resume`: the one run that
	// continues a rollout an operator paused (any other is refused).
	Resume bool
	// Abort, when set, is `cellctl rollout abort`: the run rolls back
	// every wave the record says changed a cell, last first, and releases
	// the fleet, instead of going on.
	Abort *Ask
	// RequestPoll is how often a wave waiting for an approval reads the
	// requests (0: DefaultRequestPoll).
	RequestPoll time.Duration
	// BakeScale is the rehearsal's --bake-scale the plan's bakes were
	// multiplied by (0: none), recorded so the commands that continue the
	// rollout say it and pass it again.
	BakeScale float64
}

// Outcome is what a run leaves: the record as saved and the final table.
type Outcome struct {
	Record  *Record `json:"record"`
	Summary []Row   `json:"summary"`
}

// run is one Run's working state.
type run struct {
	ex     *Executor
	plan   Plan
	opts   Options
	clock  Clock
	holder Holder

	// j is the rollout's record: every change to it goes through the
	// journal's lock, and its first failed save stops the rollout at the
	// next step.
	j *Journal
	// retried is the wave a --retry reset, if any.
	retried string
	// breached are the configurations breached waves of any rollout
	// shipped, by cell (settle): never a rollback target.
	breached map[string][]poisoned
	// steering reads operators' requests after every save (steer.go);
	// stopWatch ends its watcher when the run returns.
	steering *steering
}

// Run executes the plan. It returns the outcome (nil only when nothing was
// started, e.g. an invalid plan) and, on failure, a *HaltedError (a wave
// breached), a *LockedError (another rollout holds the fleet), a
// *RefusedError (the options do not fit the record) or another error (the
// run stopped; rerun the same deploy to continue).
//
// A halt and a lock conflict come wrapped in internal/outcome's typed
// errors (exit 3 and 4 through internal/exitcode); errors.As finds the
// executor's own *HaltedError and *LockedError through them.
func (ex *Executor) Run(ctx context.Context, plan Plan, opts Options) (*Outcome, error) {
	out, err := ex.run(ctx, plan, opts)
	return out, typed(err)
}

// typed wraps the executor's outcomes in the product's exit-code vocabulary.
func typed(err error) error {
	var h *HaltedError
	var l *LockedError
	var a *AbortedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &l):
		return outcome.Locked("", err)
	case errors.As(err, &h):
		return outcome.Halted(h.Wave, err)
	case errors.As(err, &a):
		return outcome.Halted("", err)
	}
	return err
}

func (ex *Executor) run(ctx context.Context, plan Plan, opts Options) (*Outcome, error) {
	if ex.Updater == nil || ex.Gate == nil || ex.Store == nil {
		return nil, errors.New("executor: Updater, Gate and Store are required")
	}
	if err := plan.Validate(); err != nil {
		return nil, fmt.Errorf("invalid rollout plan: %w", err)
	}
	first, last, err := span(plan, opts)
	if err != nil {
		return nil, err
	}
	r := &run{ex: ex, plan: plan, opts: opts, clock: ex.Clock}
	if r.clock == nil {
		r.clock = RealClock{}
	}
	id := opts.ID
	if id == "" {
		id = plan.ID()
	}
	verb := opts.Verb
	if verb == "" {
		verb = "deploy"
	}
	r.holder = Holder{ID: id, Verb: verb, Host: opts.Host, PID: opts.PID, Started: r.clock.Now().UTC(), Nonce: nonce()}

	if err := r.lock(ctx); err != nil {
		return nil, err
	}
	// From here the lock is ours; every way out decides whether to keep it.
	rec, err := ex.Store.Load(ctx, id)
	existed := err == nil
	switch {
	case errors.Is(err, ErrNoRecord):
		rec = newRecord(id, plan, r.holder)
		if opts.BakeScale > 0 && opts.BakeScale != 1 {
			rec.BakeScale = opts.BakeScale
		}
	case err != nil:
		r.unlock()
		return nil, fmt.Errorf("reading the record of rollout %s: %w", id, err)
	default:
		check := matches
		if opts.Abort != nil || (rec.Aborted != nil && rec.State != Aborted) {
			// An abort ships only what the record says the cells ran
			// before: the repository may have moved on since.
			check = sameWaves
		}
		if err := check(rec, plan); err != nil {
			r.unlock()
			return nil, err
		}
	}
	r.j = NewJournal(ex.Store, r.clock, rec)
	if opts.Resume {
		// resume is the answer to a pause: the request goes before the
		// run starts reading requests.
		r.clearPause(ctx)
	}
	r.steer(ctx)
	if opts.Abort != nil || (existed && rec.Aborted != nil && rec.State != Aborted) {
		ask := rec.Aborted
		if ask == nil {
			ask = opts.Abort
		}
		if !existed {
			r.unlock()
			return nil, &RefusedError{Reason: fmt.Sprintf("rollout %s has no record: nothing to abort", id)}
		}
		if rec.State == Complete || rec.State == HaltedState {
			r.refused(existed)
			return r.outcome(ctx), &RefusedError{Reason: fmt.Sprintf("rollout %s is %s: nothing to abort (`cellctl rollout undo` ships the rollout before it)", id, rec.State)}
		}
		return r.abort(ctx, *ask)
	}

	if err := r.admit(first, existed); err != nil {
		r.refused(existed)
		return r.refusedOutcome(ctx, existed), err
	}
	if err := r.settle(ctx); err != nil {
		r.refused(existed)
		return r.refusedOutcome(ctx, existed), err
	}
	if rec.State == Complete && !opts.Rebake {
		if opts.Wave != "" || opts.Through != "" {
			// A CI job of a finished pipeline, rerun: nothing left to do.
			r.emit(Event{Kind: Note, Message: fmt.Sprintf("rollout %s is already complete: nothing to do", id)})
			r.unlock()
			return r.outcome(ctx), nil
		}
		// deploy is the gated form of up: run again, it converges the
		// fleet once more. Cells still on the desired configuration are
		// unchanged and do not bake, so an untouched fleet costs one read
		// per cell; a cell changed by hand since is rolled out again.
		r.restart()
	}

	resumed := r.resumeNote()
	r.j.mu.Lock()
	rec.State = Running
	rec.Holder = r.holder
	rec.Error = ""
	rec.Paused = nil
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		r.refused(existed)
		return r.outcome(ctx), err
	}
	if resumed != "" {
		r.emit(Event{Kind: RolloutResumed, Message: resumed})
	} else {
		r.emit(Event{Kind: RolloutStarted, Message: fmt.Sprintf("rollout %s: %d waves", id, len(plan.Waves))})
	}

	for i := first; i <= last; i++ {
		if r.stopped() {
			return r.stop(ctx, fmt.Errorf("before wave %s: %w", plan.Waves[i].Name, ErrStopped))
		}
		if err := r.wave(ctx, i); err != nil {
			return r.stop(ctx, err)
		}
	}
	if last < len(plan.Waves)-1 {
		r.j.mu.Lock()
		rec.State = Paused
		r.j.mu.Unlock()
		if err := r.save(ctx); err != nil {
			return r.stop(ctx, err)
		}
		r.emit(Event{Kind: RolloutPaused, Wave: plan.Waves[last].Name, Message: fmt.Sprintf(
			"stopped after wave %s as asked; continue with `%s` (the rollout keeps the fleet's lock)",
			plan.Waves[last].Name, ContinueCommand(rec, plan.Waves[last+1].Name))})
		return r.outcome(ctx), nil
	}
	if err := r.router(ctx); err != nil {
		return r.stop(ctx, err)
	}
	r.j.mu.Lock()
	rec.State = Complete
	rec.Finished = r.clock.Now().UTC()
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return r.stop(ctx, err)
	}
	r.clearRequests(ctx)
	r.unlock()
	r.emit(Event{Kind: RolloutComplete, Message: fmt.Sprintf("rollout %s complete", id)})
	return r.outcome(ctx), nil
}

// span is the range of waves this run may touch.
func span(plan Plan, opts Options) (int, int, error) {
	if opts.Through != "" && opts.Wave != "" {
		return 0, 0, &RefusedError{Reason: "--through and --wave cannot be combined: --wave runs one wave, --through runs every wave up to one"}
	}
	names := make([]string, len(plan.Waves))
	for i, w := range plan.Waves {
		names[i] = w.Name
	}
	find := func(flag, name string) (int, error) {
		i := plan.index(name)
		if i < 0 {
			return 0, &RefusedError{Reason: fmt.Sprintf("%s %q: no such wave (waves: %s)", flag, name, strings.Join(names, ", "))}
		}
		return i, nil
	}
	switch {
	case opts.Wave != "":
		i, err := find("--wave", opts.Wave)
		return i, i, err
	case opts.Through != "":
		i, err := find("--through", opts.Through)
		return 0, i, err
	}
	return 0, len(plan.Waves) - 1, nil
}

func newRecord(id string, plan Plan, h Holder) *Record {
	rec := &Record{ID: id, State: Running, Holder: h, Started: h.Started}
	for _, w := range plan.Waves {
		wr := WaveRecord{Name: w.Name, State: WavePending}
		for _, c := range w.Cells {
			wr.Cells = append(wr.Cells, CellRecord{Cell: c, State: CellPending, After: plan.Desired[c].Clone(), RepoImage: plan.Repository[c]})
		}
		rec.Waves = append(rec.Waves, wr)
	}
	return rec
}

// matches checks a loaded record is of this plan (an --id given by hand
// could name another rollout).
func matches(rec *Record, plan Plan) error {
	if len(rec.Waves) != len(plan.Waves) {
		return &RefusedError{Reason: fmt.Sprintf("rollout %s has %d waves, waves.yaml now has %d: it is another rollout", rec.ID, len(rec.Waves), len(plan.Waves))}
	}
	for i, w := range plan.Waves {
		wr := rec.Waves[i]
		if wr.Name != w.Name || len(wr.Cells) != len(w.Cells) {
			return &RefusedError{Reason: fmt.Sprintf("rollout %s's wave %d is %q, waves.yaml's is %q: it is another rollout", rec.ID, i+1, wr.Name, w.Name)}
		}
		for j, c := range w.Cells {
			if wr.Cells[j].Cell != c {
				return &RefusedError{Reason: fmt.Sprintf("rollout %s's wave %s has cell %q where waves.yaml has %q: it is another rollout", rec.ID, w.Name, wr.Cells[j].Cell, c)}
			}
			if !wr.Cells[j].After.Equal(plan.Desired[c]) {
				return &RefusedError{Reason: fmt.Sprintf("rollout %s ships another configuration to %s than this deploy would: it is another rollout", rec.ID, c)}
			}
		}
	}
	return nil
}

// sameWaves checks a loaded record has this plan's waves and cells — all
// an abort needs of the plan, which ships what the record says the cells
// ran before.
func sameWaves(rec *Record, plan Plan) error {
	if len(rec.Waves) != len(plan.Waves) {
		return &RefusedError{Reason: fmt.Sprintf("rollout %s has %d waves, waves.yaml now has %d: check out the commit it started from to abort it", rec.ID, len(rec.Waves), len(plan.Waves))}
	}
	for i, w := range plan.Waves {
		if wr := rec.Waves[i]; wr.Name != w.Name || !slices.EqualFunc(wr.Cells, w.Cells, func(c CellRecord, id string) bool { return c.Cell == id }) {
			return &RefusedError{Reason: fmt.Sprintf("rollout %s's wave %d is %q with other cells than waves.yaml's %q: check out the commit it started from to abort it", rec.ID, i+1, wr.Name, w.Name)}
		}
	}
	return nil
}

// clearPause removes a pause request once `rollout resume` took the
// rollout over (the record no longer says paused).
func (r *run) clearPause(ctx context.Context) {
	if reqs, ok := r.ex.Store.(Requests); ok {
		_ = reqs.Ask(context.WithoutCancel(ctx), r.j.rec.ID, func(q *Request) { q.Pause = nil })
	}
	if r.steering != nil {
		r.j.mu.Lock()
		r.steering.asked.Pause = nil
		r.j.mu.Unlock()
	}
}

// lock takes the fleet's lock (Take), taking it over from a run of the
// same rollout that is known to have stopped: one that recorded itself
// paused or interrupted, or one on this host whose process is gone.
func (r *run) lock(ctx context.Context) error {
	note, err := Take(ctx, r.ex.Store, r.holder, func(h Holder) bool { return h.ID == r.holder.ID }, r.opts.Alive)
	if err != nil {
		return err
	}
	if note != "" {
		r.emit(Event{Kind: Note, Message: note})
	}
	return nil
}

// unlock releases the lock; a failure is reported, not fatal (the record
// says the rollout ended, so the next run of it can take the lock over).
func (r *run) unlock() {
	if err := r.ex.Store.Unlock(context.Background(), r.holder); err != nil {
		r.emit(Event{Kind: Note, Err: err, Message: fmt.Sprintf("could not release the rollout lock: %v; `cellctl deploy --abandon %s` removes it", err, r.holder.ID)})
	}
}

// refused ends a run that changed nothing. A rollout still in progress
// keeps the lock, now in this run's name (it took the lock over, and the
// next run of the rollout must be able to take it from this one); any
// other is released.
func (r *run) refused(existed bool) {
	switch s := r.j.rec.State; {
	case existed && (s == Running || s == Paused || s == Interrupted):
		r.j.mu.Lock()
		if s == Running {
			r.j.rec.State = Interrupted
		}
		r.j.rec.Holder = r.holder
		r.j.mu.Unlock()
		if r.save(context.Background()) != nil {
			r.unlock()
		}
	default:
		r.unlock()
	}
}

// refusedOutcome is what a refused run reports: the record as it stands
// when there is one, and nothing when this run would have been the
// rollout's first (a record never saved would read as a rollout running).
func (r *run) refusedOutcome(ctx context.Context, existed bool) *Outcome {
	if !existed {
		return nil
	}
	return r.outcome(ctx)
}

// admit checks the record allows this run, and prepares a --retry.
// existed says the record was saved before (a refused first run names no
// rollout: none exists).
func (r *run) admit(first int, existed bool) error {
	rec := r.j.rec
	if rec.Paused != nil && !r.opts.Resume {
		return &LockedError{Holder: rec.Holder, State: Paused, Kind: rec.Kind, Paused: rec.Paused, Next: nextWave(rec)}
	}
	if rec.State == Aborted {
		if !r.opts.Retry {
			return &RefusedError{Reason: fmt.Sprintf("rollout %s was aborted by %s at %s; rerun with --retry to start it again from its first wave, or ship another rollout",
				rec.ID, rec.Aborted.By, rec.Aborted.At.UTC().Format(time.RFC3339))}
		}
		r.restart()
		rec.Aborted, rec.Finished = nil, time.Time{}
		return nil
	}
	// A halted wave settles the rollout whatever its state says (the run
	// that halted it may have died before saving that state).
	at := -1
	for i := range rec.Waves {
		if s := rec.Waves[i].State; s == WaveRolledBack || s == WaveHalted {
			at = i
			break
		}
	}
	if at >= 0 {
		wr := &rec.Waves[at]
		if !r.opts.Retry {
			h := &HaltedError{RolloutID: rec.ID, Wave: wr.Name, Breach: wr.Breach, Reason: wr.Reason, RolledBack: wr.State == WaveRolledBack,
				Next: fmt.Sprintf("this rollout already halted; ship a fix (a new rollout), or rerun with --retry to try wave %s again", wr.Name)}
			return h
		}
		r.retry(wr)
	}
	if r.opts.Wave != "" {
		for i := 0; i < first; i++ {
			if wr := rec.Waves[i]; !wr.passed() && !existed {
				return &RefusedError{Reason: fmt.Sprintf("--wave %s refused: no rollout of this release has run yet, so wave %s has not passed; run `cellctl deploy --through %s` first",
					r.opts.Wave, wr.Name, wr.Name)}
			} else if !wr.passed() {
				return &RefusedError{Reason: fmt.Sprintf("--wave %s refused: earlier wave %s of rollout %s has not passed (it is %s); run `cellctl deploy --through %s` first",
					r.opts.Wave, wr.Name, rec.ID, wr.State, wr.Name)}
			}
		}
	}
	return nil
}

// retry resets a halted wave so this run tries it again; the attempt
// before stays in the record's history for audit.
func (r *run) retry(wr *WaveRecord) {
	prev := *wr
	prev.History = nil
	wr.History = append(wr.History, prev)
	wr.Polls, wr.Breach, wr.Reason = nil, nil, ""
	wr.Started, wr.BakeStart, wr.Finished = time.Time{}, time.Time{}, time.Time{}
	if wr.State == WaveRolledBack {
		// The cells run their recorded configuration again: start afresh,
		// reading it from the cells.
		wr.State = WavePending
		for i := range wr.Cells {
			c := &wr.Cells[i]
			c.State, c.Before, c.Error = CellPending, nil, ""
		}
	} else {
		// Halted without a rollback: the cells may run the new
		// configuration, so keep what they ran before, and re-apply.
		wr.State = WaveUpdating
		for i := range wr.Cells {
			if c := &wr.Cells[i]; c.State != CellStateUnchanged {
				c.State, c.Error = CellPending, ""
			}
		}
	}
	r.j.rec.State = Running
	r.j.rec.Halt = nil
	r.retried = wr.Name
	r.emit(Event{Kind: Note, Wave: wr.Name, Message: fmt.Sprintf("retrying wave %s of halted rollout %s", wr.Name, r.j.rec.ID)})
}

// restart begins a completed rollout again; each wave's finished attempt
// stays in its history.
func (r *run) restart() {
	for i := range r.j.rec.Waves {
		wr := &r.j.rec.Waves[i]
		prev := *wr
		prev.History = nil
		*wr = WaveRecord{Name: wr.Name, State: WavePending, History: append(wr.History, prev)}
		for _, c := range prev.Cells {
			wr.Cells = append(wr.Cells, CellRecord{Cell: c.Cell, State: CellPending, After: r.plan.Desired[c.Cell].Clone(), RepoImage: r.plan.Repository[c.Cell]})
		}
	}
	r.j.rec.Router = ""
	r.j.rec.Started = r.holder.Started
	r.j.rec.Finished = time.Time{}
	r.emit(Event{Kind: Note, Message: fmt.Sprintf("rollout %s completed before: checking every cell again (cells already on it do not bake)", r.j.rec.ID)})
}

// resumeNote says what a rerun continues, or "" for a fresh rollout.
func (r *run) resumeNote() string {
	var parts []string
	for _, wr := range r.j.rec.Waves {
		switch wr.State {
		case WaveDone, WaveUnchanged:
			parts = append(parts, wr.Name+" passed")
		case WaveUpdating:
			if wr.Name == r.retried {
				parts = append(parts, wr.Name+" is retried")
			} else {
				parts = append(parts, wr.Name+" was mid-update")
			}
		case WaveBaking:
			parts = append(parts, wr.Name+" was baking")
		case WaveRollingBack:
			parts = append(parts, wr.Name+" was rolling back")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("resuming rollout %s: %s", r.j.rec.ID, strings.Join(parts, ", "))
}

// stop ends a run that failed: a halt releases the lock (the wave is
// settled), anything else keeps it for the next run of this rollout.
func (r *run) stop(ctx context.Context, err error) (*Outcome, error) {
	var h *HaltedError
	if errors.Is(err, ErrStopped) {
		if out, serr, ok := r.steered(ctx); ok {
			return out, serr
		}
	}
	if errors.As(err, &h) && h.RollbackErr == nil {
		r.j.mu.Lock()
		r.j.rec.State = HaltedState
		r.j.rec.Halt = h.Breach
		r.j.mu.Unlock()
		if serr := r.save(ctx); serr != nil {
			return r.outcome(ctx), errors.Join(err, serr)
		}
		r.clearRequests(ctx)
		r.unlock()
		return r.outcome(ctx), err
	}
	r.j.mu.Lock()
	r.j.rec.State = Interrupted
	r.j.rec.Error = err.Error()
	r.j.mu.Unlock()
	if serr := r.save(ctx); serr != nil && !errors.Is(err, serr) {
		return r.outcome(ctx), errors.Join(err, serr)
	}
	return r.outcome(ctx), err
}

// save writes the record (Journal.Update).
func (r *run) save(ctx context.Context) error { return r.j.Update(ctx, nil) }

// saved is the first save failure, if any.
func (r *run) saved() error { return r.j.Err() }

func (r *run) emit(e Event) {
	if r.ex.Progress == nil {
		return
	}
	if e.At.IsZero() {
		e.At = r.clock.Now()
	}
	r.ex.Progress.Event(e)
}

// router runs the router step once, after the last wave.
func (r *run) router(ctx context.Context) error {
	if r.opts.Router == nil || r.j.rec.Router == "updated" {
		return nil
	}
	r.j.mu.Lock()
	r.j.rec.Router = "updating"
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return err
	}
	r.emit(Event{Kind: RouterUpdating})
	if err := r.opts.Router(ctx, r.j); err != nil {
		r.j.mu.Lock()
		r.j.rec.Router = "failed"
		r.j.mu.Unlock()
		err = fmt.Errorf("updating the router after the last wave: %w (every wave passed; rerun the same deploy to retry the router)", err)
		if serr := r.save(ctx); serr != nil {
			return errors.Join(err, serr)
		}
		return err
	}
	r.j.mu.Lock()
	r.j.rec.Router = "updated"
	r.j.mu.Unlock()
	r.emit(Event{Kind: RouterUpdated})
	return r.save(ctx)
}

// nextWave is the first wave of a record that has not passed.
// HeldBy is the refusal for a fleet another run (h) holds, told by that
// run's record when it is a rollout: a paused rollout holds the fleet
// between its CI jobs by design, an interrupted one waits to be rerun.
func HeldBy(ctx context.Context, st Store, h Holder) *LockedError {
	le := &LockedError{Holder: h}
	if rec, err := st.Load(ctx, h.ID); err == nil {
		le.State, le.Kind = rec.State, rec.Kind
		if (rec.State == Paused || rec.State == Waiting) && rec.IsRollout() {
			le.Next = nextWave(rec)
			le.Paused = rec.Paused
			le.Continue = ContinueCommand(rec, le.Next)
		}
		if !rec.IsRollout() && rec.State == Paused {
			// A canary or a rotation an operator paused (Steering).
			le.Paused = rec.Paused
		}
		if reqs, ok := st.(Requests); ok && le.Paused == nil && rec.IsRollout() && rec.State != Running && rec.State != Waiting {
			// A pause asked while no run drove the rollout takes effect
			// at its next run; it holds the fleet from now.
			if q, err := reqs.Request(ctx, h.ID); err == nil && q.Pause != nil {
				le.State, le.Paused, le.Next = Paused, q.Pause, nextWave(rec)
			}
		}
	}
	return le
}

// Image is the image a rollout was given (`deploy --image`), read from
// its record: the image of a cell whose repository named another; ""
// when every cell ships its repository's image.
func (r *Record) Image() string {
	for _, w := range r.Waves {
		for _, c := range w.Cells {
			if c.RepoImage != "" {
				return c.After.Image
			}
		}
	}
	return ""
}

// ContinueCommand is the command that continues a rollout stopped by
// --through before wave next, as it can be pasted: the same deploy (its
// --image included, or it would be another rollout), one wave on.
func ContinueCommand(rec *Record, next string) string {
	cmd := "cellctl deploy --wave " + next
	if img := rec.Image(); img != "" {
		cmd += " --image " + img
	}
	if rec.BakeScale > 0 {
		cmd += fmt.Sprintf(" --bake-scale %g", rec.BakeScale)
	}
	return cmd
}

func nextWave(rec *Record) string {
	for _, w := range rec.Waves {
		if !w.passed() {
			return w.Name
		}
	}
	return ""
}

func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stopped reports whether the operator asked the run to stop (Options.Stop).
func (r *run) stopped() bool {
	select {
	case <-r.opts.Stop:
		return true
	case <-r.steerStop():
		return true
	default:
		return false
	}
}
