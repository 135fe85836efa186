package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/events"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optpreview"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optrefresh"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/outcome"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// RunStack performs one stack's operation through the pulumi CLI: it
// opens the stack's private workspace, attaches the cloud, repairs what an
// interrupted earlier up left pending, runs the operation with the inputs
// of req (never the cached fleet model changed in place) and reports the
// result. It implements runplan.StackRunner; the plan decides order,
// parallelism and what a failure stops.
func (e *Engine) RunStack(ctx context.Context, req stackrun.Request) *stackrun.Result {
	return e.runStack(ctx, req)
}

func secs(d time.Duration) float64 { return float64(d.Round(time.Millisecond)) / float64(time.Second) }

func (e *Engine) runStack(ctx context.Context, req stackrun.Request) *stackrun.Result {
	name, op := req.Stack, req.Op
	res := &stackrun.Result{Name: name}
	fail := func(err error) *stackrun.Result {
		res.Result = stackrun.Failed
		res.Err = err
		return res
	}
	locked := func(err error) *stackrun.Result { return fail(outcome.Locked(name, err)) }
	if !op.Valid() {
		return fail(fmt.Errorf("unknown operation %q", op))
	}
	mark := time.Now()
	lap := func() float64 {
		now := time.Now()
		d := now.Sub(mark)
		mark = now
		return secs(d)
	}
	defer func() { res.Timing.Finish = lap() }()
	// The router's up runs the passes its state calls for: a first up
	// creates the primary without its continuous deployment policy and
	// attaches it, a change CloudFront refuses on a linked primary goes
	// through the unlink sequence (routerseq.go).
	seq := singlePass
	var err error
	if name == fleet.RouterStack && (op == stackrun.OpUp || op == stackrun.OpPreview) {
		runFleet, ferr := withInputs(e.opts.Fleet, name, req.Inputs)
		if ferr != nil {
			return fail(ferr)
		}
		if seq, err = e.routerSequence(ctx, runFleet); err != nil {
			return fail(err)
		}
	}
	first := seq.passes[0]
	if op == stackrun.OpPreview {
		// A preview shows where the sequence ends: the primary attached
		// when it exists, and every change applied.
		first = seq.passes[len(seq.passes)-1]
		if seq.primaryURN == "" {
			first = seq.passes[0]
		}
		if seq.unlinked() {
			res.Notes = append(res.Notes, seq.previewNote())
		}
	}
	program, err := e.programWith(name, req.Inputs, first)
	if err != nil {
		return fail(err)
	}
	// Only an up may store what it changes in the stack file; a preview,
	// refresh preview or destroy writes nothing there.
	mode := readOnly
	if op == stackrun.OpUp {
		mode = readWrite
	}
	w, err := e.open(ctx, name, op == stackrun.OpUp || op == stackrun.OpPreview, mode, program)
	res.Timing.Setup = lap()
	if errors.Is(err, ErrNotDeployed) {
		res.Result = stackrun.Skipped
		res.Err = ErrNotDeployed
		return res
	}
	if err != nil {
		if auto.IsConcurrentUpdateError(err) {
			return locked(err)
		}
		return fail(err)
	}
	defer w.close()

	if op == stackrun.OpPreview {
		if err := e.previewSecret(ctx, w, name); err != nil {
			return fail(err)
		}
	}
	if op == stackrun.OpUp {
		notes, err := e.resolvePending(ctx, w, name)
		res.Timing.Repair = lap()
		if auto.IsConcurrentUpdateError(err) {
			// The "pending" operations belong to a run still in flight (or
			// to a dead one that left its lock): never touch them.
			return locked(e.explain(ctx, w, name, err))
		}
		res.Notes = append(res.Notes, notes...)
		if err != nil {
			return fail(err)
		}
		notes, err = e.adoptOrphans(ctx, w, name)
		res.Timing.Repair += lap()
		res.Notes = append(res.Notes, notes...)
		if err != nil {
			if auto.IsConcurrentUpdateError(err) {
				return locked(e.explain(ctx, w, name, err))
			}
			return fail(err)
		}
	}

	var tr *tracker
	var runErr error
	// The checkpoint was being replaced by another process as this one
	// loaded it: nothing started, so run again (the operation then meets
	// that process's lock, or the finished checkpoint).
	runErr = retryBusy(ctx, func() error {
		var err error
		tr = newTracker(name, e.opts.Events)
		_, err = e.execute(ctx, req, w, tr, res, e.targets(seq, first))
		return err
	})
	// The counts are the cloud resources' (stackrun.CloudResource), as
	// status and plan count them: pulumi's own summary also counts the
	// stack and the components (83 for a cell of 81 resources).
	changes, diags, failedRes := tr.snapshot()
	summary := tr.cloudCounts()
	if op == stackrun.OpUp && len(seq.passes) > 1 {
		// The router's further passes, in the same workspace: each renders
		// the same program in its pass's shape (routerseq.go).
		pass := func(p routerPass) error {
			program, err := e.programWith(name, req.Inputs, p)
			if err != nil {
				return err
			}
			w.stack.Workspace().SetProgram(program)
			tr = newTracker(name, e.opts.Events)
			_, err = e.execute(ctx, passRequest(req), w, tr, res, e.targets(seq, p))
			more := tr.cloudCounts()
			c2, d2, f2 := tr.snapshot()
			changes, diags, failedRes = append(changes, c2...), append(diags, d2...), append(failedRes, f2...)
			if summary != nil && more != nil {
				summary[string(apitype.OpUpdate)] += more[string(apitype.OpUpdate)]
			}
			return err
		}
		runErr = e.routerPasses(ctx, seq, runErr, pass, res)
	}
	res.Timing.Engine = lap()
	res.Planned = changes
	res.FailedResources = failedRes
	res.Changes = changesOf(summary, changes)
	if err := w.writeBack(); err != nil {
		res.Notes = append(res.Notes, err.Error())
	}
	if runErr != nil {
		if auto.IsConcurrentUpdateError(runErr) {
			return locked(e.explain(ctx, w, name, runErr))
		}
		msg := strings.Join(dedupe(diags), "; ")
		if msg == "" {
			return fail(wrapDetached(cleanErr(runErr), runErr))
		}
		return fail(wrapDetached(&engineError{msg: msg, err: runErr}, runErr))
	}
	if op == stackrun.OpRefresh {
		if outs, err := w.stack.Outputs(ctx); err == nil {
			res.Outputs = maskOutputs(outs)
		}
	}
	if op == stackrun.OpUp && name == fleet.RouterStack {
		// The router changed: delete the edge versions nothing can still
		// run (edgeprune.go). Never fatal to the change.
		res.Notes = append(res.Notes, e.pruneEdgeVersions(ctx, req)...)
	}
	res.Result = stackrun.Succeeded
	return res
}

