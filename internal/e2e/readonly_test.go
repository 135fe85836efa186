package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// A read-only command — plan, preview, status, route and every --dry-run —
// must leave the fleet repository, the Pulumi backend and the cloud exactly
// as it found them: a preview in CI that rewrites a stack file, a status
// that leaves a lock, or a dry run that touches the cloud is a change
// nobody reviewed. These tests checksum every file of the fleet directory
// (stack files, routing.json, waves.yaml, Pulumi.yaml), of the file backend
// (.cellctl/state) and of the simulated cloud (.cellctl/sim) before and
// after each command, and compare.
//
// A new read-only command is one row of readOnlyCommands.

// readOnlyCase is one read-only command and the exit code it must end
// with on the fixture (so the row proves the command really ran its read
// path, not that it failed before reading anything).
type readOnlyCase struct {
	name string
	args []string
	code int
}

// readsAlarms are the read-only commands that read the live alarms (cell
// add's quota preflight counts them, as on AWS): the simulated cloud's
// clock may advance its health history and alarm states to the current
// minute (withoutSimClock); nothing else of it may change.
var readsAlarms = map[string]bool{"cell add --dry-run": true}

// readOnlyCommands run against the deployed demo fleet.
var readOnlyCommands = []readOnlyCase{
	{"plan", []string{"plan"}, 0},
	{"plan one cell", []string{"plan", "cell-a", "-o", "json"}, 0},
	{"preview", []string{"preview"}, 0},
	{"preview json", []string{"preview", "cell-b", "router", "-o", "json"}, 0},
	{"status", []string{"status"}, 0},
	{"status json", []string{"status", "-o", "json"}, 0},
	{"route", []string{"route", "acme", "globex", "tenant-0042"}, 0},
	{"route --diff", []string{"route", "--diff", "stacks/routing.json", "acme"}, 0},
	{"route --check", []string{"route", "--check", "stacks/routing.json"}, 0},
	{"capacity", []string{"capacity"}, 0},
	{"lanes", []string{"lanes"}, 0},
	{"up --dry-run", []string{"up", "--dry-run"}, 0},
	{"up --dry-run json", []string{"up", "cell-a", "--dry-run", "-o", "json"}, 0},
	// Destroying a routed cell is refused; the dry run checks the refusal
	// (exit 1) and writes nothing either way.
	{"destroy --dry-run refused", []string{"destroy", "cell-a", "--dry-run"}, 1},
	{"deploy --dry-run", []string{"deploy", "--image", "registry.example.com/shop/api:9.9.9", "--dry-run"}, 0},
	{"drain --dry-run", []string{"drain", "cell-d", "--dry-run"}, 0},
	{"undrain --dry-run", []string{"undrain", "cell-d", "--dry-run"}, 1}, // cell-d is active: refused
	{"migrate --dry-run", []string{"migrate", "acme", "--to", "cell-c", "--dry-run"}, 0},
	{"cell add --dry-run", []string{"cell", "add", "--dry-run"}, 0},
	{"rollout list", []string{"rollout", "list"}, 0},
	{"sim resources", []string{"sim", "resources", "--cell", "cell-a"}, 0},
	{"drift --skew --behind", []string{"drift", "--skew", "--behind"}, 0},
	{"drift --cloud markdown", []string{"drift", "--cloud", "-o", "markdown"}, 0},
}

// TestReadOnlyCommandsWriteNothing starts from the deployed demo fleet, then runs
// every read-only command and checks that nothing changed anywhere.
func TestReadOnlyCommandsWriteNothing(t *testing.T) {
	t.Parallel()
	dir := deployedFleet(t)
	for _, tc := range readOnlyCommands {
		t.Run(tc.name, func(t *testing.T) {
			checkWritesNothing(t, dir, tc)
		})
	}
}

// TestFirstRunPreviewWritesNothing is the fresh clone: nothing deployed,
// no .cellctl directory, no backend, no simulated cloud. A preview (what
// CI runs on the first pull request) and the other read-only commands
// must not create any of them, nor a salt or secret in a stack file.
func TestFirstRunPreviewWritesNothing(t *testing.T) {
	t.Parallel()
	dir := freshClone(t)
	for _, tc := range []readOnlyCase{
		{"preview", []string{"preview", "-o", "json"}, 0},
		{"preview one cell", []string{"preview", "cell-c"}, 0},
		{"plan", []string{"plan"}, 0},
		{"status", []string{"status"}, 0},
		{"up --dry-run", []string{"up", "--dry-run"}, 0},
		{"route", []string{"route", "acme"}, 0},
		{"route --check", []string{"route", "--check", "stacks/routing.json"}, 0},
		// Nothing is deployed: the dry run says so for every cell (exit 1).
		{"deploy --dry-run", []string{"deploy", "--image", "registry.example.com/shop/api:9.9.9", "--dry-run"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkWritesNothing(t, dir, tc)
		})
	}
	if _, err := os.Stat(filepath.Join(dir, ".cellctl")); !os.IsNotExist(err) {
		t.Errorf("a read-only command on a fresh clone created .cellctl (%v)", err)
	}
	// The preview planned the whole fleet: every stack is a create.
	var res opResult
	decode(t, mustRun(t, dir, "preview", "-o", "json"), &res)
	for _, s := range res.Stacks {
		if s.Result != "succeeded" || s.Changes.Create == 0 {
			t.Errorf("first-run preview of %s: %+v", s.Name, s)
		}
	}
}

func checkWritesNothing(t *testing.T, dir string, tc readOnlyCase) {
	t.Helper()
	before := treeSums(t, dir)
	args := tc.args
	// Paths in the rows are relative to the fleet.
	for i, a := range args {
		if strings.HasPrefix(a, "stacks/") {
			args = append([]string(nil), args...)
			args[i] = filepath.Join(dir, a)
		}
	}
	r := cellctl(t, dir, args...)
	if r.code != tc.code {
		t.Errorf("cellctl %s: want exit %d: %s", strings.Join(tc.args, " "), tc.code, r)
	}
	after := treeSums(t, dir)
	diff := diffSums(before, after)
	if readsAlarms[tc.name] {
		diff = withoutSimClock(diff)
	}
	if len(diff) > 0 {
		t.Errorf("cellctl %s wrote:\n  %s", strings.Join(tc.args, " "), strings.Join(diff, "\n  "))
	}
}

// treeSums is the SHA-256 of every file under dir (directories by their
// presence), keyed by the path relative to dir.
func treeSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			out[rel+"/"] = "dir"
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(path)
			out[rel] = "symlink " + target
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diffSums says which files were added, removed or changed, naming the
// area each is in (fleet repository, backend, simulated cloud).
func diffSums(before, after map[string]string) []string {
	var out []string
	for p, sum := range after {
		old, ok := before[p]
		switch {
		case !ok:
			out = append(out, "added   "+area(p)+p)
		case old != sum:
			out = append(out, "changed "+area(p)+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, "removed "+area(p)+p)
		}
	}
	sort.Strings(out)
	return out
}

func area(p string) string {
	switch {
	case strings.HasPrefix(p, filepath.Join(".cellctl", "state")):
		return "(backend) "
	case strings.HasPrefix(p, filepath.Join(".cellctl", "sim")):
		return "(simulated cloud) "
	}
	return "(fleet) "
}
