package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakePulumi writes a pulumi stand-in that prints secret on stdout (as
// `stack export --show-secrets` would), then waits until released.
func fakePulumi(t *testing.T, secret, release string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pulumi")
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo v3.274.1; exit 0; fi\n" +
		"echo '{\"plaintext\": \"" + secret + "\"}'\necho progress >&2\ntouch " + release + ".printed\n" +
		"while [ ! -e " + release + " ]; do sleep 0.05; done\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// filesHolding lists the files under dir whose content holds s.
func filesHolding(t *testing.T, dir, s string) []string {
	t.Helper()
	var hits []string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), s) {
			hits = append(hits, p)
		}
		return nil
	})
	return hits
}

// TestPulumiOutputNeverHasANameOnDisk: while a pulumi child that printed
// plaintext state runs (the moment a kill -9 would freeze), no file under
// $TMPDIR holds it, and cellctl still reads all of it.
func TestPulumiOutputNeverHasANameOnDisk(t *testing.T) {
	tmp := freshTempRoot(t)
	release := filepath.Join(t.TempDir(), "release")
	const secret = "s3cr3t-origin-verify-value"
	cmd, err := NewCommand(fakePulumi(t, secret, release))
	if err != nil {
		t.Fatal(err)
	}
	type out struct {
		stdout, stderr string
		err            error
	}
	done := make(chan out, 1)
	go func() {
		o, e, _, err := cmd.Run(context.Background(), t.TempDir(), nil, nil, nil, nil, "stack", "export", "--show-secrets")
		done <- out{o, e, err}
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(release + ".printed"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never printed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if hits := filesHolding(t, tmp, secret); len(hits) > 0 {
		t.Fatalf("the plaintext the child printed is on disk while it runs: %v", hits)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || !strings.Contains(o.stdout, secret) || !strings.Contains(o.stderr, "progress") {
		t.Fatalf("cellctl must still read the child's output: %+v", o)
	}
}

// TestSweepRemovesWhatAKilledRunLeft: the run directory of a process killed
// with -9 is removed by the next sweep; a live process's is kept.
func TestSweepRemovesWhatAKilledRunLeft(t *testing.T) {
	if os.Getenv("CELLCTL_TEMP_HOLDER") != "" {
		dir, err := TempRoot()
		if err != nil {
			os.Exit(3)
		}
		ws, _ := mkdirTemp("cellctl-cell-a-")
		_ = os.WriteFile(filepath.Join(ws, "state.json"), []byte(`{"plaintext":"x"}`), 0o600)
		os.Stdout.WriteString(dir + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	tmp := t.TempDir()
	start := func() (*exec.Cmd, string) {
		c := exec.Command(os.Args[0], "-test.run", "^TestSweepRemovesWhatAKilledRunLeft$")
		c.Env = append(os.Environ(), "CELLCTL_TEMP_HOLDER=1", "TMPDIR="+tmp)
		outp, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		n, _ := outp.Read(buf)
		return c, strings.TrimSpace(string(buf[:n]))
	}
	killed, killedDir := start()
	live, liveDir := start()
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	if killedDir == "" || liveDir == "" {
		t.Fatal("the holders did not report their run directories")
	}
	_ = killed.Process.Signal(syscall.SIGKILL)
	_ = killed.Wait()
	// A legacy pulumi output file (an earlier version's, plaintext).
	legacy := filepath.Join(tmp, "cellctl-pulumi-stdout-123")
	if err := os.WriteFile(legacy, []byte(`{"plaintext":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// What the Automation API's ImportStack left when an earlier cellctl
	// was killed during an import: a deployment under a name of digits.
	// A young one may be a live import of another program; a file of
	// digits that is no deployment is none of cellctl's business.
	old := time.Now().Add(-2 * time.Minute)
	leftImport := filepath.Join(tmp, "3418907712")
	youngImport := filepath.Join(tmp, "3418907713")
	notOurs := filepath.Join(tmp, "3418907714")
	for path, body := range map[string]string{
		leftImport:  `{"version":3,"deployment":{"secrets_providers":{},"resources":[{"plaintext":"x"}]}}`,
		youngImport: `{"version":3,"deployment":{}}`,
		notOurs:     `some other program's file`,
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{leftImport, notOurs} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", tmp)
	removed, err := SweepTemp()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killedDir); !os.IsNotExist(err) {
		t.Errorf("the killed run's directory %s is still there (removed: %v)", killedDir, removed)
	}
	if _, err := os.Stat(legacy); !os.IsNotExist(err) {
		t.Errorf("the legacy pulumi output file is still there")
	}
	if _, err := os.Stat(leftImport); !os.IsNotExist(err) {
		t.Errorf("the deployment an interrupted import left in $TMPDIR is still there")
	}
	for _, p := range []string{youngImport, notOurs} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s must be kept: %v", p, err)
		}
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("a live run's directory must be kept: %v", err)
	}
}
