package drift

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/desired"
	"github.com/cellctl/cellctl/internal/fleet"
)

// Options are the inputs of one audit.
type Options struct {
	// Desired is the fleet's desired state (internal/desired: the
	// repository plus what rollouts shipped and kept): what skew and
	// behind compare against, schema versions included. Nil: Fleet as
	// given, and schemas are not compared.
	Desired *desired.State
	// Fleet is the fleet audited when Desired is nil.
	Fleet  *fleet.Fleet
	Policy *Policy
	// Cells to audit (nil: every cell of the fleet).
	Cells []string
	// Checks to run (nil: all three); FailOn the kinds whose findings fail
	// the audit (nil: the checks run).
	Checks []Kind
	FailOn []Kind
	// Parallel bounds the cells read at once (behind, cloud).
	Parallel int

	Secrets  SecretReader
	Deployed DeployedReader
	Cloud    CloudReader
}

// Run audits the fleet: the checks asked for, joined into one report.
func Run(ctx context.Context, o Options) (*Report, error) {
	f := o.Fleet
	if o.Desired != nil {
		f = o.Desired.Fleet
	}
	if f == nil {
		return nil, errors.New("drift: no fleet")
	}
	for _, c := range o.Cells {
		if f.Cell(c) == nil {
			return nil, fmt.Errorf("unknown cell %q (cells of this fleet: %s)", c, strings.Join(f.CellIDs(), ", "))
		}
	}
	checks := o.Checks
	if len(checks) == 0 {
		checks = Kinds
	}
	failOn := o.FailOn
	if failOn == nil {
		failOn = checks
	}
	var ids []string
	for _, c := range selected(f, o.Cells) {
		ids = append(ids, c.ID)
	}
	var parts []Part
	if slices.Contains(checks, KindSkew) {
		parts = append(parts, Skew(ctx, f, o.Policy, SkewOptions{Cells: o.Cells, Secrets: o.Secrets, Desired: o.Desired}))
	}
	if slices.Contains(checks, KindBehind) {
		if o.Deployed == nil {
			return nil, errors.New("drift: --behind needs a reader of the deployed stacks")
		}
		part := Behind(ctx, f, o.Cells, o.Deployed, o.Parallel)
		if o.Desired != nil {
			fs, notes := SchemaBehind(o.Desired, ids)
			part.Findings = append(part.Findings, fs...)
			part.Notes = append(part.Notes, notes...)
		}
		parts = append(parts, part)
	}
	if slices.Contains(checks, KindCloud) {
		if o.Cloud == nil {
			return nil, errors.New("drift: --cloud needs a refresh reader")
		}
		parts = append(parts, Cloud(ctx, ids, o.Cloud, o.Policy, o.Parallel))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	missingState(f, parts)
	// Keep the check order of Kinds whatever order the flags gave.
	var ordered []Kind
	for _, k := range Kinds {
		if slices.Contains(checks, k) {
			ordered = append(ordered, k)
		}
	}
	return Build(ordered, failOn, ids, parts...), nil
}

// missingState turns "not deployed" into a finding for a cell the routing
// table sends tenants to: a routed cell without state is one whose state
// was lost (its resources are likely live), and advising `cellctl up`
// would create a second copy beside them. Fail closed: it is exit 2 with
// how to recover, never "nothing to compare".
func missingState(f *fleet.Fleet, parts []Part) {
	routed := routedCells(f)
	finding := func(kind Kind, id string) Finding {
		return Finding{Kind: kind, Cell: id, Status: StatusMissingState,
			Detail: fmt.Sprintf("the routing table sends %d bucket(s) to %s but the backend holds no state for its stack: its resources are likely live", routed[id], id),
			Next: fmt.Sprintf("restore the stack's state from a backup (`pulumi stack import --stack %s --file <backup>`; a file backend keeps copies under .pulumi/backups and .pulumi/history) "+
				"or import the live resources into it (`pulumi import`); do not run `cellctl up %s` before: it would create the cell again beside the live one", id, id)}
	}
	for i := range parts {
		p := &parts[i]
		kept := p.Findings[:0]
		for _, fd := range p.Findings {
			if fd.Status == StatusNotDeployed && routed[fd.Cell] > 0 {
				fd = finding(fd.Kind, fd.Cell)
			}
			kept = append(kept, fd)
		}
		p.Findings = kept
		for _, id := range p.NoState {
			if routed[id] > 0 {
				p.Findings = append(p.Findings, finding(KindCloud, id))
			}
		}
	}
}

// routedCells counts the buckets the routing table gives each cell.
func routedCells(f *fleet.Fleet) map[string]int {
	out := map[string]int{}
	if f.Routing == nil {
		return out
	}
	for b := 0; b < f.Routing.Buckets(); b++ {
		out[f.Routing.CellOf(b)]++
	}
	return out
}
