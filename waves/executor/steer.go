package executor

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Request is what operators asked of a change while another process may
// be running it (`cellctl rollout pause|abort|approve`). It lives in the
// backend beside the record, not in it: the record is written only by the
// run that holds the fleet lock, so a request from another terminal (or a
// CI job) is its own object, read by that run every time it saves the
// record — so where a request takes effect is a step boundary, never the
// middle of a cell's update.
type Request struct {
	// Pause asks the run to stop at its next safe point and keep the
	// fleet (Record.Paused).
	Pause *Ask `json:"pause,omitempty"`
	// Abort asks the run to stop and roll back every wave it changed,
	// last first, then release the fleet (Record.Aborted).
	Abort *Ask `json:"abort,omitempty"`
	// Approve are the approvals given, by wave name.
	Approve map[string]Ask `json:"approve,omitempty"`
}

// Empty reports whether nothing is asked.
func (q Request) Empty() bool { return q.Pause == nil && q.Abort == nil && len(q.Approve) == 0 }

// Requests is optional on a Store: where operators' requests are kept
// (the backend's rollout store implements it). Without it nobody can
// steer a running change (the executor still runs it).
type Requests interface {
	// Request reads the requests of a change (zero: none).
	Request(ctx context.Context, id string) (Request, error)
	// Ask changes the requests of a change: fn edits them, and the whole
	// is written back (an empty one removes the object).
	Ask(ctx context.Context, id string, fn func(*Request)) error
}

// DefaultRequestPoll is how often a rollout waiting for an approval
// reads its requests.
const DefaultRequestPoll = 5 * time.Second

// steering watches a run's requests: it is told after every save of the
// record, and stops the run (the same way as Options.Stop) once a pause
// or an abort is asked.
type steering struct {
	reqs Requests
	id   string
	stop chan struct{}

	asked Request
	fired bool
}

// check reads the requests; a pause or an abort closes stop. A request
// that cannot be read is read again at the next save: steering never
// stops a change by its own failure.
func (s *steering) check(ctx context.Context) Request {
	if s == nil || s.reqs == nil {
		return Request{}
	}
	q, err := s.reqs.Request(context.WithoutCancel(ctx), s.id)
	if err != nil {
		return s.asked
	}
	s.asked = q
	if !s.fired && (q.Pause != nil || q.Abort != nil) {
		s.fired = true
		close(s.stop)
	}
	return q
}

// steer sets up the run's steering: the requests are read after every
// save of the record (Journal.afterSave), and a pause or an abort closes
// the steering stop, which the run treats as Options.Stop (stopped, and
// the bake's Steer); a migration task being waited on is not detached
// from: the pause takes effect once it ends.
func (r *run) steer(ctx context.Context) {
	reqs, _ := r.ex.Store.(Requests)
	s := &steering{reqs: reqs, id: r.j.rec.ID, stop: make(chan struct{})}
	r.steering = s
	if reqs == nil {
		return
	}
	r.j.afterSave = func(ctx context.Context) { s.check(ctx) }
	// A request made while no run held the change (an abort of a paused
	// rollout that another run is resuming) is seen before the first step.
	s.check(ctx)
}

// steerStop is closed once an operator asked this run to pause or abort.
func (r *run) steerStop() <-chan struct{} {
	if r.steering == nil {
		return nil
	}
	return r.steering.stop
}

// asked is what operators asked of this run so far.
func (r *run) asked() Request {
	if r.steering == nil {
		return Request{}
	}
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	return r.steering.asked
}

// steered ends a run that stopped at an operator's pause or abort
// request: a pause keeps the fleet (Paused), an abort rolls back. It
// returns false when no request stopped the run.
func (r *run) steered(ctx context.Context) (*Outcome, error, bool) {
	q := r.asked()
	switch {
	case q.Abort != nil:
		out, err := r.abort(ctx, *q.Abort)
		return out, err, true
	case q.Pause != nil:
		r.j.mu.Lock()
		r.j.rec.State = Paused
		r.j.rec.Paused = q.Pause
		r.j.rec.Error = ""
		r.j.mu.Unlock()
		if err := r.save(ctx); err != nil {
			return r.outcome(ctx), err, true
		}
		r.emit(Event{Kind: RolloutPaused, Message: fmt.Sprintf(
			"rollout %s paused by %s at %s; it keeps the fleet's lock: `cellctl rollout resume %s` continues it, `cellctl rollout abort %s` rolls it back",
			r.j.rec.ID, q.Pause.By, q.Pause.At.UTC().Format(time.RFC3339), r.j.rec.ID, r.j.rec.ID)})
		return r.outcome(ctx), nil, true
	}
	return nil, nil, false
}

