package progress

import (
	"fmt"
	"time"

	"github.com/cellctl/cellctl/internal/stackrun"
)

// Stacks is the one fold of the engine's events, which both live displays
// draw from: per stack, the resources done of those expected, what is
// being worked on, and how its run ended.
type Stacks struct {
	byName map[string]*Stack
	order  []string
}

// Stack is one stack's run as the engine's events tell it.
type Stack struct {
	Name    string
	Op      string
	Start   time.Time
	Expect  int // resources expected (0: unknown)
	Done    int
	Current string // what the engine works on ("creating aws:… name")
	// Running is true from the run's start to its end (or Stop).
	Running  bool
	Finished *stackrun.Result
	// LastPrint is when a plain display last printed the stack's count.
	LastPrint time.Time
}

// Get returns the stack's run, nil before its first event.
func (s *Stacks) Get(name string) *Stack { return s.byName[name] }

// Order is the stacks in the order of their first event.
func (s *Stacks) Order() []string { return s.order }

// Fold applies one event and returns its stack's run.
func (s *Stacks) Fold(ev stackrun.Event) *Stack {
	if s.byName == nil {
		s.byName = map[string]*Stack{}
	}
	st := s.byName[ev.Stack]
	if st == nil {
		st = &Stack{Name: ev.Stack, Start: ev.Time}
		s.byName[ev.Stack] = st
		s.order = append(s.order, ev.Stack)
	}
	switch ev.Kind {
	case stackrun.StackStarted:
		// A plan may run a stack twice (lift protection, then destroy),
		// a rollout once to update and once to roll back: each run
		// starts afresh.
		st.Op, st.Start, st.Expect = ev.Op, ev.Time, ev.Expected
		st.Done, st.Current, st.Finished, st.Running = 0, "", nil, true
	case stackrun.ResourceStarted:
		st.Current = Verb(ev.Op) + " " + ev.Type + " " + ev.Name
	case stackrun.ResourceDone:
		st.Done++
	case stackrun.StackFinished:
		st.Finished = ev.Result
		st.Running = false
	}
	return st
}

// Reset forgets a stack's counts (a rollout's cell starts a new step).
func (s *Stacks) Reset(name string) {
	if st := s.byName[name]; st != nil {
		st.Expect, st.Done, st.Current, st.Running, st.Finished = 0, 0, "", false, nil
	}
}

// Stop marks a stack's run over (the step that ran it ended).
func (s *Stacks) Stop(name string) {
	if st := s.byName[name]; st != nil {
		st.Running, st.Current = false, ""
	}
}

// Due reports whether a plain display should print the stack's count
// again (every interval at most), and if so marks it printed at now.
func (st *Stack) Due(now time.Time, interval time.Duration) bool {
	if now.Sub(st.LastPrint) < interval {
		return false
	}
	st.LastPrint = now
	return true
}

// Count is the resources done, of those expected when known.
func (st *Stack) Count() string {
	if st.Expect > 0 {
		return fmt.Sprintf("%d/%d resources", st.Done, max(st.Expect, st.Done))
	}
	return fmt.Sprintf("%d resources", st.Done)
}
