// Package pgtest is test support for the tests that run SQL on a real
// PostgreSQL server: the cell bootstrap's (cellmodule), the simulated RDS
// Data API's (internal/sim/awsapi) and the e2e migrations'. They share one
// server, and PostgreSQL roles belong to the whole server — unlike
// Aurora's, one server per cell — so two such tests at once (go test runs
// packages in parallel) would create, grant and drop the same roles under
// each other. Lock serialises them: each holds the server's test lock for
// its whole run and leaves no role or database behind.
package pgtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// HostEnv names the server (a host or a socket directory); PortEnv and
// UserEnv its port and superuser when they are not the defaults.
const (
	HostEnv = "CELLCTL_TEST_PGHOST"
	PortEnv = "CELLCTL_TEST_PGPORT"
	UserEnv = "CELLCTL_TEST_PGUSER"
	// DefaultHost is Debian's socket directory.
	DefaultHost = "/var/run/postgresql"
	// lockKey is the advisory lock every such test takes.
	lockKey = 74616
)

// Server is the test server's address.
type Server struct{ Host, Port, User string }

// Args are psql's connection arguments for db.
func (s Server) Args(db string) []string {
	a := []string{"-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", s.Host, "-d", db}
	if s.Port != "" {
		a = append(a, "-p", s.Port)
	}
	if s.User != "" {
		a = append(a, "-U", s.User)
	}
	return a
}

// Env is the environment naming the server (for a cellctl subprocess).
func (s Server) Env() []string {
	env := []string{HostEnv + "=" + s.Host}
	if s.Port != "" {
		env = append(env, PortEnv+"="+s.Port)
	}
	if s.User != "" {
		env = append(env, UserEnv+"="+s.User)
	}
	return env
}

// Lock finds the server (skipping the test off CI when there is none,
// failing it in CI: a grant PostgreSQL refuses must fail a test) and
// holds its test lock until the test and every cleanup registered after
// Lock have finished.
func Lock(t testing.TB) Server {
	t.Helper()
	s := Server{Host: os.Getenv(HostEnv), Port: os.Getenv(PortEnv), User: os.Getenv(UserEnv)}
	if s.Host == "" {
		s.Host = DefaultHost
	}
	unavailable := func(err error) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf("a PostgreSQL server is required in CI (.ci/run installs and starts Debian's postgresql): %v", err)
		}
		t.Skipf("no PostgreSQL server reachable at %s (set %s): %v", s.Host, HostEnv, err)
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		unavailable(err)
	}
	cmd := exec.Command(psql, s.Args("postgres")...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		unavailable(err)
	}
	// The session holds the lock until psql exits: when stdin closes.
	fmt.Fprintf(in, "SELECT pg_advisory_lock(%d);\n\\echo locked\n", lockKey)
	// pg_advisory_lock returns void: psql prints an empty row first.
	r := bufio.NewReader(out)
	var line string
	for err == nil && strings.TrimSpace(line) != "locked" {
		line, err = r.ReadString('\n')
	}
	if err != nil {
		in.Close()
		_ = cmd.Wait()
		unavailable(fmt.Errorf("%q %v %s", line, err, strings.TrimSpace(stderr.String())))
	}
	t.Cleanup(func() {
		in.Close()
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
	})
	return s
}
