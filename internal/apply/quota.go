package apply

import (
	"context"
	"errors"
	"fmt"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/stackrun"
)

// quotaPreflight runs env.QuotaCheck with the selected cells (and the
// router) that were never deployed, before anything is created: a new cell is where quota
// runs out (a VPC, Elastic IPs, a DB cluster at once), and a refusal now
// beats a cell half created when the fifth Elastic IP is refused.
func quotaPreflight(ctx context.Context, env *Env, eng Engine, names []string) error {
	var fresh []string
	r, canTell := eng.(DeployedReader)
	for _, n := range names {
		// The router is checked when new too: its viewer records go in a
		// zone that must hold their names.
		if env.Fleet.Cell(n) == nil && n != fleet.RouterStack {
			continue
		}
		if !canTell {
			// Fail closed: a cell not known to exist is checked as new.
			fresh = append(fresh, n)
			continue
		}
		outs, err := r.DeployedOutputs(ctx, n)
		switch {
		case errors.Is(err, stackrun.ErrNotDeployed), err == nil && neverCompleted(outs):
			fresh = append(fresh, n)
		case err != nil:
			return fmt.Errorf("%s: cannot tell whether the cell exists before the quota check, nothing was changed: %w", n, err)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	return env.QuotaCheck(ctx, fresh)
}
