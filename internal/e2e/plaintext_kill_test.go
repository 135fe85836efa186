package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestKilledRollbackLeavesNoPlaintext: a deploy whose canary breaches is
// killed with -9 while it rolls back, at the first pulumi child it starts
// after the rollback began. Neither while its children finish nor after
// does any file under the run's $TMPDIR or the fleet hold the
// origin-verify secret or a plaintext secret value; the next cellctl (a
// read-only status) removes the dead run's directory.
func TestKilledRollbackLeavesNoPlaintext(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	secret := stackSecret(t, dir, "router", "cells:originVerifySecret")
	if len(secret) < 32 {
		t.Fatalf("the deployed fleet has no origin-verify secret (%d characters)", len(secret))
	}
	const bad = "registry.example.com/shop/api:9.9.9-bad"
	mustRun(t, dir, "sim", "health", "set", "--image", bad, "--error-rate", "5%")

	var stderr syncBuffer
	cmd := command(dir, "deploy", "--image", bad, "--bake-scale", "0.002")
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	seen := &procSeen{texts: map[string]bool{}}
	exports := map[string]bool{}
	var killedAt string
	children := map[int]bool{}
	func() {
		deadline := time.Now().Add(hangGuard)
		for time.Now().Before(deadline) {
			select {
			case <-exited:
				t.Fatalf("deploy ended before it was killed in its rollback:\n%s", stderr.String())
			default:
			}
			before := len(seen.pids)
			seen.scan(cmd.Process.Pid)
			for pid := range seen.pids {
				children[pid] = true
			}
			for text := range seen.texts {
				if strings.Contains(text, "stack\x00export") {
					exports[text] = true
				}
			}
			if strings.Contains(stderr.String(), "rolling back wave canary") && len(seen.pids) > before {
				killedAt = "a pulumi child of the rollback"
				_ = cmd.Process.Signal(syscall.SIGKILL)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("the rollback started no pulumi child within %s:\n%s", hangGuard, stderr.String())
	}()
	<-exited
	t.Logf("killed at %s; %d `stack export` children seen before", killedAt, len(exports))

	tmp := tmpDirOf(dir)
	scan := func(when string) {
		t.Helper()
		for _, root := range []string{tmp, dir} {
			_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
				if err != nil || !info.Mode().IsRegular() {
					return nil
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return nil
				}
				if bytes.Contains(data, []byte(secret)) {
					t.Errorf("%s: %s holds the origin-verify secret in plaintext", when, p)
				}
				if bytes.Contains(data, []byte(`"plaintext"`)) {
					t.Errorf("%s: %s holds a plaintext secret value", when, p)
				}
				return nil
			})
		}
	}
	// The killed run's pulumi children live on (their own process group)
	// and finish what they were doing: look while they do, and after.
	scan("while the killed run's children finish")
	waitFor(t, "the killed run's children to exit", hangGuard, func() bool {
		for pid := range children {
			if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
				return false
			}
		}
		return true
	})
	scan("after the killed run's children exited")
	runDirs := func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, "cellctl-run-*"))
		return m
	}
	if len(runDirs()) == 0 {
		t.Fatal("the killed run left no run directory: the test did not observe it")
	}

	// The next command, read-only as it is, sweeps what the dead run left.
	r := cellctl(t, dir, "status")
	if r.code != 0 && r.code != 2 {
		t.Fatalf("status after the kill: %s", r)
	}
	if left := runDirs(); len(left) > 0 {
		t.Errorf("the dead run's directory survived the next command: %v", left)
	}
	scan("after the next command")
}

// syncBuffer is a bytes.Buffer a child process and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
