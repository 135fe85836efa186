package runplan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"
	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/internal/stackrun"
)

// Result is the outcome of a plan: every stack's result, in plan order.
type Result struct {
	Operation stackrun.Operation `json:"operation"`
	Stacks    []*stackrun.Result `json:"stacks"`
	// Tasks are the plan's non-stack steps that ran or were skipped.
	Tasks []*TaskResult `json:"tasks,omitempty"`
}

// TaskResult is the outcome of a Task.
type TaskResult struct {
	Name   string `json:"name"`
	Result string `json:"result"`
	Err    error  `json:"-"`
	Error  string `json:"error,omitempty"`
}

// Failed returns the stacks that failed.
func (r *Result) Failed() []*stackrun.Result {
	var out []*stackrun.Result
	for _, s := range r.Stacks {
		if s.Result == stackrun.Failed {
			out = append(out, s)
		}
	}
	return out
}

// Stack returns the named stack's result, or nil.
func (r *Result) Stack(name string) *stackrun.Result {
	for _, s := range r.Stacks {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// StackError is the error of one failed stack, naming it. Its Err keeps
// the runner's type (outcome.LockedError, …) for errors.As.
type StackError struct {
	Stack string
	Err   error
}

func (e *StackError) Error() string { return e.Stack + ": " + e.Err.Error() }
func (e *StackError) Unwrap() error { return e.Err }

// Options are what a run needs besides the plan and the runner.
type Options struct {
	// Events receives StackStarted before and StackFinished after each
	// stack the runner runs; nil discards them.
	Events func(stackrun.Event)
	// Stop, once closed, starts no new step; steps in flight finish (the
	// first Ctrl-C).
	Stop <-chan struct{}
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

// Run executes the plan. It returns every stack's result and an error
// combining each failed stack's error (go-multierror, types kept), failed
// tasks, and the stacks an interrupt kept from starting.
func (p *Plan) Run(ctx context.Context, r StackRunner, o Options) (*Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	x := &run{runner: r, opts: o, index: map[*Stack]int{}, taskIndex: map[*Task]int{}}
	res := &Result{Operation: p.Operation}
	walk(p.Root, func(s Step) {
		switch s := s.(type) {
		case *Stack:
			x.index[s] = len(res.Stacks)
			res.Stacks = append(res.Stacks, nil)
		case *Task:
			x.taskIndex[s] = len(res.Tasks)
			res.Tasks = append(res.Tasks, nil)
		}
	})
	x.res = res
	x.step(ctx, p.Root)
	return res, res.Err()
}

// Err combines the errors of the result: each failed stack's error
// (go-multierror of StackErrors, types kept), each failed task's, and the
// steps an interrupt kept from starting. nil when everything succeeded.
func (r *Result) Err() error {
	var errs *multierror.Error
	var interrupted []string
	for _, s := range r.Stacks {
		switch {
		case s.Result == stackrun.Failed:
			errs = multierror.Append(errs, &StackError{Stack: s.Name, Err: s.Err})
		case s.Result == stackrun.Skipped && errors.Is(s.Err, stackrun.ErrInterrupted):
			interrupted = append(interrupted, s.Name)
		}
	}
	for _, t := range r.Tasks {
		switch {
		case t.Result == stackrun.Failed:
			errs = multierror.Append(errs, fmt.Errorf("%s: %w", t.Name, t.Err))
		case t.Result == stackrun.Skipped && errors.Is(t.Err, stackrun.ErrInterrupted):
			interrupted = append(interrupted, t.Name)
		}
	}
	if len(interrupted) > 0 {
		errs = multierror.Append(errs, fmt.Errorf("interrupted: %s not started; rerun to finish them", strings.Join(interrupted, ", ")))
	}
	if errs == nil {
		return nil
	}
	total := len(r.Stacks)
	errs.ErrorFormat = func(es []error) string {
		var failed, other []string
		for _, e := range es {
			var se *StackError
			if errors.As(e, &se) {
				failed = append(failed, e.Error())
			} else {
				other = append(other, e.Error())
			}
		}
		var parts []string
		if len(failed) > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d stacks failed:\n  %s", len(failed), total, strings.Join(failed, "\n  ")))
		}
		return strings.Join(append(parts, other...), "\n")
	}
	return errs
}

type run struct {
	runner    StackRunner
	opts      Options
	res       *Result
	index     map[*Stack]int
	taskIndex map[*Task]int
	mu        sync.Mutex
}

func (x *run) stopped(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	if x.opts.Stop == nil {
		return false
	}
	select {
	case <-x.opts.Stop:
		return true
	default:
		return false
	}
}

func (x *run) emit(ev stackrun.Event) {
	if x.opts.Events != nil {
		x.opts.Events(ev)
	}
}

func (x *run) setStack(s *Stack, r *stackrun.Result) {
	x.mu.Lock()
	x.res.Stacks[x.index[s]] = r
	x.mu.Unlock()
}

func (x *run) setTask(t *Task, r *TaskResult) {
	x.mu.Lock()
	x.res.Tasks[x.taskIndex[t]] = r
	x.mu.Unlock()
}

// step runs s and reports whether it (or anything in it) failed.
func (x *run) step(ctx context.Context, s Step) (failed bool) {
	switch s := s.(type) {
	case *Seq:
		for _, c := range s.Steps {
			if failed && !s.KeepGoing {
				x.skip(c, nil)
				continue
			}
			if x.step(ctx, c) {
				failed = true
			}
		}
		return failed
	case *Par:
		limit := s.Limit
		if limit < 1 {
			limit = 1
		}
		var mu sync.Mutex
		g := new(errgroup.Group)
		g.SetLimit(limit)
		for _, c := range s.Steps {
			g.Go(func() error {
				if x.step(ctx, c) {
					mu.Lock()
					failed = true
					mu.Unlock()
				}
				return nil
			})
		}
		_ = g.Wait()
		return failed
	case *Stack:
		if x.stopped(ctx) {
			x.setStack(s, &stackrun.Result{Name: s.Stack, Result: stackrun.Skipped, Err: stackrun.ErrInterrupted})
			return false
		}
		start := x.opts.Now()
		x.emit(stackrun.Event{Stack: s.Stack, Kind: stackrun.StackStarted, Op: string(s.Op), Expected: s.Expected, Time: start})
		r := x.runner.RunStack(ctx, s.Request)
		if r == nil {
			r = &stackrun.Result{Result: stackrun.Failed, Err: errors.New("the runner returned no result")}
		}
		r.Name = s.Stack
		r.Duration = x.opts.Now().Sub(start)
		x.setStack(s, r)
		x.emit(stackrun.Event{Stack: s.Stack, Kind: stackrun.StackFinished, Result: r, Time: x.opts.Now()})
		return r.Result == stackrun.Failed
	case *Task:
		if x.stopped(ctx) {
			x.setTask(s, &TaskResult{Name: s.Name, Result: stackrun.Skipped, Err: stackrun.ErrInterrupted, Error: stackrun.ErrInterrupted.Error()})
			return false
		}
		if err := s.Run(ctx); err != nil {
			x.setTask(s, &TaskResult{Name: s.Name, Result: stackrun.Failed, Err: err, Error: err.Error()})
			return true
		}
		x.setTask(s, &TaskResult{Name: s.Name, Result: stackrun.Succeeded})
		return false
	}
	return false
}

// skip marks every step under s as not started because an earlier step
// failed; a stack says its own reason when it has one.
func (x *run) skip(s Step, _ error) {
	walk(s, func(s Step) {
		switch s := s.(type) {
		case *Stack:
			why := s.BlockedBy
			if why == "" {
				why = "an earlier stack failed"
			}
			x.setStack(s, &stackrun.Result{Name: s.Stack, Result: stackrun.Skipped, Err: &stackrun.Blocked{Reason: why}})
		case *Task:
			err := &stackrun.Blocked{Reason: "an earlier step failed"}
			x.setTask(s, &TaskResult{Name: s.Name, Result: stackrun.Skipped, Err: err, Error: err.Error()})
		}
	})
}
