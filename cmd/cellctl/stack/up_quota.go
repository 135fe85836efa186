package stack

import (
	"context"
	"fmt"

	"github.com/cellctl/cellctl/cmd/cellctl/cmdutil"
	quotacmd "github.com/cellctl/cellctl/cmd/cellctl/quota"
	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/quota"
)

// quotaCheckOf is up's quota preflight over the factory's cloud: the
// same readers and verdict as `cellctl quota`, for the new cells only,
// and the hosted zones the new cells and a new router write records in.
func quotaCheckOf(f *cmdutil.Factory) func(ctx context.Context, fl *fleet.Fleet, cells []string) error {
	target := quotacmd.TargetFunc(f)
	return func(ctx context.Context, fl *fleet.Fleet, cells []string) error {
		targets, err := quotacmd.Targets(ctx, target)
		if err != nil {
			return fmt.Errorf("the quota check before creating %v cannot reach AWS, nothing was created: %w (rerun with --skip-quota-check to create anyway)", cells, err)
		}
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
			fmt.Fprintln(f.IO.ErrOut, "quota:", n)
		}
		return err
	}
}
