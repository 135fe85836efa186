package drift

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/cellctl/cellctl/internal/stackrun"
)

// Resource states of a refresh.
const (
	ResourceSame       = "same"
	ResourceChanged    = "changed"
	ResourceDeleted    = "deleted"
	ResourceNotChecked = "not_checked"
)

// CloudResource is one resource of a cell as a refresh preview read it.
type CloudResource struct {
	URN   string
	Type  string
	Name  string
	State string // ResourceSame, …
	// Changes are the input properties the live resource no longer
	// matches, old (Pulumi state) → new (live); secrets masked.
	Changes []PropertyChange
	// Reason says why a resource was not checked.
	Reason string
}

// PropertyChange is one changed property.
type PropertyChange struct {
	Path string `json:"path"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// CellCloud is one cell's refresh preview.
type CellCloud struct {
	Resources []CloudResource
}

// CloudReader runs a refresh preview of one cell stack without writing
// state (stackrun.ErrNotDeployed when it was never deployed).
// internal/engine implements it (RefreshDrift).
type CloudReader interface {
	CloudDrift(ctx context.Context, stack string) (*CellCloud, error)
}

// Cloud runs the refresh preview of every cell, at most parallel at once,
// and reports what changed in the cloud behind Pulumi's back. Properties
// the policy ignores are counted, not reported; resources that could not
// be read are not_checked findings, never dropped; a cell whose refresh
// failed as a whole is one not_checked finding.
func Cloud(ctx context.Context, ids []string, r CloudReader, pol *Policy, parallel int) Part {
	results := make([]*CellCloud, len(ids))
	errs := make([]error, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	for i, id := range ids {
		g.Go(func() error {
			results[i], errs[i] = r.CloudDrift(gctx, id)
			return nil
		})
	}
	_ = g.Wait()
	part := Part{Ignored: map[string]int{}}
	for i, id := range ids {
		again := fmt.Sprintf("`cellctl drift --cloud %s`", id)
		switch {
		case errors.Is(errs[i], stackrun.ErrNotDeployed):
			part.Notes = append(part.Notes, fmt.Sprintf("%s is not deployed: nothing in the cloud to compare", id))
			part.NoState = append(part.NoState, id)
			continue
		case errs[i] != nil:
			part.Findings = append(part.Findings, Finding{Kind: KindCloud, Cell: id, Status: StatusNotChecked,
				Detail: "the refresh preview failed: " + errs[i].Error(),
				Next:   "fix what the error names and run " + again + " again; until then the cell's cloud state is unknown"})
			continue
		}
		for _, res := range results[i].Resources {
			base := Finding{Kind: KindCloud, Cell: id, URN: res.URN, Type: res.Type, Resource: res.Name}
			switch res.State {
			case ResourceChanged:
				for _, ch := range res.Changes {
					if pol.Ignored(res.Type, ch.Path) != nil {
						part.Ignored[id]++
						continue
					}
					f := base
					f.Status, f.Property, f.Old, f.New = StatusChanged, ch.Path, ch.Old, ch.New
					f.Next = fmt.Sprintf("`cellctl up %s --refresh` puts the repository's value back; if the change is wanted, make it in the repository; if something else owns %s, add {type: %s, property: %s, reason: …} to cloud.ignore in %s",
						id, ch.Path, res.Type, ch.Path, policyPath(pol))
					part.Findings = append(part.Findings, f)
				}
			case ResourceDeleted:
				f := base
				f.Status, f.Detail = StatusDeleted, "deleted outside Pulumi"
				f.Next = fmt.Sprintf("`cellctl up %s --refresh` recreates it", id)
				part.Findings = append(part.Findings, f)
			case ResourceNotChecked:
				f := base
				f.Status, f.Detail = StatusNotChecked, res.Reason
				f.Next = "fix what stops the read (permissions, throttling, the provider) and run " + again + " again"
				part.Findings = append(part.Findings, f)
			}
		}
	}
	return part
}

func policyPath(pol *Policy) string {
	if pol != nil && pol.File != "" {
		return pol.File
	}
	return "stacks/" + PolicyFile
}
