package deploy

import (
	"context"
	"fmt"

	"github.com/cellctl/cellctl/internal/adapters/cellspec"
	"github.com/cellctl/cellctl/waves/executor"
)

// bootstrapper is the executor's Bootstrapper over env (nil when env
// cannot bootstrap): the database users of a cell that runs migrations
// are put in place where its change needs them, as `up` puts them in
// place after each cell's up. Without it, a rollout that turned
// migrations on left the database without the migrator's user, and the
// next rollout's migration failed with role "cellctl_migrator" does not
// exist.
func (env *Env) bootstrapper() executor.Bootstrapper {
	if env.Bootstrap == nil || env.Outputs == nil {
		return nil
	}
	return &bootstrapper{env: env}
}

type bootstrapper struct{ env *Env }

// Plan: an update that turns migrations on bootstraps after it — the
// stack's bootstrap (`dbBootstrapSql`) has the migrator's user only once
// the update made it a stack that runs migrations (a rollout that turns
// them on keeps the image, so it migrates nothing itself). A change of a
// cell that already runs migrations bootstraps before its migration, when
// one runs: the users are idempotent, and a cell whose migrations were
// turned on by an older cellctl, or by a run that died between its update
// and its bootstrap, never got them.
func (b *bootstrapper) Plan(req executor.MigrationRequest) executor.BootstrapPlan {
	if req.Rollback {
		return executor.BootstrapPlan{}
	}
	to, err := cellspec.ToSpec(req.To)
	if err != nil || !to.RunsMigrations() {
		// An unreadable configuration: the update itself refuses it.
		return executor.BootstrapPlan{}
	}
	if from, err := cellspec.ToSpec(req.From); err == nil && from.RunsMigrations() {
		return executor.BootstrapPlan{Why: "the migration logs in as the database user cellctl_migrator"}
	}
	return executor.BootstrapPlan{AfterUpdate: true,
		Why: "cells:migrationCommand turns migrations on: the database user cellctl_migrator and its grants, for the next migration"}
}

// Bootstrap runs the users and grants of the cell's stack as deployed.
func (b *bootstrapper) Bootstrap(ctx context.Context, cell string) (string, error) {
	c := b.env.Fleet.Cell(cell)
	if c == nil {
		return "", fmt.Errorf("%s is not a cell of the fleet", cell)
	}
	outs, err := b.env.Outputs(ctx, cell)
	if err != nil {
		return "", fmt.Errorf("reading %s's outputs: %w", cell, err)
	}
	if len(outs) == 0 {
		return "", fmt.Errorf("%s is not deployed", cell)
	}
	return b.env.Bootstrap(ctx, c, outs)
}
