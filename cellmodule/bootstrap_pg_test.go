package cellmodule

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// localPostgres is a psql runner for a real PostgreSQL server: the one
// CELLCTL_TEST_PGHOST names (a host or a socket directory; default the
// Debian socket directory), as the current OS user, which must be a
// superuser there (.ci/run starts Debian's cluster and creates that role).
// Off CI a missing server skips the test; in CI it fails: a grant that
// PostgreSQL refuses must fail a test, not a customer's first cell.
func localPostgres(t *testing.T) func(db, sql string) (string, error) {
	t.Helper()
	host := os.Getenv("CELLCTL_TEST_PGHOST")
	if host == "" {
		host = "/var/run/postgresql"
	}
	psql, err := exec.LookPath("psql")
	run := func(db, sql string) (string, error) {
		out, err := exec.Command(psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", host, "-d", db, "-c", sql).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if err == nil {
		_, err = run("postgres", "SELECT 1")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("a PostgreSQL server is required in CI (.ci/run installs and starts Debian's postgresql): %v", err)
		}
		t.Skipf("no PostgreSQL server reachable at %s (set CELLCTL_TEST_PGHOST): %v", host, err)
	}
	return run
}

// TestDatabaseBootstrapSQLRunsOnPostgreSQL runs the cell's bootstrap SQL
// (the dbBootstrapSql output) as a superuser on a real PostgreSQL — an
// Aurora cluster's master user is not a superuser, but has rds_iam to grant
// and owns the database — and checks that the app user got exactly what it
// needs: log in through rds_iam, connect, and use and create in schema
// public (which PostgreSQL 15 no longer grants to everyone).
func TestDatabaseBootstrapSQLRunsOnPostgreSQL(t *testing.T) {
	run := localPostgres(t)
	must := func(db, sql string) string {
		t.Helper()
		out, err := run(db, sql)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sql, err, out)
		}
		return out
	}
	reset := func() {
		must("postgres", "DROP DATABASE IF EXISTS "+DatabaseName)
		must("postgres", "DROP ROLE IF EXISTS "+DatabaseAppUser)
	}
	reset()
	t.Cleanup(reset)
	// Aurora PostgreSQL has the rds_iam role built in; a plain server
	// needs it made.
	must("postgres", "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rds_iam') THEN CREATE ROLE rds_iam; END IF; END $$")
	must("postgres", "CREATE DATABASE "+DatabaseName)

	if out, err := run(DatabaseName, DatabaseBootstrapSQL()); err != nil {
		t.Fatalf("PostgreSQL refused the bootstrap SQL: %v\n%s", err, out)
	}
	checks := map[string]string{
		"pg_has_role('" + DatabaseAppUser + "', 'rds_iam', 'member')":                          "t",
		"(SELECT rolcanlogin FROM pg_roles WHERE rolname = '" + DatabaseAppUser + "')":         "t",
		"(SELECT rolsuper FROM pg_roles WHERE rolname = '" + DatabaseAppUser + "')":            "f",
		"has_database_privilege('" + DatabaseAppUser + "', '" + DatabaseName + "', 'CONNECT')": "t",
		"has_schema_privilege('" + DatabaseAppUser + "', 'public', 'USAGE')":                   "t",
		"has_schema_privilege('" + DatabaseAppUser + "', 'public', 'CREATE')":                  "t",
	}
	for expr, want := range checks {
		if got := must(DatabaseName, "SELECT "+expr); got != want {
			t.Errorf("%s = %q, want %q", expr, got, want)
		}
	}
	// The app user really can create and use a table in its schema.
	must(DatabaseName, "SET ROLE "+DatabaseAppUser+"; CREATE TABLE bootstrap_probe (id int); INSERT INTO bootstrap_probe VALUES (1); DROP TABLE bootstrap_probe")
}
