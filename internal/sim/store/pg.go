package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// A real PostgreSQL server behind the simulated Aurora clusters, when the
// tests name one: CELLCTL_TEST_PGHOST (a host or socket directory), with
// CELLCTL_TEST_PGPORT and CELLCTL_TEST_PGUSER when set (a superuser). Each
// simulated cluster is one database on it, sim_<cluster id> (made on first
// use); the cluster's master user is a role that owns it (NOLOGIN,
// CREATEROLE, rds_iam WITH ADMIN OPTION — Aurora's master user is not a
// superuser), and rds_iam, which Aurora has built in, is made when
// missing. Statements run through psql (no driver dependency) as the
// superuser after SET ROLE. Roles are the server's, not the database's:
// two simulated clusters on one server share them.
const (
	PGHostEnv = "CELLCTL_TEST_PGHOST"
	PGPortEnv = "CELLCTL_TEST_PGPORT"
	PGUserEnv = "CELLCTL_TEST_PGUSER"
)

// PG is the configured PostgreSQL server.
type PG struct{ Host, Port, User string }

// PGFromEnv is the server the environment names, or nil (scripted mode:
// statements are recorded and succeed).
func PGFromEnv() *PG {
	host := os.Getenv(PGHostEnv)
	if host == "" {
		return nil
	}
	return &PG{Host: host, Port: os.Getenv(PGPortEnv), User: os.Getenv(PGUserEnv)}
}

// PGError is PostgreSQL's refusal: severity, SQLSTATE and message.
type PGError struct {
	Severity, Code, Message string
}

func (e *PGError) Error() string {
	return fmt.Sprintf("%s: %s (SQLSTATE %s)", e.Severity, e.Message, e.Code)
}

func pgMessage(err error) string {
	var pe *PGError
	if errors.As(err, &pe) {
		return pe.Severity + ":  " + pe.Message
	}
	return err.Error()
}

var pgErrLine = regexp.MustCompile(`(?m)^(?:psql:[^:]*:\d+: )?(ERROR|FATAL|PANIC):\s+([0-9A-Z]{5}): (.*)$`)

// psql runs a script on db; out is stdout.
func (p *PG) psql(db, script string, extra ...string) (string, error) {
	bin, err := exec.LookPath("psql")
	if err != nil {
		return "", fmt.Errorf("%s is set but psql is not installed: %w", PGHostEnv, err)
	}
	args := []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose", "-h", p.Host, "-d", db}
	if p.Port != "" {
		args = append(args, "-p", p.Port)
	}
	if p.User != "" {
		args = append(args, "-U", p.User)
	}
	args = append(args, extra...)
	args = append(args, "-f", "-")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=10")
	cmd.Stdin = strings.NewReader("\\set VERBOSITY verbose\n" + script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if m := pgErrLine.FindStringSubmatch(stderr.String()); m != nil {
			return stdout.String(), &PGError{Severity: m[1], Code: m[2], Message: strings.TrimSpace(m[3])}
		}
		return stdout.String(), fmt.Errorf("psql on %s: %v: %s", p.Host, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

// SimDatabase is the database a simulated cluster's data lives in.
func SimDatabase(clusterID string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(clusterID) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := "sim_" + b.String()
	if len(name) > 63 {
		name = name[:63]
	}
	return name
}

// Ensure makes a cluster's database and master role, and rds_iam.
func (p *PG) Ensure(clusterID, master string) (string, error) {
	db := SimDatabase(clusterID)
	exists, err := p.psql("postgres", "SELECT 1 FROM pg_database WHERE datname = "+quoteLiteral(db)+";\n", "-A", "-t")
	if err != nil {
		return "", err
	}
	script := "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'rds_iam') THEN CREATE ROLE rds_iam NOLOGIN; END IF; END $$;\n"
	if master != "" {
		script += fmt.Sprintf("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = %s) THEN CREATE ROLE %s NOLOGIN CREATEROLE CREATEDB; END IF; END $$;\n",
			quoteLiteral(master), quoteIdent(master))
		script += fmt.Sprintf("GRANT rds_iam TO %s WITH ADMIN OPTION;\n", quoteIdent(master))
	}
	if strings.TrimSpace(exists) != "1" {
		script += "CREATE DATABASE " + quoteIdent(db) + ";\n"
	}
	if master != "" {
		script += fmt.Sprintf("ALTER DATABASE %s OWNER TO %s;\n", quoteIdent(db), quoteIdent(master))
	}
	if _, err := p.psql("postgres", script); err != nil {
		return "", err
	}
	return db, nil
}

// PGTarget is a simulated cluster on the server: its identifier, master
// user and the database name it was created with.
type PGTarget struct{ ClusterID, Master, Database string }

// Run runs sql on a cluster's database as role (SET ROLE; the connection
// is the superuser's): stdout, or PostgreSQL's error. The database name
// the cluster knows itself by is written as its simulated database in
// "DATABASE <name>" (GRANT … ON DATABASE app), as on Aurora that name is
// the cluster's own database.
func (p *PG) Run(t PGTarget, role, sql string, extra ...string) (string, error) {
	db, err := p.Ensure(t.ClusterID, t.Master)
	if err != nil {
		return "", err
	}
	sql = RewriteDatabaseName(sql, t.Database, db)
	script := ""
	if role != "" {
		script = "SET ROLE " + quoteIdent(role) + ";\n"
	}
	return p.psql(db, script+sql+"\n", extra...)
}

// RewriteDatabaseName writes the cluster's database name as its simulated
// database in "DATABASE <name>" references.
func RewriteDatabaseName(sql, name, simDB string) string {
	if name == "" {
		return sql
	}
	re := regexp.MustCompile(`(?i)\bDATABASE(\s+)("` + regexp.QuoteMeta(name) + `"|` + regexp.QuoteMeta(name) + `\b)`)
	return re.ReplaceAllString(sql, "DATABASE${1}"+quoteIdent(simDB))
}
