package deploy

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router"
)

// checkTable guards the router step: before it ships anything it re-reads
// stacks/routing.json and the deployed router's tableVersion output. The
// router step ships the table this deploy loaded at its start; it refuses
// when the file has changed since (a table publish went ahead meanwhile —
// the fleet lock keeps drain, undrain, migrate, cell add and retire out
// while a rollout holds the fleet, but an emergency override or an edit
// in another checkout does not wait), and when the deployed router
// serves a newer table than that (shipping would roll it back).
func checkTable(ctx context.Context, env *Env) error {
	fl := env.Fleet
	if fl.Routing == nil {
		return nil
	}
	path := filepath.Join(fl.Dir, fl.StackDir, fleet.RoutingFile)
	shipped := fl.Routing.Version()
	now, err := router.Load(path)
	if err != nil {
		return fmt.Errorf("router step: re-reading the routing table before shipping it: %w; nothing was shipped to the router", err)
	}
	if now.Version() != shipped {
		return fmt.Errorf("router step: %s is now version %d, but this deploy read version %d when it started (a table change was published meanwhile); "+
			"shipping would put the old table on the edge, so nothing was shipped to the router: rerun the same deploy, which continues this rollout with the current table",
			filepath.Join(fl.StackDir, fleet.RoutingFile), now.Version(), shipped)
	}
	outs, err := env.Outputs(ctx, fleet.RouterStack)
	if err != nil {
		return fmt.Errorf("router step: cannot read the deployed router's tableVersion output to check the table it serves: %w; nothing was shipped to the router", err)
	}
	if len(outs) == 0 {
		return nil // never deployed: the repository's table is the base
	}
	v, ok := outs["tableVersion"].(float64)
	if !ok || v != math.Trunc(v) || v < 0 {
		return fmt.Errorf("router step: the deployed router's tableVersion output is %v, not a version number, so the table it serves is unknown; "+
			"nothing was shipped to the router: run `cellctl up --router`, then rerun the deploy", outs["tableVersion"])
	}
	if int64(v) > shipped {
		return fmt.Errorf("router step: the deployed router serves routing table version %d, newer than %s (version %d): shipping would roll that table back, "+
			"so nothing was shipped to the router: bring the repository up to date (pull the commit that published version %d), then rerun the same deploy",
			int64(v), filepath.Join(fl.StackDir, fleet.RoutingFile), shipped, int64(v))
	}
	return nil
}
