package cmdutil

import (
	"context"
	"fmt"

	"github.com/cellctl/cellctl/internal/awsapi"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/quota"
)

// QuotaCheck is the quota preflight of every command that creates cells
// (up, cell add) over the factory's cloud: the same readers and verdict as
// `cellctl quota`, for the new cells only, and the hosted zones the new
// cells and a new router write records in. Its error stops the run before
// anything is created.
func (f *Factory) QuotaCheck(ctx context.Context, fl *fleet.Fleet, cells []string) error {
	b, err := f.Cloud()
	if err != nil {
		return err
	}
	probe, err := b.Target(ctx, quota.AccountRegion)
	if err != nil {
		return fmt.Errorf("the quota check before creating %v cannot reach AWS, nothing was created: %w (rerun with --skip-quota-check to create anyway)", cells, err)
	}
	// Each account is read with its own access (the role its cells'
	// stacks assume): quotas stop at the account.
	targets := func(a fleet.Access) awsapi.Target { return b.AsAccess(probe, a) }
	// The router's stack among the new ones: only its hosted zones are
	// read (a router costs no per-region quota).
	o := quota.Options{Fleet: fl, Target: targets, Parallel: f.Global.Parallel}
	for _, c := range cells {
		if c == fleet.RouterStack {
			o.NewRouter = true
		} else {
			o.NewCells = append(o.NewCells, c)
		}
	}
	notes, err := quota.Preflight(ctx, o)
	for _, n := range notes {
		fmt.Fprintln(f.IO.ErrLines(), "quota:", n)
	}
	return err
}
