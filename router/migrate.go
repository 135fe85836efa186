package router

import (
	"fmt"
	"sort"

	"github.com/cellctl/cellctl/internal/diag"
)

// Migrating one tenant between cells, as table transitions.
//
// StartMigration pins the tenant "migrating" in the cell serving it now,
// with its target and write_mode reject_with_503: once the router serves
// that table on every edge, the tenant's writes are refused (503 with
// Retry-After) and its reads still come from the source, so its data can
// be copied without it changing. FinishMigration then serves it from the
// target; AbortMigration from the source again. Neither moves a bucket.

// StartMigration marks tenant migrating from the cell serving it to target.
func StartMigration(t *Table, tenant, target string) (*Transition, error) {
	if err := ValidTenant(tenant); err != nil {
		return nil, fmt.Errorf("cannot migrate: %w", err)
	}
	tc, ok := t.Cell(target)
	if !ok {
		return nil, fmt.Errorf("cannot migrate %q to %q: no such cell in the routing table (cells: %s)", tenant, target, diag.Quote(t.cellIDs))
	}
	if tc.State != CellActive {
		return nil, fmt.Errorf("cannot migrate %q to %q: the cell is %s; a migration goes to an active cell", tenant, target, tc.State)
	}
	r := t.Route(tenant)
	if o := r.Override; o != nil && o.State == OverrideMigrating {
		return nil, fmt.Errorf("tenant %q is already migrating from %q to %q; finish or abort that migration first", tenant, o.Cell, o.Target)
	}
	if r.Cell == target {
		return nil, fmt.Errorf("tenant %q is already served by %q", tenant, target)
	}
	s := t.Spec()
	s.Overrides = setOverride(s.Overrides, Override{Tenant: tenant, Cell: r.Cell, State: OverrideMigrating, Target: target, WriteMode: WriteRejectWith503})
	return overrideTransition(t, s, ActionMigrate, target, tenant)
}

// FinishMigration serves a migrating tenant from its target: the override
// is removed when the tenant's bucket is in the target anyway, else it
// pins the tenant there.
func FinishMigration(t *Table, tenant string) (*Transition, error) {
	o, err := migration(t, tenant, "finish")
	if err != nil {
		return nil, err
	}
	return settle(t, o, o.Target, ActionFinishMigration)
}

// AbortMigration serves a migrating tenant from its source again, as
// before the migration started.
func AbortMigration(t *Table, tenant string) (*Transition, error) {
	o, err := migration(t, tenant, "abort")
	if err != nil {
		return nil, err
	}
	return settle(t, o, o.Cell, ActionAbortMigration)
}

func migration(t *Table, tenant, verb string) (Override, error) {
	o, ok := t.Override(tenant)
	if !ok || o.State != OverrideMigrating {
		if r := t.Route(tenant); r.Valid && r.Cell != "" {
			// Said with where it is served: after --finish, an --abort
			// (the help's other ending) has nothing to abort, and moving
			// the tenant back is a migration of its own.
			return Override{}, fmt.Errorf("cannot %s the migration of %q: the tenant is not migrating, it is served by %q (a finished migration is undone by another: cellctl migrate %s --to CELL)", verb, tenant, r.Cell, tenant)
		}
		return Override{}, fmt.Errorf("cannot %s the migration of %q: the tenant is not migrating; start one with cellctl migrate TENANT --to CELL", verb, tenant)
	}
	return o, nil
}

// settle leaves the tenant served by cell, with no override when its
// bucket already goes there.
func settle(t *Table, o Override, cell string, action Action) (*Transition, error) {
	s := t.Spec()
	if t.CellOf(t.Route(o.Tenant).Bucket) == cell {
		s.Overrides = removeOverride(s.Overrides, o.Tenant)
	} else {
		s.Overrides = setOverride(s.Overrides, Override{Tenant: o.Tenant, Cell: cell, State: OverrideActive})
	}
	return overrideTransition(t, s, action, cell, o.Tenant)
}

func setOverride(list []Override, o Override) []Override {
	i := sort.Search(len(list), func(i int) bool { return list[i].Tenant >= o.Tenant })
	if i < len(list) && list[i].Tenant == o.Tenant {
		list[i] = o
		return list
	}
	list = append(list, Override{})
	copy(list[i+1:], list[i:])
	list[i] = o
	return list
}

func removeOverride(list []Override, tenant string) []Override {
	i := sort.Search(len(list), func(i int) bool { return list[i].Tenant >= tenant })
	if i < len(list) && list[i].Tenant == tenant {
		return append(list[:i], list[i+1:]...)
	}
	return list
}

// overrideTransition builds the next table from s (one version up) and a
// report in which no bucket moves.
func overrideTransition(from *Table, s Spec, action Action, cell, tenant string) (*Transition, error) {
	s.Version = from.Version() + 1
	to, err := New(s)
	if err != nil {
		// The checks above keep the table valid; this is a bug.
		return nil, fmt.Errorf("internal error: %s of %q produced an invalid table: %w", action, tenant, err)
	}
	load := from.TableLoad()
	st, err := newFleetState(to, load)
	if err != nil {
		return nil, err
	}
	before, err := newFleetState(from, load)
	if err != nil {
		return nil, err
	}
	tr := &Transition{
		Action: action, Cell: cell, Tenant: tenant, FromVersion: from.Version(), ToVersion: to.Version(), LoadSource: load.Source,
		Moves: []LoadMove{}, TenantsMoved: overriddenMoves(from, to), From: from, To: to,
	}
	for i, c := range st.spec.Cells {
		tr.Cells = append(tr.Cells, CellLoadChange{
			Cell: c.ID, FromState: c.State, ToState: c.State,
			FromBuckets: before.count[i], ToBuckets: st.count[i], FromLoad: before.load[i], ToLoad: st.load[i],
			Capacity: st.caps[i], CapacityDefault: st.capDefault[i],
			FromUsed: float64(before.load[i]) / float64(st.caps[i]), ToUsed: float64(st.load[i]) / float64(st.caps[i]),
		})
	}
	return tr, nil
}
