package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellctl/cellctl/internal/sim"
)

// startBackground starts cellctl and returns a channel with its result.
func startBackground(t *testing.T, dir string, args ...string) <-chan result {
	t.Helper()
	cmd := command(dir, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		done <- result{stdout: out.String(), stderr: errOut.String(), code: code}
	}()
	return done
}

// workspaces reports whether a run of stack has its workspace open.
func workspaceOpen(dir, stack string) bool {
	m, _ := filepath.Glob(filepath.Join(tmpDirOf(dir), "cellctl-run-*", "cellctl-"+stack+"-*"))
	return len(m) > 0
}

// TestStackFileEditsDuringRunsAreKept edits a stack file while an up, a
// status and a preview of that stack run: every edit is still there when
// they finish, the up stores its secret and salt beside it, and the
// preview leaves the file exactly as the operator left it.
func TestStackFileEditsDuringRunsAreKept(t *testing.T) {
	t.Parallel()
	dir := newFleet(t)
	file := filepath.Join(dir, "stacks", "Pulumi.cell-b.yaml")
	// edit inserts a line after cells:index (the file may have gained
	// top-level keys since).
	edit := func(line string) string {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.Replace(data, []byte("  cells:index: 2\n"), []byte("  cells:index: 2\n"+line+"\n"), 1)
		// Saved as an editor saves (a new file renamed over the old),
		// so a run reading the file sees the old or the new version,
		// never the moment between a truncate and a write: a preview
		// that copied an empty file into its workspace once failed for
		// want of the origin secret (CI, 7eeec56) — the race was the
		// test's own write, not cellctl's.
		tmp := file + ".edit"
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
		return string(data)
	}

	// A first up, slowed down so the edit and a status land mid-run.
	mustRun(t, dir, "sim", "latency", "set", "150ms", "--op", "create")
	up := startBackground(t, dir, "up", "cell-b")
	c := simCloud(t, dir)
	waitFor(t, "cell-b's up to create resources", hangGuard, func() bool {
		rs, _ := c.Resources(sim.Filter{Stack: "cell-b"})
		return len(rs) >= 5
	})
	edit("  cells:desiredCount: 3 # edited during up")
	mustRun(t, dir, "status", "cell-b")
	edit("  # edited after a status during up")
	r := <-up
	if r.code != 0 {
		t.Fatalf("up: %s", r)
	}
	got, _ := os.ReadFile(file)
	for _, want := range []string{"cells:desiredCount: 3 # edited during up", "# edited after a status during up",
		"cells:originVerifySecret:", "secure:", "encryptionsalt:"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("after the up, the stack file lacks %q:\n%s", want, got)
		}
	}
	mustRun(t, dir, "sim", "latency", "clear")

	// A preview, slowed down at its lookups, with an edit mid-run: the
	// file stays byte for byte what the operator saved.
	mustRun(t, dir, "sim", "latency", "set", "3s", "--op", "invoke")
	preview := startBackground(t, dir, "preview", "cell-b")
	waitFor(t, "the preview's workspace", hangGuard, func() bool { return workspaceOpen(dir, "cell-b") })
	want := edit("  # edited during preview")
	if r := <-preview; r.code != 0 {
		t.Fatalf("preview: %s", r)
	}
	if got, _ := os.ReadFile(file); string(got) != want {
		t.Fatalf("the preview changed the stack file:\n%s\nwant:\n%s", got, want)
	}
}
