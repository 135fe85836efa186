package deploy

import (
	"context"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/stackrun"
)

type oneRunner struct{ res *stackrun.Result }

func (o oneRunner) RunStack(context.Context, stackrun.Request) *stackrun.Result { return o.res }

// The executor runs stacks outside a run plan: ReportingRunner gives the
// display the start (with the resources expected) and the end of each.
func TestReportingRunnerAnnouncesEachRun(t *testing.T) {
	var got []stackrun.Event
	r := &ReportingRunner{
		Runner:   oneRunner{res: &stackrun.Result{Name: "cell-a", Result: stackrun.Succeeded}},
		Events:   func(e stackrun.Event) { got = append(got, e) },
		Expected: func(_ context.Context, stack string) int { return 73 },
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	calls := 0
	r.Now = func() time.Time { calls++; return t0.Add(time.Duration(calls-1) * 21 * time.Second) }
	res := r.RunStack(context.Background(), stackrun.Request{Stack: "cell-a", Op: stackrun.OpUp})
	if res.Result != stackrun.Succeeded || len(got) != 2 || got[0].Kind != stackrun.StackStarted || got[0].Expected != 73 ||
		got[1].Kind != stackrun.StackFinished || got[1].Result != res || res.Duration != 21*time.Second {
		t.Errorf("events %+v", got)
	}
}
