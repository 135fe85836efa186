package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The origin-verify secret never appears in the arguments or environment
// of a process cellctl starts: /proc/<pid>/cmdline is readable by every
// local user (and environ by the same user's other processes). The first
// up generates and stores the secret, so it is the run to watch. Two
// observers: a pulumi shim that records the argv and environment of every
// pulumi invocation (nothing missed, however short-lived), and a /proc
// poller that records every descendant of cellctl (plugins, anything else
// pulumi starts).
func TestSecretNeverInChildProcesses(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	tmp := t.TempDir()
	logPath := filepath.Join(tmp, "pulumi-calls.log")
	real, err := filepath.EvalSymlinks(filepath.Join(binDir, "pulumi"))
	if err != nil {
		t.Fatal(err)
	}
	// cellctl takes the pulumi beside its own executable first.
	shimDir := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(shimDir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(shimDir, "cellctl")
	if err := os.Link(filepath.Join(binDir, "cellctl"), exe); err != nil {
		data, rerr := os.ReadFile(filepath.Join(binDir, "cellctl"))
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shim := fmt.Sprintf(`#!/bin/sh
{
  echo "=== argv"
  for a in "$@"; do printf '%%s\n' "$a"; done
  echo "=== environ"
  tr '\000' '\n' < /proc/$$/environ
} >> %q
exec %q "$@"
`, logPath, real)
	if err := os.WriteFile(filepath.Join(shimDir, "pulumi"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := command(dir, "up", "-y")
	cmd.Path = exe
	cmd.Args[0] = exe
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := &procSeen{texts: map[string]bool{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			seen.scan(cmd.Process.Pid)
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	runErr := cmd.Wait()
	close(stop)
	wg.Wait()
	if runErr != nil {
		t.Fatalf("first up: %v\n%s", runErr, out.String())
	}

	secret := stackSecret(t, dir, "router", "cells:originVerifySecret")
	if len(secret) < 32 {
		t.Fatalf("the first up stored no origin-verify secret (%d characters)", len(secret))
	}
	calls, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("the pulumi shim recorded nothing: %v", err)
	}
	n := strings.Count(string(calls), "=== argv")
	if n < 5 || !strings.Contains(string(calls), "\nup\n") {
		t.Fatalf("the shim saw %d pulumi calls and no up: it did not observe the run", n)
	}
	if bytes.Contains(calls, []byte(secret)) {
		t.Errorf("the origin-verify secret was in the argv or environment of a pulumi process")
	}
	if seen.descendants == 0 {
		t.Fatal("the /proc poller saw no child process of cellctl")
	}
	for text := range seen.texts {
		if strings.Contains(text, secret) {
			t.Errorf("the origin-verify secret was in a child process's cmdline or environ: %.60s…", text)
		}
	}
	t.Logf("observed %d pulumi calls through the shim and %d descendant process states in /proc", n, len(seen.texts))
}

// procSeen is what the /proc poller saw of cellctl's descendants.
type procSeen struct {
	descendants int
	pids        map[int]bool
	texts       map[string]bool
}

func (p *procSeen) scan(root int) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	if p.pids == nil {
		p.pids = map[int]bool{}
	}
	for pid := range parent {
		if pid == root {
			continue
		}
		q, hops := parent[pid], 0
		for q != 0 && q != root && hops < 64 {
			q, hops = parent[q], hops+1
		}
		if q != root {
			continue
		}
		if !p.pids[pid] {
			p.pids[pid] = true
			p.descendants++
		}
		for _, f := range []string{"cmdline", "environ"} {
			if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), f)); err == nil && len(b) > 0 {
				p.texts[string(b)] = true
			}
		}
	}
}
