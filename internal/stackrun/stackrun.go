// Package stackrun is the vocabulary of one stack's run, shared by the
// engine that performs it (internal/engine, over the pulumi CLI), the run
// plan that orders many of them (internal/runplan), and the views and
// progress display that report them: what to do to a stack (Request, with
// its inputs as data), what happened (Result), and the live Events in
// between. It imports no Pulumi package, so everything above the engine
// builds and tests without it.
package stackrun

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/cellctl/cellctl/cellmodule/spec"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/router/canary"
)

// Operation is what to do to a stack.
type Operation string

const (
	OpUp      Operation = "up"
	OpPreview Operation = "preview"
	OpDestroy Operation = "destroy"
	// OpRefresh is a refresh preview: what the cloud changed behind
	// Pulumi's back (drift), changing nothing.
	OpRefresh Operation = "refresh"
)

// Valid reports whether op is one of the operations a runner performs.
func (op Operation) Valid() bool {
	switch op {
	case OpUp, OpPreview, OpDestroy, OpRefresh:
		return true
	}
	return false
}

// Request is one stack's operation, with everything the run deploys given
// as data: the cached fleet model is never changed to steer a run.
type Request struct {
	Stack string    `json:"stack"`
	Op    Operation `json:"operation"`
	// Refresh reconciles the stack with the cloud before an up.
	Refresh bool   `json:"refresh,omitempty"`
	Inputs  Inputs `json:"inputs,omitzero"`
}

// Inputs are what a run deploys when it is not simply the repository's
// current configuration.
type Inputs struct {
	// Cell, when set, is the configuration a cell stack deploys instead of
	// its stack file's (a rollback deploys the one recorded before the
	// wave). It must be the same cell (same ID).
	Cell *spec.Cell `json:"-"`
	// ReleaseProtection lifts Pulumi protection and Aurora deletion
	// protection of the cell's stateful resources (destroy
	// --release-protected); Aurora still writes its final snapshot.
	ReleaseProtection bool `json:"releaseProtection,omitempty"`
	// Router, when set, is how the router stack splits traffic between
	// its primary and staging distributions (a step of a router canary,
	// internal/routercanary). Nil: stable, the primary runs the edge
	// function's newest version (the ungated `up`).
	Router *canary.Traffic `json:"router,omitempty"`
}

// Stack results.
const (
	Succeeded = "succeeded"
	Failed    = "failed"
	Skipped   = "skipped"
)

// Why a stack did not run. A skipped stack's Err is one of these (or wraps
// one), so reports and callers can tell them apart with errors.Is.
var (
	// ErrInterrupted: an interrupt kept the stack from starting.
	ErrInterrupted = errors.New("not started: interrupted")
	// ErrNotDeployed: the stack has never been deployed to the backend.
	ErrNotDeployed = errors.New("not deployed")
)

// Blocked is the error of a stack that did not start because an earlier
// step of the plan failed; Reason says which rule held it back.
type Blocked struct{ Reason string }

func (b *Blocked) Error() string { return "not started: " + b.Reason }

// CloudResource says a resource of a stack is one the cloud holds: a
// custom resource that is neither a provider nor Pulumi's own bookkeeping
// (the stack, a stack reference), and not a component (custom false).
// Every count of a stack's resources — status, plan, up's progress and
// its summary, the simulator's live resources — counts these, so one
// cell has one number everywhere.
func CloudResource(typ string, custom bool) bool {
	return custom && !strings.HasPrefix(typ, "pulumi:")
}

// Changes counts resource operations (of cloud resources: CloudResource).
type Changes struct {
	Create  int `json:"create"`
	Update  int `json:"update"`
	Delete  int `json:"delete"`
	Same    int `json:"same"`
	Replace int `json:"replace,omitempty"`
}

// Total is the number of resources that change.
func (c Changes) Total() int { return c.Create + c.Update + c.Delete + c.Replace }

// Change is one planned or applied resource change.
type Change struct {
	Op    string   `json:"op"`
	Type  string   `json:"type"`
	Name  string   `json:"name"`
	Diffs []string `json:"diffs,omitempty"`
	// Replace lists the properties forcing a replacement.
	Replace []string `json:"replaceKeys,omitempty"`
	// Warning says what a replacement or delete of a protected or
	// stateful resource loses (reports show it loudly); empty otherwise.
	Warning string `json:"warning,omitempty"`
}

// OpReplace is the one operation a report shows for a replaced resource.
const OpReplace = "replace"

// replaceSteps are the engine's steps of one replacement: pulumi reports
// a replaced resource as up to three steps (create-replacement, replace,
// delete-replaced), its summary as one replace.
var replaceSteps = map[string]bool{"replace": true, "create-replacement": true, "delete-replaced": true, "import-replacement": true}

