package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cellctl/cellctl/internal/stackrun"
	"io"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

// StackStatus is what the backend knows about one stack.
type StackStatus struct {
	Name        string         `json:"name"`
	Deployed    bool           `json:"deployed"`
	LastKind    string         `json:"lastOperation,omitempty"`
	LastResult  string         `json:"lastResult,omitempty"`
	LastUpdate  *time.Time     `json:"lastUpdate,omitempty"`
	Resources   int            `json:"resources"`
	Outputs     map[string]any `json:"outputs,omitempty"`
	Error       string         `json:"error,omitempty"`
	PendingOps  int            `json:"pendingOperations,omitempty"`
	UpdateCount int            `json:"updates,omitempty"`
}

// Status reads every named stack's last update, outputs and resource count.
func (e *Engine) Status(ctx context.Context, names []string) ([]*StackStatus, error) {
	out := make([]*StackStatus, len(names))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.opts.Parallel)
	for i, n := range names {
		g.Go(func() error {
			out[i] = e.status(gctx, n)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func (e *Engine) status(ctx context.Context, name string) *StackStatus {
	if readFileBackend {
		if st, ok := e.blobStatus(ctx, name); ok {
			return st
		}
	}
	st := &StackStatus{Name: name}
	w, err := e.open(ctx, name, false, readOnly, nil)
	if errors.Is(err, ErrNotDeployed) {
		return st
	}
	if err != nil {
		st.Error = err.Error()
		return st
	}
	defer w.close()
	hist, err := w.stack.History(ctx, 1, 1)
	if err != nil {
		st.Error = cleanErr(err).Error()
		return st
	}
	if len(hist) > 0 {
		h := hist[0]
		st.LastKind, st.LastResult, st.UpdateCount = h.Kind, h.Result, h.Version
		stamp := h.StartTime
		if h.EndTime != nil {
			stamp = *h.EndTime
		}
		if t, err := time.Parse(time.RFC3339, stamp); err == nil {
			t = t.UTC()
			st.LastUpdate = &t
		} else if t, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", stamp); err == nil {
			t = t.UTC()
			st.LastUpdate = &t
		}
	}
	dep, err := w.stack.Export(ctx)
	if err == nil && len(dep.Deployment) > 0 {
		var d struct {
			Resources []struct {
				Custom bool   `json:"custom"`
				Type   string `json:"type"`
			} `json:"resources"`
			PendingOperations []json.RawMessage `json:"pending_operations"`
		}
		if json.Unmarshal(dep.Deployment, &d) == nil {
			for _, r := range d.Resources {
				if stackrun.CloudResource(r.Type, r.Custom) {
					st.Resources++
				}
			}
			st.PendingOps = len(d.PendingOperations)
		}
	}
	st.Deployed = st.Resources > 0 || len(hist) > 0
	if outs, err := w.stack.Outputs(ctx); err == nil {
		st.Outputs = maskOutputs(outs)
	}
	return st
}

// Protected lists the resources of a deployed stack that are protected
// ("type name"), which a destroy would refuse to delete.
func (e *Engine) Protected(ctx context.Context, stack string) ([]string, error) {
	w, err := e.open(ctx, stack, false, readOnly, nil)
	if err != nil {
		return nil, err
	}
	defer w.close()
	dep, err := w.stack.Export(ctx)
	if err != nil {
		return nil, cleanErr(err)
	}
	var d struct {
		Resources []struct {
			URN     string `json:"urn"`
			Protect bool   `json:"protect"`
		} `json:"resources"`
	}
	if len(dep.Deployment) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(dep.Deployment, &d); err != nil {
		return nil, err
	}
	var out []string
	for _, r := range d.Resources {
		if r.Protect {
			out = append(out, urnTypeName(r.URN))
		}
	}
	return out, nil
}

// DeployedOutputs returns a deployed stack's outputs (secrets masked),
// stackrun.ErrNotDeployed when it never was. On a diy backend it reads
// the checkpoint directly: it runs before every up and preview.
func (e *Engine) DeployedOutputs(ctx context.Context, stack string) (map[string]any, error) {
	data, held, err := e.checkedCheckpoint(ctx, stack)
	if err != nil {
		return nil, err
	}
	if held {
		cp, err := parseCheckpoint(data)
		if err != nil {
			return nil, err
		}
		if out, ok := cp.stackOutputs(); ok {
			return out, nil
		}
		return nil, ErrNotDeployed
	}
	w, err := e.open(ctx, stack, false, readOnly, nil)
	if err != nil {
		return nil, err
	}
	defer w.close()
	outs, err := w.stack.Outputs(ctx)
	if err != nil {
		return nil, cleanErr(err)
	}
	if len(outs) == 0 {
		return nil, ErrNotDeployed
	}
	return maskOutputs(outs), nil
}

// blobStatus reads a stack's status straight from a diy backend (file://
// or s3://, stateBlobs) — its checkpoint and its history, the objects the
// pulumi CLI's `stack export`, `stack output` and `stack history` read —
// instead of running the CLI five times a stack (about 1.5 s of CPU per
// stack, every time `status`, a deploy's preflight or a test asks). ok is
// false where only the CLI can read: another backend, or a history the
// CLI compressed with zstd.
func (e *Engine) blobStatus(ctx context.Context, name string) (st *StackStatus, ok bool) {
	bl, held, err := e.blobs(ctx)
	if !held && err == nil {
		return nil, false
	}
	st = &StackStatus{Name: name}
	if err != nil {
		st.Error = err.Error()
		return st, true
	}
	data, err := e.checkedRead(ctx, bl, name)
	if err != nil {
		st.Error = err.Error()
		return st, true
	}
	if data == nil {
		return st, true // never deployed: pulumi has no such stack
	}
	last, updates, err := lastHistory(ctx, bl, e.historyDir(name))
	if errors.Is(err, errHistoryFormat) {
		return nil, false
	}
	if err != nil {
		st.Error = err.Error()
		return st, true
	}
	if last != nil {
		st.LastKind, st.LastResult, st.UpdateCount = last.Kind, last.Result, updates
		stamp := last.StartTime
		if last.EndTime > 0 {
			stamp = last.EndTime
		}
		t := time.Unix(stamp, 0).UTC()
		st.LastUpdate = &t
	}
	cp, err := parseCheckpoint(data)
	if err != nil {
		st.Error = err.Error()
		return st, true
	}
	if l := cp.Checkpoint.Latest; l != nil {
		for _, r := range l.Resources {
			if stackrun.CloudResource(r.Type, r.Custom) {
				st.Resources++
			}
		}
		st.PendingOps = len(l.PendingOperations)
	}
	st.Deployed = st.Resources > 0 || last != nil
	if outs, ok := cp.stackOutputs(); ok {
		st.Outputs = outs
	}
	return st, true
}

// readFileBackend turns blobStatus on; a test turns it off to compare it
// with what the CLI reads.
var readFileBackend = true

// fileCheckpoint is the part of a file backend's checkpoint
// (`.pulumi/stacks/<project>/<stack>.json`) that status and the deployed
// outputs read.
type fileCheckpoint struct {
	Checkpoint struct {
		Latest *struct {
			Resources []struct {
				Type    string         `json:"type"`
				Custom  bool           `json:"custom"`
				Outputs map[string]any `json:"outputs"`
			} `json:"resources"`
			PendingOperations []json.RawMessage `json:"pending_operations"`
		} `json:"latest"`
	} `json:"checkpoint"`
}

func parseCheckpoint(data []byte) (fileCheckpoint, error) {
	var cp fileCheckpoint
	if len(data) == 0 {
		return cp, nil
	}
	err := json.Unmarshal(data, &cp)
	return cp, err
}

// stackOutputs are the stack resource's outputs with every secret masked
// as "[secret]" (a secret is an envelope holding ciphertext, at any depth);
// ok is false when the checkpoint holds no stack resource.
func (c fileCheckpoint) stackOutputs() (map[string]any, bool) {
	if c.Checkpoint.Latest == nil {
		return nil, false
	}
	for _, r := range c.Checkpoint.Latest.Resources {
		if r.Type == "pulumi:pulumi:Stack" {
			out := map[string]any{}
			for k, v := range r.Outputs {
				out[k] = mask(v) // refresh's: every secret envelope, at any depth
			}
			return out, true
		}
	}
	return nil, false
}

// historyEntry is the part of a file backend's history entry (pulumi's
// backend.UpdateInfo) status reads; its times are Unix seconds.
type historyEntry struct {
	Kind      string `json:"kind"`
	Result    string `json:"result"`
	StartTime int64  `json:"startTime"`
	EndTime   int64  `json:"endTime"`
}

// errHistoryFormat: a history entry only the pulumi CLI reads.
var errHistoryFormat = errors.New("a history entry in a format only the pulumi CLI reads")

// lastHistory reads the newest entry of a diy backend's history
// directory and counts the entries (each update, refresh or destroy writes
// one, named <stack>-<unix nanoseconds>.history.json[.gz]; the names sort
// in time order, as the CLI lists them). A directory that does not exist
// is a stack never updated.
func lastHistory(ctx context.Context, bl stateBlobs, dir string) (*historyEntry, int, error) {
	entries, err := bl.list(ctx, dir)
	if err != nil {
		return nil, 0, err
	}
	var names []string
	for _, n := range entries {
		switch {
		case strings.HasSuffix(n, ".history.json"), strings.HasSuffix(n, ".history.json.gz"):
			names = append(names, n)
		case strings.HasSuffix(n, ".history.json.zst"):
			return nil, 0, errHistoryFormat
		}
	}
	if len(names) == 0 {
		return nil, 0, nil
	}
	sort.Strings(names)
	key := dir + "/" + names[len(names)-1]
	newest := bl.where(key)
	data, err := bl.read(ctx, key)
	if err != nil {
		return nil, 0, err
	}
	if strings.HasSuffix(key, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, 0, fmt.Errorf("reading %s: %w", newest, err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			return nil, 0, fmt.Errorf("reading %s: %w", newest, err)
		}
	}
	var h historyEntry
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", newest, err)
	}
	return &h, len(names), nil
}
