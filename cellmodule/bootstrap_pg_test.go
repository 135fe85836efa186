package cellmodule

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/pgtest"
)

// pgRun runs SQL on the local server's database db, as the role as (""
// the connecting superuser). Each sql is sent on its own (psql -c), so a
// statement runs alone, as the RDS Data API runs it.
type pgRun func(db, as string, sql ...string) (string, error)

// localPostgres is a psql runner for a real PostgreSQL server: the one
// CELLCTL_TEST_PGHOST names (a host or a socket directory; default the
// Debian socket directory), as the current OS user, which must be a
// superuser there (.ci/run starts Debian's cluster and creates that role).
// A statement runs as another role with SET SESSION AUTHORIZATION, which
// makes both the session and the current user that role: what logging in
// as it gives, without a password. Off CI a missing server skips the
// test; in CI it fails: a grant that PostgreSQL refuses must fail a test,
// not a customer's first cell.
func localPostgres(t *testing.T) pgRun {
	t.Helper()
	// One such test at a time on the server, whatever its package: the
	// roles it creates and drops are the server's, not the database's.
	srv := pgtest.Lock(t)
	host := srv.Host
	psql, err := exec.LookPath("psql")
	run := func(db, as string, sql ...string) (string, error) {
		args := srv.Args(db)
		if as != "" {
			args = append(args, "-c", "SET SESSION AUTHORIZATION "+as)
		}
		for _, s := range sql {
			args = append(args, "-c", s)
		}
		out, err := exec.Command(psql, args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if err == nil {
		_, err = run("postgres", "", "SELECT 1")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("a PostgreSQL server is required in CI (.ci/run installs and starts Debian's postgresql): %v", err)
		}
		t.Skipf("no PostgreSQL server reachable at %s (set CELLCTL_TEST_PGHOST): %v", host, err)
	}
	return run
}

// auroraLike makes, on the local server, what a new Aurora cluster
// starts with: the built-in rds_iam role, a master user that is not a
// superuser but may create roles and databases (rds_superuser's
// attributes), and the database app owned by it. Like Aurora PostgreSQL 13
// and 14 (and unlike 15), PUBLIC may create in schema public, so the
// bootstrap must revoke that itself. It returns a runner for app and
// drops everything again when the test ends.
func auroraLike(t *testing.T) (run pgRun, must func(as string, sql ...string) string) {
	t.Helper()
	run = localPostgres(t)
	su := func(db string, sql ...string) {
		t.Helper()
		if out, err := run(db, "", sql...); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(sql, "; "), err, out)
		}
	}
	reset := func() {
		su("postgres", "DROP DATABASE IF EXISTS "+DatabaseName,
			"DROP ROLE IF EXISTS "+DatabaseAppUser, "DROP ROLE IF EXISTS "+DatabaseMigratorUser, "DROP ROLE IF EXISTS "+DatabaseMasterUser)
	}
	reset()
	t.Cleanup(reset)
	su("postgres",
		"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rds_iam') THEN CREATE ROLE rds_iam; END IF; END $$",
		"CREATE ROLE "+DatabaseMasterUser+" LOGIN CREATEROLE CREATEDB NOSUPERUSER",
		"CREATE DATABASE "+DatabaseName+" OWNER "+DatabaseMasterUser)
	su(DatabaseName, "GRANT CREATE ON SCHEMA public TO PUBLIC")
	must = func(as string, sql ...string) string {
		t.Helper()
		out, err := run(DatabaseName, as, sql...)
		if err != nil {
			t.Fatalf("as %s: %s: %v\n%s", as, strings.Join(sql, "; "), err, out)
		}
		return out
	}
	return run, must
}

// bootstrap runs the statements as the master user, one call each, twice
// (a second run must change nothing and fail nothing).
func bootstrap(t *testing.T, run pgRun, migrations bool) {
	t.Helper()
	for round := 1; round <= 2; round++ {
		for _, st := range DatabaseBootstrapStatements(migrations) {
			if out, err := run(DatabaseName, DatabaseMasterUser, st); err != nil {
				t.Fatalf("run %d: PostgreSQL refused %q as the master user: %v\n%s", round, st, err, out)
			}
		}
	}
}

// Every statement is one statement: no top-level semicolon outside a
// dollar-quoted body (the Data API runs one statement per call).
func TestDatabaseBootstrapStatementsAreSingleStatements(t *testing.T) {
	body := regexp.MustCompile(`(?s)\$\$.*?\$\$`)
	for _, migrations := range []bool{false, true} {
		sts := DatabaseBootstrapStatements(migrations)
		for _, st := range sts {
			if strings.Contains(body.ReplaceAllString(st, ""), ";") {
				t.Errorf("migrations=%v: %q is more than one statement", migrations, st)
			}
			if strings.Contains(st, "PASSWORD") {
				t.Errorf("migrations=%v: %q sets a password", migrations, st)
			}
		}
		if got, want := DatabaseBootstrapSQL(migrations), strings.Join(sts, ";\n")+";"; got != want {
			t.Errorf("DatabaseBootstrapSQL(%v) is not the statements joined:\n%s", migrations, got)
		}
	}
	if joined := strings.Join(DatabaseBootstrapStatements(false), " "); strings.Contains(joined, DatabaseMigratorUser) {
		t.Errorf("a cell without migrations gets a migrator: %s", joined)
	}
}

