package e2e

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAFleetChangeWithNoTerminalNeedsYes: the fleet-changing verbs ask at
// a terminal; run where nobody can answer (a pipe, as here) and without
// --yes or CELLCTL_SKIP_CONFIRMATIONS, each is refused with exit 1 once
// its change passed its checks, naming both ways to say yes, and nothing
// is written. Dry runs ask nothing. (Every other test runs as CI does,
// with CELLCTL_SKIP_CONFIRMATIONS=true: runEnv.)
func TestAFleetChangeWithNoTerminalNeedsYes(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	before := repoFiles(t, dir)
	noYes := func(args ...string) result {
		cmd := command(dir, args...)
		cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "CELLCTL_SKIP_CONFIRMATIONS=") })
		return run(t, cmd)
	}
	for _, args := range [][]string{
		{"up", "cell-a"},
		{"deploy", "--image", "ghcr.io/acme/app:9.9.9", "--bake-scale", "0.002"},
		{"drain", "cell-d", "--now"},
		{"undrain", "cell-d"},
		{"migrate", "acme", "--to", "cell-c"},
		{"cell", "add", "--skip-quota-check"},
	} {
		r := noYes(args...)
		verb := args[0]
		if verb == "cell" {
			verb = "cell add"
		}
		if verb == "undrain" {
			// cell-d is active: undrain refuses the input first.
			if r.code != 1 || !strings.Contains(r.stderr, "cell-d") || strings.Contains(r.stderr, "asks first") {
				t.Fatalf("undrain of an active cell: bad input is said first:\n%s", r)
			}
			continue
		}
		if r.code != 1 || !strings.Contains(r.stderr, "cellctl "+verb+" changes the fleet and asks first, but there is no terminal to answer on: pass --yes (or set CELLCTL_SKIP_CONFIRMATIONS=true) to go ahead; nothing was changed") {
			t.Fatalf("%v without --yes:\n%s", args, r)
		}
		if after := repoFiles(t, dir); !maps.Equal(before, after) {
			t.Fatalf("%v wrote the repository though it was refused", args)
		}
	}
	r := noYes("rollout", "list", "-o", "json")
	if r.code != 0 || strings.Contains(r.stdout, "9.9.9") {
		t.Fatalf("a refused deploy left a rollout record:\n%s", r)
	}
	if r := noYes("drain", "cell-d", "--dry-run"); r.code != 0 || strings.Contains(r.stderr, "asks first") {
		t.Fatalf("a dry run asks nothing:\n%s", r)
	}
}

// repoFiles reads the fleet repository's files a change would write.
func repoFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, pattern := range []string{"Pulumi.yaml", "stacks/*"} {
		names, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			files[n] = string(b)
		}
	}
	return files
}
