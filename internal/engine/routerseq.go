package engine

import (
	"context"

	"github.com/cellctl/cellctl/internal/fleet"
	"github.com/cellctl/cellctl/router/component"
)

// The router's create/update sequence. CloudFront refuses a continuous
// deployment policy on CreateDistribution ("Continuous deployment policy
// is not supported during distribution creation"), so a router whose state
// has no primary distribution yet is deployed in two passes of the same
// up, in the same workspace, under the same lock: the first renders the
// primary without its policy (the staging distribution and the policy are
// created too), the second renders it attached — an ordinary update. Every
// later up finds the primary in the state and renders it attached, so
// there is one program and one way to update the stack; which shape a run
// renders is decided here, from the state, never by the caller.

const distributionType = "aws:cloudfront/distribution:Distribution"

// primaryDeployed reports whether the router stack's state holds its
// primary distribution.
func (e *Engine) primaryDeployed(ctx context.Context) (bool, error) {
	d, err := e.deployed(ctx, fleet.RouterStack)
	if err != nil || d == nil {
		return false, err
	}
	want := component.PrimaryDistributionName(fleet.RouterStack)
	for _, r := range d.Resources {
		if r.Type == distributionType && urnName(r.URN) == want {
			return true, nil
		}
	}
	return false, nil
}

// withPolicy is f as one run of stack renders it: for the router, whether
// the primary's continuous deployment policy is attached.
func withPolicy(f *fleet.Fleet, stack string, attach bool) *fleet.Fleet {
	if stack != fleet.RouterStack || f.Router == nil || f.Router.AttachDeploymentPolicy == attach {
		return f
	}
	r := *f.Router
	r.AttachDeploymentPolicy = attach
	copied := *f
	copied.Router = &r
	return &copied
}

// attachNote is what the report says after the second pass.
const attachNote = "created the primary CloudFront distribution without its continuous deployment policy (CloudFront refuses one on create), then attached the policy in a second update"
