package engine

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optrefresh"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/internal/fleet"
)

// errInterrupted marks stacks an interrupt kept from starting.
var errInterrupted = errors.New("not started: interrupted")

// Operation is what to do to a stack.
type Operation string

const (
	OpUp      Operation = "up"
	OpPreview Operation = "preview"
	OpDestroy Operation = "destroy"
	OpRefresh Operation = "refresh"
)

// Stack results.
const (
	Succeeded = "succeeded"
	Failed    = "failed"
	Skipped   = "skipped"
)

// Changes counts resource operations.
type Changes struct {
	Create  int `json:"create"`
	Update  int `json:"update"`
	Delete  int `json:"delete"`
	Same    int `json:"same"`
	Replace int `json:"replace,omitempty"`
}

// Total is the number of resources that change.
func (c Changes) Total() int { return c.Create + c.Update + c.Delete + c.Replace }

// StackResult is the outcome of one stack.
type StackResult struct {
	Name    string         `json:"name"`
	Result  string         `json:"result"`
	Changes Changes        `json:"changes"`
	Outputs map[string]any `json:"outputs,omitempty"`
	Error   string         `json:"error,omitempty"`
	// Planned lists the resource changes (preview, and what up applied).
	Planned []Change `json:"planned,omitempty"`
	// Failed names the resources whose operation failed.
	FailedResources []string `json:"failedResources,omitempty"`
	// Locked is set when another operation holds the stack's lock.
	Locked   bool          `json:"locked,omitempty"`
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"seconds"`
	// Notes are warnings for the operator (pending operations, …).
	Notes []string `json:"notes,omitempty"`
	// Timing splits the stack's wall time: cellctl's own work around the
	// engine, and the engine's.
	Timing Timing `json:"timing"`
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

func secs(d time.Duration) float64 { return float64(d.Round(time.Millisecond)) / float64(time.Second) }

// Result is the outcome of an operation over several stacks.
type Result struct {
	Operation Operation      `json:"operation"`
	Stacks    []*StackResult `json:"stacks"`
}

// Failed returns the stacks that failed.
func (r *Result) Failed() []*StackResult {
	var out []*StackResult
	for _, s := range r.Stacks {
		if s.Result == Failed {
			out = append(out, s)
		}
	}
	return out
}

// StackError is the error of one stack, naming it.
type StackError struct {
	Stack  string
	Locked bool
	Err    error
}

func (e *StackError) Error() string { return e.Stack + ": " + e.Err.Error() }
func (e *StackError) Unwrap() error { return e.Err }

// IsLocked reports whether err holds a lock conflict.
func IsLocked(err error) bool {
	var m *multierror.Error
	if errors.As(err, &m) {
		for _, e := range m.Errors {
			if IsLocked(e) {
				return true
			}
		}
		return false
	}
	var se *StackError
	return errors.As(err, &se) && se.Locked
}

// RunOptions tune one operation.
type RunOptions struct {
	// Stacks to act on, in phases: cells (in parallel), then the router
	// (reversed for destroy).
	Stacks []string
	// Refresh reconciles with the cloud before an up.
	Refresh bool
	// Stop, when done, stops starting new stacks; stacks in flight finish
	// (the first Ctrl-C).
	Stop <-chan struct{}
}

// Run performs op on the stacks. It returns every stack's result, and an
// error combining each failed stack's error (go-multierror).
func (e *Engine) Run(ctx context.Context, op Operation, ro RunOptions) (*Result, error) {
	for _, n := range ro.Stacks {
		if _, err := e.stackFileOf(n); err != nil {
			return nil, err
		}
	}
	var cells, router []string
	for _, n := range ro.Stacks {
		if n == fleet.RouterStack {
			router = append(router, n)
		} else {
			cells = append(cells, n)
		}
	}
	phases := [][]string{cells, router}
	if op == OpDestroy {
		phases = [][]string{router, cells}
	}
	res := &Result{Operation: op}
	var errs *multierror.Error
	failed := false
	for _, phase := range phases {
		if len(phase) == 0 {
			continue
		}
		if failed && op != OpPreview {
			for _, n := range phase {
				why := "not started: an earlier stack failed"
				if n == fleet.RouterStack {
					why = "not started: the router is updated only after all its cells succeed"
				}
				res.Stacks = append(res.Stacks, &StackResult{Name: n, Result: Skipped, Error: why})
			}
			continue
		}
		results := e.runPhase(ctx, op, phase, ro)
		for _, r := range results {
			res.Stacks = append(res.Stacks, r)
			if r.Result == Failed {
				failed = true
				errs = multierror.Append(errs, &StackError{Stack: r.Name, Locked: r.Locked, Err: errors.New(r.Error)})
			}
		}
	}
	var interrupted []string
	for _, r := range res.Stacks {
		if r.Result == Skipped && r.Error == errInterrupted.Error() {
			interrupted = append(interrupted, r.Name)
		}
	}
	if len(interrupted) > 0 {
		errs = multierror.Append(errs, fmt.Errorf("interrupted: %s not started; rerun to finish them", strings.Join(interrupted, ", ")))
	}
	if errs != nil {
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
				parts = append(parts, fmt.Sprintf("%d of %d stacks failed:\n  %s", len(failed), len(res.Stacks), strings.Join(failed, "\n  ")))
			}
			return strings.Join(append(parts, other...), "\n")
		}
	}
	return res, errs.ErrorOrNil()
}

func (e *Engine) runPhase(ctx context.Context, op Operation, names []string, ro RunOptions) []*StackResult {
	results := make([]*StackResult, len(names))
	g := new(errgroup.Group)
	g.SetLimit(e.opts.Parallel)
	for i, n := range names {
		g.Go(func() error {
			if stopped(ro.Stop) || ctx.Err() != nil {
				results[i] = &StackResult{Name: n, Result: Skipped, Error: errInterrupted.Error()}
				return nil
			}
			results[i] = e.runStack(ctx, op, n, ro)
			return nil
		})
	}
	_ = g.Wait()
	return results
}

func stopped(stop <-chan struct{}) bool {
	if stop == nil {
		return false
	}
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

func (e *Engine) emit(ev Event) {
	if e.opts.Events != nil {
		e.opts.Events(ev)
	}
}

func (e *Engine) runStack(ctx context.Context, op Operation, name string, ro RunOptions) (res *StackResult) {
	start := time.Now()
	res = &StackResult{Name: name}
	e.emit(Event{Stack: name, Kind: StackStarted, Op: string(op), Expected: e.opts.ExpectedResources[name], Time: start})
	defer func() {
		res.Duration = time.Since(start)
		res.Seconds = float64(res.Duration.Round(10*time.Millisecond)) / float64(time.Second)
		e.emit(Event{Stack: name, Kind: StackFinished, Result: res, Time: time.Now()})
	}()
	fail := func(err error) *StackResult {
		res.Result = Failed
		res.Error = err.Error()
		return res
	}
	mark := time.Now()
	lap := func() float64 {
		now := time.Now()
		d := now.Sub(mark)
		mark = now
		return secs(d)
	}
	defer func() { res.Timing.Finish = lap() }()
	w, err := e.open(ctx, name, op == OpUp || op == OpPreview)
	res.Timing.Setup = lap()
	if errors.Is(err, ErrNotDeployed) {
		res.Result = Skipped
		res.Error = "not deployed"
		return res
	}
	if err != nil {
		if auto.IsConcurrentUpdateError(err) {
			res.Locked = true
		}
		return fail(err)
	}
	defer w.close()

	if op == OpUp {
		notes, err := e.resolvePending(ctx, w, name)
		res.Timing.Repair = lap()
		if auto.IsConcurrentUpdateError(err) {
			// The "pending" operations belong to a run still in flight (or
			// to a dead one that left its lock): never touch them.
			res.Locked = true
			return fail(e.explain(ctx, w, name, err))
		}
		res.Notes = append(res.Notes, notes...)
		if err != nil {
			return fail(err)
		}
	}

	if op != OpUp && op != OpPreview && op != OpRefresh && op != OpDestroy {
		return fail(fmt.Errorf("unknown operation %q", op))
	}
	var tr *tracker
	var summary map[string]int
	var runErr error
	for attempt := 0; ; attempt++ {
		tr = newTracker(name, e.opts.Events)
		summary, runErr = e.execute(ctx, op, w, ro, tr, res)
		// The checkpoint was being replaced by another process as this one
		// loaded it: nothing started, so run again (the operation then
		// meets that process's lock, or the finished checkpoint).
		if runErr == nil || attempt == 2 || !strings.Contains(runErr.Error(), "failed to load checkpoint") {
			break
		}
		time.Sleep(time.Duration(200*(attempt+1)) * time.Millisecond)
	}
	res.Timing.Engine = lap()
	changes, diags, failedRes := tr.snapshot()
	res.Planned = changes
	res.FailedResources = failedRes
	res.Changes = changesOf(summary, changes, op)
	_ = w.syncBack()
	if runErr != nil {
		if auto.IsConcurrentUpdateError(runErr) {
			res.Locked = true
			return fail(e.explain(ctx, w, name, runErr))
		}
		msg := strings.Join(dedupe(diags), "; ")
		if msg == "" {
			msg = cleanErr(runErr).Error()
		}
		return fail(errors.New(msg))
	}
	if op == OpRefresh {
		if outs, err := w.stack.Outputs(ctx); err == nil {
			res.Outputs = maskOutputs(outs)
		}
	}
	res.Result = Succeeded
	return res
}

// execute runs one engine operation, feeding its events to tr.
func (e *Engine) execute(ctx context.Context, op Operation, w *workspace, ro RunOptions, tr *tracker, res *StackResult) (map[string]int, error) {
	ch := make(chan events.EngineEvent)
	done := make(chan struct{})
	go tr.consume(ch, done)
	var summary map[string]int
	var runErr error
	switch op {
	case OpUp:
		opts := []optup.Option{optup.EventStreams(ch), optup.SuppressProgress()}
		if ro.Refresh {
			opts = append(opts, optup.Refresh())
		}
		var r auto.UpResult
		r, runErr = w.stack.Up(ctx, opts...)
		if r.Summary.ResourceChanges != nil {
			summary = *r.Summary.ResourceChanges
		}
		if runErr == nil {
			res.Outputs = maskOutputs(r.Outputs)
		}
	case OpPreview:
		var r auto.PreviewResult
		r, runErr = w.stack.Preview(ctx, optpreview.EventStreams(ch), optpreview.SuppressProgress())
		summary = map[string]int{}
		for k, v := range r.ChangeSummary {
			summary[string(k)] = v
		}
	case OpRefresh:
		var r auto.RefreshResult
		r, runErr = w.stack.Refresh(ctx, optrefresh.EventStreams(ch), optrefresh.SuppressProgress())
		if r.Summary.ResourceChanges != nil {
			summary = *r.Summary.ResourceChanges
		}
	case OpDestroy:
		var r auto.DestroyResult
		r, runErr = w.stack.Destroy(ctx, optdestroy.EventStreams(ch), optdestroy.SuppressProgress())
		if r.Summary.ResourceChanges != nil {
			summary = *r.Summary.ResourceChanges
		}
	}
	// The SDK closes the channel when the CLI ran; if it failed before
	// starting the CLI it never does, so do not wait forever.
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return summary, runErr
}

func changesOf(summary map[string]int, planned []Change, op Operation) Changes {
	var c Changes
	if summary != nil {
		c.Create = summary[string(apitype.OpCreate)]
		c.Update = summary[string(apitype.OpUpdate)]
		c.Delete = summary[string(apitype.OpDelete)]
		c.Same = summary[string(apitype.OpSame)]
		c.Replace = summary[string(apitype.OpReplace)] + summary[string(apitype.OpCreateReplacement)]
		return c
	}
	for _, p := range planned {
		switch apitype.OpType(p.Op) {
		case apitype.OpCreate:
			c.Create++
		case apitype.OpUpdate:
			c.Update++
		case apitype.OpDelete:
			c.Delete++
		case apitype.OpReplace, apitype.OpCreateReplacement:
			c.Replace++
		}
	}
	return c
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// maskOutputs renders stack outputs for reports; secrets never appear.
func maskOutputs(outs auto.OutputMap) map[string]any {
	m := map[string]any{}
	keys := make([]string, 0, len(outs))
	for k := range outs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if outs[k].Secret {
			m[k] = "[secret]"
			continue
		}
		m[k] = outs[k].Value
	}
	return m
}

// pendingOp is one operation an interrupted update left in the state.
type pendingOp struct {
	URN  string `json:"urn"`
	Type string `json:"type"`
	ID   string `json:"id"`
	Kind string
}

// pendingOperations reads the operations a killed update left behind: from
// the checkpoint file directly on a file backend (this runs before every
// up, and a `pulumi stack export` costs a third of a second), else through
// an export.
func (e *Engine) pendingOperations(ctx context.Context, s auto.Stack, stack string) ([]pendingOp, error) {
	if data, ok, err := e.readCheckpoint(stack); ok || err != nil {
		if err != nil || data == nil {
			return nil, err
		}
		var cp struct {
			Checkpoint struct {
				Latest json.RawMessage `json:"latest"`
			} `json:"checkpoint"`
		}
		if err := json.Unmarshal(data, &cp); err != nil {
			return nil, err
		}
		return parsePending(cp.Checkpoint.Latest)
	}
	dep, err := s.Export(ctx)
	if err != nil {
		return nil, err
	}
	return parsePending(dep.Deployment)
}

// readCheckpoint returns a file backend's checkpoint of the stack; ok is
// false when the backend is not a file backend. A stack without a
// checkpoint yet returns (nil, true, nil).
func (e *Engine) readCheckpoint(stack string) ([]byte, bool, error) {
	root, isFile := strings.CutPrefix(e.backend, "file://")
	if !isFile {
		return nil, false, nil
	}
	base := filepath.Join(filepath.FromSlash(root), ".pulumi", "stacks", e.opts.Fleet.Project, stack+".json")
	data, err := os.ReadFile(base)
	if err == nil {
		return data, true, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, true, err
	}
	gz, err := os.Open(base + ".gz")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, true, err
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		return nil, true, err
	}
	data, err = io.ReadAll(zr)
	return data, true, err
}

func parsePending(deployment json.RawMessage) ([]pendingOp, error) {
	var d struct {
		PendingOperations []struct {
			Resource struct {
				URN  string `json:"urn"`
				Type string `json:"type"`
				ID   string `json:"id"`
			} `json:"resource"`
			Type string `json:"type"`
		} `json:"pending_operations"`
	}
	if len(deployment) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(deployment, &d); err != nil {
		return nil, err
	}
	var ops []pendingOp
	for _, p := range d.PendingOperations {
		ops = append(ops, pendingOp{URN: p.Resource.URN, Type: p.Resource.Type, ID: p.Resource.ID, Kind: p.Type})
	}
	return ops, nil
}

// PendingResolver tells, for resources an interrupted update was creating,
// which exist in the cloud (urn -> id). The simulator can answer; for real
// AWS there is no generic lookup and the operator decides.
type PendingResolver func(ctx context.Context, stack string, urns []string) (map[string]string, error)

// resolvePending repairs the state a killed update left: resources whose
// creation completed are imported, the others are cleared, so a rerun
// converges instead of creating duplicates or failing on taken names.
func (e *Engine) resolvePending(ctx context.Context, w *workspace, name string) ([]string, error) {
	ops, err := e.pendingOperations(ctx, w.stack, name)
	if err != nil || len(ops) == 0 {
		return nil, nil
	}
	var creates []string
	for _, op := range ops {
		if op.Kind == "creating" {
			creates = append(creates, op.URN)
		}
	}
	notes := []string{fmt.Sprintf("an earlier run was interrupted with %d operation(s) in flight", len(ops))}
	if len(creates) == 0 || e.opts.ResolvePending == nil {
		notes = append(notes, "pulumi will retry them; check the cloud for resources the interrupted run may have created (then run `cellctl up --refresh`)")
		return notes, nil
	}
	found, err := e.opts.ResolvePending(ctx, name, creates)
	if err != nil {
		return notes, fmt.Errorf("checking interrupted creates: %w", err)
	}
	var imports []optrefresh.PendingCreate
	for _, urn := range creates {
		if id, ok := found[urn]; ok {
			imports = append(imports, optrefresh.PendingCreate{URN: urn, ID: id})
		}
	}
	opts := []optrefresh.Option{optrefresh.ClearPendingCreates(), optrefresh.SuppressProgress()}
	if len(imports) > 0 {
		opts = append(opts, optrefresh.ImportPendingCreates(imports))
	}
	if _, err := w.stack.Refresh(ctx, opts...); err != nil {
		if auto.IsConcurrentUpdateError(err) {
			return nil, err
		}
		return notes, fmt.Errorf("repairing the interrupted run's state: %w", cleanErr(err))
	}
	notes = append(notes, fmt.Sprintf("repaired: %d interrupted create(s) had completed and were adopted, %d had not and were cleared",
		len(imports), len(creates)-len(imports)))
	return notes, nil
}