// TestDatabaseBootstrapRunsOnPostgreSQL runs the cell's bootstrap (the
// dbBootstrapSql output, statement by statement) twice as an Aurora-like
// master user — not a superuser — and checks what each user got: the app
// logs in through rds_iam and connects; without migrations it creates its
// own tables, with migrations it reads and writes the migrator's tables
// but can create, alter and drop nothing.
func TestDatabaseBootstrapRunsOnPostgreSQL(t *testing.T) {
	for _, migrations := range []bool{false, true} {
		name := "without-migrations"
		if migrations {
			name = "with-migrations"
		}
		t.Run(name, func(t *testing.T) {
			run, must := auroraLike(t)
			bootstrap(t, run, migrations)
			checks := map[string]string{
				"pg_has_role('" + DatabaseAppUser + "', 'rds_iam', 'member')":                                "t",
				"(SELECT rolcanlogin FROM pg_roles WHERE rolname = '" + DatabaseAppUser + "')":               "t",
				"(SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = '" + DatabaseAppUser + "')": "f",
				"has_database_privilege('" + DatabaseAppUser + "', '" + DatabaseName + "', 'CONNECT')":       "t",
				"has_database_privilege('" + DatabaseAppUser + "', '" + DatabaseName + "', 'TEMPORARY')":     "t",
				"has_schema_privilege('" + DatabaseAppUser + "', 'public', 'USAGE')":                         "t",
				"has_schema_privilege('" + DatabaseAppUser + "', 'public', 'CREATE')":                        map[bool]string{false: "t", true: "f"}[migrations],
				"(SELECT count(*) FROM pg_roles WHERE rolname = '" + DatabaseMigratorUser + "')":             map[bool]string{false: "0", true: "1"}[migrations],
			}
			if migrations {
				checks["pg_has_role('"+DatabaseMigratorUser+"', 'rds_iam', 'member')"] = "t"
				checks["(SELECT rolsuper OR rolcreaterole OR rolcreatedb FROM pg_roles WHERE rolname = '"+DatabaseMigratorUser+"')"] = "f"
				checks["has_database_privilege('"+DatabaseMigratorUser+"', '"+DatabaseName+"', 'CONNECT')"] = "t"
				checks["has_schema_privilege('"+DatabaseMigratorUser+"', 'public', 'CREATE')"] = "t"
			}
			for expr, want := range checks {
				if got := must("", "SELECT "+expr); got != want {
					t.Errorf("%s = %q, want %q", expr, got, want)
				}
			}
			if !migrations {
				// The app owns its schema: it creates, uses and drops its tables.
				must(DatabaseAppUser, "CREATE TABLE bootstrap_probe (id serial PRIMARY KEY)", "INSERT INTO bootstrap_probe DEFAULT VALUES", "DROP TABLE bootstrap_probe")
				return
			}
			// The migrator owns the schema; the app uses what it creates.
			must(DatabaseMigratorUser, "CREATE TABLE bootstrap_probe (id serial PRIMARY KEY, v text)")
			must(DatabaseAppUser, "INSERT INTO bootstrap_probe (v) VALUES ('a')", "UPDATE bootstrap_probe SET v = 'b'",
				"DELETE FROM bootstrap_probe WHERE v = 'x'")
			if got := must(DatabaseAppUser, "SELECT v FROM bootstrap_probe"); got != "b" {
				t.Errorf("the app reads %q", got)
			}
			for sql, want := range map[string]string{
				"CREATE TABLE app_made (id int)":               "permission denied for schema public",
				"DROP TABLE bootstrap_probe":                   "must be owner of table bootstrap_probe",
				"ALTER TABLE bootstrap_probe ADD COLUMN w int": "must be owner of table bootstrap_probe",
				"CREATE TEMPORARY TABLE scratch (id int)":      "",
				"TRUNCATE bootstrap_probe":                     "permission denied for table bootstrap_probe",
			} {
				out, err := run(DatabaseName, DatabaseAppUser, sql)
				switch {
				case want == "" && err != nil:
					t.Errorf("the app's %q refused: %v %s", sql, err, out)
				case want != "" && (err == nil || !strings.Contains(out, want)):
					t.Errorf("the app's %q: %v %q, want PostgreSQL's %q", sql, err, out, want)
				}
			}
			// Turning migrations on for a cell whose app had CREATE takes it away.
			must("", "GRANT CREATE ON SCHEMA public TO "+DatabaseAppUser)
			bootstrap(t, run, true)
			if got := must("", "SELECT has_schema_privilege('"+DatabaseAppUser+"', 'public', 'CREATE')"); got != "f" {
				t.Errorf("after a re-bootstrap with migrations the app may still create: %s", got)
			}
		})
	}
}