// abort rolls back, last first, every wave of the record that changed a
// cell, each to the configuration its cells ran before it (the wave's own
// rollback: migration rollbacks included), then records the rollout
// aborted and releases the fleet. The abort is recorded before the first
// rollback, so a run killed mid-abort is finished by the next one.
func (r *run) abort(ctx context.Context, ask Ask) (*Outcome, error) {
	r.j.mu.Lock()
	if r.j.rec.Aborted == nil {
		r.j.rec.Aborted = &ask
	}
	r.j.rec.State = Running
	r.j.rec.Paused = nil
	by := r.j.rec.Aborted
	// The request that asked for the abort stopped the run; from here no
	// request stops the abort (a bake after a rollback, the schema check,
	// runs whole). The operator's own stop still does: the next abort
	// finishes it.
	r.steering = &steering{stop: make(chan struct{}), fired: true, asked: Request{Abort: by}}
	r.j.afterSave = nil
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return r.outcome(ctx), err
	}
	r.emit(Event{Kind: Note, Message: fmt.Sprintf("aborting rollout %s (asked by %s at %s): rolling back every wave that changed a cell, last first",
		r.j.rec.ID, by.By, by.At.UTC().Format(time.RFC3339))})
	for i := len(r.plan.Waves) - 1; i >= 0; i-- {
		w := r.plan.Waves[i]
		r.j.mu.Lock()
		wr := &r.j.rec.Waves[i]
		changed := wr.changed()
		if changed && wr.Breach == nil {
			wr.State = WaveRollingBack
		}
		r.j.mu.Unlock()
		if !changed {
			continue
		}
		err := r.rollback(ctx, w, wr)
		var h *HaltedError
		if errors.As(err, &h) && h.RolledBack && h.RollbackErr == nil {
			continue
		}
		if err == nil {
			continue
		}
		// The record stays aborting (Aborted set, running): the next
		// `cellctl rollout abort` finishes it.
		r.j.mu.Lock()
		r.j.rec.State = Interrupted
		r.j.rec.Error = err.Error()
		r.j.mu.Unlock()
		serr := r.save(ctx)
		return r.outcome(ctx), errors.Join(fmt.Errorf("aborting rollout %s: wave %s could not be rolled back; `cellctl rollout abort %s` tries again: %w",
			r.j.rec.ID, w.Name, r.j.rec.ID, err), serr)
	}
	r.j.mu.Lock()
	r.j.rec.State = Aborted
	r.j.rec.Finished = r.clock.Now().UTC()
	r.j.rec.Error = ""
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return r.outcome(ctx), err
	}
	r.clearRequests(ctx)
	r.unlock()
	r.emit(Event{Kind: RolloutAborted, Message: fmt.Sprintf("rollout %s aborted: every changed cell runs its configuration from before the rollout; the fleet is released", r.j.rec.ID)})
	return r.outcome(ctx), &AbortedError{RolloutID: r.j.rec.ID, By: *by}
}

// changed reports whether the wave may have changed a cell, or has a
// rollback to finish: a cell is updating, updated, failed or mid-rollback,
// or the wave is rolling back (its cells back, the schema check after
// them not done). A wave whose cells were never touched, or that is
// rolled back, needs nothing.
func (w *WaveRecord) changed() bool {
	if w.State == WaveRollingBack {
		return true
	}
	for _, c := range w.Cells {
		switch c.State {
		case CellStateUpdating, CellStateUpdated, CellStateFailed, CellRollingBack, CellRollbackFailed:
			return true
		}
	}
	return false
}

// clearRequests removes the requests a finished change no longer needs.
func (r *run) clearRequests(ctx context.Context) {
	if reqs, ok := r.ex.Store.(Requests); ok {
		_ = reqs.Ask(context.WithoutCancel(ctx), r.j.rec.ID, func(q *Request) { *q = Request{} })
	}
}

