package awsapi

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/rdsdata"
	"github.com/aws/aws-sdk-go-v2/service/rdsdata/types"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/pgtest"
	"github.com/cellctl/cellctl/internal/sim/simtest"
	"github.com/cellctl/cellctl/internal/sim/store"
)

// realPostgres points the simulator at the PostgreSQL server
// CELLCTL_TEST_PGHOST names (default the Debian socket directory, as
// cellmodule's bootstrap test): skipped off CI without one, failed in CI.
// The cluster's database and the roles the test makes are dropped after.
func realPostgres(t *testing.T, roles ...string) func(sql string) string {
	t.Helper()
	// One such test at a time on the server (pgtest): the roles are the
	// server's, shared with cellmodule's and the e2e tests'.
	srv := pgtest.Lock(t)
	host := srv.Host
	pg := &store.PG{Host: srv.Host, Port: srv.Port, User: srv.User}
	args := func(db string) []string {
		a := []string{"-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", pg.Host, "-d", db}
		if pg.Port != "" {
			a = append(a, "-p", pg.Port)
		}
		if pg.User != "" {
			a = append(a, "-U", pg.User)
		}
		return a
	}
	run := func(db, sql string) (string, error) {
		out, err := exec.Command("psql", append(args(db), "-c", sql)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if _, err := run("postgres", "SELECT 1"); err != nil {
		t.Fatalf("the PostgreSQL server at %s: %v", host, err)
	}
	t.Setenv(store.PGHostEnv, host)
	db := store.SimDatabase("cellctl-a-db")
	cleanup := func() {
		run("postgres", "DROP DATABASE IF EXISTS "+db)
		for _, r := range roles {
			run("postgres", "DROP ROLE IF EXISTS "+r)
		}
	}
	cleanup()
	t.Cleanup(cleanup)
	return func(sql string) string {
		t.Helper()
		out, err := run(db, sql)
		if err != nil {
			t.Fatalf("%s: %v: %s", sql, err, out)
		}
		return out
	}
}

// With a PostgreSQL server configured, the Data API runs the cell's
// bootstrap for real (GRANT … ON DATABASE app reaches the cluster's own
// database), answers PostgreSQL's refusal as DatabaseErrorException with
// its SQLSTATE, and a migration task's --sql runs as cellctl_migrator:
// exit 1 and PostgreSQL's message as the last log line when it fails
// (the role missing, a bad statement), the schema migrated when it works.
func TestDataAPIAndMigrationOnPostgreSQL(t *testing.T) {
	query := realPostgres(t, "cellctl_app", "cellctl_migrator", "cellctl_admin")
	f := newTaskFixture(t)
	ctx := context.Background()
	client := f.rdsData()
	arn, secret := aws.String(simtest.S(f.db.Out, "arn")), aws.String(secretOf(f.db))
	exec := func(sql string) (*rdsdata.ExecuteStatementOutput, error) {
		return client.ExecuteStatement(ctx, &rdsdata.ExecuteStatementInput{ResourceArn: arn, SecretArn: secret, Database: aws.String("app"), Sql: aws.String(sql)})
	}
	for _, s := range []string{
		"CREATE USER cellctl_app WITH LOGIN", "GRANT rds_iam TO cellctl_app",
		"GRANT CONNECT, TEMPORARY ON DATABASE app TO cellctl_app", "GRANT USAGE, CREATE ON SCHEMA public TO cellctl_app",
	} {
		if _, err := exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if got := query("SELECT pg_has_role('cellctl_app', 'rds_iam', 'member')"); got != "t" {
		t.Errorf("rds_iam membership = %q", got)
	}
	_, err := exec("SELECT * FROM missing_table")
	if apiCode(err) != awsmodel.DataDatabaseError || !strings.Contains(err.Error(), `relation "missing_table" does not exist`) || !strings.Contains(err.Error(), "SQLState: 42P01") {
		t.Errorf("a bad statement: %v", err)
	}
	out, err := client.ExecuteStatement(ctx, &rdsdata.ExecuteStatementInput{ResourceArn: arn, SecretArn: secret, Database: aws.String("app"),
		Sql: aws.String("SELECT :name AS who, current_user AS role"), Parameters: []types.SqlParameter{{Name: aws.String("name"), Value: &types.FieldMemberStringValue{Value: "o'brien"}}}})
	if err != nil || len(out.Records) != 1 || out.Records[0][0].(*types.FieldMemberStringValue).Value != "o'brien" || out.Records[0][1].(*types.FieldMemberStringValue).Value != "cellctl_admin" {
		t.Fatalf("a query as the master user: %+v %v", out, err)
	}

	// The migration task, before the bootstrap made its role.
	if _, err := f.cloud.SetTaskRule(store.TaskRule{Image: "registry/app:v2", SQL: "CREATE TABLE orders (id int);\n"}); err != nil {
		t.Fatal(err)
	}
	finish := func() (int32, []string) {
		t.Helper()
		task := f.run(t, *f.register(t, "registry/app:v2").TaskDefinitionArn)
		f.describe(t, *task.TaskArn)
		got := f.describe(t, *task.TaskArn)
		return *got.Containers[0].ExitCode, f.lines(t, "migrate/migrate/"+taskID(*task.TaskArn))
	}
	code, lines := finish()
	if code != 1 || lines[len(lines)-1] != `ERROR:  role "cellctl_migrator" does not exist` {
		t.Errorf("without its role: exit %d, %q", code, lines)
	}
	for _, s := range []string{"CREATE ROLE cellctl_migrator WITH LOGIN", "GRANT USAGE, CREATE ON SCHEMA public TO cellctl_migrator"} {
		if _, err := exec(s); err != nil {
			t.Fatal(err)
		}
	}
	code, lines = finish()
	if code != 0 || lines[len(lines)-1] != "schema_version=v2" {
		t.Errorf("migration: exit %d, %q", code, lines)
	}
	if got := query("SELECT tableowner FROM pg_tables WHERE tablename = 'orders'"); got != "cellctl_migrator" {
		t.Errorf("orders is owned by %q", got)
	}
	code, lines = finish() // the table exists now
	if code != 1 || !strings.Contains(lines[len(lines)-1], `relation "orders" already exists`) {
		t.Errorf("a failing migration: exit %d, %q", code, lines)
	}
	stmts, _ := f.cloud.Statements("cellctl-a-db")
	if len(stmts) == 0 || stmts[len(stmts)-1].Mode != "postgres" || stmts[len(stmts)-1].Role != store.MigratorRole || !strings.HasPrefix(stmts[len(stmts)-1].Source, "task ") {
		t.Errorf("statements = %+v", stmts)
	}
}
