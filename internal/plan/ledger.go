package plan

import (
	"path/filepath"
	"strings"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/isolation"
	"github.com/cellctl/cellctl/router"
)

// Whole says whether the report rendered every stack of the fleet: the
// shared-parts ledger needs every cell (a part two cells share is
// invisible in a render of one) and the router.
func (r *Report) Whole(f *fleet.Fleet) bool {
	have := map[string]bool{}
	for _, s := range r.Stacks {
		have[s.Name] = true
	}
	for _, n := range f.StackNames() {
		if !have[n] {
			return false
		}
	}
	return true
}

// Ledger derives the shared-parts ledger from a render of the whole fleet
// and judges it against the fleet's declaration (stacks/shared.yaml).
// backend is the Pulumi backend URL every stack's state lives in.
func (r *Report) Ledger(f *fleet.Fleet, decl *isolation.Declarations, backend string) (*isolation.Ledger, error) {
	in := isolation.LedgerInput{
		Secrets:            map[string]string{PlaceholderSecret: f.ConfigKey(fleet.OriginVerifyKey)},
		PlaceholderAccount: Account,
		Backend:            displayBackend(backend, f.Dir),
		SecretsProviders:   map[string]string{},
	}
	for _, s := range r.Stacks {
		ls := isolation.LedgerStack{Name: s.Name, Region: s.Region, Resources: s.recorded}
		switch s.Kind {
		case KindCell:
			ls.Cell = s.Cell
			in.Cells = append(in.Cells, ls)
			if c := f.Cell(s.Cell); c != nil {
				in.SecretsProviders[s.Name] = isolation.StackSecretsProvider(f.Dir, c.File)
			}
		case KindRouter:
			in.Router = &ls
		}
	}
	if f.Routing != nil {
		shares, err := tenantShares(f.Routing)
		if err != nil {
			return nil, err
		}
		in.Shares = shares
		in.Routed = f.Routing.CellIDs()
	}
	return isolation.Judge(isolation.DeriveLedger(in), decl, len(in.Cells)), nil
}

// tenantShares is each routed cell's share of the tenants: its buckets
// over the table's, and the tenants overrides pin to it (the routing
// table's own capacity report counts both).
func tenantShares(t *router.Table) (map[string]isolation.TenantShare, error) {
	rep, err := router.Capacity(t, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]isolation.TenantShare{}
	for _, c := range rep.Cells {
		out[c.Cell] = isolation.TenantShare{Share: c.TenantShare, Pinned: c.Pinned}
	}
	return out, nil
}

// displayBackend shows a file backend inside the fleet directory relative
// to it, so reports read the same on every checkout.
func displayBackend(url, dir string) string {
	dirs := []string{dir}
	if abs, err := filepath.Abs(dir); err == nil {
		dirs = append(dirs, abs)
	}
	for _, d := range dirs {
		if rest, ok := strings.CutPrefix(url, "file://"+filepath.ToSlash(filepath.Clean(d))+"/"); ok {
			return "file://./" + rest
		}
	}
	return url
}
