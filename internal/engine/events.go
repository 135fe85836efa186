package engine

import (
	"strings"
	"sync"
	"time"

	"github.com/cellctl/cellctl/internal/stackrun"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// tracker turns one stack's engine events into cellctl events and keeps
// what the final result needs: the changes and the error diagnostics.
type tracker struct {
	stack string
	emit  func(stackrun.Event)

	mu      sync.Mutex
	changes []stackrun.Change
	errors  []string
	failed  []string // resources whose operation failed
	counts  map[string]int
}

func newTracker(stack string, emit func(stackrun.Event)) *tracker {
	if emit == nil {
		emit = func(stackrun.Event) {}
	}
	return &tracker{stack: stack, emit: emit, counts: map[string]int{}}
}

func (t *tracker) consume(ch <-chan events.EngineEvent, done chan<- struct{}) {
	defer close(done)
	for ev := range ch {
		t.handle(ev)
	}
}

func (t *tracker) handle(ev events.EngineEvent) {
	now := time.Now()
	switch {
	case ev.ResourcePreEvent != nil:
		m := ev.ResourcePreEvent.Metadata
		if skip(m) {
			return
		}
		t.mu.Lock()
		if m.Op != apitype.OpSame {
			t.changes = append(t.changes, stackrun.Change{Op: string(m.Op), Type: m.Type, Name: urnName(m.URN), Diffs: m.Diffs, Replace: m.Keys,
				Warning: changeWarning(m)})
		}
		t.mu.Unlock()
		t.emit(stackrun.Event{Stack: t.stack, Kind: stackrun.ResourceStarted, Op: string(m.Op), Type: m.Type, Name: urnName(m.URN), Time: now})
	case ev.ResOutputsEvent != nil:
		m := ev.ResOutputsEvent.Metadata
		if skip(m) {
			return
		}
		t.mu.Lock()
		t.counts[string(m.Op)]++
		t.mu.Unlock()
		t.emit(stackrun.Event{Stack: t.stack, Kind: stackrun.ResourceDone, Op: string(m.Op), Type: m.Type, Name: urnName(m.URN), Time: now})
	case ev.ResOpFailedEvent != nil:
		m := ev.ResOpFailedEvent.Metadata
		t.mu.Lock()
		t.failed = append(t.failed, m.Type+" "+urnName(m.URN))
		t.mu.Unlock()
		t.emit(stackrun.Event{Stack: t.stack, Kind: stackrun.ResourceFailed, Op: string(m.Op), Type: m.Type, Name: urnName(m.URN), Time: now})
	case ev.DiagnosticEvent != nil:
		d := ev.DiagnosticEvent
		if d.Severity != "error" || d.Ephemeral {
			return
		}
		msg := strings.TrimSpace(d.Message)
		if msg == "" {
			return
		}
		if d.URN != "" {
			msg = urnTypeName(d.URN) + ": " + msg
		}
		t.mu.Lock()
		t.errors = append(t.errors, msg)
		t.mu.Unlock()
		t.emit(stackrun.Event{Stack: t.stack, Kind: stackrun.Diagnostic, Message: msg, Time: now})
	}
}

// skip hides the engine's bookkeeping resources from progress.
func skip(m apitype.StepEventMetadata) bool {
	return m.Type == "pulumi:pulumi:Stack" || strings.HasPrefix(m.Type, "pulumi:providers:")
}

func urnName(u string) string {
	if u == "" {
		return ""
	}
	return resource.URN(u).Name()
}

func urnTypeName(u string) string {
	urn := resource.URN(u)
	if !urn.IsValid() {
		return u
	}
	return string(urn.Type()) + " " + urn.Name()
}

func (t *tracker) snapshot() ([]stackrun.Change, []string, []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]stackrun.Change(nil), t.changes...), append([]string(nil), t.errors...), append([]string(nil), t.failed...)
}
