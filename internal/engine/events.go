package engine

import (
	"maps"
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
		if m.Logical {
			// Counted as pulumi's summary counts: a replacement once.
			t.counts[string(m.Op)]++
		}
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

// skip hides what is not a cloud resource (stackrun.CloudResource: the
// stack, providers, stack references, components) from progress, the
// planned changes and the counts.
func skip(m apitype.StepEventMetadata) bool {
	st := m.New
	if st == nil {
		st = m.Old
	}
	custom := st != nil && st.Custom
	if st == nil {
		// No state to tell: judge by type alone.
		custom = true
	}
	return !stackrun.CloudResource(m.Type, custom)
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

// cloudCounts are the steps of cloud resources by operation, as pulumi's
// summary counts them (nil when none was seen).
func (t *tracker) cloudCounts() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.counts) == 0 {
		return nil
	}
	return maps.Clone(t.counts)
}
