package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/cellctl/cellctl/router"
)

// MigrateOptions select a migration step: start one (To), or settle the
// tenant's migration (Finish or Abort). Exactly one is set.
type MigrateOptions struct {
	Tenant string
	To     string
	Finish bool
	Abort  bool
	DryRun bool
}

// Migrate applies one migration step to the table and publishes it. Once
// the start is published, every edge refuses the tenant's writes with 503
// and Retry-After and reads are still served by the source: the window the
// data copy runs in (docs/LIFECYCLE.md, "Data-copy hook points").
func Migrate(ctx context.Context, env *Env, o MigrateOptions) (*Report, error) {
	n := 0
	for _, set := range []bool{o.To != "", o.Finish, o.Abort} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, errors.New("migrate needs exactly one of --to CELL (start), --finish or --abort")
	}
	fl, t, err := loadTable(env)
	if err != nil {
		return nil, err
	}
	var tr *router.Transition
	var next string
	switch {
	case o.To != "":
		tr, err = router.StartMigration(t, o.Tenant, o.To)
		next = fmt.Sprintf("to continue, run `cellctl up router`; to undo, `cellctl migrate %s --abort`", o.Tenant)
	case o.Finish:
		tr, err = router.FinishMigration(t, o.Tenant)
		next = fmt.Sprintf("to continue, run `cellctl up router`; the tenant's writes stay refused until the router serves version %d", t.Version()+1)
	default:
		tr, err = router.AbortMigration(t, o.Tenant)
		next = fmt.Sprintf("to continue, run `cellctl up router`; the tenant's writes stay refused until the router serves version %d", t.Version()+1)
	}
	if err != nil {
		return nil, err
	}
	return single(ctx, env, fl, tr, o.DryRun, next)
}
