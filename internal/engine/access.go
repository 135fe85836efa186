package engine

import (
	"context"

	"github.com/cellctl/cellctl/internal/fleet"
)

// CheckAccess proves every account stacks live in can be reached before
// any of them runs (cloud.Bundle.CheckAccess; apply.AccessChecker): the
// provider would fail a stack whose role cannot be assumed too, but only
// once its run started, alongside the other stacks of the fan-out.
func (e *Engine) CheckAccess(ctx context.Context, fl *fleet.Fleet, stacks []string) error {
	return e.cloud.CheckAccess(ctx, fl, stacks)
}
