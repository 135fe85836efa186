package router

import "testing"

func TestMigrateFinishAndAbort(t *testing.T) {
	demo := demoTable(t) // acme pinned to cell-b (its bucket is in cell-c); globex a → c
	plain := "tenant-0042"
	from := demo.Route(plain).Cell

	start, err := StartMigration(demo, plain, "cell-b")
	if err != nil {
		t.Fatal(err)
	}
	o, _ := start.To.Override(plain)
	if o != (Override{Tenant: plain, Cell: from, State: OverrideMigrating, Target: "cell-b", WriteMode: WriteRejectWith503}) {
		t.Errorf("override = %+v", o)
	}
	r := start.To.Route(plain)
	if r.Cell != from || !r.RejectsWrites() {
		t.Errorf("while migrating: served by %s, rejects writes %v; want %s, true", r.Cell, r.RejectsWrites(), from)
	}
	if start.MovedBuckets != 0 || len(start.TenantsMoved) != 0 || start.ToVersion != demo.Version()+1 || start.Action != ActionMigrate {
		t.Errorf("start report: %+v", start)
	}

	fin, err := FinishMigration(start.To, plain)
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fin.To.Override(plain); o != (Override{Tenant: plain, Cell: "cell-b", State: OverrideActive}) {
		t.Errorf("finished: %+v, want pinned to cell-b", o)
	}
	if len(fin.TenantsMoved) != 1 || fin.TenantsMoved[0] != (TenantMove{Tenant: plain, From: from, To: "cell-b"}) || fin.MovedBuckets != 0 {
		t.Errorf("finish report: %+v", fin.TenantsMoved)
	}

	// Aborting a tenant routed by its bucket leaves it with no override:
	// the table is as before, one version up.
	ab, err := AbortMigration(start.To, plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ab.To.Override(plain); ok || len(ab.TenantsMoved) != 0 {
		t.Errorf("aborted: override left, moves %+v", ab.TenantsMoved)
	}
	s := ab.To.Spec()
	s.Version = demo.Version()
	if !mustNew(t, s).Equal(demo) {
		t.Errorf("abort does not restore the table")
	}

	// Finishing into the cell of the tenant's bucket drops the override;
	// aborting a pinned tenant's migration keeps it pinned at the source.
	acme, err := StartMigration(demo, "acme", "cell-c")
	if err != nil {
		t.Fatal(err)
	}
	fin, err = FinishMigration(acme.To, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fin.To.Override("acme"); ok || fin.To.Route("acme").Cell != "cell-c" {
		t.Errorf("acme finished into its bucket's cell keeps an override")
	}
	ab, err = AbortMigration(acme.To, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ab.To.Override("acme"); o != (Override{Tenant: "acme", Cell: "cell-b", State: OverrideActive}) {
		t.Errorf("acme aborted: %+v", o)
	}
	// The demo's globex finishes into cell-c.
	g, err := FinishMigration(demo, "globex")
	if err != nil || g.To.Route("globex").Cell != "cell-c" || g.Action != ActionFinishMigration {
		t.Errorf("globex: %v", err)
	}
}

func TestMigrateRefusals(t *testing.T) {
	demo := demoTable(t)
	s := demo.Spec()
	s.Cells[3].State = CellDraining
	draining := mustNew(t, s)
	checkRefusals(t, []refusal{
		{"invalid tenant", func() error { return errOf(StartMigration(demo, "a b", "cell-b")) },
			`cannot migrate: tenant id "a b" contains U+0020 (space) at byte 1; allowed: 1-128 bytes of UTF-8 without whitespace, control or invisible formatting characters`},
		{"unknown target", func() error { return errOf(StartMigration(demo, "acme", "cell-q")) },
			`cannot migrate "acme" to "cell-q": no such cell in the routing table (cells: "cell-a", "cell-b", "cell-c" or "cell-d")`},
		{"draining target", func() error { return errOf(StartMigration(draining, "acme", "cell-d")) },
			`cannot migrate "acme" to "cell-d": the cell is draining; a migration goes to an active cell`},
		{"already migrating", func() error { return errOf(StartMigration(demo, "globex", "cell-d")) },
			`tenant "globex" is already migrating from "cell-a" to "cell-c"; finish or abort that migration first`},
		{"already there", func() error { return errOf(StartMigration(demo, "acme", "cell-b")) },
			`tenant "acme" is already served by "cell-b"`},
		{"finish without migration", func() error { return errOf(FinishMigration(demo, "acme")) },
			`cannot finish the migration of "acme": the tenant is not migrating, it is served by "cell-b" (a finished migration is undone by another: cellctl migrate acme --to CELL)`},
		// --abort after --finish (migrate's help lists both): nothing to
		// abort, said with where the tenant now is and how to move it back.
		{"abort after finish", func() error {
			tr, err := FinishMigration(demo, "globex")
			if err != nil {
				return err
			}
			return errOf(AbortMigration(tr.To, "globex"))
		}, `cannot abort the migration of "globex": the tenant is not migrating, it is served by "cell-c" (a finished migration is undone by another: cellctl migrate globex --to CELL)`},
	})
}
