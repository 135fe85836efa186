package drift

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cellctl/cellctl/internal/fleet"
)

// Options are the inputs of one audit.
type Options struct {
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
		parts = append(parts, Skew(ctx, f, o.Policy, SkewOptions{Cells: o.Cells, Secrets: o.Secrets}))
	}
	if slices.Contains(checks, KindBehind) {
		if o.Deployed == nil {
			return nil, errors.New("drift: --behind needs a reader of the deployed stacks")
		}
		parts = append(parts, Behind(ctx, f, o.Cells, o.Deployed, o.Parallel))
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
	// Keep the check order of Kinds whatever order the flags gave.
	var ordered []Kind
	for _, k := range Kinds {
		if slices.Contains(checks, k) {
			ordered = append(ordered, k)
		}
	}
	return Build(ordered, failOn, ids, parts...), nil
}