// engineError is a failed operation told by its error diagnostics (what
// the provider said about each resource), keeping the CLI's error.
type engineError struct {
	msg string
	err error
}

func (e *engineError) Error() string { return e.msg }
func (e *engineError) Unwrap() error { return e.err }

// execute runs one engine operation, feeding its events to tr.
func (e *Engine) execute(ctx context.Context, req stackrun.Request, w *workspace, tr *tracker, res *stackrun.Result, targets []string) (map[string]int, error) {
	ch := make(chan events.EngineEvent)
	done := make(chan struct{})
	go tr.consume(ch, done)
	var summary map[string]int
	var runErr error
	switch req.Op {
	case stackrun.OpUp:
		// ShowSecrets(false): the SDK reads the update's summary from the
		// stack's history afterwards, and only its resource counts are
		// used; asked with secrets shown, the CLI would derive the
		// passphrase's key (PBKDF2) once more to decrypt its config.
		opts := []optup.Option{optup.EventStreams(w.tap(ch)), optup.SuppressProgress(), optup.ShowSecrets(false)}
		if req.Refresh {
			opts = append(opts, optup.Refresh())
		}
		if len(targets) > 0 {
			opts = append(opts, optup.Target(targets))
		}
		var r auto.UpResult
		r, runErr = w.stack.Up(ctx, opts...)
		if r.Summary.ResourceChanges != nil {
			summary = *r.Summary.ResourceChanges
		}
		if runErr == nil {
			res.Outputs = maskOutputs(r.Outputs)
		}
	case stackrun.OpPreview:
		var r auto.PreviewResult
		r, runErr = w.stack.Preview(ctx, optpreview.EventStreams(ch), optpreview.SuppressProgress())
		summary = map[string]int{}
		for k, v := range r.ChangeSummary {
			summary[string(k)] = v
		}
	case stackrun.OpRefresh:
		// A refresh preview: what changed in the cloud behind Pulumi's
		// back, leaving the state as it is.
		var r auto.PreviewResult
		r, runErr = w.stack.PreviewRefresh(ctx, optrefresh.EventStreams(ch), optrefresh.SuppressProgress())
		summary = map[string]int{}
		for k, v := range r.ChangeSummary {
			summary[string(k)] = v
		}
	case stackrun.OpDestroy:
		var r auto.DestroyResult
		r, runErr = w.stack.Destroy(ctx, optdestroy.EventStreams(w.tap(ch)), optdestroy.SuppressProgress(), optdestroy.ShowSecrets(false))
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

func changesOf(summary map[string]int, planned []stackrun.Change) stackrun.Changes {
	var c stackrun.Changes
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

// pendingOperations reads the operations a killed update left behind (in
// the state latestState reads: this runs before every up).
func (e *Engine) pendingOperations(ctx context.Context, s auto.Stack, stack string) ([]pendingOp, error) {
	latest, err := e.latestState(ctx, s, stack)
	if err != nil || latest == nil {
		return nil, err
	}
	return parsePending(latest)
}

// latestState is the stack's latest deployment, its secrets encrypted: on
// a diy backend (file:// or s3://) read from the checkpoint directly (the
// object `pulumi stack export` reads; a start of the CLI costs about a
// third of a CPU-second), nil when there is none yet; elsewhere through an
// export.
func (e *Engine) latestState(ctx context.Context, s auto.Stack, stack string) (json.RawMessage, error) {
	data, held, err := e.readCheckpoint(ctx, stack)
	if err != nil {
		return nil, err
	}
	if held {
		if data == nil {
			return nil, nil
		}
		var cp struct {
			Checkpoint struct {
				Latest json.RawMessage `json:"latest"`
			} `json:"checkpoint"`
		}
		if err := json.Unmarshal(data, &cp); err != nil {
			return nil, err
		}
		return cp.Checkpoint.Latest, nil
	}
	dep, err := s.Export(ctx)
	if err != nil {
		return nil, cleanErr(err)
	}
	return dep.Deployment, nil
}

// readCheckpoint returns a diy backend's checkpoint of the stack (plain
// or gzipped, returned uncompressed); ok is false when the backend is one
// only the CLI reads (blobs). A stack without a checkpoint yet returns
// (nil, true, nil).
func (e *Engine) readCheckpoint(ctx context.Context, stack string) ([]byte, bool, error) {
	bl, ok, err := e.blobs(ctx)
	if !ok || err != nil {
		return nil, ok, err
	}
	data, _, err := e.readCheckpointFrom(ctx, bl, stack)
	return data, true, err
}

// readCheckpointFrom reads the stack's checkpoint from bl: the plain
// object or, where there is none, the gzipped one; key is the one it read
// (or failed on).
func (e *Engine) readCheckpointFrom(ctx context.Context, bl stateBlobs, stack string) (data []byte, key string, err error) {
	key = e.stackKey(stack)
	data, err = bl.read(ctx, key)
	if err == nil {
		return data, key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, key, err
	}
	key += ".gz"
	gz, err := bl.read(ctx, key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, key, nil
	}
	if err != nil {
		return nil, key, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, key, fmt.Errorf("%s: %w", bl.where(key), err)
	}
	data, err = io.ReadAll(zr)
	return data, key, err
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
	resolve := e.cloud.ResolvePending
	if len(creates) == 0 || resolve == nil {
		notes = append(notes, "pulumi will retry them; check the cloud for resources the interrupted run may have created (then run `cellctl up --refresh`)")
		return notes, nil
	}
	found, err := resolve(ctx, name, creates)
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
		// pulumi v3.274's `refresh --import-pending-creates` marks the
		// pending creates as importing and then drops them without adding
		// the resources (seen in TestStaleLock: the adopted subnet was
		// lost, and the next up's create of it met InvalidSubnet.Conflict).
		// So on a file backend nobody holds the lock of, cellctl moves the
		// completed creates into the state itself (export, the pending
		// operation's resource with its id, import) and the refresh reads
		// their outputs from the cloud. Otherwise (another backend, or a
		// lock: the refresh below meets it) pulumi's flag is used, and the
		// check after the refresh reports what it did not adopt.
		adopted, err := e.adoptCreates(ctx, w, name, imports)
		if err != nil {
			return notes, fmt.Errorf("adopting the interrupted run's completed creates: %w", err)
		}
		if !adopted {
			opts = append(opts, optrefresh.ImportPendingCreates(imports))
		}
	}
	// A live run holding the lock is replacing the checkpoint (and its
	// .attrs, written non-atomically) as this one loads it: retryBusy;
	// the retry meets that run's lock.
	err = retryBusy(ctx, func() error {
		_, err := w.stack.Refresh(ctx, opts...)
		return err
	})
	if err != nil {
		if auto.IsConcurrentUpdateError(err) {
			return nil, err
		}
		return notes, fmt.Errorf("repairing the interrupted run's state: %w", cleanErr(err))
	}
	// The cloud holds what the adopted creates made; if the state still
	// does not, an up would create them a second time (a conflict, or a
	// duplicate on AWS): report the orphans instead.
	if missing := e.notInState(name, imports); len(missing) > 0 {
		return notes, fmt.Errorf("the interrupted run created %d resource(s) that the repair could not adopt into the state: %s; "+
			"nothing else was run. Adopt each with `pulumi import <type> <name> <id>` (with --parent for a cell's resources) "+
			"or delete it in the cloud, then rerun", len(missing), strings.Join(missing, ", "))
	}
	notes = append(notes, fmt.Sprintf("repaired: %d interrupted create(s) had completed and were adopted, %d had not and were cleared",
		len(imports), len(creates)-len(imports)))
	return notes, nil
}

// notInState lists, of the adopted creates, those the file backend's
// checkpoint does not hold as resources ("type name (id)"). Other
// backends are not checked here.
func (e *Engine) notInState(stack string, imports []optrefresh.PendingCreate) []string {
	if len(imports) == 0 {
		return nil
	}
	if !strings.HasPrefix(e.backend, "file://") {
		return nil // pulumi's own import of pending creates, unchecked (see resolvePending)
	}
	data, ok, err := e.readCheckpoint(context.Background(), stack)
	if !ok || err != nil || data == nil {
		return nil
	}
	var cp struct {
		Checkpoint struct {
			Latest struct {
				Resources []struct {
					URN string `json:"urn"`
				} `json:"resources"`
			} `json:"latest"`
		} `json:"checkpoint"`
	}
	if json.Unmarshal(data, &cp) != nil {
		return nil
	}
	have := map[string]bool{}
	for _, r := range cp.Checkpoint.Latest.Resources {
		have[r.URN] = true
	}
	var out []string
	for _, imp := range imports {
		if !have[imp.URN] {
			out = append(out, fmt.Sprintf("%s (%s)", urnTypeName(imp.URN), imp.ID))
		}
	}
	return out
}

// adoptCreates moves completed pending creates into the stack's resources
// (with their cloud ids) by exporting and importing the deployment. It
// runs only on a file backend whose lock nobody holds, and reports false
// when it did not run.
func (e *Engine) adoptCreates(ctx context.Context, w *workspace, stack string, imports []optrefresh.PendingCreate) (bool, error) {
	holders, inspectable, err := e.currentLocks(ctx, stack)
	if err != nil || !inspectable || len(holders) > 0 {
		return false, nil
	}
	dep, err := w.stack.Export(ctx)
	if err != nil {
		return false, cleanErr(err)
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(dep.Deployment, &d); err != nil {
		return false, err
	}
	var resources []map[string]any
	var pending []map[string]any
	if err := json.Unmarshal(d["resources"], &resources); err != nil {
		return false, err
	}
	if err := json.Unmarshal(d["pending_operations"], &pending); err != nil {
		return false, err
	}
	ids := map[string]string{}
	for _, imp := range imports {
		ids[imp.URN] = imp.ID
	}
	var keep []map[string]any
	for _, op := range pending {
		res, _ := op["resource"].(map[string]any)
		urn, _ := res["urn"].(string)
		if id, ok := ids[urn]; ok && op["type"] == "creating" {
			// Its dependencies were created before it, so they are
			// already listed: appending keeps the order pulumi needs.
			res["id"] = id
			resources = append(resources, res)
			continue
		}
		keep = append(keep, op)
	}
	if d["resources"], err = json.Marshal(resources); err != nil {
		return false, err
	}
	if d["pending_operations"], err = json.Marshal(keep); err != nil {
		return false, err
	}
	if dep.Deployment, err = json.Marshal(d); err != nil {
		return false, err
	}
	if err := importState(ctx, w.stack.Workspace(), w.stack.Name(), dep); err != nil {
		return false, cleanErr(err)
	}
	return true, nil
}
