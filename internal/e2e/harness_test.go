// Package e2e drives the cellctl binary end to end: the real pulumi CLI,
// a file backend and the simulated AWS provider, on copies of the demo
// fleet. These tests never skip: without a pulumi CLI they fail and say
// how to build one (`make pulumi`).
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellctl/cellctl/internal/engine"
)

var (
	repoRoot  string
	binDir    string
	shimDir   string
	pulumiHom string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	repoRoot, err = filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "cellctl-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	binDir = filepath.Join(tmp, "bin")
	pulumiHom = filepath.Join(tmp, "pulumi-home")
	build := exec.Command("go", "build", "-o", filepath.Join(binDir, "cellctl"), "./cmd/cellctl")
	build.Dir = repoRoot
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building cellctl:", err)
		return 1
	}
	// cellctl looks for pulumi next to itself first: link the pinned build.
	pulumi, err := engine.FindPulumi(filepath.Join(repoRoot, "bin"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e tests need the pulumi CLI:", err)
		return 1
	}
	if err := os.Symlink(pulumi, filepath.Join(binDir, "pulumi")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// `cellctl` for shell lines (shellCommand): the binary itself, with
	// nothing added — a documented example runs exactly as written, in
	// the fleet's directory, on the cloud the fleet's Pulumi.yaml chooses
	// (the demo fleet's: sim).
	shimDir = filepath.Join(tmp, "shim")
	shim := "#!/bin/sh\nexec " + filepath.Join(binDir, "cellctl") + ` "$@"` + "\n"
	if err := os.MkdirAll(shimDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.WriteFile(filepath.Join(shimDir, "cellctl"), []byte(shim), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// newFleet is the demo fleet in a fresh directory, in a simulated account
// that holds the fleet's hosted zones (as an AWS account holds them before
// cellctl runs).
func newFleet(t testing.TB) string {
	t.Helper()
	dir := freshClone(t)
	addDemoZones(t, dir)
	return dir
}

// freshClone copies the demo fleet (Pulumi.yaml, stack files, waves and
// routing table) into a fresh directory, and nothing else: no backend,
// no simulated cloud.
func freshClone(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	copyFleetFiles(t, dir)
	return dir
}

// demoZones are the demo fleet's hosted zones (Pulumi.yaml's
// cells:hostedZoneId, stacks/Pulumi.router.yaml's cells:viewerHostedZoneId),
// named as `make demo` names them; up's preflight reads them.
var demoZones = [][2]string{{"Z0123456789ABCDEFGHIJ", "cells.example.com"}, {"Z0987654321ZYXWVUTSRQ", "app.example.com"}}

// addDemoZones names the demo's zones in the simulated account of dir.
func addDemoZones(t testing.TB, dir string) {
	t.Helper()
	for _, z := range demoZones {
		mustRun(t, dir, "sim", "zone", "add", z[0], z[1])
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// result is one finished cellctl run.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration // set by callers that time the run
	cpu            time.Duration // user + system time of the run and the processes it waited for
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s\n--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// globalArgs are the global flags every run gets: the fleet in dir, on
// the simulated cloud, without colour.
func globalArgs(dir string) []string {
	return []string{"--dir", dir, "--cloud", "sim", "--no-color"}
}

// command prepares cellctl in dir on the simulated cloud.
func command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir, "cellctl"), append(globalArgs(dir), args...)...)
	cmd.Env = runEnv(dir)
	return cmd
}

// runEnv is the environment cellctl runs with on the fleet in dir: the
// test's pulumi home and $TMPDIR, no backend or passphrase of the caller's.
func runEnv(dir string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		// No backend, passphrase or cloud of the caller's: the fleet's
		// own settings decide (its Pulumi.yaml chooses sim).
		if strings.HasPrefix(kv, "PULUMI_BACKEND_URL=") || strings.HasPrefix(kv, "PULUMI_CONFIG_PASSPHRASE") || strings.HasPrefix(kv, "CELLCTL_CLOUD=") ||
			strings.HasPrefix(kv, "CELLCTL_SKIP_CONFIRMATIONS=") {
			continue
		}
		// The simulated clusters run real SQL only in the tests that ask
		// for it (pgEnv): the server's roles are shared by every cluster
		// on it, which Aurora's are not.
		if strings.HasPrefix(kv, "CELLCTL_TEST_PG") {
			continue
		}
		env = append(env, kv)
	}
	// The documented commands are written as typed at a terminal, where
	// a fleet-changing verb asks and the operator answers y; here no
	// terminal can answer, so every run says yes once, as a CI job does
	// (TestAFleetChangeWithNoTerminalNeedsYes runs without it).
	env = append(env, "PULUMI_HOME="+pulumiHom, "PULUMI_SKIP_UPDATE_CHECK=true", "NO_COLOR=1", "TMPDIR="+tmpDirOf(dir),
		"CELLCTL_SKIP_CONFIRMATIONS=true")
	if extra, ok := fleetEnv.Load(filepath.Clean(dir)); ok {
		env = append(env, extra.([]string)...) // later entries win (os/exec)
	}
	return env
}

// fleetEnv is, per fleet directory, what a test adds to the environment
// of every cellctl run there (setFleetEnv).
var fleetEnv sync.Map // filepath.Clean(dir) → []string

// setFleetEnv adds kv ("KEY=value") to the environment of every run of
// cellctl in dir — for this test only, where t.Setenv would change the
// whole test process's environment and so keep the test from running in
// parallel with the others.
func setFleetEnv(t testing.TB, dir string, kv ...string) {
	t.Helper()
	key := filepath.Clean(dir)
	var env []string
	if v, ok := fleetEnv.Load(key); ok {
		env = v.([]string)
	}
	fleetEnv.Store(key, append(append([]string(nil), env...), kv...))
	t.Cleanup(func() { fleetEnv.Delete(key) })
}

// shellCommand prepares a shell line as a user types it at the root of the
// fleet in dir (pipes, redirections and quoting as bash reads them, the
// status of a pipeline that of its last failing command): `cellctl` on its
// PATH is the test's binary with the same global flags as command's.
func shellCommand(dir, line string) *exec.Cmd {
	cmd := exec.Command("bash", "-o", "pipefail", "-c", line)
	cmd.Dir = dir
	env := runEnv(dir)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + shimDir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	cmd.Env = append(env, "CELLCTL_E2E_DIR="+dir)
	return cmd
}

// tmpDirOf is the $TMPDIR cellctl runs with on the fleet in dir: beside
// the fleet, inside the test's own temporary directory, so the stack
// workspaces (which live in $TMPDIR, never in the fleet) of one test can
// be watched and are removed with the test.
func tmpDirOf(dir string) string {
	tmp := filepath.Clean(dir) + ".tmp"
	_ = os.MkdirAll(tmp, 0o755)
	return tmp
}

// cellctl runs cellctl to completion.
func cellctl(t testing.TB, dir string, args ...string) result {
	t.Helper()
	return run(t, command(dir, args...))
}

// run runs a prepared command to completion.
func run(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	r := result{stdout: out.String(), stderr: errOut.String(), code: code, cpu: cpuOf(cmd)}
	profileRun(t, cmd, time.Since(start), r)
	return r
}

// runProfile, when set (go test ./internal/e2e -e2e.profile FILE), gets a
// line per command a test ran: the test, the wall and CPU seconds of the
// run (cellctl and the pulumi processes it waited for), the exit code and
// the command line — what tells which verbs the suite's time goes to.
var runProfile = flag.String("e2e.profile", "", "append each run's test, wall and CPU seconds, exit code and command line to this file (TSV)")

var profileMu sync.Mutex

func profileRun(t testing.TB, cmd *exec.Cmd, wall time.Duration, r result) {
	if *runProfile == "" {
		return
	}
	args := cmd.Args[1:]
	if filepath.Base(cmd.Args[0]) == "cellctl" {
		args = args[len(globalArgs("")):]
	}
	line := fmt.Sprintf("%s\t%.2f\t%.2f\t%d\t%s\n", t.Name(), wall.Seconds(), r.cpu.Seconds(), r.code, strings.Join(args, " "))
	profileMu.Lock()
	defer profileMu.Unlock()
	f, err := os.OpenFile(*runProfile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("e2e.profile: %v", err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		t.Errorf("e2e.profile: %v", err)
	}
}

// cpuOf is the CPU time a finished command and its waited-for children
// (cellctl's pulumi runs) used.
func cpuOf(cmd *exec.Cmd) time.Duration {
	if cmd.ProcessState == nil {
		return 0
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// mustRun runs cellctl and fails the test unless it exits 0.
func mustRun(t testing.TB, dir string, args ...string) result {
	t.Helper()
	r := cellctl(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("cellctl %v: %s", args, r)
	}
	return r
}

// opResult is the -o json document of up/preview/destroy.
type opResult struct {
	Operation string        `json:"operation"`
	Stacks    []stackResult `json:"stacks"`
}

// stackResult is one stack of an opResult.
type stackResult struct {
	Name    string `json:"name"`
	Result  string `json:"result"`
	Changes struct {
		Create, Update, Delete, Same, Replace int
	} `json:"changes"`
	Outputs         map[string]any `json:"outputs"`
	Error           string         `json:"error"`
	FailedResources []string       `json:"failedResources"`
	Notes           []string       `json:"notes"`
}

func (o opResult) stack(t *testing.T, name string) stackResult {
	t.Helper()
	for _, st := range o.Stacks {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no stack %s in result", name)
	return stackResult{}
}

// decode parses stdout as exactly one JSON document.
func decode(t testing.TB, r result, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, r)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("stdout holds more than one JSON document:\n%s", r)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
