package engine

import (
	"context"
	"encoding/json"
	"errors"
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
				if r.Custom && !isProviderType(r.Type) {
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

func isProviderType(t string) bool {
	return len(t) > len("pulumi:providers:") && t[:len("pulumi:providers:")] == "pulumi:providers:"
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
// stackrun.ErrNotDeployed when it never was. On a file backend it reads
// the checkpoint directly: it runs before every up and preview.
func (e *Engine) DeployedOutputs(ctx context.Context, stack string) (map[string]any, error) {
	if err := e.checkCheckpoint(stack); err != nil {
		return nil, err
	}
	data, isFile, err := e.readCheckpoint(stack)
	if err != nil {
		return nil, err
	}
	if isFile {
		if data == nil {
			return nil, ErrNotDeployed
		}
		var cp struct {
			Checkpoint struct {
				Latest *struct {
					Resources []struct {
						Type    string         `json:"type"`
						Outputs map[string]any `json:"outputs"`
					} `json:"resources"`
				} `json:"latest"`
			} `json:"checkpoint"`
		}
		if err := json.Unmarshal(data, &cp); err != nil {
			return nil, err
		}
		if cp.Checkpoint.Latest == nil {
			return nil, ErrNotDeployed
		}
		for _, r := range cp.Checkpoint.Latest.Resources {
			if r.Type == "pulumi:pulumi:Stack" {
				out := map[string]any{}
				for k, v := range r.Outputs {
					// A secret output is an envelope holding ciphertext.
					if m, ok := v.(map[string]any); ok && m["4dabf18193072939515e22adb298388d"] != nil {
						v = "[secret]"
					}
					out[k] = v
				}
				return out, nil
			}
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
