package quota

import (
	"context"
	"fmt"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/internal/plan"
	"github.com/cellctl/cellctl/router/component"
)

// edgeRegion is where the router's edge function lives (Lambda@Edge
// functions are created in us-east-1): its code storage row is read there.
const edgeRegion = component.EdgeRegion

// routerDemand is what the router's next change adds to the quotas its
// edge function consumes: one published version of the package.
type routerDemand struct {
	versionBytes int64
	err          error
}

// routerCost renders the router offline (as `cellctl plan` does) and sizes
// its edge function's package: the version its next publish adds.
func routerCost(ctx context.Context, o Options) *routerDemand {
	rep, err := plan.Render(ctx, o.Fleet, plan.Options{Stacks: []string{fleet.RouterStack}, Parallel: o.Parallel})
	if err != nil {
		return &routerDemand{err: fmt.Errorf("rendering the router: %v", err)}
	}
	for _, s := range rep.Stacks {
		if s.Kind == plan.KindRouter {
			n, err := s.EdgeVersionBytes()
			return &routerDemand{versionBytes: n, err: err}
		}
	}
	return &routerDemand{err: fmt.Errorf("the render has no router stack")}
}

func mib(b int64) string { return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20)) }
