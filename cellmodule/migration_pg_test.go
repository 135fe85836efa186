package cellmodule

import (
	"os"
	"strings"
	"testing"
)

func readMigration(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/migrations/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSampleMigrationsRunAsTheMigrator runs testdata/migrations on a
// bootstrapped Aurora-like database as cellctl_migrator, as the cell's
// migration task would: the broken one fails with PostgreSQL's own error
// and leaves nothing behind (one transaction); the good one creates the
// table, which the app then uses but cannot change.
func TestSampleMigrationsRunAsTheMigrator(t *testing.T) {
	run, must := auroraLike(t)
	bootstrap(t, run, true)

	// One psql -c string is one transaction: all of the file or none.
	out, err := run(DatabaseName, DatabaseMigratorUser, readMigration(t, "0002_bad.sql"))
	if err == nil || !strings.Contains(out, `column "region" does not exist`) {
		t.Fatalf("0002_bad.sql: %v %q, want PostgreSQL's column \"region\" does not exist", err, out)
	}
	if got := must("", "SELECT to_regclass('public.orders') IS NULL"); got != "t" {
		t.Fatalf("the failed migration left its table behind")
	}

	good := readMigration(t, "0002_add_orders.sql")
	must(DatabaseMigratorUser, good)
	if got := must("", "SELECT tableowner FROM pg_tables WHERE tablename = 'orders'"); got != DatabaseMigratorUser {
		t.Errorf("orders is owned by %q", got)
	}
	must(DatabaseAppUser,
		"INSERT INTO orders (tenant_id, total_cents) VALUES ('t-1', 1250), ('t-2', 99)",
		"UPDATE orders SET total_cents = 1300 WHERE tenant_id = 't-1'",
		"DELETE FROM orders WHERE tenant_id = 't-2'")
	if got := must(DatabaseAppUser, "SELECT tenant_id || ':' || total_cents FROM orders"); got != "t-1:1300" {
		t.Errorf("the app reads %q", got)
	}
	for sql, want := range map[string]string{
		"DROP TABLE orders":                         "must be owner of table orders",
		"DROP INDEX orders_tenant_created_idx":      "must be owner of index orders_tenant_created_idx",
		"ALTER TABLE orders ADD COLUMN region text": "must be owner of table orders",
	} {
		if out, err := run(DatabaseName, DatabaseAppUser, sql); err == nil || !strings.Contains(out, want) {
			t.Errorf("the app's %q: %v %q, want %q", sql, err, out, want)
		}
	}
	// Run again, the migration meets its own table: a migration tool
	// records what it applied so it never does this.
	if out, err := run(DatabaseName, DatabaseMigratorUser, good); err == nil || !strings.Contains(out, `relation "orders" already exists`) {
		t.Errorf("0002 twice: %v %q", err, out)
	}
}
