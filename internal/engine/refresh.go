package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optrefresh"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/cellctl/cellctl/internal/outcome"
)

// Refresh states of one resource.
const (
	RefreshSame       = "same"
	RefreshChanged    = "changed"
	RefreshDeleted    = "deleted"
	RefreshNotChecked = "not_checked"
)

// RefreshedResource is one custom resource of a stack as a refresh
// preview read it from the cloud.
type RefreshedResource struct {
	URN   string
	Type  string
	Name  string
	State string
	// Changes lists the input properties whose live value differs from
	// the state's, old (state) → new (live); secrets are "[secret]".
	Changes []RefreshChange
	// Reason says why the resource was not checked.
	Reason string
}

// RefreshChange is one property a refresh found changed.
type RefreshChange struct {
	Path string
	Old  string
	New  string
}

// maxShown caps one value in a drift report.
const maxShown = 200

// RefreshDrift runs a refresh preview of one deployed stack — the engine
// reads every resource from the cloud and compares it with the state —
// and never writes: not the state (a preview), not the stack file (a
// read-only workspace). Every custom resource in the state is in the
// result: read and the same, changed (with each property old → new),
// deleted out of band, or not_checked with why (its read failed, or the
// refresh stopped before it). ErrNotDeployed when the stack never was.
func (e *Engine) RefreshDrift(ctx context.Context, stack string) ([]RefreshedResource, error) {
	w, err := e.open(ctx, stack, false, readOnly, nil)
	if err != nil {
		if auto.IsConcurrentUpdateError(err) {
			return nil, outcome.Locked(stack, err)
		}
		return nil, err
	}
	defer w.close()
	// The workspace skips confirmations for the runs that change things;
	// pulumi refuses that together with a preview-only refresh.
	w.stack.Workspace().UnsetEnvVar("PULUMI_SKIP_CONFIRMATIONS")

	// The state's resources first: whatever the refresh reports (or fails
	// to), each of them is accounted for.
	deployment, err := e.latestState(ctx, w.stack, stack)
	if err != nil {
		return nil, fmt.Errorf("stack %s: reading its state: %w", stack, err)
	}
	if deployment == nil {
		return nil, ErrNotDeployed
	}
	var state apitype.DeploymentV3
	if err := json.Unmarshal(deployment, &state); err != nil {
		return nil, fmt.Errorf("stack %s: decoding its state: %w", stack, err)
	}
	var order []string
	byURN := map[string]*RefreshedResource{}
	for _, r := range state.Resources {
		t := string(r.Type)
		if !r.Custom || t == "pulumi:pulumi:Stack" || strings.HasPrefix(t, "pulumi:providers:") {
			continue
		}
		u := string(r.URN)
		if _, dup := byURN[u]; dup {
			continue // a resource pending replacement: one entry per URN
		}
		order = append(order, u)
		byURN[u] = &RefreshedResource{URN: u, Type: t, Name: resource.URN(u).Name()}
	}

	rc := &refreshCollector{seen: map[string]apitype.StepEventMetadata{}, started: map[string]bool{}, done: map[string]bool{}, failed: map[string]string{}}
	ch := make(chan events.EngineEvent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range ch {
			rc.handle(ev)
		}
	}()
	_, runErr := w.stack.PreviewRefresh(ctx, optrefresh.EventStreams(ch), optrefresh.SuppressProgress())
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	if runErr != nil && auto.IsConcurrentUpdateError(runErr) {
		return nil, outcome.Locked(stack, cleanErr(runErr))
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []RefreshedResource
	for _, u := range order {
		r := byURN[u]
		m := rc.seen[u]
		seen := rc.done[u]
		switch {
		case rc.failed[u] != "":
			r.State, r.Reason = RefreshNotChecked, "the read failed: "+rc.failed[u]
		case !seen && runErr != nil:
			r.State, r.Reason = RefreshNotChecked, "the refresh stopped before reading it: "+firstLine(cleanErr(runErr).Error())
		case !seen:
			r.State, r.Reason = RefreshNotChecked, "the refresh reported nothing for it"
		case m.Op == apitype.OpDelete || m.Op == apitype.OpDeleteReplaced || (m.New == nil && m.Old != nil && m.Op != apitype.OpSame):
			r.State = RefreshDeleted
		default:
			r.Changes = refreshChanges(m)
			r.State = RefreshSame
			if len(r.Changes) > 0 {
				r.State = RefreshChanged
			}
		}
		out = append(out, *r)
	}
	return out, nil
}

// refreshCollector keeps, per URN, the step a refresh preview reported
// and the error its read ended with.
type refreshCollector struct {
	mu      sync.Mutex
	seen    map[string]apitype.StepEventMetadata
	started map[string]bool
	done    map[string]bool
	failed  map[string]string
}

func (rc *refreshCollector) handle(ev events.EngineEvent) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch {
	case ev.ResourcePreEvent != nil:
		// The step starts as op "refresh"; what the read found comes with
		// its outputs event (same, update with the diff, delete).
		m := ev.ResourcePreEvent.Metadata
		if _, ok := rc.seen[m.URN]; !ok {
			rc.seen[m.URN] = m
		}
		rc.started[m.URN] = true
	case ev.ResOutputsEvent != nil:
		m := ev.ResOutputsEvent.Metadata
		rc.seen[m.URN] = m
		rc.done[m.URN] = true
	case ev.ResOpFailedEvent != nil:
		if u := ev.ResOpFailedEvent.Metadata.URN; rc.failed[u] == "" {
			rc.failed[u] = "the provider's read failed"
		}
	case ev.DiagnosticEvent != nil:
		d := ev.DiagnosticEvent
		if d.URN != "" && d.Severity == "error" && !d.Ephemeral {
			rc.failed[d.URN] = firstLine(strings.TrimSpace(d.Message))
		}
	}
}

