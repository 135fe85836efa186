package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/pgtest"
	"github.com/cellctl/cellctl/internal/sim"
)

// Schema migrations ride the waves (the demo fleet sets
// cells:migrationCommand): each cell's migration is a one-off ECS task of
// the new image, run before its service update, watched to its end, and a
// failed one halts the wave and rolls that cell back alone.

// migrationTasks are the simulated one-off tasks that ran image img, by
// cell, in the order they started.
func migrationTasks(t *testing.T, dir, img string) []sim.TaskRun {
	t.Helper()
	runs, err := simCloud(t, dir).Tasks()
	if err != nil {
		t.Fatal(err)
	}
	var out []sim.TaskRun
	for _, r := range runs {
		if img == "" || r.Image == img {
			out = append(out, r)
		}
	}
	return out
}

// cellOfStack is the cell of a simulated stack key ("cells/cell-a").
func cellOfStack(key string) string { return key[strings.LastIndex(key, "/")+1:] }

func TestDeployMigrationFailingInTheCanaryRollsBackTheCanaryAlone(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const img = "registry.example.com/shop/api:8.0.0"
	const line = `ERROR: relation "orders" already exists`
	mustRun(t, dir, "sim", "task", "set", "--image", img, "--exit", "1", "--log", line)
	r := cellctl(t, dir, "deploy", "--image", img, "--bake-scale", "0.002")
	if r.code != 3 {
		t.Fatalf("a failed canary migration: want exit 3, got %s", r)
	}
	tasks := migrationTasks(t, dir, img)
	if len(tasks) != 1 || cellOfStack(tasks[0].Stack) != "cell-a" {
		t.Fatalf("tasks of %s: %+v — only the canary may run the migration", img, tasks)
	}
	for _, want := range []string{"halted at wave canary", "cell-a", "migration", tasks[0].ID, "exited 1", line} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the halt must name %q:\n%s", want, r.stderr)
		}
	}
	rec := rolloutStatus(t, dir, rolloutID(t, r.stderr))
	if rec.waveStates() != "canary=rolled-back wave-1=pending wave-2=pending" {
		t.Errorf("record: %s", rec.waveStates())
	}
	if b := rec.Waves[0].Breach; b == nil || b.Cell != "cell-a" || b.Signal != "migration" {
		t.Errorf("canary breach: %+v", b)
	}
	m := rec.Waves[0].Cells[0].Migration
	if m == nil || m.ExitCode == nil || *m.ExitCode != 1 || len(m.LastLines) == 0 || m.LastLines[len(m.LastLines)-1] != line || m.Task != tasks[0].ARN {
		t.Fatalf("the record must hold the task, its exit code and last log line: %+v", m)
	}
	// The canary's service never left the old image; no other cell moved.
	wantImages(t, dir, images(0, img, baseImage))
	// drift --behind shows the canary's failed migration as what it is:
	// the cell was rolled back and the old image passed the gate's schema
	// check on what the task left, so it is a note, not a finding.
	var rep driftReport
	d := cellctl(t, dir, "drift", "--behind", "-o", "json")
	decode(t, d, &rep)
	if d.code != 0 || rep.find("cell-a", "schema") != nil || !slices.ContainsFunc(rep.Notes, func(n string) bool {
		return strings.HasPrefix(n, "cell-a: a migration failed in rollout") && strings.Contains(n, line)
	}) {
		t.Errorf("drift --behind must note cell-a's rolled-back failed migration, with no finding: %s", d)
	}
}

