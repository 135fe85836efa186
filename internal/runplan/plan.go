// Package runplan is the run plan as data: a tree of sequential and
// parallel steps over stacks, built in one place (ForStacks) from the
// fleet's stack order, that describes itself (`--dry-run`) and then runs
// against a StackRunner. The same value is printed and executed.
//
// Failure policy, as eksctl's task trees: a Seq stops at the first failed
// step (the steps after it are reported as skipped, saying why) unless it
// is KeepGoing; a Par lets every sibling finish, at most Limit at once. A
// stop signal (the first Ctrl-C) lets the stacks in flight finish and
// starts no new one; a cancelled context does the same for steps not yet
// started and is passed to the runner for the rest.
package runplan

import (
	"context"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// StackRunner runs one stack's operation and reports its result; it never
// returns nil. The pulumi-backed engine (internal/engine) is the product's
// only implementation; tests of everything above it use small fakes.
type StackRunner interface {
	RunStack(ctx context.Context, req stackrun.Request) *stackrun.Result
}

// Step is one node of a plan: *Seq, *Par, *Stack or *Task.
type Step interface{ isStep() }

// Seq runs its steps one after another.
type Seq struct {
	Steps []Step
	// KeepGoing runs the later steps even after one failed (preview
	// reports every stack); otherwise they are skipped.
	KeepGoing bool
}

// Par runs its steps concurrently, at most Limit at once (< 1: one at a
// time). A failing step never stops its siblings.
type Par struct {
	Steps []Step
	Limit int
}

// Stack is one stack's operation.
type Stack struct {
	stackrun.Request
	// Expected is the number of resources the stack is expected to report
	// (from the offline render), for progress; 0: unknown.
	Expected int
	// BlockedBy is why the stack does not start when an earlier step of
	// its sequence failed; empty: "an earlier stack failed".
	BlockedBy string
}

// Task is a step that is not a stack operation (a bake, a gate check);
// the rollout executor builds these. An error fails the step.
type Task struct {
	Name string
	Run  func(ctx context.Context) error
}

func (*Seq) isStep()   {}
func (*Par) isStep()   {}
func (*Stack) isStep() {}
func (*Task) isStep()  {}

// Plan is a run plan: what one command will do to the fleet.
type Plan struct {
	// Operation names the plan in reports ("up", "preview", "destroy").
	Operation stackrun.Operation
	Root      Step
}

// Stacks lists the plan's stack steps in plan order (the order results
// are reported in).
func (p *Plan) Stacks() []*Stack {
	var out []*Stack
	walk(p.Root, func(s Step) {
		if st, ok := s.(*Stack); ok {
			out = append(out, st)
		}
	})
	return out
}

func walk(s Step, fn func(Step)) {
	if s == nil {
		return
	}
	fn(s)
	switch s := s.(type) {
	case *Seq:
		for _, c := range s.Steps {
			walk(c, fn)
		}
	case *Par:
		for _, c := range s.Steps {
			walk(c, fn)
		}
	}
}

// BuildOptions shape the plan ForStacks builds.
type BuildOptions struct {
	// Parallel bounds how many stacks of a phase run at once.
	Parallel int
	// Refresh refreshes each stack before an up.
	Refresh bool
	// Expected gives each stack's expected resource count (progress).
	Expected map[string]int
	// Inputs gives a stack inputs other than the repository's current
	// configuration.
	Inputs map[string]stackrun.Inputs
	// After, when set, gives a step that runs after a stack's operation
	// succeeded (nil: none) — the cell database's bootstrap after its up;
	// it is skipped when the stack fails, and the next phase waits for it.
	After func(st *Stack) *Task
}

// RouterBlocked is why the router does not start after a cell failed.
const RouterBlocked = "the router is updated only after all its cells succeed"

// ForStacks is the plan of op over the named stacks, in the fleet's stack
// order (fleet.Phases): the cells in parallel, then the router, which
// starts only when every cell succeeded — except for a preview, which
// reports every stack. A destroy runs the phases in reverse
// (fleet.TeardownPhases).
func ForStacks(op stackrun.Operation, names []string, o BuildOptions) *Plan {
	phases := fleet.Phases(names)
	if op == stackrun.OpDestroy {
		phases = fleet.TeardownPhases(names)
	}
	root := &Seq{KeepGoing: op == stackrun.OpPreview}
	for _, phase := range phases {
		par := &Par{Limit: o.Parallel}
		for _, n := range phase {
			st := &Stack{
				Request:  stackrun.Request{Stack: n, Op: op, Refresh: o.Refresh && op == stackrun.OpUp, Inputs: o.Inputs[n]},
				Expected: o.Expected[n],
			}
			if n == fleet.RouterStack && op != stackrun.OpDestroy && !root.KeepGoing {
				st.BlockedBy = RouterBlocked
			}
			if t := after(o, st); t != nil {
				par.Steps = append(par.Steps, &Seq{Steps: []Step{st, t}})
				continue
			}
			par.Steps = append(par.Steps, st)
		}
		root.Steps = append(root.Steps, simplify(par))
	}
	return &Plan{Operation: op, Root: simplify(root)}
}

func after(o BuildOptions, st *Stack) *Task {
	if o.After == nil {
		return nil
	}
	return o.After(st)
}

// simplify drops a Seq or Par around a single step: nothing to order.
func simplify(s Step) Step {
	switch s := s.(type) {
	case *Seq:
		if len(s.Steps) == 1 {
			return s.Steps[0]
		}
	case *Par:
		if len(s.Steps) == 1 {
			return s.Steps[0]
		}
	}
	return s
}
