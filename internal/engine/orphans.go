package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/auto/optrefresh"

	"github.com/cellctl/cellctl/internal/cloud"
)

// An update can lose the answer to a create that the cloud carried out:
// the simulated provider runs inside cellctl and dies with it, so pulumi
// (still alive) sees the create fail and keeps no pending operation; on
// AWS a request that times out after AWS did the work looks the same.
// The resource is then in the cloud and unknown to the state, and the
// next up creates it a second time (a duplicate VPC) or fails on a taken
// name (InvalidSubnet.Conflict). The orphan audit runs before every up on
// a cloud that can list a stack's resources (the simulator): every live
// resource of the stack whose URN the state lacks is adopted — put into
// the state with its cloud id under the parent and provider its URN and
// siblings name, then refreshed from the cloud — or, when that cannot be
// done safely, reported with the command that adopts or removes it, and
// nothing runs.

// orphan is a live resource of the stack the state does not hold.
type orphan struct {
	cloud.CloudResource
	parent, provider string
}

// OrphanError reports resources in the cloud the state does not know and
// cellctl could not adopt.
type OrphanError struct {
	Stack   string
	Orphans []string // "type name (id): why"
}

func (e *OrphanError) Error() string {
	return fmt.Sprintf("stack %s: %d resource(s) exist in the cloud that its state does not hold (an earlier update lost the answer to their create): %s; "+
		"nothing was run. Adopt each with `pulumi import --stack %s <type> <name> <id>` (with --parent for a cell's resources) or delete it in the cloud, then rerun",
		e.Stack, len(e.Orphans), strings.Join(e.Orphans, "; "), e.Stack)
}

// stateEntry is the part of a state resource the audit needs.
type stateEntry struct {
	URN      string `json:"urn"`
	Type     string `json:"type"`
	Custom   bool   `json:"custom"`
	Parent   string `json:"parent"`
	Provider string `json:"provider"`
}

// adoptOrphans runs the orphan audit of one stack before an up.
func (e *Engine) adoptOrphans(ctx context.Context, w *workspace, name string) ([]string, error) {
	list := e.cloud.StackResources
	if list == nil {
		return nil, nil
	}
	live, err := list(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("listing the cloud's resources of %s for the orphan audit: %w", name, err)
	}
	if len(live) == 0 {
		return nil, nil
	}
	// A diy backend's checkpoint is read directly (this runs before every
	// up; an export costs a third of a second); the export is what gets
	// changed and imported, when there is something to adopt.
	var d map[string]json.RawMessage
	if data, held, err := e.readCheckpoint(ctx, name); held && err == nil {
		var cp struct {
			Checkpoint struct {
				Latest json.RawMessage `json:"latest"`
			} `json:"checkpoint"`
		}
		if data != nil && json.Unmarshal(data, &cp) == nil && len(cp.Checkpoint.Latest) > 0 && string(cp.Checkpoint.Latest) != "null" {
			if err := json.Unmarshal(cp.Checkpoint.Latest, &d); err != nil {
				return nil, err
			}
			if !hasOrphans(live, d) {
				return nil, nil
			}
		}
	}
	dep, err := w.stack.Export(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the state of %s for the orphan audit: %w", name, cleanErr(err))
	}
	d = nil
	if len(dep.Deployment) > 0 {
		if err := json.Unmarshal(dep.Deployment, &d); err != nil {
			return nil, err
		}
	}
	var entries []stateEntry
	if raw := d["resources"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, err
		}
	}
	var pending []struct {
		Resource stateEntry `json:"resource"`
	}
	if raw := d["pending_operations"]; len(raw) > 0 {
		_ = json.Unmarshal(raw, &pending)
	}
	known := map[string]bool{}
	for _, r := range entries {
		known[r.URN] = true
	}
	for _, p := range pending {
		known[p.Resource.URN] = true // resolvePending's to settle
	}
	var orphans []orphan
	var refused []string
	for _, r := range live {
		if known[r.URN] {
			continue
		}
		o := orphan{CloudResource: r}
		if why := placeOrphan(&o, entries); why != "" {
			refused = append(refused, fmt.Sprintf("%s (%s): %s", urnTypeName(r.URN), r.ID, why))
			continue
		}
		orphans = append(orphans, o)
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		return nil, &OrphanError{Stack: name, Orphans: refused}
	}
	if len(orphans) == 0 {
		return nil, nil
	}
	// Someone else may be updating the stack: leave its state alone (the
	// up meets that run's lock).
	holders, inspectable, err := e.currentLocks(ctx, name)
	if err != nil || (inspectable && len(holders) > 0) {
		return nil, nil
	}
	// Parents before children: a parent orphan must precede its child.
	sort.SliceStable(orphans, func(i, j int) bool { return depth(orphans[i].URN) < depth(orphans[j].URN) })
	var resources []map[string]any
	if raw := d["resources"]; len(raw) > 0 {
		if err := json.Unmarshal(raw, &resources); err != nil {
			return nil, err
		}
	}
	var names []string
	for _, o := range orphans {
		entry := map[string]any{"urn": o.URN, "type": o.Type, "custom": true, "id": o.ID, "parent": o.parent, "provider": o.provider}
		resources = append(resources, entry)
		names = append(names, fmt.Sprintf("%s (%s)", urnTypeName(o.URN), o.ID))
	}
	if d["resources"], err = json.Marshal(resources); err != nil {
		return nil, err
	}
	if dep.Deployment, err = json.Marshal(d); err != nil {
		return nil, err
	}
	if err := importState(ctx, w.stack.Workspace(), w.stack.Name(), dep); err != nil {
		return nil, fmt.Errorf("adopting %s into the state of %s: %w", strings.Join(names, ", "), name, cleanErr(err))
	}
	// The adopted entries hold only their ids: read their inputs and
	// outputs from the cloud, so the up diffs them like any other.
	err = retryBusy(ctx, func() error {
		_, err := w.stack.Refresh(ctx, optrefresh.SuppressProgress())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading the adopted resources of %s from the cloud: %w", name, cleanErr(err))
	}
	return []string{fmt.Sprintf("orphan audit: adopted %d resource(s) an earlier update created in the cloud but lost from the state: %s",
		len(orphans), strings.Join(names, ", "))}, nil
}