func TestDeployRunsEachCellsMigrationBeforeItsUpdateInWaveOrder(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const img = "registry.example.com/shop/api:8.1.0"
	dry := mustRun(t, dir, "deploy", "--image", img, "--dry-run")
	if n := strings.Count(dry.stdout, "migrate first: /app/migrate up (image "+img+")"); n != len(demoCells) {
		t.Errorf("the dry run lists the migration step of %d cells, want %d:\n%s", n, len(demoCells), dry.stdout)
	}
	if len(migrationTasks(t, dir, img)) != 0 {
		t.Fatal("the dry run ran a migration")
	}
	r := mustRun(t, dir, "deploy", "--image", img, "--bake-scale", "0.002")
	tasks := migrationTasks(t, dir, img)
	var order []string
	for _, tk := range tasks {
		order = append(order, cellOfStack(tk.Stack))
		if tk.ExitCode == nil || *tk.ExitCode != 0 || !slices.Equal(tk.Command, []string{"/app/migrate", "up"}) || tk.StartedBy != "cellctl" {
			t.Errorf("task %+v", tk)
		}
	}
	if !slices.Equal(order, demoCells) {
		t.Fatalf("migrations ran in %v, want wave order %v", order, demoCells)
	}
	rec := rolloutStatus(t, dir, rolloutID(t, r.stderr))
	for _, w := range rec.Waves {
		for _, c := range w.Cells {
			m := c.Migration
			if m == nil || m.ExitCode == nil || *m.ExitCode != 0 || m.SchemaVersion != "8.1.0" {
				t.Errorf("%s: migration %+v", c.Cell, m)
				continue
			}
			if m.Stopped.After(c.Updated) {
				t.Errorf("%s: its migration ended %s, after its service update (%s)", c.Cell, m.Stopped, c.Updated)
			}
		}
	}
	wantImages(t, dir, images(len(demoCells), img, baseImage))
	var st struct {
		Stacks []struct {
			Name   string `json:"name"`
			Schema *struct {
				Version string `json:"version"`
			} `json:"schema"`
		} `json:"stacks"`
	}
	decode(t, mustRun(t, dir, "status", "-o", "json"), &st)
	for _, s := range st.Stacks {
		if s.Name != "router" && (s.Schema == nil || s.Schema.Version != "8.1.0") {
			t.Errorf("status: %s's schema %+v, want 8.1.0", s.Name, s.Schema)
		}
	}
}