// notChanges are steps that change no resource: reading a resource or a
// stack reference, refreshing state, forgetting a read.
var notChanges = map[string]bool{"same": true, "read": true, "read-replacement": true, "refresh": true,
	"discard": true, "discard-replaced": true, "remove-pending-replace": true}

// ResourceChanges is planned (the engine's steps, in order) as one change
// per changed resource, the way the run's Changes count them: a
// replacement's steps are one "replace" (their diffs, replace keys and
// warning joined), and reads, refreshes and unchanged resources are left
// out. Reports list this, so a headline's count and its rows agree.
func ResourceChanges(planned []Change) []Change {
	var out []Change
	at := map[[2]string]int{}
	for _, c := range planned {
		if notChanges[c.Op] {
			continue
		}
		if !replaceSteps[c.Op] {
			out = append(out, c)
			continue
		}
		key := [2]string{c.Type, c.Name}
		i, seen := at[key]
		if !seen {
			at[key] = len(out)
			c.Op = OpReplace
			c.Diffs, c.Replace = appendNew(nil, c.Diffs), appendNew(nil, c.Replace)
			out = append(out, c)
			continue
		}
		r := &out[i]
		r.Diffs, r.Replace = appendNew(r.Diffs, c.Diffs), appendNew(r.Replace, c.Replace)
		if r.Warning == "" {
			r.Warning = c.Warning
		}
	}
	return out
}

// appendNew appends the items of add not yet in list.
func appendNew(list, add []string) []string {
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

// Timing is where one stack's time went, in seconds.
type Timing struct {
	// Setup: workspace, stack selection, cloud attach.
	Setup float64 `json:"setup"`
	// Repair: checking for (and repairing) an interrupted earlier run.
	Repair float64 `json:"repair"`
	// Engine: the pulumi operation itself, program run included.
	Engine float64 `json:"engine"`
	// Finish: reading outputs, syncing the stack file, cleanup.
	Finish float64 `json:"finish"`
}

// Result is the outcome of one stack's run.
type Result struct {
	Name    string
	Result  string
	Changes Changes
	Outputs map[string]any
	// Err is why the stack failed or was skipped, with its type kept
	// (outcome.LockedError, Blocked, ErrInterrupted, …). Reports show its
	// message as "error".
	Err error
	// Planned lists the resource changes (preview, and what up applied).
	Planned []Change
	// FailedResources names the resources whose operation failed.
	FailedResources []string
	Duration        time.Duration
	// Notes are warnings for the operator (pending operations, …).
	Notes []string
	// Timing splits the stack's wall time: cellctl's own work around the
	// engine, and the engine's.
	Timing Timing
}

// Error is the message of Err, or "".
func (r *Result) Error() string {
	if r.Err == nil {
		return ""
	}
	return r.Err.Error()
}

// Locked reports whether another operation held the stack's lock.
func (r *Result) Locked() bool {
	var l *outcome.LockedError
	return errors.As(r.Err, &l)
}

// Seconds is the wall time in seconds, rounded to 10 ms.
func (r *Result) Seconds() float64 {
	return float64(r.Duration.Round(10*time.Millisecond)) / float64(time.Second)
}

// resultJSON is the -o json shape of a stack result (unchanged since the
// error was a string).
type resultJSON struct {
	Name            string         `json:"name"`
	Result          string         `json:"result"`
	Changes         Changes        `json:"changes"`
	Outputs         map[string]any `json:"outputs,omitempty"`
	Error           string         `json:"error,omitempty"`
	Planned         []Change       `json:"planned,omitempty"`
	FailedResources []string       `json:"failedResources,omitempty"`
	Locked          bool           `json:"locked,omitempty"`
	Seconds         float64        `json:"seconds"`
	Notes           []string       `json:"notes,omitempty"`
	Timing          Timing         `json:"timing"`
}

// MarshalJSON writes the error as its message.
func (r *Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(resultJSON{
		Name: r.Name, Result: r.Result, Changes: r.Changes, Outputs: r.Outputs, Error: r.Error(),
		Planned: r.Planned, FailedResources: r.FailedResources, Locked: r.Locked(),
		Seconds: r.Seconds(), Notes: r.Notes, Timing: r.Timing,
	})
}

// EventKind classifies progress events.
type EventKind int

const (
	StackStarted EventKind = iota
	ResourceStarted
	ResourceDone
	ResourceFailed
	Diagnostic
	StackFinished
)

// Event is one step of progress, for live status lines.
type Event struct {
	Stack string
	Kind  EventKind
	Op    string // create, update, delete, same, replace, refresh, read…
	Type  string
	Name  string
	// Message is a diagnostic or error text.
	Message string
	// Expected is the stack's expected resource count (StackStarted).
	Expected int
	Result   *Result // StackFinished
	Time     time.Time
}
