package deploy

import (
	"context"
	"time"

	"github.com/cellctl/cellctl/internal/runplan"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// ReportingRunner announces each stack run to Events the way the run plan
// does for `up` (StackStarted with the resources expected, StackFinished
// with the result), so the progress display can show a cell's update and
// rollback as resources done/total: the executor calls RunStack directly,
// outside any run plan.
type ReportingRunner struct {
	Runner runplan.StackRunner
	Events func(stackrun.Event)
	// Expected is the resource count the stack has now (0: unknown); an
	// update of a deployed cell touches about that many.
	Expected func(ctx context.Context, stack string) int
	Now      func() time.Time
}

// RunStack implements runplan.StackRunner.
func (r *ReportingRunner) RunStack(ctx context.Context, req stackrun.Request) *stackrun.Result {
	if r.Events == nil {
		return r.Runner.RunStack(ctx, req)
	}
	now := r.Now
	if now == nil {
		now = time.Now
	}
	expected := 0
	if r.Expected != nil {
		expected = r.Expected(ctx, req.Stack)
	}
	start := now()
	r.Events(stackrun.Event{Stack: req.Stack, Kind: stackrun.StackStarted, Op: string(req.Op), Expected: expected, Time: start})
	res := r.Runner.RunStack(ctx, req)
	if res != nil {
		if res.Duration == 0 {
			// The engine leaves the wall time to its caller (the run
			// plan measures it for `up`); here the caller is this.
			res.Duration = now().Sub(start)
		}
		r.Events(stackrun.Event{Stack: req.Stack, Kind: stackrun.StackFinished, Result: res, Time: now()})
	}
	return res
}