// hasOrphans says whether some live resource's URN is neither a resource
// nor a pending operation of the deployment d.
func hasOrphans(live []cloud.CloudResource, d map[string]json.RawMessage) bool {
	var doc struct {
		Resources []struct {
			URN string `json:"urn"`
		} `json:"resources"`
		Pending []struct {
			Resource struct {
				URN string `json:"urn"`
			} `json:"resource"`
		} `json:"pending_operations"`
	}
	raw, _ := json.Marshal(d)
	if json.Unmarshal(raw, &doc) != nil {
		return true // let the export decide
	}
	known := map[string]bool{}
	for _, r := range doc.Resources {
		known[r.URN] = true
	}
	for _, p := range doc.Pending {
		known[p.Resource.URN] = true
	}
	for _, r := range live {
		if !known[r.URN] {
			return true
		}
	}
	return false
}

// placeOrphan finds an orphan's parent and provider in the state: the
// parent is the one resource whose URN has the type chain the orphan's
// URN names as its parent's; the provider is the one its siblings of the
// same package use. It says why when either is not unique.
func placeOrphan(o *orphan, entries []stateEntry) string {
	chain := urnTypeChain(o.URN)
	if len(chain) == 0 {
		return "its URN names no type"
	}
	if len(chain) > 1 {
		parentChain := strings.Join(chain[:len(chain)-1], "$")
		var parents []string
		for _, r := range entries {
			if strings.Join(urnTypeChain(r.URN), "$") == parentChain {
				parents = append(parents, r.URN)
			}
		}
		if len(parents) != 1 {
			return fmt.Sprintf("%d resources of the state could be its parent (%s)", len(parents), parentChain)
		}
		o.parent = parents[0]
	} else {
		for _, r := range entries {
			if r.Type == "pulumi:pulumi:Stack" {
				o.parent = r.URN
			}
		}
	}
	pkg := strings.SplitN(o.Type, ":", 2)[0]
	providers := map[string]bool{}
	for _, r := range entries {
		if r.Custom && r.Parent == o.parent && r.Provider != "" && strings.SplitN(r.Type, ":", 2)[0] == pkg {
			providers[r.Provider] = true
		}
	}
	if len(providers) != 1 {
		return fmt.Sprintf("its siblings use %d %s providers, so which one created it is not known", len(providers), pkg)
	}
	for p := range providers {
		o.provider = p
	}
	return ""
}

// urnTypeChain is the qualified type of a URN split into its parents'
// types and its own: urn:pulumi:s::p::A$B::name → [A B].
func urnTypeChain(urn string) []string {
	parts := strings.SplitN(urn, "::", 4)
	if len(parts) < 4 {
		return nil
	}
	return strings.Split(parts[2], "$")
}

func depth(urn string) int { return len(urnTypeChain(urn)) }