// await holds a wave with `approve: true` until an operator approves it
// (`cellctl rollout approve`): the rollout is recorded waiting and keeps
// the fleet; the requests are read every RequestPoll. A stop leaves the
// rollout interrupted with the wave still waiting: a rerun (or `cellctl
// rollout resume`) waits again, or goes on at once if it was approved
// meanwhile.
func (r *run) await(ctx context.Context, w Wave, wr *WaveRecord) error {
	r.j.mu.Lock()
	approved := wr.Approval != nil
	r.j.mu.Unlock()
	if approved {
		return nil
	}
	reqs, ok := r.ex.Store.(Requests)
	if !ok {
		return &RefusedError{Reason: fmt.Sprintf("wave %s needs an approval (approve: true), and this record store keeps no requests to approve it through", w.Name)}
	}
	r.j.mu.Lock()
	wr.State = WaveWaiting
	r.j.rec.State = Waiting
	r.j.mu.Unlock()
	if err := r.save(ctx); err != nil {
		return err
	}
	r.emit(Event{Kind: WaveWaitingApproval, Wave: w.Name, Message: fmt.Sprintf(
		"wave %s waits for an approval: `cellctl rollout approve %s` (from a terminal or CI) lets it start; the rollout keeps the fleet's lock",
		w.Name, r.j.rec.ID)})
	poll := r.opts.RequestPoll
	if poll <= 0 {
		poll = DefaultRequestPoll
	}
	for {
		q, err := reqs.Request(context.WithoutCancel(ctx), r.j.rec.ID)
		if err == nil {
			if a, ok := q.Approve[w.Name]; ok {
				r.j.mu.Lock()
				wr.Approval = &a
				wr.State = WavePending
				r.j.rec.State = Running
				r.j.mu.Unlock()
				if err := r.save(ctx); err != nil {
					return err
				}
				r.emit(Event{Kind: Note, Wave: w.Name, Message: fmt.Sprintf("wave %s approved by %s at %s", w.Name, a.By, a.At.UTC().Format(time.RFC3339))})
				return nil
			}
			if q.Pause != nil || q.Abort != nil {
				r.j.mu.Lock()
				r.steering.asked = q
				r.j.mu.Unlock()
				return fmt.Errorf("wave %s was waiting for an approval: %w", w.Name, ErrStopped)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.opts.Stop:
			return fmt.Errorf("wave %s is waiting for an approval: %w", w.Name, ErrStopped)
		case <-r.steerStop():
			return fmt.Errorf("wave %s was waiting for an approval: %w", w.Name, ErrStopped)
		case <-r.clock.After(poll):
		}
	}
}

// AbortedError says an operator aborted the rollout and every changed
// cell was rolled back (exit 3, as a halt: the change did not ship).
type AbortedError struct {
	RolloutID string
	By        Ask
}

func (e *AbortedError) Error() string {
	return fmt.Sprintf("rollout %s aborted by %s at %s: every cell it changed runs its configuration from before the rollout again",
		e.RolloutID, e.By.By, e.By.At.UTC().Format(time.RFC3339))
}

// Steering is a change's watch over its operators' requests when the
// change is not a rollout's run — a router canary, a secret rotation —
// but writes its record through a Journal: the requests are read after
// every save of the record, exactly as a rollout's (Journal.afterSave),
// and the change asks Pause at its step boundaries. A nil *Steering (no
// request store) is never asked anything.
type Steering struct {
	j *Journal
	s *steering
}

// Steer watches the requests of j's record through reqs (nil: nil, no
// steering). resume says the run is `cellctl rollout resume`: the pause
// it continues from is cleared first, in the record and in the requests.
// A pause asked while no run drove the change is seen before its first
// step.
func (j *Journal) Steer(ctx context.Context, reqs Requests, resume bool) *Steering {
	if reqs == nil {
		return nil
	}
	j.mu.Lock()
	id := j.rec.ID
	j.mu.Unlock()
	if resume {
		_ = reqs.Ask(context.WithoutCancel(ctx), id, func(q *Request) { q.Pause = nil })
	}
	s := &Steering{j: j, s: &steering{reqs: reqs, id: id, stop: make(chan struct{})}}
	j.mu.Lock()
	j.afterSave = func(ctx context.Context) { s.s.check(ctx) }
	s.s.check(ctx)
	j.mu.Unlock()
	return s
}

// Pause is called at a step boundary: when an operator asked the change
// to pause, the record is saved paused (State Paused, Record.Paused who
// and when) and the ask returned — the change then stops and keeps the
// fleet's lock; `cellctl rollout resume ID` is the one run that continues
// it (Admit). nil: nothing asked, go on.
func (s *Steering) Pause(ctx context.Context) (*Ask, error) {
	if s == nil {
		return nil, nil
	}
	s.j.mu.Lock()
	q := s.s.asked.Pause
	s.j.mu.Unlock()
	if q == nil {
		return nil, nil
	}
	a := *q
	return &a, s.j.Update(ctx, func(rec *Record) {
		rec.State, rec.Paused, rec.Error = Paused, &a, ""
	})
}

// Admit refuses to run a change an operator paused, unless the run is
// `cellctl rollout resume` (resume): the refusal names who paused it, as
// a rollout's does (a *LockedError, exit 4).
func Admit(rec *Record, resume bool) error {
	if rec == nil || rec.Paused == nil || resume {
		return nil
	}
	return &LockedError{Holder: rec.Holder, State: Paused, Kind: rec.Kind, Paused: rec.Paused}
}

// Done removes the requests of a change that finished (no longer needed).
func (s *Steering) Done(ctx context.Context) {
	if s != nil {
		_ = s.s.reqs.Ask(context.WithoutCancel(ctx), s.s.id, func(q *Request) { *q = Request{} })
	}
}