// TestKilledDeployFollowsItsHungMigrationInsteadOfStartingAnother: kill -9
// while the canary's migration runs (the simulator's hanging task) leaves
// the task running, named in the rollout's record; the rerun of the same
// deploy follows that task — to its timeout, counted from its start —
// and never starts a second migration on the canary's database.
func TestKilledDeployFollowsItsHungMigrationInsteadOfStartingAnother(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	const img = "registry.example.com/shop/api:8.2.0"
	// The least timeout allowed, so the rerun's wait for the hung task ends.
	stackFile := filepath.Join(dir, "stacks", "Pulumi.cell-a.yaml")
	stack, err := os.ReadFile(stackFile)
	if err != nil {
		t.Fatal(err)
	}
	withTimeout := strings.Replace(string(stack), "config:\n", "config:\n  cells:migrationTimeoutSeconds: 60\n", 1)
	if err := os.WriteFile(stackFile, []byte(withTimeout), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "sim", "task", "set", "--image", img, "--hang")

	cmd := command(dir, "deploy", "--image", img, "--bake-scale", "0.002")
	var errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// RUNNING: past RunTask's answer, which the record names before the
	// wait begins.
	waitFor(t, "the canary's migration task to run", hangGuard, func() bool {
		ts := migrationTasks(t, dir, img)
		return len(ts) == 1 && ts[0].LastStatus == "RUNNING"
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	first := migrationTasks(t, dir, img)
	if len(first) != 1 || first[0].LastStatus != "RUNNING" {
		t.Fatalf("after kill -9 the task must still run (nobody stopped it): %+v", first)
	}
	id := rolloutID(t, errOut.String())
	if m := rolloutStatus(t, dir, id).Waves[0].Cells[0].Migration; m == nil || m.Task != first[0].ARN || !m.Stopped.IsZero() {
		t.Fatalf("the killed run's record must name the running task %s, unfinished: %+v", first[0].ARN, m)
	}

	r := cellctl(t, dir, "deploy", "--image", img, "--bake-scale", "0.002")
	if r.code != 3 {
		t.Fatalf("the rerun follows the hung task to its timeout, which fails the canary: want exit 3, got %s", r)
	}
	tasks := migrationTasks(t, dir, img)
	if len(tasks) != 1 || tasks[0].ARN != first[0].ARN {
		t.Fatalf("tasks of %s: %+v — the rerun must follow task %s, not start another", img, tasks, first[0].ID)
	}
	if tasks[0].LastStatus != "STOPPED" || tasks[0].StopCode != "UserInitiated" {
		t.Errorf("the hung task must have been stopped at its timeout: %+v", tasks[0])
	}
	for _, want := range []string{first[0].ID, "was never seen to end: following it", "timed out"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the rerun must say %q:\n%s", want, r.stderr)
		}
	}
	m := rolloutStatus(t, dir, id).Waves[0].Cells[0].Migration
	if m == nil || m.Task != first[0].ARN || !m.TimedOut || m.Stopped.IsZero() {
		t.Errorf("the record must keep the followed task, timed out: %+v", m)
	}
	wantImages(t, dir, images(0, img, baseImage))
}

// pgEnv is the environment that makes the simulated Aurora clusters run
// their SQL on a real PostgreSQL server (pgtest: CELLCTL_TEST_PGHOST,
// default the Debian socket directory; skipped off CI without one, failed
// in CI), and a psql runner on it as a superuser. The server's test lock
// is held until the test ends, and the databases dbs and the roles the
// bootstrap creates are dropped then: roles are the server's, shared with
// the other packages' PostgreSQL tests.
func pgEnv(t *testing.T, dbs ...string) (env []string, psql func(db, sql string) string) {
	t.Helper()
	srv := pgtest.Lock(t)
	query := func(db, sql string) (string, error) {
		out, err := exec.Command("psql", append(srv.Args(db), "-c", sql)...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	reset := func() {
		for _, db := range dbs {
			if out, err := query("postgres", "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)"); err != nil {
				t.Errorf("dropping %s: %v %s", db, err, out)
			}
		}
		// The sim's master role of the clusters (their master user) and
		// the bootstrap's users.
		for _, role := range []string{"cellctl_app", "cellctl_migrator", "cellctl"} {
			if out, err := query("postgres", "DROP ROLE IF EXISTS "+role); err != nil {
				t.Errorf("dropping role %s: %v %s", role, err, out)
			}
		}
	}
	reset()
	t.Cleanup(reset)
	return srv.Env(), func(db, sql string) string {
		t.Helper()
		out, err := query(db, sql)
		if err != nil {
			t.Fatalf("psql %s: %s: %v\n%s", db, sql, err, out)
		}
		return out
	}
}

// cellctlWith runs cellctl with extra environment.
func cellctlWith(t *testing.T, env []string, dir string, args ...string) result {
	t.Helper()
	cmd := command(dir, args...)
	cmd.Env = append(cmd.Env, env...)
	return run(t, cmd)
}

// Real SQL where it counts: the canary's database is a real PostgreSQL
// database. Its bootstrap (the cell's up) creates the app and migrator
// users through the simulated RDS Data API; the sample migration's broken
// variant fails in PostgreSQL itself and the rollout stops at the canary
// with PostgreSQL's message; the good one creates the table as
// cellctl_migrator and the app user may use it.
func TestMigrationSQLRunsOnPostgreSQL(t *testing.T) {
	t.Parallel()
	const db = "sim_cells_cell_a_db" // store.SimDatabase of cell-a's cluster
	env, psql := pgEnv(t, db)
	dir := deployedFleet(t)

	up := cellctlWith(t, env, dir, "up", "cell-a")
	if up.code != 0 || !strings.Contains(up.stderr, "cell-a: database users and grants in place") {
		t.Fatalf("up cell-a must bootstrap its database: %s", up)
	}
	roles := psql(db, "SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles WHERE rolname IN ('cellctl_app', 'cellctl_migrator') AND pg_has_role(rolname, 'rds_iam', 'MEMBER')")
	if roles != "cellctl_app,cellctl_migrator" {
		t.Fatalf("IAM-authenticated users after the bootstrap: %q", roles)
	}
	if got := psql(db, "SELECT has_schema_privilege('cellctl_app', 'public', 'CREATE')"); got != "f" {
		t.Errorf("the app user may create in public (%s): schema changes are the migrator's", got)
	}

	const bad, good = "registry.example.com/shop/api:9.0.0-bad", "registry.example.com/shop/api:9.0.0"
	mustRun(t, dir, "sim", "task", "set", "--image", bad, "--sql", filepath.Join(repoRoot, "testdata", "migrations", "0002_bad.sql"))
	mustRun(t, dir, "sim", "task", "set", "--image", good, "--sql", filepath.Join(repoRoot, "testdata", "migrations", "0002_add_orders.sql"))
	r := cellctlWith(t, env, dir, "deploy", "--image", bad, "--bake-scale", "0.002")
	if r.code != 3 || !strings.Contains(r.stderr, `column "region" does not exist`) {
		t.Fatalf("the broken migration must fail in PostgreSQL and halt the canary (exit 3): %s", r)
	}
	if got := psql(db, "SELECT count(*) FROM pg_tables WHERE tablename = 'orders'"); got != "0" {
		t.Errorf("the failed migration left a table behind (%s)", got)
	}
	wantImages(t, dir, images(0, bad, baseImage))

	r = cellctlWith(t, env, dir, "deploy", "--image", good, "--bake-scale", "0.002", "--through", "canary")
	if r.code != 0 {
		t.Fatalf("the good migration through the canary: %s", r)
	}
	owner := psql(db, "SELECT tableowner FROM pg_tables WHERE tablename = 'orders'")
	if owner != "cellctl_migrator" {
		t.Errorf("orders is owned by %q, want the migrator", owner)
	}
	if got := psql(db, "SELECT has_table_privilege('cellctl_app', 'orders', 'SELECT,INSERT,UPDATE,DELETE')"); got != "t" {
		t.Errorf("the app user cannot use the migrated table (%s)", got)
	}
	if got := migrationTasks(t, dir, good); len(got) != 1 || cellOfStack(got[0].Stack) != "cell-a" {
		t.Errorf("tasks of the good image: %+v", got)
	}
	var stmts struct {
		Statements []struct {
			SQL    string `json:"sql"`
			Source string `json:"source"`
			Mode   string `json:"mode"`
		} `json:"statements"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, dir, "sim", "sql", "list", "--cell", "cell-a", "-o", "json").stdout), &stmts); err != nil {
		t.Fatal(err)
	}
	var dataAPI int
	for _, s := range stmts.Statements {
		if s.Source == "data-api" && s.Mode == "postgres" {
			dataAPI++
		}
	}
	if dataAPI == 0 {
		t.Errorf("no bootstrap statement ran on PostgreSQL through the Data API: %+v", stmts.Statements)
	}
}

// TestDeployThatTurnsMigrationsOnBootstrapsFirst: cell-a runs without
// migrations (its up bootstrapped the app's user alone, on a real
// PostgreSQL); the deploy that turns them on (cells:migrationCommand, the
// image kept) says in its dry run that it bootstraps cell-a's database
// users after the update, and does: the migrator's user exists, and the
// next rollout's migration runs as it and creates its table. Before, only
// up bootstrapped: that migration failed with role "cellctl_migrator"
// does not exist, and the canary was rolled back.
func TestDeployThatTurnsMigrationsOnBootstrapsFirst(t *testing.T) {
	t.Parallel()
	const db = "sim_cells_cell_a_db" // store.SimDatabase of cell-a's cluster
	env, psql := pgEnv(t, db)
	dir := deployedFleet(t)
	project := filepath.Join(dir, "Pulumi.yaml")
	on, err := os.ReadFile(project)
	if err != nil {
		t.Fatal(err)
	}
	const setting = "  cells:migrationCommand: '[\"/app/migrate\", \"up\"]'\n"
	if !strings.Contains(string(on), setting) {
		t.Fatalf("the demo fleet's Pulumi.yaml no longer sets %q", setting)
	}
	if err := os.WriteFile(project, []byte(strings.Replace(string(on), setting, "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if up := cellctlWith(t, env, dir, "up", "cell-a"); up.code != 0 || !strings.Contains(up.stderr, "cell-a: database users and grants in place") {
		t.Fatalf("up cell-a without migrations: %s", up)
	}
	users := func() string {
		return psql(db, "SELECT coalesce(string_agg(rolname, ',' ORDER BY rolname), '') FROM pg_roles WHERE rolname IN ('cellctl_app', 'cellctl_migrator')")
	}
	if got := users(); got != "cellctl_app" {
		t.Fatalf("database users of cell-a without migrations: %q, want the app's alone", got)
	}

	if err := os.WriteFile(project, on, 0o644); err != nil {
		t.Fatal(err)
	}
	dry := cellctlWith(t, env, dir, "deploy", "--dry-run")
	if dry.code != 0 || !strings.Contains(dry.stdout, "bootstrap the database users after the update: cells:migrationCommand turns migrations on") {
		t.Errorf("the dry run must say cell-a bootstraps after its update: %s", dry)
	}
	r := cellctlWith(t, env, dir, "deploy", "--bake-scale", "0.002")
	if r.code != 0 {
		t.Fatalf("the deploy that turns migrations on: %s", r)
	}
	if !strings.Contains(r.stderr, "cell cell-a: database users and grants in place") {
		t.Errorf("the deploy that turns migrations on must bootstrap cell-a, and say so: %s", r)
	}
	if got := users(); got != "cellctl_app,cellctl_migrator" {
		t.Errorf("database users of cell-a after the deploy: %q, want the migrator's too", got)
	}

	const good = "registry.example.com/shop/api:9.1.0"
	mustRun(t, dir, "sim", "task", "set", "--image", good, "--sql", filepath.Join(repoRoot, "testdata", "migrations", "0002_add_orders.sql"))
	r = cellctlWith(t, env, dir, "deploy", "--image", good, "--bake-scale", "0.002", "--through", "canary")
	if r.code != 0 {
		t.Fatalf("the next rollout's migration in the canary: %s", r)
	}
	if owner := psql(db, "SELECT tableowner FROM pg_tables WHERE tablename = 'orders'"); owner != "cellctl_migrator" {
		t.Errorf("orders is owned by %q, want the migrator", owner)
	}
}