// refreshChanges turns a refresh step's detailed diff into old → new values
// (inputs: what the program set against what the cloud now has).
func refreshChanges(m apitype.StepEventMetadata) []RefreshChange {
	if m.Op == apitype.OpSame {
		return nil
	}
	paths := make([]string, 0, len(m.DetailedDiff))
	for p := range m.DetailedDiff {
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		paths = append(paths, m.Diffs...)
	}
	sort.Strings(paths)
	var oldIn, newIn map[string]any
	if m.Old != nil {
		oldIn = m.Old.Inputs
	}
	if m.New != nil {
		newIn = m.New.Inputs
	}
	var out []RefreshChange
	for _, p := range paths {
		o, n := refreshValue(oldIn, p), refreshValue(newIn, p)
		if o == n {
			continue
		}
		out = append(out, RefreshChange{Path: p, Old: o, New: n})
	}
	return out
}

// refreshValue renders the value at a property path; secrets are masked.
func refreshValue(props map[string]any, path string) string {
	if props == nil {
		return "(absent)"
	}
	p, err := resource.ParsePropertyPath(path)
	if err != nil {
		return "(unreadable path)"
	}
	var cur any = props
	for _, step := range p {
		if isSecret(cur) {
			return "[secret]"
		}
		switch s := step.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return "(absent)"
			}
			if cur, ok = m[s]; !ok {
				return "(absent)"
			}
		case int:
			l, ok := cur.([]any)
			if !ok || s < 0 || s >= len(l) {
				return "(absent)"
			}
			cur = l[s]
		}
	}
	return show(cur)
}

func isSecret(v any) bool {
	if m, ok := v.(map[string]any); ok {
		_, sig := m[secretSig]
		return sig
	}
	return v == "[secret]"
}

// show renders a value for a report: strings as they are, the rest as
// compact JSON, secrets anywhere inside masked, long values cut.
func show(v any) string {
	v = mask(v)
	s, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		s = string(b)
	}
	if len(s) > maxShown {
		s = s[:maxShown] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

func mask(v any) any {
	if isSecret(v) {
		return "[secret]"
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mask(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mask(e)
		}
		return out
	}
	return v
}
